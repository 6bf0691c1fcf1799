package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// exchanged is what the request (and the redirects it followed) gave.
type exchanged struct {
	resp *http.Response
	err  error
	// location is the final answer's Location when it is a redirect
	// (3xx with a Location), followed or not; raw, unredacted.
	location string
	// badLocation is set when location is not a URL.
	badLocation bool
	// hops are the redirects followed, in order.
	hops []Hop
	// limited is set when --follow=N stopped at its limit.
	limited bool
	// credentialsDropped is set when a hop changed origin and the
	// credentials stayed behind.
	credentialsDropped bool
}

// isRedirect reports whether a status is one a client follows.
func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// exchange sends req and follows redirects itself (up to --follow), so that
// a Location that is not a URL keeps its status, no Referer is ever added,
// and credentials stay behind when a hop changes origin.
func (p *run) exchange(ctx context.Context, tr *http.Transport, req *http.Request) exchanged {
	o := p.opts
	var ex exchanged
	origins := []string{origin(req.URL)}
	for {
		p.beginHop(req.URL)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			var rh tls.RecordHeaderError
			if errors.As(err, &rh) && string(rh.RecordHeader[:]) == "HTTP/" {
				// What http.Client says (golang.org/issue/11111).
				err = http.ErrSchemeMismatch
			}
			ex.err = err
			// The failed hop is reported with its own fields: not the
			// previous hop's status, HTTP version or TLS details.
			ex.resp = nil
			return ex
		}
		ex.resp = resp
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			return ex
		}
		ex.location = loc
		next, err := req.URL.Parse(loc)
		if err != nil || (next.Scheme != "http" && next.Scheme != "https") {
			ex.badLocation = true
			return ex
		}
		if !isRedirect(resp.StatusCode) || len(ex.hops) >= o.Follow {
			ex.limited = o.Follow > 0 && isRedirect(resp.StatusCode)
			return ex
		}
		ex.hops = append(ex.hops, Hop{URL: o.Redactor.URL(req.URL), Status: resp.StatusCode, Location: o.Redactor.URL(next)})
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()

		origins = append(origins, origin(next))
		crossed := false
		for _, og := range origins {
			crossed = crossed || og != origins[0]
		}
		had := p.hasCredentials(req)
		req = p.nextRequest(ctx, req, resp.StatusCode, next, crossed)
		ex.credentialsDropped = ex.credentialsDropped || (crossed && had)
		p.mu.Lock()
		p.disarm(&p.readWin)
		p.timings = Timings{}
		p.wrote, p.wroteHeaders, p.firstByte, p.connReady = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		p.tlsState = nil
		p.attempts = nil
		p.mu.Unlock()
	}
}

// beginHop records the URL being requested and the name its certificate
// must carry.
func (p *run) beginHop(u *url.URL) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hopURL = u
	p.serverName = u.Hostname()
	if tc := p.opts.TLSConfig; tc != nil && tc.ServerName != "" && origin(u) == origin(p.opts.URL) {
		p.serverName = tc.ServerName
	}
}

// DefaultPort is the port a URL of scheme means when it names none: 443
// for https, 80 otherwise. The one place it is decided.
func DefaultPort(scheme string) string {
	if strings.EqualFold(scheme, "https") {
		return "443"
	}
	return "80"
}

// origin is scheme://host:port with the default port made explicit and the
// host in lower case.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = DefaultPort(u.Scheme)
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// sensitiveHeaders are dropped when a hop changes origin, with the
// redactor's secret headers.
var sensitiveHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Referer"}

// nextRequest builds the request for a redirect's target as curl does:
// 303 (and 301/302 after a POST) become GET without a body; 307/308 repeat
// the method and body. Once any hop changed scheme, host or port, the
// credentials (Authorization, Proxy-Authorization, Cookie, secret headers,
// -u and userinfo) and the -H Host override stay behind. No Referer is
// added.
func (p *run) nextRequest(ctx context.Context, prev *http.Request, status int, next *url.URL, crossed bool) *http.Request {
	o := p.opts
	method := prev.Method
	var body io.Reader
	keepBody := status == http.StatusTemporaryRedirect || status == http.StatusPermanentRedirect
	if !keepBody && method != http.MethodGet && method != http.MethodHead {
		method = http.MethodGet
	}
	if keepBody && o.Body != nil {
		body = strings.NewReader(string(o.Body))
	}
	u := *next
	u.User = nil
	req, err := http.NewRequestWithContext(prev.Context(), method, u.String(), body)
	if err != nil {
		// The URL was parsed already; keep the previous request's context.
		req = prev.Clone(ctx)
		req.URL = &u
	}
	req.Header = prev.Header.Clone()
	if !keepBody || o.Body == nil {
		req.Header.Del("Content-Type")
		req.Header.Del("Content-Length")
	}
	if crossed {
		for _, h := range sensitiveHeaders {
			req.Header.Del(h)
		}
		for _, h := range o.Redactor.Headers() {
			req.Header.Del(h)
		}
	} else {
		req.Host = prev.Host
	}
	return req
}

// hasCredentials reports whether req carries anything a hop to another
// origin leaves behind: Authorization (also from -u or userinfo),
// Proxy-Authorization, Cookie or a secret header.
func (p *run) hasCredentials(req *http.Request) bool {
	for _, h := range sensitiveHeaders {
		if h != "Referer" && req.Header.Get(h) != "" {
			return true
		}
	}
	for _, h := range p.opts.Redactor.Headers() {
		if req.Header.Get(h) != "" {
			return true
		}
	}
	return false
}

// redirect describes the final answer's Location: resolved against the
// request URL and redacted, or, when it is not a URL, the raw text redacted.
func (p *run) redirect(base *url.URL, loc string) *Redirect {
	u, err := base.Parse(loc)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return &Redirect{Location: p.opts.Redactor.RawURL(loc), Invalid: true}
	}
	return &Redirect{
		Location:  p.opts.Redactor.URL(u),
		OtherHost: !strings.EqualFold(u.Hostname(), p.opts.URL.Hostname()),
	}
}

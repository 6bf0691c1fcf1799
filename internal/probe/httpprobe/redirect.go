package httpprobe

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/follow"
	"github.com/healthctl/healthctl/internal/probe/result"
	"github.com/healthctl/healthctl/internal/probe/session"
)

// roundTripped is what the request (and the redirects it followed) gave.
type roundTripped struct {
	resp *http.Response
	err  error
	// location is the final answer's Location when it is a redirect
	// (3xx with a Location), followed or not; raw, unredacted.
	location string
	// badLocation is set when location is not a URL.
	badLocation bool
	// hops are the redirects followed, in order.
	hops []result.Hop
	// limited is set when --follow=N stopped at its limit.
	limited bool
	// credentialsDropped is set when a hop changed origin and the
	// credentials stayed behind.
	credentialsDropped bool
	// loop is set when the redirect not followed goes to a URL already
	// requested: following would go round for ever.
	loop bool
	// downgrade is set when a redirect (followed, or the final one) goes
	// from https to plain http.
	downgrade bool
}

// roundTrips sends req and follows redirects itself (up to --follow), so that
// a Location that is not a URL keeps its status, no Referer is ever added,
// and credentials stay behind when a hop changes origin.
func roundTrips(p *session.Probe, ctx context.Context, tr http.RoundTripper, req *http.Request) roundTripped {
	o := p.Opts
	var rt roundTripped
	// What a redirect needs (the origins crossed, the URLs requested) is
	// made at the first one: most probes are answered without one.
	first := req.URL
	var origins []string
	var requested map[string]bool
	for {
		beginHop(p, req.URL)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			var rh tls.RecordHeaderError
			if errors.As(err, &rh) && string(rh.RecordHeader[:]) == "HTTP/" {
				// What http.Client says (golang.org/issue/11111).
				err = http.ErrSchemeMismatch
			}
			rt.err = err
			// The failed hop is reported with its own fields: not the
			// previous hop's status, HTTP version or TLS details.
			rt.resp = nil
			return rt
		}
		rt.resp = resp
		loc := session.HeaderValue(resp.Header, "Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			return rt
		}
		rt.location = loc
		next, ok := follow.Target(req.URL, loc)
		if !ok {
			rt.badLocation = true
			return rt
		}
		if strings.EqualFold(req.URL.Scheme, "https") && strings.EqualFold(next.Scheme, "http") {
			rt.downgrade = true
		}
		if requested == nil {
			origins = []string{follow.Origin(first)}
			requested = map[string]bool{first.String(): true}
		}
		if o.Follow > 0 && follow.IsRedirect(resp.StatusCode) && requested[next.String()] {
			rt.loop = true
			return rt
		}
		requested[next.String()] = true
		if !follow.IsRedirect(resp.StatusCode) || len(rt.hops) >= o.Follow {
			rt.limited = o.Follow > 0 && follow.IsRedirect(resp.StatusCode)
			return rt
		}
		if o.HopAllowed != nil && !o.HopAllowed(next) {
			// Not a hop this probe may take: the redirect is the
			// answer, as with --follow 0.
			return rt
		}
		rt.hops = append(rt.hops, result.Hop{URL: o.Redactor.URL(req.URL), Status: resp.StatusCode, Location: o.Redactor.URL(next)})
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()

		origins = append(origins, follow.Origin(next))
		crossed := false
		for _, og := range origins {
			crossed = crossed || og != origins[0]
		}
		secret := o.Redactor.Headers()
		had := follow.HasCredentials(req.Header, secret)
		req = follow.Next(ctx, req, resp.StatusCode, next, crossed, secret)
		rt.credentialsDropped = rt.credentialsDropped || (crossed && had)
		p.Mu.Lock()
		p.Disarm(&p.ReadWin)
		p.Timings = result.Timings{}
		p.Wrote, p.WroteHeaders, p.FirstByte, p.ConnReady = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		p.TLSState, p.OCSP = nil, nil
		p.InProxyTLS, p.ProxyTLSStarted, p.ProxyTLSOK, p.ProxyTLSState = false, false, false, nil
		p.Attempts = nil
		p.Mu.Unlock()
	}
}

// beginHop records the URL being requested and the name its certificate
// must carry.
func beginHop(p *session.Probe, u *url.URL) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.HopURL = u
	p.ServerName = u.Hostname()
	if tc := p.Opts.TLSConfig; tc != nil && tc.ServerName != "" && follow.Origin(u) == follow.Origin(p.Opts.URL) {
		p.ServerName = tc.ServerName
	}
}

// redirect describes the final answer's Location: resolved against the
// request URL and redacted, or, when it is not a URL, the raw text redacted.
func redirect(p *session.Probe, base *url.URL, loc string) *result.Redirect {
	u, ok := follow.Target(base, loc)
	if !ok {
		return &result.Redirect{Location: p.Opts.Redactor.RawURL(loc), Invalid: true}
	}
	return &result.Redirect{
		Location:  p.Opts.Redactor.URL(u),
		OtherHost: !strings.EqualFold(u.Hostname(), p.Opts.URL.Hostname()),
	}
}

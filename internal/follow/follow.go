// Package follow holds curl's rules for following a redirect: which
// statuses are followed, what an origin is, and the request for the next
// hop (303 becomes GET; once a hop changes scheme, host or port, the
// credentials stay behind; no Referer is added). It is pure: the probe
// sends the requests.
package follow

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// IsRedirect reports whether a status is one a client follows.
func IsRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// DefaultPort is the port a URL of scheme means when it names none: 443
// for https, 80 otherwise. The one place it is decided.
func DefaultPort(scheme string) string {
	switch strings.ToLower(scheme) {
	case "https":
		return "443"
	}
	return "80"
}

// Target is where a Location sends a request to base: resolved against
// it; ok is false when it is not an http(s) URL.
func Target(base *url.URL, loc string) (u *url.URL, ok bool) {
	u, err := base.Parse(loc)
	return u, err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

// Origin is scheme://host:port with the default port made explicit and the
// host in lower case.
func Origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = DefaultPort(u.Scheme)
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// sensitiveHeaders are dropped when a hop changes origin, with the secret
// headers (--secret-header and the defaults).
var sensitiveHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Referer"}

// Next builds the request for a redirect's target as curl does:
// 303 (and 301/302 after a POST) become GET without a body; 307/308 repeat
// the method and body. Once any hop changed scheme, host or port, the
// credentials (Authorization, Proxy-Authorization, Cookie, secret headers,
// -u and userinfo) and the -H Host override stay behind. No Referer is
// added. The body is the previous request's again, from its GetBody (a
// body streamed from a file is opened anew), and none when it has none;
// secret is the secret header names.
func Next(ctx context.Context, prev *http.Request, status int, next *url.URL, crossed bool, secret []string) *http.Request {
	method := prev.Method
	keepBody := status == http.StatusTemporaryRedirect || status == http.StatusPermanentRedirect
	if !keepBody && method != http.MethodGet && method != http.MethodHead {
		method = http.MethodGet
	}
	hasBody := keepBody && prev.GetBody != nil
	u := *next
	u.User = nil
	req, err := http.NewRequestWithContext(prev.Context(), method, u.String(), nil)
	if err != nil {
		// The URL was parsed already; keep the previous request's context.
		req = prev.Clone(ctx)
		req.URL = &u
		req.Body, req.GetBody, req.ContentLength = nil, nil, 0
	}
	if hasBody {
		req.ContentLength, req.GetBody = prev.ContentLength, prev.GetBody
		if req.Body, err = prev.GetBody(); err != nil {
			// GetBody opens nothing (a file is opened on the first
			// read): an error here is the body's, met as it is sent.
			req.Body = errBody{err}
		}
	}
	req.Header = prev.Header.Clone()
	if !hasBody {
		req.Header.Del("Content-Type")
		req.Header.Del("Content-Length")
	}
	if crossed {
		for _, h := range sensitiveHeaders {
			req.Header.Del(h)
		}
		for _, h := range secret {
			req.Header.Del(h)
		}
	} else {
		req.Host = prev.Host
	}
	return req
}

// HasCredentials reports whether a request's header carries anything a hop
// to another origin leaves behind: Authorization (also from -u or
// userinfo), Proxy-Authorization, Cookie or a secret header.
func HasCredentials(h http.Header, secret []string) bool {
	for _, name := range sensitiveHeaders {
		if name != "Referer" && h.Get(name) != "" {
			return true
		}
	}
	for _, name := range secret {
		if h.Get(name) != "" {
			return true
		}
	}
	return false
}

// errBody is a body whose every read fails with err.
type errBody struct{ err error }

func (b errBody) Read([]byte) (int, error) { return 0, b.err }
func (b errBody) Close() error             { return nil }

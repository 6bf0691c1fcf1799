package probe

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// DefaultSecretHeaders and DefaultSecretParams are always redacted
// (SPEC.md §3); --secret-header and --secret-param add to them.
var (
	DefaultSecretHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key"}
	DefaultSecretParams  = []string{"token", "access_token", "api_key", "key", "sig", "signature"}
)

// Mask replaces every secret in output.
const Mask = "***"

// minSecret is the shortest value scrubbed from free text: shorter ones
// would garble unrelated words ("a" in "refused").
const minSecret = 3

// Redactor keeps secrets out of every output: URLs lose their userinfo and
// secret query values; free text loses every known secret value.
//
// A Redactor is safe for concurrent use: probes of several URLs share one,
// and AddURL/AddSecret may run while others redact.
type Redactor struct {
	headers []string
	params  map[string]bool

	mu      sync.RWMutex
	secrets []string
}

// NewRedactor returns a redactor for the default secret names plus extra.
func NewRedactor(extraHeaders, extraParams []string) *Redactor {
	r := &Redactor{params: map[string]bool{}}
	for _, h := range append(append([]string(nil), DefaultSecretHeaders...), extraHeaders...) {
		r.headers = append(r.headers, http.CanonicalHeaderKey(strings.TrimSpace(h)))
	}
	for _, p := range append(append([]string(nil), DefaultSecretParams...), extraParams...) {
		r.params[strings.ToLower(strings.TrimSpace(p))] = true
	}
	return r
}

// IsSecretHeader reports whether a header's value must never be shown.
func (r *Redactor) IsSecretHeader(name string) bool {
	name = http.CanonicalHeaderKey(name)
	for _, h := range r.headers {
		if h == name {
			return true
		}
	}
	return false
}

// AddSecret registers a value to scrub from free text, with its
// URL-escaped forms.
func (r *Redactor) AddSecret(v string) {
	if r == nil || len(v) < minSecret {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range []string{v, url.QueryEscape(v), url.PathEscape(v)} {
		dup := false
		for _, have := range r.secrets {
			dup = dup || have == s
		}
		if !dup {
			r.secrets = append(r.secrets, s)
		}
	}
}

// AddURL registers the secrets a URL carries: userinfo and secret params.
func (r *Redactor) AddURL(u *url.URL) {
	if r == nil || u == nil {
		return
	}
	if u.User != nil {
		r.AddSecret(u.User.Username())
		if pw, ok := u.User.Password(); ok {
			r.AddSecret(pw)
		}
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if uk, err := url.QueryUnescape(k); err == nil && r.params[strings.ToLower(uk)] {
			r.AddSecret(v)
			if uv, err := url.QueryUnescape(v); err == nil {
				r.AddSecret(uv)
			}
		}
	}
}

// String scrubs every known secret from s.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, Mask)
	}
	return s
}

// URL renders u with userinfo shown as *** and secret query values masked,
// keeping the order of the parameters.
func (r *Redactor) URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	hadUser := c.User != nil
	c.User = nil // url.User escapes "*": insert the mask by hand below
	if c.RawQuery != "" && r != nil {
		parts := strings.Split(c.RawQuery, "&")
		for i, kv := range parts {
			k, _, hasV := strings.Cut(kv, "=")
			uk, err := url.QueryUnescape(k)
			if err == nil && hasV && r.params[strings.ToLower(uk)] {
				parts[i] = k + "=" + Mask
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	out := c.String()
	if hadUser {
		if scheme, rest, ok := strings.Cut(out, "://"); ok {
			out = scheme + "://" + Mask + "@" + rest
		}
	}
	return r.String(out)
}

// RawURL redacts text that looks like a URL but may not parse (a server's
// Location): userinfo before the host becomes ***, secret query values
// become ***, and known secrets are scrubbed.
func (r *Redactor) RawURL(s string) string {
	if r == nil {
		return s
	}
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
			rest = Mask + rest[at:]
		}
		s = scheme + "://" + rest
	}
	if base, query, ok := strings.Cut(s, "?"); ok {
		query, frag, hasFrag := strings.Cut(query, "#")
		parts := strings.Split(query, "&")
		for i, kv := range parts {
			k, _, hasV := strings.Cut(kv, "=")
			uk, err := url.QueryUnescape(k)
			if err != nil {
				uk = k
			}
			if hasV && r.params[strings.ToLower(uk)] {
				parts[i] = k + "=" + Mask
			}
		}
		s = base + "?" + strings.Join(parts, "&")
		if hasFrag {
			s += "#" + frag
		}
	}
	return r.String(s)
}

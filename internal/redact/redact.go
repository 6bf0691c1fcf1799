// Package redact keeps secrets out of every output: URL userinfo, secret
// headers and query parameters, and any value registered as a secret.
// It is pure (no I/O) so that input parsing and the probe can share it.
package redact

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultSecretHeaders and DefaultSecretParams are always redacted;
// --secret-header and --secret-param add to them.
var (
	DefaultSecretHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key"}
	DefaultSecretParams  = []string{"token", "access_token", "api_key", "key", "sig", "signature",
		"password", "passwd", "client_secret", "X-Amz-Signature", "X-Goog-Signature"}
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
	// The names, fixed at construction: redactors of the same names share
	// them (a watch of 100,000 targets builds a redactor a template).
	*names

	mu      sync.RWMutex
	secrets []string
	// gen counts the secrets added: what was redacted at one generation
	// redacts the same at it (the names and shapes are fixed at
	// construction), so a rendering made once can be kept while it holds.
	gen atomic.Uint64
}

// Generation is the number of secrets added so far: text redacted when it
// was g is redacted alike while it is still g.
func (r *Redactor) Generation() uint64 {
	if r == nil {
		return 0
	}
	return r.gen.Load()
}

// names are a redactor's secret names and what is derived from them; read
// only once built.
type names struct {
	headers []string
	params  map[string]bool
	// text finds secrets by their shape in free text (error text quotes
	// what a server sent: a malformed header line, a Location that does
	// not parse): a secret parameter after ?, &, # or ;, userinfo before
	// a host, the value of a secret header line. Compiled on first use:
	// most text a probe redacts (its own URL, a refusal) cannot hold a
	// secret by shape, and compiling costs every start ~0.1 ms.
	text func() *regexp.Regexp
	// lowerHeaders are the secret header names lowercased, for the quick
	// check that text holds none of them; asciiHeaders says every name is
	// ASCII (else the check is skipped: case folding is Unicode's).
	lowerHeaders []string
	asciiHeaders bool
}

func newNames(extraHeaders, extraParams []string) *names {
	n := &names{params: map[string]bool{}}
	for _, h := range append(append([]string(nil), DefaultSecretHeaders...), extraHeaders...) {
		n.headers = append(n.headers, http.CanonicalHeaderKey(strings.TrimSpace(h)))
	}
	for _, p := range append(append([]string(nil), DefaultSecretParams...), extraParams...) {
		n.params[strings.ToLower(strings.TrimSpace(p))] = true
	}
	n.asciiHeaders = true
	for _, h := range append(append([]string(nil), n.headers...), "Set-Cookie") {
		n.lowerHeaders = append(n.lowerHeaders, strings.ToLower(h))
		n.asciiHeaders = n.asciiHeaders && isASCII(h)
	}
	n.text = sync.OnceValue(func() *regexp.Regexp { return shapeRegexp(n.params, n.headers) })
	return n
}

// defaultNames are the default secret names, built once: most redactors
// have no others, and each template of a watch builds one (1.7 KB of names
// each, and its own pattern once compiled, when they were not shared).
var defaultNames = sync.OnceValue(func() *names { return newNames(nil, nil) })

// NewRedactor returns a redactor for the default secret names plus extra.
// Its secrets (AddSecret, AddURL) are its own; its names may be shared.
func NewRedactor(extraHeaders, extraParams []string) *Redactor {
	if len(extraHeaders) == 0 && len(extraParams) == 0 {
		return &Redactor{names: defaultNames()}
	}
	return &Redactor{names: newNames(extraHeaders, extraParams)}
}

// Clone returns a redactor of r's names and a copy of its secrets: what
// is added to one is not added to the other. A listener's request gets
// one of its own (a redactor shared by requests that remembered each
// one's secrets would tell a client whether its guess was another's).
func (r *Redactor) Clone() *Redactor {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	c := &Redactor{names: r.names, secrets: slices.Clone(r.secrets)}
	c.gen.Store(r.gen.Load())
	return c
}

// Blank returns a redactor of r's names and no secrets.
func (r *Redactor) Blank() *Redactor {
	if r == nil {
		return nil
	}
	return &Redactor{names: r.names}
}

// Headers lists the secret header names (canonical form): the defaults
// and those named with --secret-header. A redirect to another origin
// leaves them behind.
func (r *Redactor) Headers() []string {
	if r == nil {
		return nil
	}
	return slices.Clip(r.headers) // shared: an append makes a copy
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
// URL-escaped forms and the form Go's %q quoting gives it (an error that
// quotes a header value escapes its quotes and backslashes). Matching is
// case-insensitive (ASCII), since Go's errors lowercase some of what they
// quote (a Content-Encoding).
func (r *Redactor) AddSecret(v string) {
	if r == nil || len(v) < minSecret {
		return
	}
	q := strconv.Quote(v)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range []string{v, url.QueryEscape(v), url.PathEscape(v), q[1 : len(q)-1]} {
		s = asciiLower(s)
		dup := false
		for _, have := range r.secrets {
			dup = dup || have == s
		}
		if !dup {
			r.secrets = append(r.secrets, s)
			r.gen.Add(1)
		}
	}
}

// AddBasic registers the credentials healthctl sends as HTTP Basic auth
// (-u, URL userinfo, a proxy URL's userinfo): the password and the base64
// of user:password that the Authorization or Proxy-Authorization header
// carries — a server or proxy that echoes the header back must not get it
// printed. (-u's user name alone is no secret; a URL's is only when no
// password follows it, see AddURL.)
func (r *Redactor) AddBasic(user, password string) {
	if r == nil {
		return
	}
	r.AddSecret(password)
	r.AddSecret(base64.StdEncoding.EncodeToString([]byte(user + ":" + password)))
}

// AddURL registers the secrets a URL carries: the password (and the Basic
// credentials built from it) and secret params. The user name before a
// password is no secret (it names who logs in, and masking its letters
// everywhere garbles every message: "postgres" in "PostgreSQL"); a lone
// word before @ is one (a token, or redis://PASSWORD@host).
func (r *Redactor) AddURL(u *url.URL) {
	if r == nil || u == nil {
		return
	}
	if u.User != nil {
		pw, hasPW := u.User.Password()
		if !showsUser(u.User.Username(), pw, hasPW) {
			r.AddSecret(u.User.Username())
		}
		r.AddBasic(u.User.Username(), pw)
	}
	r.addParams(u.RawQuery)
	r.addParams(u.EscapedFragment())
	r.addParams(u.Fragment)
}

// Holds reports whether u carries a secret AddURL would register: its
// userinfo, or a secret parameter (by name) in its query or fragment.
func (r *Redactor) Holds(u *url.URL) bool {
	if r == nil || u == nil {
		return false
	}
	return u.User != nil || r.hasParams(u.RawQuery) || r.hasParams(u.EscapedFragment()) || r.hasParams(u.Fragment)
}

// hasParams reports whether a query or a fragment has a secret parameter.
func (r *Redactor) hasParams(q string) bool {
	if q == "" {
		return false
	}
	for kv := range strings.SplitSeq(q, "&") {
		k, _, _ := strings.Cut(kv, "=")
		if uk, err := url.QueryUnescape(k); err == nil && r.params[strings.ToLower(uk)] {
			return true
		}
	}
	return false
}

// addParams registers the secret values of a query or a fragment.
func (r *Redactor) addParams(q string) {
	if q == "" {
		return
	}
	for kv := range strings.SplitSeq(q, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if uk, err := url.QueryUnescape(k); err == nil && r.params[strings.ToLower(uk)] {
			r.AddSecret(v)
			if uv, err := url.QueryUnescape(v); err == nil {
				r.AddSecret(uv)
			}
		}
	}
}

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

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// mayHoldShape reports whether s can hold a secret by its shape: userinfo
// needs an @, a secret parameter an =, a secret header line one of the
// names and a colon. When it says false the shape pattern cannot match, so
// the common text (a URL without userinfo or query) skips the pattern. Any
// byte past ASCII sends s to the pattern: under (?i) some non-ASCII
// letters fold to ASCII ones (the Kelvin sign to k).
func (r *Redactor) mayHoldShape(s string) bool {
	if strings.IndexByte(s, '@') >= 0 || !r.asciiHeaders || !isASCII(s) || r.secretParamBefore(s) {
		return true
	}
	if strings.IndexByte(s, ':') < 0 {
		return false
	}
	for _, h := range r.lowerHeaders {
		if containsFoldASCII(s, h) {
			return true
		}
	}
	return false
}

// secretParamBefore reports whether an = in the ASCII text s follows a
// secret parameter's name right after ?, &, # or ; (the pattern's shape of
// a secret parameter): a URL's query of other parameters (?full=1&env=a)
// skips the pattern.
func (r *Redactor) secretParamBefore(s string) bool {
	for i := strings.IndexByte(s, '='); i >= 0; {
		if j := strings.LastIndexAny(s[:i], "?&#;"); j >= 0 && r.params[asciiLower(s[j+1:i])] {
			return true
		}
		k := strings.IndexByte(s[i+1:], '=')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
}

// containsFoldASCII reports whether lower (ASCII, lowercase) occurs in the
// ASCII text s, ignoring case.
func containsFoldASCII(s, lower string) bool {
	if lower == "" {
		return true
	}
	c0 := lower[0]
	for i := 0; i+len(lower) <= len(s); i++ {
		if s[i]|0x20 != c0|0x20 {
			continue
		}
		if strings.EqualFold(s[i:i+len(lower)], lower) {
			return true
		}
	}
	return false
}

// shapes caches the compiled shape patterns by their names: a watch builds
// a redactor per target that has options of its own, thousands of them
// with the same names.
var shapes sync.Map // string -> *regexp.Regexp

// shapeRegexp is the pattern that finds secrets by their shape for these
// parameter and header names.
func shapeRegexp(params map[string]bool, hdrs []string) *regexp.Regexp {
	var names, headers []string
	for p := range params {
		if p != "" {
			// Invalid UTF-8 in a name would not compile.
			names = append(names, regexp.QuoteMeta(strings.ToValidUTF8(p, "\uFFFD")))
		}
	}
	for _, h := range append(append([]string(nil), hdrs...), "Set-Cookie") {
		if h != "" {
			headers = append(headers, regexp.QuoteMeta(strings.ToValidUTF8(h, "\uFFFD")))
		}
	}
	slices.Sort(names)
	slices.Sort(headers)
	key := strings.Join(names, "|") + "\x00" + strings.Join(headers, "|")
	if re, ok := shapes.Load(key); ok {
		return re.(*regexp.Regexp)
	}
	// Group 1 keeps what precedes a secret; the rest is masked. In a
	// userinfo, group 2 is the user name before a password: no secret
	// (a lone word before @ may be a token or a Redis password, and is).
	pat := `(?i)([a-z][a-z0-9+.-]*://)(?:([^/?#\s"'<>:@]*):)?[^/?#\s"'<>]*@` +
		`|([?&#;](?:` + strings.Join(names, "|") + `)=)[^&#;\s"'<>\\]*` +
		`|(\b(?:` + strings.Join(headers, "|") + `)\s*:\s*)[^\r\n"\\]*`
	re, _ := shapes.LoadOrStore(key, regexp.MustCompile(pat))
	return re.(*regexp.Regexp)
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

// showsUser says a URL's user name may be shown: it names who logs in only
// when a password follows it. Without one, an empty one (an API key as
// `KEY:@`, as curl -u KEY: sends it) or GitHub's `TOKEN:x-oauth-basic`
// placeholder, the user name is the credential.
func showsUser(user, password string, hasPassword bool) bool {
	return user != "" && hasPassword && password != "" && !strings.EqualFold(password, "x-oauth-basic")
}

// String scrubs every known secret from s, in any ASCII case.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	if len(r.secrets) > 0 {
		s = replaceFold(s, r.secrets)
	}
	r.mu.RUnlock()
	return r.byShape(s)
}

// asciiLower lowercases ASCII letters only, so a string keeps its length
// and byte offsets (strings.ToLower may change both for some runes).
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// replaceFold replaces every occurrence of each of secrets (lowercased) in
// s, whatever its ASCII case, with Mask. s is lowercased once: the mask
// has no letters, so the lowercased text stays in step with s.
func replaceFold(s string, secrets []string) string {
	low := asciiLower(s)
	for _, sec := range secrets {
		if !strings.Contains(low, sec) {
			continue
		}
		var b, lb strings.Builder
		for {
			i := strings.Index(low, sec)
			if i < 0 {
				break
			}
			b.WriteString(s[:i])
			b.WriteString(Mask)
			lb.WriteString(low[:i])
			lb.WriteString(Mask)
			s, low = s[i+len(sec):], low[i+len(sec):]
		}
		b.WriteString(s)
		lb.WriteString(low)
		s, low = b.String(), lb.String()
	}
	return s
}

// shapes masks secrets recognised by their shape rather than their value:
// those a server sent, which no flag registered.
func (r *Redactor) byShape(s string) string {
	if r.text == nil || !strings.ContainsAny(s, "@=:") || !r.mayHoldShape(s) {
		return s
	}
	re := r.text()
	return re.ReplaceAllStringFunc(s, func(m string) string {
		sub := re.FindStringSubmatch(m)
		if sub[1] != "" {
			if pw := m[min(len(sub[1])+len(sub[2])+1, len(m)-1) : len(m)-1]; showsUser(sub[2], pw, true) {
				return sub[1] + sub[2] + ":" + Mask + "@"
			}
			return sub[1] + Mask + "@"
		}
		for _, keep := range sub[3:] {
			if keep != "" {
				return keep + Mask
			}
		}
		return Mask
	})
}

// maskParams masks the values of secret parameters in a query or a
// fragment (OAuth's implicit grant puts access_token there).
func (r *Redactor) maskParams(q string) string {
	if r == nil || q == "" {
		return q
	}
	parts := strings.Split(q, "&")
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
	return strings.Join(parts, "&")
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

// URL renders u with its password shown as *** (user:***@; a lone word
// before @, which may be a token or a password, as ***@) and secret query
// values masked, keeping the order of the parameters.
func (r *Redactor) URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	hadUser := c.User != nil
	userinfo := Mask
	if hadUser {
		if pw, hasPW := c.User.Password(); showsUser(c.User.Username(), pw, hasPW) {
			userinfo = url.User(c.User.Username()).String() + ":" + Mask
		}
	}
	c.User = nil // url.User escapes "*": insert the mask by hand below
	if r != nil {
		c.RawQuery = r.maskParams(c.RawQuery)
		if c.Fragment != "" {
			frag := r.maskParams(c.EscapedFragment())
			if f, err := url.PathUnescape(frag); err == nil {
				c.Fragment, c.RawFragment = f, frag
			}
		}
	}
	out := c.String()
	if hadUser {
		if scheme, rest, ok := strings.Cut(out, "://"); ok {
			out = scheme + "://" + userinfo + "@" + rest
		}
	}
	return r.String(out)
}

// RawURL redacts text that looks like a URL but may not parse (a server's
// Location): a password before the host becomes *** (user:***@), a lone
// word there ***, secret query values become ***, and known secrets are
// scrubbed.
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
			if user, pw, hasPW := strings.Cut(rest[:at], ":"); showsUser(user, pw, hasPW) {
				rest = user + ":" + Mask + rest[at:]
			} else {
				rest = Mask + rest[at:]
			}
		}
		s = scheme + "://" + rest
	}
	s, frag, hasFrag := strings.Cut(s, "#")
	if base, query, ok := strings.Cut(s, "?"); ok {
		s = base + "?" + r.maskParams(query)
	}
	if hasFrag {
		s += "#" + r.maskParams(frag)
	}
	return r.String(s)
}

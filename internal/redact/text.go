package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

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
		if j := strings.LastIndexAny(s[:i], "?&#;"); j >= 0 && r.params[asciiLower(s[j+1:i])] && !masked(s[i+1:]) {
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

// masked reports whether the value at the start of v, to where the shape
// pattern ends one, is the mask already: the pattern would write the same
// text again (a URL its query's secrets masked: URL, then String).
func masked(v string) bool {
	end := strings.IndexAny(v, "&#;\"'<>\\ \t\n\f\r")
	if end < 0 {
		end = len(v)
	}
	return v[:end] == Mask
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
	return r.shapeReplace(s)
}

// shapeReplace masks what the shape pattern finds in s. Each match is
// masked from the groups it matched in s: matched again alone it may not
// match at all (\b at its edges reads its neighbours).
func (r *Redactor) shapeReplace(s string) string {
	ms := r.text().FindAllStringSubmatchIndex(s, -1)
	if ms == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(s[last:m[0]])
		b.WriteString(maskShape(s, m))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// maskShape is what replaces one match of the shape pattern (m: its
// submatch indices in s): the text its groups keep, then the mask.
func maskShape(s string, m []int) string {
	group := func(k int) string {
		if m[2*k] < 0 {
			return ""
		}
		return s[m[2*k]:m[2*k+1]]
	}
	whole := s[m[0]:m[1]]
	if scheme := group(1); scheme != "" {
		user := group(2)
		if pw := whole[min(len(scheme)+len(user)+1, len(whole)-1) : len(whole)-1]; showsUser(user, pw, true) {
			return scheme + user + ":" + Mask + "@"
		}
		return scheme + Mask + "@"
	}
	for k := 3; 2*k < len(m); k++ {
		if keep := group(k); keep != "" {
			return keep + Mask
		}
	}
	return Mask
}

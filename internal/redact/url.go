package redact

import (
	"net/url"
	"strings"
)

// showsUser says a URL's user name may be shown: it names who logs in only
// when a password follows it. Without one, an empty one (an API key as
// `KEY:@`, as curl -u KEY: sends it) or GitHub's `TOKEN:x-oauth-basic`
// placeholder, the user name is the credential.
func showsUser(user, password string, hasPassword bool) bool {
	return user != "" && hasPassword && password != "" && !strings.EqualFold(password, "x-oauth-basic")
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

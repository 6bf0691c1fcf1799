package expect

import (
	"fmt"
	"slices"
	"strings"
)

// AnswerExpect are conditions on the answer rather than on its content:
// whether it came over TLS, its HTTP version, whether its body fits a
// limit. blackbox_exporter's fail_if_ssl, fail_if_not_ssl,
// valid_http_versions and body_size_limit.
type AnswerExpect struct {
	// TLS is "" (either), "required" (fail_if_not_ssl) or "refused"
	// (fail_if_ssl).
	TLS string
	// HTTPVersions are the versions accepted as the protocol line
	// writes them (HTTP/1.1, HTTP/2.0); none: any.
	HTTPVersions []string
	// BodyLimit fails an answer whose body was longer than the cap it
	// was read with (the probe's max body).
	BodyLimit bool
	// Encoding is the Content-Encoding the answer must have (gzip, br,
	// deflate): blackbox's compression decodes the body with it, and
	// fails when it cannot. "" or identity: any.
	Encoding string
}

// IsZero reports whether no answer condition is set.
func (a *AnswerExpect) IsZero() bool {
	return a.TLS == "" && len(a.HTTPVersions) == 0 && !a.BodyLimit && a.Encoding == ""
}

// CheckAnswer returns why the answer fails a condition, or "": overTLS
// is whether the final answer came over TLS, proto its protocol line's
// version (HTTP/1.1), encoding its Content-Encoding, truncated whether its
// body was longer than maxBody.
func (a *AnswerExpect) CheckAnswer(overTLS bool, proto, encoding string, truncated bool, maxBody int64) string {
	switch {
	case a.TLS == "refused" && overTLS:
		return "the answer came over TLS, which it must not (fail_if_ssl)"
	case a.TLS == "required" && !overTLS:
		return "the answer did not come over TLS (fail_if_not_ssl)"
	}
	if len(a.HTTPVersions) > 0 && !slices.ContainsFunc(a.HTTPVersions, func(v string) bool { return sameVersion(v, proto) }) {
		return fmt.Sprintf("the answer is %s, not %s", proto, strings.Join(a.HTTPVersions, " or "))
	}
	if a.Encoding != "" && a.Encoding != "identity" && !strings.EqualFold(strings.TrimSpace(encoding), a.Encoding) {
		if encoding == "" {
			encoding = "none"
		}
		return fmt.Sprintf("the body is not %s-encoded (Content-Encoding: %s)", a.Encoding, encoding)
	}
	if a.BodyLimit && truncated {
		return fmt.Sprintf("the body is longer than its limit of %s", sizeText(maxBody))
	}
	return ""
}

// sameVersion compares protocol versions as blackbox_exporter's
// valid_http_versions lists them: HTTP/2 and HTTP/2.0 are one.
func sameVersion(a, b string) bool {
	norm := func(s string) string {
		s = strings.ToUpper(strings.TrimSpace(s))
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	return norm(a) == norm(b)
}

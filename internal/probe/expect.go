package probe

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// StatusSet is a set of expected HTTP status codes: codes, ranges and
// classes ("200", "200-399", "2xx", comma lists).
type StatusSet struct {
	spec   string
	ranges [][2]int
}

// DefaultStatus is any 2xx, the seed's "clean pass".
var DefaultStatus = StatusSet{spec: "2xx", ranges: [][2]int{{200, 299}}}

// ParseStatusSet parses --expect-status.
func ParseStatusSet(s string) (StatusSet, error) {
	set := StatusSet{spec: s}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "":
			return set, fmt.Errorf("empty entry")
		case len(part) == 3 && strings.HasSuffix(strings.ToLower(part), "xx") && part[0] >= '1' && part[0] <= '5':
			c := int(part[0]-'0') * 100
			set.ranges = append(set.ranges, [2]int{c, c + 99})
		case strings.Contains(part, "-"):
			lo, hi, _ := strings.Cut(part, "-")
			a, err1 := statusCode(lo)
			b, err2 := statusCode(hi)
			if err1 != nil || err2 != nil || a > b {
				return set, fmt.Errorf("bad range %q", part)
			}
			set.ranges = append(set.ranges, [2]int{a, b})
		default:
			c, err := statusCode(part)
			if err != nil {
				return set, fmt.Errorf("%q is not a status code, range or class", part)
			}
			set.ranges = append(set.ranges, [2]int{c, c})
		}
	}
	return set, nil
}

func statusCode(s string) (int, error) {
	c, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || c < 100 || c > 599 {
		return 0, fmt.Errorf("bad status %q", s)
	}
	return c, nil
}

// Contains reports whether code is expected.
func (s StatusSet) Contains(code int) bool {
	if s.ranges == nil {
		s = DefaultStatus
	}
	for _, r := range s.ranges {
		if code >= r[0] && code <= r[1] {
			return true
		}
	}
	return false
}

func (s StatusSet) String() string {
	if s.spec == "" {
		return DefaultStatus.spec
	}
	return s.spec
}

// check returns a description of the first condition that failed, or "".
// A failed body condition on a truncated body says so.
func (e *Expectations) check(resp *http.Response, body bodyResult, maxBody int64) string {
	if body.hasMissingText {
		return fmt.Sprintf("body does not contain %q", body.missingText) + truncNote(body, maxBody)
	}
	if body.failedRegex != nil {
		return fmt.Sprintf("body does not match /%s/", body.failedRegex) + truncNote(body, maxBody)
	}
	for _, j := range e.JSON {
		if body.jsonOver {
			return fmt.Sprintf("body is longer than the %s kept for --expect-json (wanted %s=%s)", sizeText(MaxJSONBody), j.Path, j.Value)
		}
		if !gjson.ValidBytes(body.json) {
			return fmt.Sprintf("body is not JSON (wanted %s=%s)", j.Path, j.Value) + truncNote(body, maxBody)
		}
		got := gjson.GetBytes(body.json, j.Path)
		if !got.Exists() {
			return fmt.Sprintf("JSON path %s is missing (wanted %q)", j.Path, j.Value) + truncNote(body, maxBody)
		}
		if got.String() != j.Value {
			return fmt.Sprintf("JSON %s is %q, want %q", j.Path, got.String(), j.Value)
		}
	}
	for _, h := range e.HeaderRE {
		vals := resp.Header.Values(h.Name)
		ok := false
		for _, v := range vals {
			if h.RE.MatchString(v) {
				ok = true
			}
		}
		if !ok {
			if len(vals) == 0 {
				return fmt.Sprintf("header %s is missing (want /%s/)", h.Name, h.RE)
			}
			return fmt.Sprintf("header %s does not match /%s/", h.Name, h.RE)
		}
	}
	return ""
}

// maxRetryAfter caps a server's Retry-After: beyond it, seconds times
// time.Second would overflow (found by FuzzRetryAfter: 9999999999999 came
// out negative) and a date would saturate at an odd duration.
const maxRetryAfter = 365 * 24 * time.Hour

// retryAfter parses Retry-After: delta seconds or an HTTP date, capped at
// maxRetryAfter.
func retryAfter(v string, now time.Time) *time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		d := maxRetryAfter
		if n < int64(maxRetryAfter/time.Second) {
			d = time.Duration(n) * time.Second
		}
		return &d
	}
	if t, err := http.ParseTime(v); err == nil {
		// An HTTP date has whole seconds; so has the delay.
		d := min(max(t.Sub(now), 0), maxRetryAfter).Round(time.Second)
		return &d
	}
	return nil
}

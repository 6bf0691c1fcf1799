// Package expect holds the conditions a response must meet to pass: the
// expected status set, the body conditions (substrings, regular
// expressions, JSON paths) evaluated on the bytes the probe read, the
// header conditions, and Retry-After parsing. It is pure: it never reads
// from the network; the probe feeds it what it read.
package expect

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/healthctl/healthctl/internal/jsondepth"
)

// Expectations are the conditions a response must meet to pass, and
// those that mark a pass as degraded.
type Expectations struct {
	Status    StatusSet
	BodyText  []string
	BodyRegex []*regexp.Regexp
	JSON      []JSONExpect
	HeaderRE  []HeaderExpect
	// BodyNotRegex and HeaderNotRE are the negative conditions: the
	// body, or a value of the header, must not match (blackbox's
	// fail_if_body_matches_regexp, fail_if_header_matches).
	BodyNotRegex []*regexp.Regexp
	HeaderNotRE  []HeaderExpect
	// DegradedBody and DegradedJSON mark an answer that passes as
	// degraded when one holds: the body matches, the JSON condition holds.
	DegradedBody []*regexp.Regexp
	DegradedJSON []JSONExpect
	// Answer holds the conditions on the answer itself rather than its
	// content (blackbox_exporter's fail_if_ssl, valid_http_versions, …).
	Answer AnswerExpect
}

// JSONExpect is one JSON condition: PATH=VALUE, or another comparison
// (Op: OpNotEqual, OpLess, …; "" is OpEqual).
type JSONExpect struct {
	Path, Value string
	Op          string
}

// HeaderExpect is one --expect-header NAME=RE.
type HeaderExpect struct {
	Name string
	RE   *regexp.Regexp
	// AllowMissing: a response without the header meets the condition
	// (blackbox_exporter's allow_missing).
	AllowMissing bool
}

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

// Check returns a description of the first condition that failed, or "":
// the body conditions over what the scan of the body learned, the header
// conditions over the response headers, or, for a field absent from them,
// over the trailer fields that came after the body (body.Trailer). A failed body condition on a
// truncated body says so (maxBody is the cap it was read with).
func (e *Expectations) Check(header http.Header, body Body, maxBody int64) string {
	if e.ReadsBody() && body.DecodeErr != "" {
		return "body says Content-Encoding: gzip but is not valid gzip (" + body.DecodeErr + ")"
	}
	if e.ReadsBody() && body.Encoding != "" {
		return fmt.Sprintf("body is %s-encoded (Content-Encoding: %s), which the body conditions cannot read: ask for gzip or identity with -H 'Accept-Encoding: …'", body.Encoding, body.Encoding)
	}
	if body.HasMissingText {
		return fmt.Sprintf("body does not contain %q", body.MissingText) + truncNote(body, maxBody)
	}
	if body.FailedRegex != nil {
		return fmt.Sprintf("body does not match /%s/", body.FailedRegex) + truncNote(body, maxBody)
	}
	if body.MatchedNot != nil {
		return fmt.Sprintf("body matches /%s/, which it must not", body.MatchedNot)
	}
	if msg, _ := judgeJSON(e.JSON, body, maxBody, false); msg != "" {
		return msg
	}
	for _, h := range e.HeaderRE {
		vals, where := header.Values(h.Name), ""
		if len(vals) == 0 && len(body.Trailer.Values(h.Name)) > 0 {
			// Not in the header section: the field came after the
			// body, and the condition is judged on that.
			vals, where = body.Trailer.Values(h.Name), " (sent as a trailer)"
		}
		ok := false
		for _, v := range vals {
			if h.RE.MatchString(v) {
				ok = true
			}
		}
		if !ok && len(vals) == 0 && h.AllowMissing {
			continue
		}
		if !ok {
			if len(vals) == 0 {
				return fmt.Sprintf("header %s is missing (want /%s/)", h.Name, h.RE)
			}
			return fmt.Sprintf("header %s%s does not match /%s/", h.Name, where, h.RE)
		}
	}
	for _, h := range e.HeaderNotRE {
		for _, v := range header.Values(h.Name) {
			if h.RE.MatchString(v) {
				return fmt.Sprintf("header %s matches /%s/, which it must not (%s: %s)", h.Name, h.RE, h.Name, v)
			}
		}
		for _, v := range body.Trailer.Values(h.Name) {
			if h.RE.MatchString(v) {
				return fmt.Sprintf("header %s (sent as a trailer) matches /%s/, which it must not (%s: %s)", h.Name, h.RE, h.Name, v)
			}
		}
	}
	return ""
}

// Degraded says why an answer that passed is degraded — the first
// degraded condition that holds — or "" when none does (or none is set).
func (e *Expectations) Degraded(body Body, maxBody int64) string {
	if body.DegradedRegex != nil {
		return fmt.Sprintf("body matches /%s/", body.DegradedRegex)
	}
	if len(e.DegradedJSON) == 0 {
		return ""
	}
	_, held := judgeJSON(e.DegradedJSON, body, maxBody, true)
	return held
}

// judgeJSON evaluates JSON conditions over the body kept for them. For
// conditions that must hold (degraded false) it returns why the first
// that does not hold fails; for degraded conditions, held says the first
// that holds. A body that is not JSON fails a condition that must hold and
// marks nothing degraded.
func judgeJSON(conds []JSONExpect, body Body, maxBody int64, degraded bool) (failed, held string) {
	if len(conds) == 0 {
		return "", ""
	}
	j := conds[0]
	if body.JSONOver {
		return fmt.Sprintf("body is longer than the %s kept for --expect-json (wanted %s)", sizeText(MaxJSONBody), j), ""
	}
	// gjson validates and walks by recursion, a stack frame per level:
	// a body nested millions deep would overflow the stack (a fatal
	// error, not a panic: the whole process, every target of a sweep,
	// would die). The nesting is bounded first, without recursion.
	if err := jsondepth.Check(body.JSON, jsondepth.Max); err != nil {
		return fmt.Sprintf("body is not evaluated as JSON: %v (wanted %s)", err, j), ""
	}
	if !gjson.ValidBytes(body.JSON) {
		return fmt.Sprintf("body is not JSON (wanted %s)", j) + truncNote(body, maxBody), ""
	}
	// The document is parsed once for every condition, through a view of
	// the body, not a copy (up to 8 MiB a target); a query's copy without
	// duplicates is made at most once.
	var deduped gjson.Result
	var queried, rewritten bool
	doc := gjson.Parse(view(body.JSON))
	const dupNote = " (the body names a key twice in one object: its last value counts, as JSON.parse, jq and Python read it)"
	for _, j := range conds {
		var got gjson.Result
		twice := false
		if plainPath(j.Path) {
			got, twice = lastPath(doc, j.Path)
		} else {
			if !queried {
				queried = true
				deduped = doc
				if len(body.JSON) <= MaxDuplicateRewrite && hasDuplicateKeys(doc) {
					deduped = gjson.Parse(view(lastWins(make([]byte, 0, len(body.JSON)), doc)))
					rewritten = true
				}
			}
			got, twice = deduped.Get(j.Path), rewritten
		}
		note := ""
		if twice {
			note = dupNote
		}
		if !got.Exists() {
			if degraded {
				continue
			}
			wanted := strconv.Quote(j.Value)
			if j.op() != OpEqual {
				wanted = j.String()
			}
			return fmt.Sprintf("JSON path %s is missing (wanted %s)", j.Path, wanted) + truncNote(body, maxBody) + note, ""
		}
		ok, why := j.judge(got)
		switch {
		case degraded && ok:
			return "", fmt.Sprintf("JSON %s holds (%s is %s)", j, j.Path, jsonShown(got)) + note
		case !degraded && !ok:
			return why + note, ""
		}
	}
	return "", ""
}

// jsonShown is a value for a message: a string quoted, anything else as
// the body writes it.
func jsonShown(got gjson.Result) string {
	if got.Type == gjson.String {
		return strconv.Quote(got.String())
	}
	return got.Raw
}

// view is b as a string without a copy, as gjson's own GetBytes reads
// bytes. Safe here because nothing writes b while Check runs and no
// string read from it outlives Check: the messages are made by fmt,
// which copies what it formats.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// isJSONNumber says s is a number as JSON writes one (RFC 8259 §6):
// encoding/json's own grammar, with nothing around it (a number starts
// with - or a digit and ends with a digit; json.Valid allows white space).
func isJSONNumber(s string) bool {
	return s != "" && (s[0] == '-' || isDigit(s[0])) && isDigit(s[len(s)-1]) && json.Valid([]byte(s))
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// jsonEqual says the value at a path is VALUE, as a user reading the body
// means it:
//   - a string: its decoded text;
//   - true, false, null: the word;
//   - a number: the number, however either side writes it (1.50 is 1.5, 1e3
//     is 1000). Two integers are compared digit by digit, so two ids past
//     float64's 2^53 that differ in the last digit never count as equal.
//
// gjson's String() gives "" for null and writes a fraction again (1.50 as
// 1.5), so it is not the comparison.
func jsonEqual(got gjson.Result, want string) bool {
	switch got.Type {
	case gjson.Null:
		return want == "null"
	case gjson.Number:
		if got.Raw == want {
			return true
		}
		if !isJSONNumber(want) || !isJSONNumber(got.Raw) {
			return false
		}
		if isInteger(got.Raw) && isInteger(want) {
			// JSON writes an integer one way (no leading zeros), but for
			// the sign of zero.
			return strings.TrimPrefix(got.Raw, "-") == "0" && strings.TrimPrefix(want, "-") == "0"
		}
		w, err := strconv.ParseFloat(want, 64)
		return err == nil && w == got.Num
	}
	return got.String() == want
}

// jsonText is the value at a path as the body writes it, for the message.
func jsonText(got gjson.Result) string {
	if got.Type == gjson.Null || got.Type == gjson.Number {
		return got.Raw
	}
	return got.String()
}

func isInteger(s string) bool { return !strings.ContainsAny(s, ".eE") }

// MaxRetryAfter is the longest Retry-After kept (a year); a longer one, or
// one too big to count, is clamped to it.
const MaxRetryAfter = 365 * 24 * time.Hour

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// RetryAfter parses Retry-After: delta seconds or an HTTP date (relative to
// now); nil when v is empty or neither.
func RetryAfter(v string, now time.Time) *time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	if digits(v) {
		// Any number of seconds, clamped: 9999999999 must not wrap
		// around time.Duration into a negative delay.
		d := MaxRetryAfter
		if n, err := strconv.ParseUint(v, 10, 64); err == nil && n < uint64(MaxRetryAfter/time.Second) {
			d = time.Duration(n) * time.Second
		}
		return &d
	}
	if t, err := http.ParseTime(v); err == nil {
		// An HTTP date has whole seconds; so has the delay.
		d := min(t.Sub(now).Round(time.Second), MaxRetryAfter)
		if d < 0 {
			d = 0
		}
		return &d
	}
	return nil
}

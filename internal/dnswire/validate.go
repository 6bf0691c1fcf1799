package dnswire

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Validator is blackbox's DNSRRValidator: regular expressions over a
// section's records (each as its presentation-format text).
type Validator struct {
	// FailIfMatches: the probe fails if any record matches one.
	FailIfMatches []*regexp.Regexp
	// FailIfAllMatch: the probe fails unless every record matches each
	// (blackbox's code, whatever the name says: it fails when one
	// record does not match, and passes when there are none).
	FailIfAllMatch []*regexp.Regexp
	// FailIfNotMatches: the probe fails if a record does not match one,
	// or if there is no record.
	FailIfNotMatches []*regexp.Regexp
	// FailIfNoneMatches: the probe fails unless some record matches each,
	// and if there is no record.
	FailIfNoneMatches []*regexp.Regexp
}

// The validators' names: blackbox's, without _regexp. A URL's parameter
// is SECTION_NAME (answer_fail_if_matches).
var validatorNames = [4]string{"fail_if_matches", "fail_if_all_match", "fail_if_not_matches", "fail_if_none_matches"}

// list is the validator's list named by i (validatorNames' order).
func (v *Validator) list(i int) *[]*regexp.Regexp {
	return [4]*[]*regexp.Regexp{&v.FailIfMatches, &v.FailIfAllMatch, &v.FailIfNotMatches, &v.FailIfNoneMatches}[i]
}

// Check runs a section's validator over its records as blackbox's
// validRRs does: "" when they hold, else what failed (naming the
// validator as the URL's parameter sec_NAME, the expression and the
// record).
func (v *Validator) Check(sec string, rrs []string) string {
	param := func(i int) string { return sec + "_" + validatorNames[i] }
	if len(rrs) == 0 && len(v.FailIfNotMatches) > 0 {
		return fmt.Sprintf("no %s record to match %q (%s)", sec, v.FailIfNotMatches[0].String(), param(2))
	}
	if len(rrs) == 0 && len(v.FailIfNoneMatches) > 0 {
		return fmt.Sprintf("no %s record to match %q (%s)", sec, v.FailIfNoneMatches[0].String(), param(3))
	}
	for _, re := range v.FailIfMatches {
		for _, rr := range rrs {
			if re.MatchString(rr) {
				return fmt.Sprintf("%s record %q matches %q (%s)", sec, rr, re.String(), param(0))
			}
		}
	}
	for _, re := range v.FailIfAllMatch {
		for _, rr := range rrs {
			if !re.MatchString(rr) {
				// blackbox's code fails here: one record that does
				// not match.
				return fmt.Sprintf("%s record %q does not match %q (%s, as blackbox_exporter applies it)", sec, rr, re.String(), param(1))
			}
		}
	}
	for _, re := range v.FailIfNotMatches {
		for _, rr := range rrs {
			if !re.MatchString(rr) {
				return fmt.Sprintf("%s record %q does not match %q (%s)", sec, rr, re.String(), param(2))
			}
		}
	}
	if len(v.FailIfNoneMatches) > 0 && !slices.ContainsFunc(rrs, func(rr string) bool {
		return slices.ContainsFunc(v.FailIfNoneMatches, func(re *regexp.Regexp) bool { return re.MatchString(rr) })
	}) {
		// Any record matching any of them will do.
		return fmt.Sprintf("no %s record matches %s (%s)", sec, quoteAll(v.FailIfNoneMatches), param(3))
	}
	return ""
}

// Empty says the validator checks nothing.
func (v *Validator) Empty() bool {
	return len(v.FailIfMatches)+len(v.FailIfAllMatch)+len(v.FailIfNotMatches)+len(v.FailIfNoneMatches) == 0
}

// quoteAll is expressions quoted, joined with "or".
func quoteAll(res []*regexp.Regexp) string {
	q := make([]string, len(res))
	for i, re := range res {
		q[i] = strconv.Quote(re.String())
	}
	return strings.Join(q, " or ")
}

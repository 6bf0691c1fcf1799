package dnswire

// dns:// as a kind: its reasons, and the answer its exchange hands the
// classifier, the report and /probe's series (classify.Answer).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/healthctl/healthctl/internal/classify"
)

// The reasons of a DNS answer. Both are unreachable: the server is the
// target, and its answer is not the one asked for.
const (
	// Rcode is a reply whose rcode is not one the URL allows (rcode=,
	// blackbox's valid_rcodes; default NOERROR): NXDOMAIN, SERVFAIL,
	// REFUSED…
	Rcode classify.Reason = "dns_rcode"
	// Protocol is an answer that is not a DNS reply (garbage, a message
	// cut short, a connection closed without a reply over TCP).
	Protocol classify.Reason = "dns_protocol"
)

// Kind is the DNS kind's declaration.
var Kind = classify.Declare(classify.Kind{
	Name:        "dns",
	NotProtocol: Protocol,
	Silence:     "no DNS reply",
	Reasons: []classify.ReasonDef{
		{Reason: Rcode, Outcome: classify.Unreachable, Doc: "the DNS server answered an rcode the URL does not allow (NXDOMAIN, SERVFAIL, REFUSED…)"},
		{Reason: Protocol, Outcome: classify.Unreachable, Doc: "the answer is not a DNS reply"},
	},
})

// Answer is what a DNS probe got, read or not (classify.Answer). Every
// record is in presentation format, as the validators saw it (tabs
// between its fields).
type Answer struct {
	Question   string   `json:"question"`
	Transport  string   `json:"transport"`
	Rcode      string   `json:"rcode,omitempty"`
	Truncated  bool     `json:"truncated,omitempty"`
	Answer     []string `json:"answer"`
	Authority  []string `json:"authority"`
	Additional []string `json:"additional"`
	// Serial is the SOA serial of the answer (a query of type SOA).
	Serial *uint32 `json:"serial,omitempty"`
	// Seen is what came when it was not a DNS reply.
	Seen string `json:"seen,omitempty"`

	// Read: a reply (or what came instead) was read.
	Read bool `json:"-"`
	// NotDNS: what came was not a DNS reply.
	NotDNS bool `json:"-"`
	// RcodeOK: the rcode is one the URL allows; Want names them.
	RcodeOK bool   `json:"-"`
	Want    string `json:"-"`
	// Failed is the validator that failed ("" none).
	Failed string `json:"-"`
	// SOA: the query asked for SOA (blackbox's probe_dns_serial).
	SOA bool `json:"-"`
	// Resolve, Connect and Request are blackbox's probe_dns_duration_seconds
	// phases, in seconds.
	Resolve, Connect, Request float64 `json:"-"`
}

// Kind is the DNS kind (classify.Answer).
func (*Answer) Kind() *classify.Kind { return Kind }

// Reason names what the DNS server answered: blackbox's order, the rcode
// first, then the answer, authority and additional validators.
func (a *Answer) Reason() classify.Reason {
	switch {
	case !a.Read || a.NotDNS:
		return Protocol
	case !a.RcodeOK:
		return Rcode
	case a.Failed != "":
		return classify.ConditionFailed
	}
	return classify.OK
}

// Text says what a DNS answer that did not pass was.
func (a *Answer) Text(r classify.Reason, err error) string {
	switch {
	case r == Protocol && a.Seen != "":
		return "not DNS: the server sent " + a.Seen
	case r == Protocol && err != nil:
		return "not DNS: " + classify.ErrorText(err)
	case r == Rcode:
		return fmt.Sprintf("the DNS server answered %s to %s (want %s)", a.Rcode, a.Question, a.Want)
	}
	return ""
}

// Said is the reply's rcode ("NOERROR", "NXDOMAIN").
func (a *Answer) Said() string { return a.Rcode }

// Status is the first line's status column: the rcode.
func (a *Answer) Status() string { return a.Rcode }

// maxLines bounds the records the details list a section.
const maxLines = 10

// Lines are the question, the rcode and the records, section by section.
func (a *Answer) Lines() []string {
	if !a.Read || a.NotDNS {
		return nil
	}
	head := fmt.Sprintf("%s over %s: %s, %d answer, %d authority, %d additional", a.Question, strings.ToUpper(a.Transport), a.Rcode, len(a.Answer), len(a.Authority), len(a.Additional))
	if a.Truncated {
		head += " (truncated: TC set)"
	}
	lines := []string{head}
	for i, rrs := range [3][]string{a.Answer, a.Authority, a.Additional} {
		for j, rr := range rrs {
			if j == maxLines {
				lines = append(lines, fmt.Sprintf("%s: … %d more", Sections[i], len(rrs)-maxLines))
				break
			}
			lines = append(lines, Sections[i]+": "+strings.ReplaceAll(rr, "\t", " "))
		}
	}
	return lines
}

// JSON is the answer itself, once a reply was read.
func (a *Answer) JSON() any {
	if !a.Read {
		return nil
	}
	return a
}

// Series writes blackbox's dns prober's own families (emit a sample of a
// gauge each): the phases, the records of each section, whether the
// query got a reply, and the SOA serial for a query of type SOA.
func (a *Answer) Series(emit func(name, help string, value float64, labels ...string)) {
	for _, ph := range []struct {
		label string
		s     float64
	}{{"connect", a.Connect}, {"request", a.Request}, {"resolve", a.Resolve}} {
		emit("probe_dns_duration_seconds", "Duration of DNS request by phase", ph.s, "phase", ph.label)
	}
	ok := a.Read && !a.NotDNS
	n := func(rrs []string) float64 {
		if !ok {
			return 0
		}
		return float64(len(rrs))
	}
	emit("probe_dns_answer_rrs", "Returns number of entries in the answer resource record list", n(a.Answer))
	emit("probe_dns_authority_rrs", "Returns number of entries in the authority resource record list", n(a.Authority))
	emit("probe_dns_additional_rrs", "Returns number of entries in the additional resource record list", n(a.Additional))
	emit("probe_dns_query_succeeded", "Displays whether or not the query was executed successfully", b2f(ok))
	if a.SOA && ok {
		var serial float64
		if a.Serial != nil {
			serial = float64(*a.Serial)
		}
		emit("probe_dns_serial", "Returns the serial number of the zone", serial)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// RcodeList names rcodes for a sentence ("NOERROR or NXDOMAIN").
func RcodeList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// QuoteSeen quotes the first bytes of what came instead of a reply.
func QuoteSeen(b []byte) string {
	const max = 32
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + " (" + strconv.Itoa(len(b)) + " bytes)"
	}
	return strconv.Quote(string(b))
}

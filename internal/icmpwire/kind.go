package icmpwire

// icmp:// as a kind: the answer its exchange hands the classifier, the
// report and /probe's series (classify.Answer). It has no reasons of its
// own: a destination unreachable is host_unreachable or net_unreachable,
// no reply the read window's timeout, a socket not permitted local_error.

import (
	"fmt"

	"github.com/healthctl/healthctl/internal/classify"
)

// Kind is the ICMP kind's declaration.
var Kind = classify.Declare(classify.Kind{
	Name:    "icmp",
	Silence: "no echo reply",
})

// Answer is what an ICMP probe got (classify.Answer).
type Answer struct {
	// Echo: the matching echo reply came.
	Echo bool `json:"echo_reply"`
	// Bytes is the request's payload size.
	Bytes int `json:"bytes"`
	// HopLimit is the reply's TTL (hop limit for IPv6), -1 unknown.
	HopLimit int `json:"hop_limit,omitempty"`
	// Socket is the socket the request went out on: "ping" or "raw".
	Socket string `json:"socket,omitempty"`

	// Resolve, Setup and RTT are blackbox's probe_icmp_duration_seconds
	// phases, in seconds.
	Resolve, Setup, RTT float64 `json:"-"`
	// NotPermitted is the one line that says no ICMP socket may be
	// opened and how to allow one ("" when one was).
	NotPermitted string `json:"-"`
}

// Kind is the ICMP kind (classify.Answer).
func (*Answer) Kind() *classify.Kind { return Kind }

// Reason is OK with the echo reply; without one the exchange ended in
// an error, which the generic reasons name.
func (a *Answer) Reason() classify.Reason {
	if a.Echo {
		return classify.OK
	}
	return classify.ProtocolError
}

// Text leaves every sentence to the generic ones.
func (a *Answer) Text(classify.Reason, error) string { return "" }

// Said is "echo reply" once one came.
func (a *Answer) Said() string {
	if a.Echo {
		return "echo reply"
	}
	return ""
}

// Status is the first line's status column.
func (a *Answer) Status() string {
	if a.Echo {
		return "echo-reply"
	}
	return ""
}

// Lines say what came back.
func (a *Answer) Lines() []string {
	if !a.Echo {
		return nil
	}
	l := fmt.Sprintf("echo reply to %d bytes over a %s socket", a.Bytes, a.Socket)
	if a.HopLimit >= 0 {
		l += fmt.Sprintf(", hop limit %d", a.HopLimit)
	}
	return []string{l}
}

// JSON is the answer itself, once the reply came.
func (a *Answer) JSON() any {
	if !a.Echo {
		return nil
	}
	return a
}

// Series writes blackbox's icmp prober's own families (emit a sample of
// a gauge each): the three phases always (0 for what was not reached),
// the reply's hop limit with a reply; and, when no ICMP socket may be
// opened, healthctl_probe_not_started saying how to allow one.
func (a *Answer) Series(emit func(name, help string, value float64, labels ...string)) {
	for _, ph := range []struct {
		label string
		s     float64
	}{{"resolve", a.Resolve}, {"setup", a.Setup}, {"rtt", a.RTT}} {
		emit("probe_icmp_duration_seconds", "Duration of icmp request by phase", ph.s, "phase", ph.label)
	}
	if a.Echo && a.HopLimit >= 0 {
		emit("probe_icmp_reply_hop_limit", "Replied packet hop limit (TTL for ipv4)", float64(a.HopLimit))
	}
	if a.NotPermitted != "" {
		emit("healthctl_probe_not_started", "Why /probe answered without probing (always 1): "+a.NotPermitted, 1, "why", "icmp_not_permitted", "prober", "icmp")
	}
}

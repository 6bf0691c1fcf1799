package classify

import (
	"fmt"
	"net"
	"strings"
)

// severity ranks outcomes for --all-addresses, whose worst result decides:
// the decisive failures (dns, refused, unreachable) over tls, over a
// timeout, over unknown (nothing learnt), over pass. A switch, not a map: a
// map literal is built at every start, probe included.
func severity(o Outcome) int {
	switch o {
	case Unknown:
		return 1
	case Timeout:
		return 2
	case TLS:
		return 3
	case Unreachable:
		return 4
	case Refused:
		return 5
	case DNS:
		return 6
	}
	return 0 // Pass
}

// Worse reports whether outcome a is worse than b (--all-addresses).
func Worse(a, b Outcome) bool { return severity(a) > severity(b) }

// AddressResult is one address's result of --all-addresses.
type AddressResult struct {
	// Address is the address probed ("127.0.0.2:8080").
	Address string
	// Family is 4 or 6.
	Family  int
	Outcome Outcome
	Reason  Reason
}

// AddressSummary says how many addresses pass and names what failed: a
// whole family when every address of it failed while the other family
// passes ("IPv6 refused"), else each failing address ("127.0.0.2 refused
// (conn_refused)"), without the port when it is the URL's.
func AddressSummary(results []AddressResult, port string) string {
	pass := 0
	byFam := map[int][]AddressResult{}
	for _, r := range results {
		if r.Outcome == Pass {
			pass++
		}
		byFam[r.Family] = append(byFam[r.Family], r)
	}
	parts := []string{fmt.Sprintf("%d of %d addresses pass", pass, len(results))}
	famDone := map[int]bool{}
	for _, fam := range []int{4, 6} {
		rs := byFam[fam]
		other := byFam[10-fam]
		if len(rs) == 0 || len(other) == 0 {
			continue
		}
		failed, otherPass := true, false
		outcomes := map[Outcome]bool{}
		for _, r := range rs {
			failed = failed && r.Outcome != Pass
			outcomes[r.Outcome] = true
		}
		for _, r := range other {
			otherPass = otherPass || r.Outcome == Pass
		}
		if failed && otherPass {
			what := "fails"
			if len(outcomes) == 1 {
				what = string(rs[0].Outcome)
			}
			parts = append(parts, fmt.Sprintf("IPv%d %s", fam, what))
			famDone[fam] = true
		}
	}
	for _, r := range results {
		if r.Outcome == Pass || famDone[r.Family] {
			continue
		}
		addr := r.Address
		if h, p, err := net.SplitHostPort(addr); err == nil && p == port {
			addr = h
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", addr, r.Outcome, r.Reason))
	}
	return strings.Join(parts, "; ")
}

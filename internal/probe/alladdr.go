package probe

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/crash"
)

// severity ranks outcomes for --all-addresses, whose worst result decides:
// the decisive failures (dns, refused, unreachable) over tls, over a
// timeout, over unknown (nothing learnt), over pass.
var severity = map[classify.Outcome]int{
	classify.Pass: 0, classify.Unknown: 1, classify.Timeout: 2, classify.TLS: 3,
	classify.Unreachable: 4, classify.Refused: 5, classify.DNS: 6,
}

// Worse reports whether outcome a is worse than b (--all-addresses).
func Worse(a, b classify.Outcome) bool { return severity[a] > severity[b] }

// runAll is --all-addresses: the name's addresses (A and AAAA, or every
// --resolve address) are each probed on their own, with the name's Host
// and SNI, at once. The result is the worst one, with every address's
// result in Addresses and a summary naming the broken backend or family as
// its Error. A name that does not resolve, or has one address, is probed
// as usual.
func runAll(ctx context.Context, opts *Options) Result {
	host, port := opts.URL.Hostname(), opts.URL.Port()
	if port == "" {
		port = DefaultPort(opts.URL.Scheme)
	}
	addrs := addressesOf(ctx, opts, host, port)
	single := *opts
	single.AllAddresses = false
	if len(addrs) < 2 {
		return Run(ctx, &single)
	}
	results := make([]Result, len(addrs))
	var wg sync.WaitGroup
	key := strings.ToLower(host) + ":" + port
	for i, a := range addrs {
		o := single
		o.Resolve = make(map[string][]string, len(opts.Resolve)+1)
		for k, v := range opts.Resolve {
			o.Resolve[k] = v
		}
		o.Resolve[key] = []string{a.String()}
		wg.Go(func() {
			defer crash.Recover()
			results[i] = Run(ctx, &o)
		})
	}
	wg.Wait()

	worst := 0
	for i, r := range results {
		if r.Canceled {
			worst = i
			break
		}
		if Worse(r.Outcome, results[worst].Outcome) {
			worst = i
		}
	}
	res := results[worst]
	res.Addresses = results
	if res.Outcome != classify.Pass && !res.Canceled {
		res.Error = summary(results, port)
	}
	return res
}

// addressesOf resolves host as a probe would (--resolve, an IP literal,
// --dns-server, -4/-6), within the connect window; nil when it does not
// resolve (the probe then reports why).
func addressesOf(ctx context.Context, opts *Options, host, port string) []netip.Addr {
	var addrs []netip.Addr
	if as, ok := opts.Resolve[strings.ToLower(host)+":"+port]; ok {
		for _, a := range as {
			addrs = append(addrs, netip.MustParseAddr(a))
		}
	} else if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{ip}
	} else {
		ctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
		defer cancel()
		if addrs, err = newRun(opts, hooks{}).lookup(ctx, host); err != nil {
			return nil
		}
	}
	addrs = slices.DeleteFunc(addrs, func(a netip.Addr) bool {
		return (opts.Network == "tcp4" && family(a) != 4) || (opts.Network == "tcp6" && family(a) != 6)
	})
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return slices.Compact(addrs)
}

// summary says how many addresses pass and names what failed: a whole
// family when every address of it failed while the other family passes
// ("IPv6 refused"), else each failing address ("127.0.0.2 refused").
func summary(results []Result, port string) string {
	pass := 0
	byFam := map[int][]Result{}
	for _, r := range results {
		if r.Outcome == classify.Pass {
			pass++
		}
		byFam[r.IPFamily] = append(byFam[r.IPFamily], r)
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
		outcomes := map[classify.Outcome]bool{}
		for _, r := range rs {
			failed = failed && r.Outcome != classify.Pass
			outcomes[r.Outcome] = true
		}
		for _, r := range other {
			otherPass = otherPass || r.Outcome == classify.Pass
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
		if r.Outcome == classify.Pass || famDone[r.IPFamily] {
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

package probe

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/scheme"
)

// runAll is --all-addresses: the name's addresses (A and AAAA, or every
// --resolve address) are each probed on their own, with the name's Host
// and SNI, at once. The result is the worst one, with every address's
// result in Addresses and a summary naming the broken backend or family as
// its Error. A name that does not resolve, or has one address, is probed
// as usual.
func runAll(ctx context.Context, opts *scheme.Options) Result {
	host, port := opts.URL.Hostname(), opts.URL.Port()
	if port == "" {
		port = scheme.DefaultPort(opts.URL.Scheme)
	}
	single := *opts
	single.AllAddresses = false
	if scheme.SocketPath(opts.URL) != "" {
		// A Unix socket has one address and no name to look up.
		return Run(ctx, &single)
	}
	addrs := addressesOf(ctx, opts, host, port)
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
		if classify.Worse(r.Outcome, results[worst].Outcome) {
			worst = i
		}
	}
	res := results[worst]
	res.Addresses = results
	if res.Outcome != classify.Pass && !res.Canceled {
		sum := make([]classify.AddressResult, len(results))
		for i, r := range results {
			sum[i] = classify.AddressResult{Address: r.Address, Family: r.IPFamily, Outcome: r.Outcome, Reason: r.Reason}
		}
		res.Error = classify.AddressSummary(sum, port)
	}
	return res
}

// addressesOf resolves host as a probe would (--resolve, an IP literal,
// --dns-server, -4/-6), within the connect window; nil when it does not
// resolve (the probe then reports why).
func addressesOf(ctx context.Context, opts *scheme.Options, host, port string) []netip.Addr {
	addrs, fixed := session.FixedAddrs(opts, host, port, nil)
	if !fixed {
		ctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
		defer cancel()
		var err error
		if addrs, _, err = session.New(opts, session.Hooks{}).DNS.Lookup(ctx, host); err != nil {
			return nil
		}
	}
	addrs = session.OfFamily(opts, addrs)
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return slices.Compact(addrs)
}

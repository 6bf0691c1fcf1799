package blackbox

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/proxyenv"
	"github.com/healthctl/healthctl/internal/scheme"
)

// A module with a /probe target: the URL it probes and the probe's
// options.

// url is the URL module m probes for a /probe target: blackbox's http
// prober takes a URL (the default scheme's when none is given), tcp and
// grpc host:port, over TLS with tls: true. The prober's name is the row's
// (the scheme table's http, tcp and grpc).
func (m *Module) url(tgt string) (string, error) {
	if m.dnsQuery != "" {
		return m.dnsURL(tgt)
	}
	if m.icmpQuery != "" {
		return m.icmpURL(tgt)
	}
	if m.speaks(scheme.AppliesRequest) {
		if !strings.Contains(tgt, "://") {
			return scheme.DefaultScheme().URL(tgt), nil
		}
		return tgt, nil
	}
	s, ok := m.row, true
	if m.TLS {
		s, ok = s.OverTLS()
	}
	if !ok {
		return "", fmt.Errorf("prober %q has no TLS", m.Prober)
	}
	if m.speaks(scheme.AppliesGRPCService) && !strings.Contains(tgt, "/") {
		// blackbox's grpc prober: a target without a port is dialled
		// on 80, or 443 with tls: true.
		host := strings.TrimSuffix(strings.TrimPrefix(tgt, "["), "]")
		if _, err := netip.ParseAddr(host); err == nil || !strings.Contains(tgt, ":") {
			port := "80"
			if m.TLS {
				port = "443"
			}
			tgt = net.JoinHostPort(host, port)
		}
	}
	return s.URL(tgt), nil
}

// Options are the probe's options for a /probe target with a budget
// (Budget; 0: the module's windows as built): the module's windows are
// blackbox's one timeout, the budget, all three (connect, read and the
// whole probe). A module without timeout: gets the scrape's budget, not
// the flags' windows.
func (m *Module) Options(tgt string, budget time.Duration) (*scheme.Options, error) {
	raw, err := m.url(tgt)
	if err != nil {
		return nil, err
	}
	if wf := m.wrongFamily(raw); wf != nil {
		wf.answer = m.notProbed()
		return nil, wf
	}
	// A redactor of the request's own: the module's secrets and the
	// target's, never another request's. The error names the target as
	// a redactor of no secrets shows it (userinfo and secret parameters
	// masked where they stand): it says nothing of what any secret is.
	blank := m.tmpl.Redactor().Blank()
	o, err := m.tmpl.ForURLAlone(raw, "target "+strconv.Quote(blank.RawURL(raw)))
	if err != nil {
		return nil, errors.New(blank.String(err.Error()))
	}
	if m.body != nil {
		o.Body, o.BodyFile, o.BodySize = m.body, "", 0
	}
	o.Follow, o.HopAllowed = 0, nil
	if m.follow && m.hopAllowed != nil && m.speaks(scheme.AppliesRequest) {
		o.Follow, o.HopAllowed = MaxRedirects, m.hopAllowed
	}
	o.Prefer = m.prefer
	if m.proxy != nil {
		// The module's proxy for every hop, as blackbox's client.
		o.Proxy = proxyenv.Fixed(m.proxy, m.noProxy)
	}
	o.Dialogue = m.dialogue
	o.Expect.Answer = m.answer
	if m.headerRE != nil {
		o.Expect.HeaderRE = m.headerRE
	}
	if m.minTLS != 0 || m.maxTLS != 0 {
		tc := o.TLSConfig.Clone()
		if tc == nil {
			tc = &tls.Config{}
		}
		tc.MinVersion, tc.MaxVersion = m.minTLS, m.maxTLS
		o.TLSConfig = tc
	}
	if budget > 0 {
		o.ConnectTimeout, o.ReadTimeout, o.MaxTime = budget, budget, budget
	}
	return o, nil
}

// WrongFamily is a target that is an address of the family a module
// without ip_protocol_fallback does not use: blackbox finds no address of
// its family for it and answers probe_success 0, not a refusal.
type WrongFamily struct {
	URL    *url.URL
	family string
	// answer is the prober's answer to no probe (nil: none).
	answer classify.Answer
}

func (e *WrongFamily) Error() string {
	return e.URL.Hostname() + " has no " + e.family + " address (ip_protocol_fallback: false)"
}

// Result is the probe's answer: no address of the family.
func (e *WrongFamily) Result() probe.Result {
	return probe.Result{Outcome: classify.DNS, Reason: classify.DNSNoAddress, Error: e.Error(), Answer: e.answer}
}

// wrongFamily says raw's host is an address the module's one family
// excludes (nil otherwise).
func (m *Module) wrongFamily(raw string) *WrongFamily {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]"))
	if err != nil {
		return nil
	}
	switch n := m.tmpl.Options().Network; {
	case n == "tcp4" && !ip.Unmap().Is4():
		return &WrongFamily{URL: u, family: "IPv4"}
	case n == "tcp6" && ip.Is4():
		return &WrongFamily{URL: u, family: "IPv6"}
	}
	return nil
}

package probe_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/dnsfix"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/proxyenv"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
)

// opts returns probe options for raw with short windows, using dns as the
// only DNS server.
func opts(t testing.TB, raw, dns string, pool *pkifix.PKI) *scheme.Options {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	tc := &tls.Config{}
	if pool != nil {
		tc.RootCAs = pool.Pool()
	}
	red := redact.NewRedactor(nil, nil)
	red.AddURL(u)
	return &scheme.Options{
		URL: u, Method: "GET", Header: http.Header{}, UserAgent: "healthctl/test",
		Network: "tcp", Resolve: map[string][]string{}, DNSServer: dns, TLSConfig: tc,
		ConnectTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond,
		MaxTime: time.Second, MaxBody: 64 << 10, Redactor: red,
	}
}

// TestReasonsFromRealServers runs the real probe against real loopback
// fixtures and checks the reason, and that every hang ends within its window
// plus a generous margin.
func TestReasonsFromRealServers(t *testing.T) {
	dns, err := dnsfix.NewDNSServer(t)
	if err != nil {
		t.Fatal(err)
	}
	pki, err := pkifix.NewPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := func(o fixture.HTTPOptions) string {
		if o.TLS != "" {
			o.PKI = pki
		}
		s, err := fixture.NewHTTPServer(t, o)
		if err != nil {
			t.Fatal(err)
		}
		return s.URL
	}
	closed, err := fixture.NewClosedPort(t)
	if err != nil {
		t.Fatal(err)
	}
	backlog, err := fixture.NewBacklog(t)
	if err != nil {
		t.Fatal(err)
	}
	ok := srv(fixture.HTTPOptions{})
	okPort := ok[strings.LastIndex(ok, ":")+1:]

	cases := []struct {
		name   string
		url    string
		reason classify.Reason
		stage  probe.Phase // a phase that must be recorded
		mod    func(*scheme.Options)
	}{
		{name: "pass", url: ok + "/health", reason: classify.OK, stage: probe.PhaseTransfer},
		{name: "pass via dns", url: "http://app.invalid:" + okPort + "/", reason: classify.OK, stage: probe.PhaseDNS},
		{name: "status", url: srv(fixture.HTTPOptions{Status: 503}), reason: classify.HTTPStatus},
		{name: "redirect", url: srv(fixture.HTTPOptions{Redirect: "http://other.invalid/"}), reason: classify.Redirect},
		{name: "condition", url: ok, reason: classify.ConditionFailed, mod: func(o *scheme.Options) { o.Expect.BodyText = []string{"ready"} }},
		{name: "refused", url: closed.URL(), reason: classify.ConnRefused, stage: probe.PhaseConnect},
		{name: "nxdomain", url: "http://nx.invalid/", reason: classify.DNSNXDomain, stage: probe.PhaseDNS},
		{name: "no address", url: "http://empty.invalid/", reason: classify.DNSNoAddress, stage: probe.PhaseDNS},
		{name: "servfail", url: "http://servfail.invalid/", reason: classify.DNSServfail, stage: probe.PhaseDNS},
		{name: "dns hang", url: "http://silent.invalid/", reason: classify.DNSTimeout, stage: probe.PhaseDNS},
		{name: "connect hang", url: backlog.URL(), reason: classify.ConnectTimeout, stage: probe.PhaseConnect},
		{name: "tls hang", url: srv(fixture.HTTPOptions{TLS: fixture.TLSStall}), reason: classify.TLSHandshakeTimeout, stage: probe.PhaseTLS},
		{name: "headers hang", url: srv(fixture.HTTPOptions{Mode: fixture.ModeHang}), reason: classify.HeadersTimeout},
		{name: "body trickle", url: srv(fixture.HTTPOptions{Mode: fixture.ModeTrickle}), reason: classify.BodyTimeout, stage: probe.PhaseTTFB},
		{name: "reset", url: srv(fixture.HTTPOptions{Mode: fixture.ModeReset}), reason: classify.ConnReset},
		{name: "garbage", url: srv(fixture.HTTPOptions{Mode: fixture.ModeGarbage}), reason: classify.ProtocolError},
		{name: "empty", url: srv(fixture.HTTPOptions{Mode: fixture.ModeEmpty}), reason: classify.ProtocolError},
		{name: "tls good", url: srv(fixture.HTTPOptions{TLS: fixture.TLSGood}), reason: classify.OK, stage: probe.PhaseTLS},
		{name: "self-signed", url: srv(fixture.HTTPOptions{TLS: fixture.TLSSelfSigned}), reason: classify.TLSUnknownAuthority},
		{name: "expired", url: srv(fixture.HTTPOptions{TLS: fixture.TLSExpired}), reason: classify.TLSExpired},
		{name: "not yet valid", url: srv(fixture.HTTPOptions{TLS: fixture.TLSNotYet}), reason: classify.TLSNotYetValid},
		{name: "wrong name", url: srv(fixture.HTTPOptions{TLS: fixture.TLSWrongName}), reason: classify.TLSHostnameMismatch},
		{name: "client cert wanted", url: srv(fixture.HTTPOptions{TLS: fixture.TLSClientCert}), reason: classify.TLSClientCertRequired},
		{name: "tls eof", url: srv(fixture.HTTPOptions{TLS: fixture.TLSEOF}), reason: classify.TLSHandshakeFailure},
		{name: "plain on tls", url: strings.Replace(ok, "http://", "https://", 1), reason: classify.TLSNotTLS},
		{name: "proxy down", url: ok, reason: classify.ProxyUnreachable, mod: func(o *scheme.Options) {
			o.Proxy = proxyenv.FromEnv(func(k string) string {
				if k == "http_proxy" {
					return closed.URL()
				}
				return ""
			}, "")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := opts(t, tc.url, dns.Addr, pki)
			if tc.mod != nil {
				tc.mod(o)
			}
			start := time.Now()
			r := probe.Run(context.Background(), o)
			took := time.Since(start)
			if r.Reason != tc.reason {
				t.Fatalf("reason %s (%s), want %s; error: %s", r.Reason, r.Outcome, tc.reason, r.Error)
			}
			if r.Outcome != tc.reason.Outcome() {
				t.Errorf("outcome %s, want %s", r.Outcome, tc.reason.Outcome())
			}
			if r.Outcome != classify.Pass && r.Error == "" {
				t.Errorf("no error text for %s", r.Reason)
			}
			if tc.stage != "" {
				if _, ok := r.Timings.Get(tc.stage); !ok {
					t.Errorf("phase %s not recorded: %v", tc.stage, r.Timings)
				}
			}
			if _, ok := r.Timings.Get(probe.PhaseTotal); !ok {
				t.Errorf("no total")
			}
			// Generous bound: max-time is 1s; a hang must never outlive it by much.
			if took > o.MaxTime+2*time.Second {
				t.Errorf("took %s, beyond --max-time %s plus margin", took, o.MaxTime)
			}
		})
	}
}

// TestMaxTimeCapsEverything: a trickle under long connect/read windows is
// still cut by --max-time, named by the phase that was running.
func TestMaxTimeCapsEverything(t *testing.T) {
	s, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{Mode: fixture.ModeTrickle})
	if err != nil {
		t.Fatal(err)
	}
	o := opts(t, s.URL, "", nil)
	o.ConnectTimeout, o.ReadTimeout, o.MaxTime = time.Minute, time.Minute, 300*time.Millisecond
	start := time.Now()
	r := probe.Run(context.Background(), o)
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("took %s with --max-time 300ms", took)
	}
	if r.Reason != classify.BodyTimeout || !strings.Contains(r.Error, "--max-time") {
		t.Errorf("got %s %q, want body_timeout naming --max-time", r.Reason, r.Error)
	}
}

// TestCanceledIsNotAFailure: Ctrl-C ends a hanging probe at once and the
// result says so instead of pretending a timeout.
func TestCanceledIsNotAFailure(t *testing.T) {
	s, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{Mode: fixture.ModeHang})
	if err != nil {
		t.Fatal(err)
	}
	o := opts(t, s.URL, "", nil)
	o.ReadTimeout, o.MaxTime = time.Minute, time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	r := probe.Run(ctx, o)
	if !r.Canceled {
		t.Errorf("not marked canceled: %s %s", r.Reason, r.Error)
	}
}

// TestCanceledAfterTheAnswerIsAResult: a signal that lands once the
// answer has been read (the HTTP/1.1 exchange has closed its connection, the
// server has seen the client go) does not turn the finished probe into an
// interrupted one: probe_signal.txtar's /fast, which CI once saw reported
// as interrupted.
func TestCanceledAfterTheAnswerIsAResult(t *testing.T) {
	s, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{Status: 200})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := probe.RunAfterExchange(ctx, opts(t, s.URL, "", nil), cancel)
	if r.Canceled || r.Outcome != classify.Pass {
		t.Errorf("cancelled after the exchange: canceled %v, %s %s %s; want a pass", r.Canceled, r.Outcome, r.Reason, r.Error)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

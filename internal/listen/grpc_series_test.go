package listen

import (
	"crypto/tls"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/fixture/grpcsrv"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/target"
)

// blackboxGRPCSeries are the families blackbox_exporter 0.23 answers for
// a grpc module once the address is resolved (as it answered grpc-go's
// health server); blackboxGRPCTLSSeries the ones a TLS call that was
// answered adds. Before the address is resolved blackbox has no
// probe_grpc_healthcheck_response and only the resolve phase.
var (
	blackboxGRPCSeries = []string{
		"probe_dns_lookup_time_seconds", "probe_duration_seconds", "probe_grpc_duration_seconds",
		"probe_grpc_healthcheck_response", "probe_grpc_ssl", "probe_grpc_status_code",
		"probe_ip_addr_hash", "probe_ip_protocol", "probe_ssl_earliest_cert_expiry", "probe_success",
	}
	blackboxGRPCTLSSeries = []string{"probe_ssl_last_chain_info", "probe_tls_version_info"}
)

// TestGRPCSeriesAsBlackbox: a grpc module's answer has blackbox's grpc
// families with its labels and values — one
// probe_grpc_healthcheck_response per serving status (1 for the one
// answered), the call's status code (5 NOT_FOUND, 12 UNIMPLEMENTED, 14
// UNAVAILABLE for a call with no grpc-status), the TLS families only with
// a health answer — and no http series.
func TestGRPCSeriesAsBlackbox(t *testing.T) {
	dir := t.TempDir()
	pki, err := pkifix.NewPKI(filepath.Join(dir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	good, err := pki.ServerCertificate(pkifix.CertGood)
	if err != nil {
		t.Fatal(err)
	}
	services := map[string]string{"down": "NOT_SERVING"}
	plain, err := grpcsrv.Start(t, grpcsrv.Options{Services: services})
	if err != nil {
		t.Fatal(err)
	}
	none, err := grpcsrv.Start(t, grpcsrv.Options{NoHealth: true})
	if err != nil {
		t.Fatal(err)
	}
	secure, err := grpcsrv.Start(t, grpcsrv.Options{Services: services, TLS: &tls.Config{Certificates: []tls.Certificate{good}}})
	if err != nil {
		t.Fatal(err)
	}
	yml := `modules:
  grpc:
    prober: grpc
  down:
    prober: grpc
    grpc: {service: down}
  unknown:
    prober: grpc
    grpc: {service: nope}
  grpcs:
    prober: grpc
    grpc:
      tls: true
      tls_config: {ca_file: ` + pki.CAFile + `}
  grpcs_unknown:
    prober: grpc
    grpc:
      service: nope
      tls: true
      tls_config: {ca_file: ` + pki.CAFile + `}
  grpcs_untrusted:
    prober: grpc
    grpc: {tls: true}
  v6only:
    prober: grpc
    grpc: {preferred_ip_protocol: ip6, ip_protocol_fallback: false}
`
	mods, err := blackbox.ParseModules(filepath.Join(dir, "bb.yml"), []byte(yml), target.Defaults(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := ParseAllow([]string{"127.0.0.1"})
	blackbox.BindAllow(mods, allow.Permits)
	h := New(Config{Interval: time.Minute, Probe: probe.Run, Modules: mods, Allow: allow}).Handler()
	status := func(answered string) []string {
		var out []string
		for _, s := range []string{"UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"} {
			v := "0"
			if s == answered {
				v = "1"
			}
			out = append(out, `probe_grpc_healthcheck_response{serving_status="`+s+`"} `+v)
		}
		return out
	}
	tlsSeries := append(slices.Clone(blackboxGRPCSeries), blackboxGRPCTLSSeries...)
	for _, c := range []struct {
		module, target string
		want           []string
		values         []string
	}{
		{"grpc", plain.Addr, blackboxGRPCSeries, append(status("SERVING"), "probe_success 1", "probe_grpc_status_code 0", "probe_grpc_ssl 0",
			"probe_ssl_earliest_cert_expiry 0", "probe_ip_protocol 4", "probe_ip_addr_hash 3.668918509e+09")},
		{"down", plain.Addr, blackboxGRPCSeries, append(status("NOT_SERVING"), "probe_success 0", "probe_grpc_status_code 0")},
		{"unknown", plain.Addr, blackboxGRPCSeries, append(status(""), "probe_success 0", "probe_grpc_status_code 5")},
		{"grpc", none.Addr, blackboxGRPCSeries, append(status(""), "probe_success 0", "probe_grpc_status_code 12")},
		{"grpc", "127.0.0.1:1", blackboxGRPCSeries, append(status(""), "probe_success 0", "probe_grpc_status_code 14")},
		// Cleartext to a TLS server: no gRPC answer, UNAVAILABLE.
		{"grpc", secure.Addr, blackboxGRPCSeries, []string{"probe_success 0", "probe_grpc_status_code 14"}},
		{"grpcs", secure.Addr, tlsSeries, append(status("SERVING"), "probe_success 1", "probe_grpc_ssl 1",
			`probe_tls_version_info{version="TLS 1.3"} 1`)},
		// A non-OK status over TLS: blackbox reads no peer, so no TLS
		// family and probe_grpc_ssl 0.
		{"grpcs_unknown", secure.Addr, blackboxGRPCSeries, []string{"probe_success 0", "probe_grpc_ssl 0", "probe_ssl_earliest_cert_expiry 0",
			"probe_grpc_status_code 5"}},
		{"grpcs_untrusted", secure.Addr, blackboxGRPCSeries, []string{"probe_success 0", "probe_grpc_ssl 0", "probe_grpc_status_code 14"}},
		// No address of the one family: the probe fails before the call,
		// as blackbox's does (200, not a refusal).
		{"v6only", plain.Addr, []string{"probe_dns_lookup_time_seconds", "probe_duration_seconds", "probe_grpc_duration_seconds",
			"probe_grpc_ssl", "probe_grpc_status_code", "probe_ip_addr_hash", "probe_ip_protocol", "probe_ssl_earliest_cert_expiry", "probe_success"},
			[]string{"probe_success 0", "probe_grpc_status_code 0", "probe_ip_protocol 0", "probe_ip_addr_hash 0",
				`probe_grpc_duration_seconds{phase="resolve"} 0`}},
	} {
		code, body := get(t, h, "/probe?module="+c.module+"&target="+url.QueryEscape(c.target))
		if code != 200 {
			t.Fatalf("%s %s: %d %s", c.module, c.target, code, body)
		}
		checkExposition(t, body)
		names, samples := families(body)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("%s %s: families\n%v\nwant blackbox's\n%v", c.module, c.target, names, want)
		}
		phases := 2
		if !slices.Contains(c.want, "probe_grpc_healthcheck_response") {
			phases = 1
		}
		if n := len(samples["probe_grpc_duration_seconds"]); n != phases {
			t.Errorf("%s %s: %d phases, want blackbox's %d", c.module, c.target, n, phases)
		}
		for _, v := range c.values {
			if !strings.Contains(body, "\n"+v+"\n") {
				t.Errorf("%s %s: no %q\n%s", c.module, c.target, v, body)
			}
		}
	}
}

// TestGRPCDefaultPort: a grpc target without a port is dialled on 80, or
// 443 with tls: true, as blackbox's grpc prober does.
func TestGRPCDefaultPort(t *testing.T) {
	mods, err := blackbox.ParseModules("bb.yml", []byte("modules:\n  g:\n    prober: grpc\n  gs:\n    prober: grpc\n    grpc: {tls: true}\n"), target.Defaults(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ module, target, want string }{
		{"g", "127.0.0.1", "grpc://127.0.0.1:80"}, {"gs", "app.invalid", "grpcs://app.invalid:443"},
		{"g", "::1", "grpc://[::1]:80"}, {"g", "[::1]", "grpc://[::1]:80"}, {"g", "127.0.0.1:50051", "grpc://127.0.0.1:50051"},
	} {
		o, err := mods[c.module].Options(c.target, time.Second)
		if err != nil || o.URL.String() != c.want {
			t.Errorf("%s %s: %v %v, want %s", c.module, c.target, o, err, c.want)
		}
	}
}

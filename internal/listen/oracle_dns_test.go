//go:build linux

package listen

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/dnsfix"
	"github.com/healthctl/healthctl/internal/fixture/stackfix"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/target"
)

// oracleDNSModules are blackbox's dns fields, one module each (its
// example.yml's dns_udp_example's validators among them), run by both
// against the loopback DNS fixture.
const oracleDNSModules = `modules:
  dns_a:
    prober: dns
    dns: {query_name: app.invalid, query_type: A}
  dns_any:
    prober: dns
    dns: {query_name: app.invalid}
  dns_tcp:
    prober: dns
    dns: {query_name: app.invalid, query_type: A, transport_protocol: tcp, preferred_ip_protocol: ip4}
  dns_norecurse:
    prober: dns
    dns: {query_name: app.invalid, query_type: A, recursion_desired: false}
  dns_nx:
    prober: dns
    dns: {query_name: nx.invalid, query_type: A}
  dns_nx_ok:
    prober: dns
    dns: {query_name: nx.invalid, query_type: A, valid_rcodes: [NOERROR, NXDOMAIN]}
  dns_servfail:
    prober: dns
    dns: {query_name: servfail.invalid, query_type: A}
  dns_refused:
    prober: dns
    timeout: 2s
    dns: {query_name: refused.invalid, query_type: A, transport_protocol: tcp}
  dns_soa:
    prober: dns
    dns: {query_name: invalid, query_type: SOA}
  dns_soa_none:
    prober: dns
    dns: {query_name: app.invalid, query_type: SOA}
  dns_tc:
    prober: dns
    dns: {query_name: tc.invalid, query_type: A}
  dns_tc_tcp:
    prober: dns
    dns: {query_name: tc.invalid, query_type: A, transport_protocol: tcp}
  dns_garbled:
    prober: dns
    dns: {query_name: garbled.invalid, query_type: A}
  dns_silent:
    prober: dns
    timeout: 1s
    dns: {query_name: silent.invalid, query_type: A}
  dns_mx:
    prober: dns
    dns:
      query_name: mx.invalid
      query_type: MX
      validate_answer_rrs:
        fail_if_not_matches_regexp: ["mx.invalid.\t5\tIN\tMX\t10 app.invalid."]
      validate_additional_rrs:
        fail_if_none_matches_regexp: ["127.0.0.1"]
  dns_mx_fails:
    prober: dns
    dns:
      query_name: mx.invalid
      query_type: MX
      validate_additional_rrs:
        fail_if_matches_regexp: [".*127.0.0.1"]
  dns_txt:
    prober: dns
    dns:
      query_name: txt.invalid
      query_type: TXT
      validate_answer_rrs:
        fail_if_not_matches_regexp: ["^txt.invalid.\t5\tIN\tTXT\t\"v=healthctl\" \"ok\"$"]
  dns_all_match:
    prober: dns
    dns:
      query_name: two4.invalid
      query_type: A
      validate_answer_rrs:
        fail_if_all_match_regexp: [".*127.0.0.1"]
  dns_all_match_all:
    prober: dns
    dns:
      query_name: two4.invalid
      query_type: A
      validate_answer_rrs:
        fail_if_all_match_regexp: [".*127.0.0.*"]
  dns_none_matches:
    prober: dns
    dns:
      query_name: two4.invalid
      query_type: A
      validate_answer_rrs:
        fail_if_none_matches_regexp: [".*127.0.0.3", ".*127.0.0.2"]
  dns_not_matches_empty:
    prober: dns
    dns:
      query_name: empty.invalid
      query_type: A
      validate_answer_rrs:
        fail_if_not_matches_regexp: ["."]
  dns_authority:
    prober: dns
    dns:
      query_name: empty.invalid
      query_type: A
      validate_authority_rrs:
        fail_if_not_matches_regexp: ["^invalid.\t5\tIN\tSOA\tns.invalid. hostmaster.invalid. 1 60 60 60 5$"]
  dns_udp_example:
    prober: dns
    timeout: 5s
    dns:
      query_name: "www.prometheus.io.invalid"
      query_type: "A"
      valid_rcodes:
        - NOERROR
      validate_answer_rrs:
        fail_if_matches_regexp:
          - ".*127.0.0.1"
        fail_if_all_match_regexp:
          - ".*127.0.0.1"
        fail_if_not_matches_regexp:
          - "www.prometheus.io.\t300\tIN\tA\t127.0.0.1"
        fail_if_none_matches_regexp:
          - "127.0.0.1"
      validate_authority_rrs:
        fail_if_matches_regexp:
          - ".*127.0.0.1"
      validate_additional_rrs:
        fail_if_matches_regexp:
          - ".*127.0.0.1"
`

// oracleDNSSkipped are the families whose values are the run's own.
var oracleDNSSkipped = map[string]bool{
	"probe_duration_seconds": true, "probe_dns_lookup_time_seconds": true, "probe_dns_duration_seconds": true,
}

// TestBlackboxOracleDNS runs Debian's blackbox_exporter beside the
// listener on the same dns modules against the loopback DNS fixture (and
// a closed port) and compares every probe_success and every series both
// answer, timings aside. Only with HEALTHCTL_STACKS=1.
func TestBlackboxOracleDNS(t *testing.T) {
	stackfix.Require(t, "", blackboxBin)
	d, err := dnsfix.NewDNSServer(t)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "blackbox.yml")
	if err := os.WriteFile(cfg, []byte(oracleDNSModules), 0o600); err != nil {
		t.Fatal(err)
	}
	mods, err := blackbox.ReadModules(cfg, target.Defaults(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := ParseAllow([]string{"127.0.0.1"})
	blackbox.BindAllow(mods, allow.Permits)
	ours := New(Config{Interval: time.Minute, Probe: probe.Run, Modules: mods, Allow: allow}).Handler()
	port, err := fixture.UnusedPort()
	if err != nil {
		t.Fatal(err)
	}
	closed, err := fixture.UnusedPort()
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := exec.LookPath(blackboxBin)
	if !stackfix.StartDaemon(t, stackfix.Daemon{Name: "blackbox_exporter", Dir: dir, Ports: []int{port}, Prog: bin,
		Args: []string{"--config.file=" + cfg, "--web.listen-address=127.0.0.1:" + strconv.Itoa(port)}}) {
		return
	}
	bb := "http://127.0.0.1:" + strconv.Itoa(port)
	var names []string
	for n := range mods {
		names = append(names, n)
	}
	sort.Strings(names)
	type probeCase struct{ module, target string }
	var cases []probeCase
	for _, n := range names {
		cases = append(cases, probeCase{n, d.Addr})
	}
	gone := "127.0.0.1:" + strconv.Itoa(closed)
	cases = append(cases, probeCase{"dns_a", gone}, probeCase{"dns_tcp", gone})
	for _, c := range cases {
		q := "/probe?module=" + c.module + "&target=" + url.QueryEscape(c.target)
		theirBody := httpGet(t, bb+q)
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", q, nil)
		req.Header.Set(ScrapeTimeoutHeader, "3")
		ours.ServeHTTP(rec, req)
		code, ourBody := rec.Code, rec.Body.String()
		if code != 200 {
			t.Errorf("%s %s: healthctl %d %s", c.module, c.target, code, ourBody)
			continue
		}
		ourFams, theirFams := parseFams(t, ourBody), parseFams(t, theirBody)
		var diffs []string
		for name, theirs := range theirFams {
			if oracleDNSSkipped[name] {
				continue
			}
			o, ok := ourFams[name]
			if !ok {
				diffs = append(diffs, "missing "+name)
				continue
			}
			if a, b := samples(o), samples(theirs); a != b {
				diffs = append(diffs, fmt.Sprintf("%s: healthctl %s, blackbox %s", name, a, b))
			}
		}
		for name := range ourFams {
			if _, ok := theirFams[name]; !ok && !strings.HasPrefix(name, "healthctl_") {
				diffs = append(diffs, "extra "+name)
			}
		}
		sort.Strings(diffs)
		if len(diffs) > 0 {
			t.Errorf("%s %s:\n  %s", c.module, c.target, strings.Join(diffs, "\n  "))
		}
		t.Logf("%s %s: %s", c.module, c.target, outcomeLine(ourBody))
	}
}

// outcomeLine is the healthctl_probe_outcome sample of an answer.
func outcomeLine(body string) string {
	for l := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(l, "healthctl_probe_outcome{") {
			return l
		}
	}
	return ""
}

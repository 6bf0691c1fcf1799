package probe_test

import (
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/dnswire"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/dnsfix"
	"github.com/healthctl/healthctl/internal/probe"
)

// udpServer answers every datagram with reply(query), nothing when it is
// nil.
func udpServer(t *testing.T, reply func(q []byte) [][]byte) string {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 65535)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			for _, out := range reply(append([]byte(nil), buf[:n]...)) {
				pc.WriteTo(out, addr)
			}
		}
	}()
	return pc.LocalAddr().String()
}

// TestDNSProbe: dns:// against the loopback DNS fixture over UDP and TCP:
// every rcode, the validators, truncation, garbage, silence.
func TestDNSProbe(t *testing.T) {
	d, err := dnsfix.NewDNSServer(t)
	if err != nil {
		t.Fatal(err)
	}
	srv := d.Addr
	// Garbage; a reply with another ID first, then the right one; a
	// query echoed back (no reply).
	garbage := udpServer(t, func([]byte) [][]byte { return [][]byte{[]byte("HTTP/1.1 400 Bad Request\r\n\r\n")} })
	otherFirst := udpServer(t, func(q []byte) [][]byte {
		real, _ := net.Dial("udp", srv)
		defer real.Close()
		real.Write(q)
		real.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 4096)
		n, _ := real.Read(buf)
		wrong := append([]byte(nil), buf[:n]...)
		wrong[0] ^= 0xff
		return [][]byte{wrong, buf[:n]}
	})
	echo := udpServer(t, func(q []byte) [][]byte { return [][]byte{q} })
	port, err := fixture.UnusedPort()
	if err != nil {
		t.Fatal(err)
	}
	closed := "127.0.0.1:" + strconv.Itoa(port)
	for _, tc := range []struct {
		url    string
		reason classify.Reason
		text   string
		json   string
	}{
		{"dns://" + srv + "/app.invalid", classify.OK, "", `"rcode":"NOERROR","answer":["app.invalid.\t5\tIN\tA\t127.0.0.1"]`},
		{"dns://" + srv + "/app.invalid?transport=tcp", classify.OK, "", `"transport":"tcp"`},
		{"dns://" + srv + "/app.invalid?type=AAAA", classify.OK, "", `"answer":[],"authority":["invalid.\t5\tIN\tSOA\tns.invalid. hostmaster.invalid. 1 60 60 60 5"]`},
		{"dns://" + srv + "/nx.invalid", dnswire.Rcode, "the DNS server answered NXDOMAIN to nx.invalid. IN A (want NOERROR)", ""},
		{"dns://" + srv + "/nx.invalid?rcode=NOERROR,NXDOMAIN", classify.OK, "", `"rcode":"NXDOMAIN"`},
		{"dns://" + srv + "/servfail.invalid", dnswire.Rcode, "SERVFAIL", ""},
		{"dns://" + srv + "/refused.invalid?transport=tcp", dnswire.Rcode, "REFUSED", ""},
		{"dns://" + srv + "/invalid?type=SOA", classify.OK, "", `"serial":1`},
		{"dns://" + srv + "/mx.invalid?type=mx", classify.OK, "", `"answer":["mx.invalid.\t5\tIN\tMX\t10 app.invalid."],"authority":[],"additional":["app.invalid.\t5\tIN\tA\t127.0.0.1"]`},
		{"dns://" + srv + "/txt.invalid?type=TXT", classify.OK, "", `TXT\t\"v=healthctl\" \"ok\""`},
		// The validators, blackbox's.
		{"dns://" + srv + "/app.invalid?answer_fail_if_none_matches=127%5C.0%5C.0%5C.1", classify.OK, "", ""},
		{"dns://" + srv + "/app.invalid?answer_fail_if_none_matches=127%5C.0%5C.0%5C.2", classify.ConditionFailed, `no answer record matches "127\\.0\\.0\\.2" (answer_fail_if_none_matches)`, ""},
		{"dns://" + srv + "/app.invalid?answer_fail_if_matches=127", classify.ConditionFailed, `answer record "app.invalid. 5 IN A 127.0.0.1" matches "127" (answer_fail_if_matches)`, ""},
		{"dns://" + srv + "/empty.invalid?answer_fail_if_not_matches=.", classify.ConditionFailed, "no answer record to match", ""},
		{"dns://" + srv + "/two4.invalid?answer_fail_if_all_match=127.0.0.1", classify.ConditionFailed, `does not match "127.0.0.1" (answer_fail_if_all_match, as blackbox_exporter applies it)`, ""},
		{"dns://" + srv + "/mx.invalid?type=MX&additional_fail_if_matches=127", classify.ConditionFailed, "additional record", ""},
		{"dns://" + srv + "/app.invalid?type=AAAA&authority_fail_if_not_matches=SOA", classify.OK, "", ""},
		// The rcode is judged before the validators.
		{"dns://" + srv + "/nx.invalid?answer_fail_if_matches=.", dnswire.Rcode, "NXDOMAIN", ""},
		// Truncated over UDP: judged as it came, as blackbox does.
		{"dns://" + srv + "/tc.invalid", classify.OK, "", `"truncated":true`},
		// Over TCP the fixture closes without a reply.
		{"dns://" + srv + "/tc.invalid?transport=tcp", dnswire.Protocol, "without a DNS reply", ""},
		{"dns://" + srv + "/garbled.invalid", dnswire.Protocol, "which is not a DNS message", ""},
		{"dns://" + srv + "/silent.invalid", classify.HeadersTimeout, "no DNS reply", ""},
		{"dns://" + srv + "/silent.invalid?transport=tcp", classify.HeadersTimeout, "no DNS reply", ""},
		{"dns://" + garbage + "/app.invalid", dnswire.Protocol, `not DNS: the server sent "HTTP/1.1 400 Bad Request`, ""},
		{"dns://" + otherFirst + "/app.invalid", classify.OK, "", ""},
		{"dns://" + echo + "/app.invalid", dnswire.Protocol, "no reply (QR not set)", ""},
		{"dns://" + closed + "/app.invalid", classify.ConnRefused, "", ""},
		{"dns://" + closed + "/app.invalid?transport=tcp", classify.ConnRefused, "", ""},
		// localhost is ::1 first: refused there (or no IPv6), the
		// query goes to 127.0.0.1 as dig's does.
		{"dns://localhost:" + strings.Split(srv, ":")[1] + "/app.invalid", classify.OK, "", ""},
		// The server by name, through the probe's own DNS.
		{"dns://app.invalid:" + strings.Split(srv, ":")[1] + "/app.invalid", classify.OK, "", ""},
	} {
		res := probe.Run(t.Context(), opts(t, tc.url, srv, nil))
		if res.Reason != tc.reason || !strings.Contains(res.Error, tc.text) {
			t.Errorf("%s: %s %q, want %s %q", tc.url, res.Reason, res.Error, tc.reason, tc.text)
		}
		if tc.json != "" {
			b, _ := json.Marshal(res.Answer.JSON())
			if !strings.Contains(string(b), tc.json) {
				t.Errorf("%s: dns %s, want %s", tc.url, b, tc.json)
			}
		}
		if res.Reason == classify.HeadersTimeout && res.Timings.Of(probe.PhaseTotal) > 5*time.Second {
			t.Errorf("%s: took %s: the read window did not end it", tc.url, res.Timings.Of(probe.PhaseTotal))
		}
	}
}

// TestDNSURL: what a dns:// URL may say, and what is refused.
func TestDNSURL(t *testing.T) {
	for _, tc := range []struct{ raw, err string }{
		{"dns://127.0.0.1/app.invalid", ""},
		{"dns://127.0.0.1:53/app.invalid.?type=aaaa&class=IN&transport=TCP&recursion_desired=false&rcode=NOERROR&rcode=NXDOMAIN", ""},
		{"dns://127.0.0.1//", "no query name"},
		{"dns://127.0.0.1/.", ""},
		{"dns://127.0.0.1", "no query name"},
		{"dns://127.0.0.1/a..b", "not a domain name"},
		{"dns://127.0.0.1/" + strings.Repeat("a", 64), "longer than 63"},
		{"dns://127.0.0.1/x?type=BOGUS", `type="BOGUS": want a record type`},
		{"dns://127.0.0.1/x?type=A&type=MX", "type twice"},
		{"dns://127.0.0.1/x?rcode=NOPE", `rcode="NOPE"`},
		{"dns://127.0.0.1/x?transport=quic", "want udp or tcp"},
		{"dns://127.0.0.1/x?recursion_desired=maybe", "want true or false"},
		{"dns://127.0.0.1/x?answer_fail_if_matches=(", "missing closing"},
		{"dns://127.0.0.1/x?answers_fail_if_matches=x", `unknown parameter "answers_fail_if_matches"`},
		{"dns://127.0.0.1/x?qtype=A", `unknown parameter "qtype"`},
		{"dns://u:p@127.0.0.1/x", "credentials"},
		{"dns://127.0.0.1/x#f", "fragment"},
	} {
		_, err := dnswire.ParseURL(mustURL(t, tc.raw))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.raw, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want %q", tc.raw, err, tc.err)
		}
	}
}

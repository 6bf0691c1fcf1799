package listen

import (
	"bufio"
	"crypto/tls"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"encoding/pem"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/target"
)

// lineServer serves each connection with talk over a line reader, on
// loopback, until the test ends.
func lineServer(t *testing.T, talk func(c net.Conn, r *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				talk(c, bufio.NewReader(c))
			}()
		}
	}()
	return ln.Addr().String()
}

// TestDialogue: tcp.query_response through /probe, with the real probe:
// banners, a send expanded from the match (IRC's PING/PONG), STARTTLS
// (SMTP's), and a banner that does not match (probe_failed_due_to_regex).
func TestDialogue(t *testing.T) {
	ssh := lineServer(t, func(c net.Conn, r *bufio.Reader) {
		c.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n"))
		r.ReadString('\n')
	})
	silent := lineServer(t, func(c net.Conn, r *bufio.Reader) { r.ReadString('\n') })
	notSSH := lineServer(t, func(c net.Conn, r *bufio.Reader) { c.Write([]byte("220 smtp.test ESMTP\r\n")) })
	irc := lineServer(t, func(c net.Conn, r *bufio.Reader) {
		r.ReadString('\n') // NICK
		r.ReadString('\n') // USER
		c.Write([]byte("PING :abc123\r\n"))
		if l, _ := r.ReadString('\n'); l == "PONG abc123\n" {
			c.Write([]byte(":irc.test 001 prober :Welcome\r\n"))
		}
	})
	tlsSrv := httptest.NewUnstartedServer(nil)
	tlsSrv.StartTLS()
	cert := tlsSrv.TLS
	tlsSrv.Close()
	smtp := lineServer(t, func(c net.Conn, r *bufio.Reader) {
		c.Write([]byte("220 smtp.test ESMTP\r\n"))
		if l, _ := r.ReadString('\n'); l != "STARTTLS\n" {
			return
		}
		c.Write([]byte("220 2.0.0 Ready to start TLS\r\n"))
		tc := tls.Server(c, cert)
		if tc.Handshake() != nil {
			return
		}
		tc.Write([]byte("250 smtp.test after TLS\r\n"))
		bufio.NewReader(tc).ReadString('\n')
	})
	pop3s := lineServer(t, func(c net.Conn, r *bufio.Reader) {
		tc := tls.Server(c, cert)
		if tc.Handshake() != nil {
			return
		}
		tc.Write([]byte("+OK POP3 ready\r\n"))
		tc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		bufio.NewReader(tc).ReadString('\n')
	})
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	yml := `modules:
  ssh_banner:
    prober: tcp
    tcp:
      query_response:
      - expect: "^SSH-2.0-"
      - send: "SSH-2.0-blackbox-ssh-check"
  ssh_quick:
    prober: tcp
    timeout: 300ms
    tcp:
      query_response:
      - expect: "^SSH-2.0-"
  irc_banner:
    prober: tcp
    tcp:
      query_response:
      - send: "NICK prober"
      - send: "USER prober prober prober :prober"
      - expect: "PING :([^ ]+)"
        send: "PONG ${1}"
      - expect: "^:[^ ]+ 001"
  pop3s_banner:
    prober: tcp
    tcp:
      query_response:
      - expect: "^\\+OK"
      tls: true
      tls_config: {ca_file: ` + ca + `, server_name: example.com}
  # Debian's own: Go's regexp (blackbox's too) reads ^+OK as ^, repeated,
  # then OK: a POP3 server's +OK never matches.
  pop3s_debian:
    prober: tcp
    tcp:
      query_response:
      - expect: "^+OK"
      tls: true
      tls_config: {ca_file: ` + ca + `, server_name: example.com}
  smtp_starttls:
    prober: tcp
    tcp:
      query_response:
      - expect: "^220 "
        send: "STARTTLS"
      - expect: "^220 "
        starttls: true
      - expect: "^250 "
        send: "QUIT"
      tls_config: {ca_file: ` + ca + `, server_name: example.com}
`
	mods, err := blackbox.ParseModules(filepath.Join(dir, "bb.yml"), []byte(yml), target.Defaults(), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := ParseAllow([]string{"127.0.0.1"})
	blackbox.BindAllow(mods, allow.Permits)
	h := New(Config{Interval: time.Minute, Probe: probe.Run, Modules: mods, Allow: allow}).Handler()
	for _, c := range []struct {
		module, addr string
		want         []string
	}{
		{"ssh_banner", ssh, []string{"probe_success 1", "probe_failed_due_to_regex 0"}},
		{"ssh_banner", notSSH, []string{"probe_success 0", "probe_failed_due_to_regex 1",
			`healthctl_probe_outcome{outcome="unreachable",reason="condition_failed"} 1`}},
		// Nothing said within the module's timeout: a timeout, not a
		// failed regexp (as blackbox).
		{"ssh_quick", silent, []string{"probe_success 0", "probe_failed_due_to_regex 0"}},
		{"irc_banner", irc, []string{"probe_success 1"}},
		{"pop3s_banner", pop3s, []string{"probe_success 1", `probe_tls_version_info{version="TLS 1.3"} 1`}},
		{"pop3s_debian", pop3s, []string{"probe_success 0", "probe_failed_due_to_regex 1"}},
		{"smtp_starttls", smtp, []string{"probe_success 1", `probe_tls_version_info{version="TLS 1.3"} 1`}},
	} {
		code, body := get(t, h, "/probe?module="+c.module+"&target="+url.QueryEscape(c.addr))
		if code != 200 {
			t.Fatalf("%s: %d %s", c.module, code, body)
		}
		checkExposition(t, body)
		for _, w := range c.want {
			if !strings.Contains(body, "\n"+w+"\n") {
				t.Errorf("%s: no %q\n%s", c.module, w, body)
			}
		}
		if strings.Contains(body, "probe_http_") {
			t.Errorf("%s: an http series on a tcp probe\n%s", c.module, body)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/output"
)

// runApp runs one command line in-process with test streams.
func runApp(t *testing.T, tty bool, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	s, out, errb := output.Test(tty)
	a := testFactory(s, func(k string) string { return env[k] })
	code := run(context.Background(), a, args)
	return code, out.String(), errb.String()
}

const ansi = "\x1b["

// TestTTYRendering: on a terminal the first line is coloured and the
// details follow (waterfall, certificate, decision); without one, only the
// first line (and the error of a failure); NO_COLOR and --no-color keep the
// details but drop the colour.
func TestTTYRendering(t *testing.T) {
	pki, err := pkifix.NewPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := fixture.NewHTTPServer(t, fixture.HTTPOptions{TLS: fixture.TLSExpired, PKI: pki})
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"probe", "--cacert", pki.CAFile, srv.URL + "/health"}

	code, out, _ := runApp(t, true, nil, args...)
	if code != exitcode.TLS {
		t.Fatalf("exit %d\n%s", code, out)
	}
	first, rest, _ := strings.Cut(out, "\n")
	if !strings.Contains(first, ansi) {
		t.Errorf("first line not coloured on a TTY: %q", first)
	}
	for _, want := range []string{"error", "address", "connect", "tls", "total", "cert[0]", "expired", "decision", "pending-tls"} {
		if !strings.Contains(rest, want) {
			t.Errorf("TTY details lack %q:\n%s", want, out)
		}
	}

	for name, c := range map[string]struct {
		env  map[string]string
		args []string
	}{
		"NO_COLOR":   {map[string]string{"NO_COLOR": "1"}, args},
		"--no-color": {nil, append([]string{"--no-color"}, args...)},
	} {
		_, out, _ := runApp(t, true, c.env, c.args...)
		if strings.Contains(out, ansi) {
			t.Errorf("%s: colour escapes in %q", name, out)
		}
		if !strings.Contains(out, "cert[0]") {
			t.Errorf("%s: details dropped", name)
		}
	}
	// An empty NO_COLOR does not count.
	if _, out, _ := runApp(t, true, map[string]string{"NO_COLOR": ""}, args...); !strings.Contains(out, ansi) {
		t.Errorf("empty NO_COLOR turned colour off")
	}

	_, out, _ = runApp(t, false, nil, args...)
	if strings.Contains(out, ansi) || strings.Contains(out, "cert[0]") {
		t.Errorf("non-TTY output has colour or details:\n%s", out)
	}
	if n := strings.Count(out, "\n"); n != 2 || !strings.HasPrefix(out, "FAIL tls tls_expired ") {
		t.Errorf("non-TTY: want the first line and the error line, got:\n%s", out)
	}
	// -v gives details without a terminal, still without colour.
	_, out, _ = runApp(t, false, nil, append([]string{"-v"}, args...)...)
	if strings.Contains(out, ansi) || !strings.Contains(out, "cert[0]") {
		t.Errorf("-v: %s", out)
	}
}

func TestGuardTurnsPanicsIntoExit70(t *testing.T) {
	var buf bytes.Buffer
	code := guard(&buf, func() int { panic("boom") })
	if code != exitcode.Internal || !strings.HasPrefix(buf.String(), "healthctl: internal error") || strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("code %d, output %q", code, buf.String())
	}
	if code := guard(&buf, func() int { return 4 }); code != 4 {
		t.Errorf("guard changed a normal exit to %d", code)
	}
}

package watchcmd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/exitcode"
)

// hcio is a loopback stand-in for healthchecks.io's ping API: POST
// /ping/KEY marks the check up, /ping/KEY/fail down, /ping/KEY/start
// starts a run (the status does not change). It records every ping in
// order, and whether it came through a proxy (an absolute request URI).
type hcio struct {
	srv    *httptest.Server
	mu     sync.Mutex
	status string
	pings  []string
}

func newHCIO(t *testing.T) *hcio {
	h := &hcio{status: "new"}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		kind := "success"
		switch {
		case strings.HasSuffix(r.URL.Path, "/fail"):
			kind, h.status = "fail", "down"
		case strings.HasSuffix(r.URL.Path, "/start"):
			kind = "start"
		default:
			h.status = "up"
		}
		if strings.HasPrefix(r.RequestURI, "http://") {
			kind += " via proxy " + r.Host
		}
		h.pings = append(h.pings, kind)
		w.Write([]byte("OK"))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hcio) seen() (string, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.status, slices.Clone(h.pings)
}

// TestHeartbeatSaysTheWatcherIsAlive: a chronically failing target (refused
// on every run) leaves the heartbeat "up": each completed sweep pings
// success, preceded by its start with --heartbeat-start, in order. Only
// --heartbeat-on-failure turns a target's failure into /fail. The sweeps'
// exit codes are their own.
func TestHeartbeatSaysTheWatcherIsAlive(t *testing.T) {
	for _, c := range []struct {
		name   string
		flags  []string
		status string
		pings  []string
	}{
		{"chronic failure, success only", nil, "up", []string{"success", "success", "success"}},
		{"with --heartbeat-start", []string{"--heartbeat-start"}, "up",
			[]string{"start", "success", "start", "success", "start", "success"}},
		{"--heartbeat-on-failure", []string{"--heartbeat-on-failure", "--heartbeat-start"}, "down",
			[]string{"start", "fail", "start", "fail", "start", "fail"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			hc := newHCIO(t)
			state := t.TempDir() + "/state.json"
			for run := range 3 {
				fk := clitest.New(nil, classify.Refused)
				args := append([]string{"--once", "--state", state, "--failure-threshold", "2", "--heartbeat", hc.srv.URL + "/ping/KEY-1"}, c.flags...)
				err := Run(context.Background(), fk.F, parse(t, append(args, "http://127.0.0.1:1/health")...))
				want := exitcode.Pass
				if run == 1 {
					want = exitcode.Redeploy
				}
				if clitest.Code(err) != want {
					t.Fatalf("run %d: exit %d (%v), want %d; stderr %q", run+1, clitest.Code(err), err, want, fk.Err.String())
				}
				if strings.Contains(fk.Err.String(), "heartbeat") || strings.Contains(fk.Err.String()+fk.Out.String(), "KEY-1") {
					t.Errorf("run %d: stderr %q", run+1, fk.Err.String())
				}
			}
			status, pings := hc.seen()
			if status != c.status || !slices.Equal(pings, c.pings) {
				t.Errorf("the receiver says %s after %q, want %s after %q", status, pings, c.status, c.pings)
			}
		})
	}
}

// TestHeartbeatFollowsTheProbesProxy: the ping goes through HTTP_PROXY as
// the factory's environment has it (the probe's rule: loopback proxied,
// NO_PROXY and --noproxy honoured), never the process's own.
func TestHeartbeatFollowsTheProbesProxy(t *testing.T) {
	for _, c := range []struct {
		name  string
		env   map[string]string
		flags []string
		want  string
	}{
		{"HTTP_PROXY", map[string]string{"HTTP_PROXY": "PROXY"}, nil, "success via proxy hc.invalid"},
		{"NO_PROXY names it", map[string]string{"HTTP_PROXY": "PROXY", "NO_PROXY": "127.0.0.1"}, nil, "success"},
		{"--noproxy names it", map[string]string{"HTTP_PROXY": "PROXY"}, []string{"--noproxy", "127.0.0.1"}, "success"},
	} {
		t.Run(c.name, func(t *testing.T) {
			hc := newHCIO(t)
			target := hc.srv.URL
			if c.want != "success" {
				// Through the proxy: a name only the proxy reads.
				target = "http://hc.invalid"
			}
			env := map[string]string{}
			for k, v := range c.env {
				env[k] = strings.ReplaceAll(v, "PROXY", hc.srv.URL)
			}
			fk := clitest.New(env, classify.Pass)
			args := append([]string{"--once", "--heartbeat", target + "/ping/KEY-1"}, c.flags...)
			if err := Run(context.Background(), fk.F, parse(t, append(args, "http://127.0.0.1:1/health")...)); err != nil {
				t.Fatalf("%v; stderr %q", err, fk.Err.String())
			}
			if _, pings := hc.seen(); !slices.Equal(pings, []string{c.want}) {
				t.Errorf("pings %q, want %q; stderr %q", pings, c.want, fk.Err.String())
			}
		})
	}
}

// TestHeartbeatFlagsNeedTheirReceiver: --heartbeat-start with Uptime
// Kuma's push (no start signal) and either flag without --heartbeat are
// usage errors naming the flag, never the URL.
func TestHeartbeatFlagsNeedTheirReceiver(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--heartbeat-start", "--heartbeat", "http://127.0.0.1:1/api/push/KEY-1?status=up"},
			"--heartbeat-start true: the receiver (a status= query: Uptime Kuma's push) has no start signal"},
		{[]string{"--heartbeat-start"}, "--heartbeat-start true: only means something with --heartbeat"},
		{[]string{"--heartbeat-on-failure"}, "--heartbeat-on-failure true: only means something with --heartbeat"},
	} {
		fk := clitest.New(nil, classify.Pass)
		err := Run(context.Background(), fk.F, parse(t, append(append([]string{"--once"}, c.args...), "http://127.0.0.1:1/health")...))
		if clitest.Code(err) != exitcode.Usage || err.Error() != c.want || len(fk.Probed()) != 0 {
			t.Errorf("%q: %v (exit %d), want %q", c.args, err, clitest.Code(err), c.want)
		}
	}
}

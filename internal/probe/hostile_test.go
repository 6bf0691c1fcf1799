package probe_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/fixture/h2fixture"
	"github.com/healthctl/healthctl/internal/fixture/hostile"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/probe"
)

// TestHostileAnswersKeepTheDeadline: whatever a server does after it took
// the request — a 101 and silence, a body that never ends, an HTTP/2 window
// that never opens to the request body, a server that stops reading — the
// probe returns by --max-time (generous margin), and at once when its
// caller cancels.
func TestHostileAnswersKeepTheDeadline(t *testing.T) {
	pki, err := pkifix.NewPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := pki.ServerCertificate(pkifix.CertGood)
	if err != nil {
		t.Fatal(err)
	}
	hold101, err := hostile.NewHoldServer(t, nil, hostile.Hold101)
	if err != nil {
		t.Fatal(err)
	}
	holdBody, err := hostile.NewHoldServer(t, nil, hostile.HoldBody)
	if err != nil {
		t.Fatal(err)
	}
	window0, err := h2fixture.New(t, h2fixture.Window0, &cert)
	if err != nil {
		t.Fatal(err)
	}
	noRead, err := h2fixture.New(t, h2fixture.NoRead, &cert)
	if err != nil {
		t.Fatal(err)
	}
	hold413, err := hostile.NewHoldServer(t, nil, hostile.Hold413)
	if err != nil {
		t.Fatal(err)
	}
	// An answer behind a PING while the request body's write is blocked:
	// net/http's HTTP/2 reader answers a PING (and acks SETTINGS) under
	// the writer's lock, so on a bare connection it never reads the 413.
	noReadPing, err := h2fixture.New(t, h2fixture.NoReadPing, &cert)
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 4<<20)
	cases := []struct {
		name   string
		url    string
		body   []byte
		reason classify.Reason
		status int
	}{
		{"101 and hold", "http://" + hold101.Addr + "/health", nil, classify.HTTPStatus, 101},
		{"endless body", "http://" + holdBody.Addr + "/health", nil, classify.BodyTimeout, 200},
		{"h2 window 0", "https://" + window0.Addr + "/health", big, classify.BodyTimeout, 200},
		{"h2 no read", "https://" + noRead.Addr + "/health", big, classify.BodyTimeout, 200},
		{"http/1.1 413 to an upload it does not read", "http://" + hold413.Addr + "/health", big, classify.HTTPStatus, 413},
		{"h2 no read, a ping, 413", "https://" + noReadPing.Addr + "/health", big, classify.HTTPStatus, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := opts(t, c.url, "", pki)
			o.ReadTimeout, o.MaxTime = time.Minute, time.Second
			if c.body != nil {
				o.Method, o.Body = "POST", c.body
			}
			start := time.Now()
			r := probe.Run(context.Background(), o)
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("took %v with --max-time 1s", took)
			}
			if r.Reason != c.reason {
				t.Errorf("reason %s (%s), want %s", r.Reason, r.Error, c.reason)
			}
			if r.HTTPStatus != c.status {
				t.Errorf("status %d, want %d", r.HTTPStatus, c.status)
			}

			o.MaxTime = time.Minute
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			start = time.Now()
			r = probe.Run(ctx, o)
			if took := time.Since(start); c.reason != classify.HTTPStatus && (took > time.Second || !r.Canceled) {
				t.Errorf("cancelled after 300ms: returned after %v, canceled %v", took, r.Canceled)
			}

			// The same, one probe after the other under a sweep
			// worker's closer (WithCloser): its one registration, not
			// the probe's, closes the connections when the context
			// ends, and a window closes them itself.
			wctx, wcancel := context.WithCancel(context.Background())
			defer wcancel()
			pctx, release := probe.WithCloser(wctx)
			defer release()
			o.MaxTime = time.Second
			start = time.Now()
			r = probe.Run(pctx, o)
			if took := time.Since(start); took > 20*time.Second || r.Reason != c.reason || r.Canceled {
				t.Errorf("under a closer, --max-time 1s: %s (%s) after %v, canceled %v; want %s", r.Reason, r.Error, took, r.Canceled, c.reason)
			}
			o.MaxTime = time.Minute
			time.AfterFunc(300*time.Millisecond, wcancel)
			start = time.Now()
			r = probe.Run(pctx, o)
			if took := time.Since(start); c.reason != classify.HTTPStatus && (took > time.Second || !r.Canceled) {
				t.Errorf("under a closer, cancelled after 300ms: returned after %v, canceled %v", took, r.Canceled)
			}
		})
	}
}

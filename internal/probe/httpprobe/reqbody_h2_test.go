package httpprobe

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/fixture/h2fixture"
	"github.com/healthctl/healthctl/internal/fixture/pkifix"
	"github.com/healthctl/healthctl/internal/scheme"
)

// TestFileBodyCancelledOnHTTP2 is probe_hold_signal's shape: -d @FILE's
// body to an HTTP/2 server that never opens its window and never answers
// (an answer's headers could beat the cancellation: a 200, 1 run in 4
// under load), cancelled (a SIGTERM) while net/http's body writer is in its first Read. The
// Transport then closes the body on a goroutine of its own
// (closeReqBodyLocked) while that Read goes on: here the Read waits until
// the Close has begun, then reads the file's body, so the two meet every
// run. Under -race this failed (fileBody's Close against its Read, exit
// 66 in the script) before the body guarded its state; RoundTrip must
// return the cancellation, the file end closed, and a Read after the
// Close fail.
func TestFileBodyCancelledOnHTTP2(t *testing.T) {
	pki, err := pkifix.NewPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := pki.ServerCertificate(pkifix.CertGood)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := h2fixture.New(t, h2fixture.Window0Silent, &cert)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(path, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("https://" + srv.Addr + "/health")
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.Pool()}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	for i := range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		req, err := NewRequest(ctx, &scheme.Options{URL: u, Method: "POST", Header: http.Header{}, BodyFile: path, BodySize: 4 << 20})
		if err != nil {
			t.Fatal(err)
		}
		fb := req.Body.(*fileBody)
		body := &cancelInRead{ReadCloser: fb, cancel: cancel, closing: make(chan struct{}), closed: make(chan struct{}), read: make(chan error, 1)}
		req.Body = body
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("request %d: %s, want the cancellation", i, resp.Status)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("request %d: %v, want context.Canceled", i, err)
		}
		// The Read that met the Close may have won the body's lock (it
		// read on) or lost it (it failed): either is right, so long as
		// the two never touch the body's state at once (-race) and the
		// Read ends.
		select {
		case <-body.read:
		case <-time.After(10 * time.Second):
			t.Fatalf("request %d: the body's Read still going 10 s after the cancellation", i)
		}
		select {
		case <-body.closed:
		case <-time.After(10 * time.Second):
			t.Fatalf("request %d: the Transport did not close the body within 10 s of the cancellation", i)
		}
		fb.mu.Lock()
		open := fb.f != nil
		fb.mu.Unlock()
		if open {
			t.Errorf("request %d: the file is still open after the Transport closed the body", i)
		}
		if _, err := fb.Read(make([]byte, 512)); err == nil {
			t.Errorf("request %d: a Read after the Close read on", i)
		}
		cancel()
	}
}

// cancelInRead cancels its request in its first Read, then waits for the
// Transport's Close to begin before it reads on.
type cancelInRead struct {
	io.ReadCloser
	cancel    context.CancelFunc
	once      sync.Once
	closeOnce sync.Once
	closing   chan struct{}
	closed    chan struct{} // closed once the body's Close has returned
	first     bool
	read      chan error
}

func (c *cancelInRead) Read(p []byte) (int, error) {
	if c.first {
		return c.ReadCloser.Read(p)
	}
	c.first = true
	c.cancel()
	select {
	case <-c.closing:
	case <-time.After(10 * time.Second):
	}
	n, err := c.ReadCloser.Read(p)
	c.read <- err
	return n, err
}

func (c *cancelInRead) Close() error {
	c.once.Do(func() { close(c.closing) })
	err := c.ReadCloser.Close()
	c.closeOnce.Do(func() { close(c.closed) })
	return err
}

package httpprobe

import (
	"bytes"
	"context"
	"errors"
	"github.com/healthctl/healthctl/internal/scheme"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNewRequestBodyFile: -d @FILE's request has the file's size as its
// Content-Length, reads the file (opened on the first read, not before),
// and GetBody gives it again from the start; a file whose size changed
// since it was checked is an error naming it, not a body of another length.
func TestNewRequestBodyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "body.bin")
	data := bytes.Repeat([]byte("0123456789"), 10000)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://127.0.0.1:1/x")
	o := &scheme.Options{URL: u, Method: "POST", BodyFile: path, BodySize: int64(len(data))}
	req, err := NewRequest(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if req.ContentLength != int64(len(data)) || req.GetBody == nil {
		t.Fatalf("Content-Length %d, GetBody %v", req.ContentLength, req.GetBody != nil)
	}
	if fb := req.Body.(*fileBody); fb.f != nil {
		t.Error("the file was opened before the body was read")
	}
	for i := range 2 {
		got, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("body %d: %d bytes, %v; want the file's %d", i, len(got), err, len(data))
		}
		if req.Body, err = req.GetBody(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, data[:10], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(req.Body); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "changed") {
		t.Errorf("a file that shrank: %v", err)
	}

	o.BodySize = 0
	if req, _ = NewRequest(context.Background(), o); req.ContentLength != 0 || req.Body == nil {
		t.Errorf("an empty file: Content-Length %d, body %v", req.ContentLength, req.Body)
	}
}

// TestFileBodyCloseWhileRead: net/http closes a request body from a
// goroutine of its own when the request is cancelled, while its body
// writer may be in a Read (HTTP/2's closeReqBodyLocked): a Close at any
// point of a Read — before the file is opened, while it opens, while it
// reads — is safe (under -race), closes the file, and ends the Read and
// every later one with an error; the body is never opened again.
func TestFileBodyCloseWhileRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "body.bin")
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		b := &fileBody{path: path, size: int64(len(data))}
		done := make(chan error, 1)
		go func() {
			_, err := io.Copy(io.Discard, struct{ io.Reader }{b})
			done <- err
		}()
		if i%2 == 1 {
			time.Sleep(time.Duration(i) * time.Microsecond)
		}
		if err := b.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("a Read still going 10 s after Close")
		}
		if n, err := b.Read(make([]byte, 10)); n != 0 || err == nil {
			t.Fatalf("read %d after Close: %d bytes, %v", i, n, err)
		}
		b.mu.Lock()
		f := b.f
		b.mu.Unlock()
		if f != nil {
			t.Fatalf("body %d: the file is open after Close", i)
		}
	}

	// Closed before its first read: it is never opened.
	b := &fileBody{path: path, size: int64(len(data))}
	b.Close()
	if _, err := b.Read(make([]byte, 10)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("a body closed unread: %v, want os.ErrClosed", err)
	}
	if b.f != nil {
		t.Error("a body closed unread opened its file")
	}
}

// TestFileBodyShrinks: a file that ends before its size (cut while being
// sent) is an error naming it, not a short body.
func TestFileBodyShrinks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "body.bin")
	if err := os.WriteFile(path, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &fileBody{path: path, size: 100}
	if _, err := b.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 20); err != nil {
		t.Fatal(err)
	}
	_, err := io.ReadAll(b)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "changed") {
		t.Errorf("a file cut while sent: %v", err)
	}
	b.Close()
}

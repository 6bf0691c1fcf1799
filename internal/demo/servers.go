package demo

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// loopback is the only address the demo's services listen on.
const loopback = "127.0.0.1"

// answer is what one demo HTTP service does with every request.
type answer struct {
	status     int // default 200
	body       string
	retryAfter string
	redirect   string
	// hang reads the request and never answers (until the demo ends).
	hang bool
	// cert, when set, makes the service HTTPS with that certificate.
	cert *tls.Certificate
	// warmup, when > 0, answers 503 until it has passed since the service
	// started, then 200 "ok".
	warmup time.Duration
}

// httpService is one running demo HTTP service.
type httpService struct {
	url  string
	srv  *http.Server
	done chan struct{}
}

func startHTTP(addr string, a answer) (*httpService, error) {
	l, err := net.Listen("tcp4", addr)
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if a.cert != nil {
		l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{*a.cert}})
		scheme = "https"
	}
	if a.status == 0 {
		a.status = http.StatusOK
		if a.warmup > 0 {
			a.status = http.StatusServiceUnavailable
		}
	}
	s := &httpService{url: scheme + "://" + l.Addr().String(), done: make(chan struct{})}
	start := time.Now()
	s.srv = &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // failed handshakes are the point
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a.warmup > 0 && time.Since(start) >= a.warmup {
				io.WriteString(w, "ok\n")
				return
			}
			if a.hang {
				select {
				case <-s.done:
				case <-r.Context().Done():
				}
				// Returning would send an empty 200: abort the connection.
				panic(http.ErrAbortHandler)
			}
			h := w.Header()
			h.Set("Content-Type", "text/plain; charset=utf-8")
			if a.retryAfter != "" {
				h.Set("Retry-After", a.retryAfter)
			}
			if a.redirect != "" {
				h.Set("Location", a.redirect)
				if a.status == http.StatusOK {
					a.status = http.StatusFound
				}
			}
			body := a.body
			if body == "" {
				body = http.StatusText(a.status) + "\n"
			}
			h.Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(a.status)
			io.WriteString(w, body)
		}),
	}
	go s.srv.Serve(l)
	return s, nil
}

func (s *httpService) close() {
	close(s.done)
	s.srv.Close()
}

// Switch is a demo HTTP service on a fixed loopback port that the demo
// turns on (200 "ok") and off (nothing listens: connections are refused)
// between runs of a command, as a service that goes down and comes back.
type Switch struct {
	addr string
	mu   sync.Mutex
	srv  *http.Server
	l    net.Listener
	done bool
}

func startSwitch(addr string) (*Switch, error) {
	s := &Switch{}
	l, err := net.Listen("tcp4", addr)
	if err != nil {
		return nil, err
	}
	s.addr = l.Addr().String()
	s.serve(l)
	return s, nil
}

// URL returns http://127.0.0.1:PORT, the same whether it is up or down.
func (s *Switch) URL() string { return "http://" + s.addr }

func (s *Switch) serve(l net.Listener) {
	s.l = l
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	})}
	go s.srv.Serve(l)
}

// Set turns the service up (listening again on the same port) or down
// (the listener and every connection closed).
func (s *Switch) Set(up bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.done:
		return fmt.Errorf("demo: service %s stopped", s.addr)
	case up && s.srv == nil:
		l, err := net.Listen("tcp4", s.addr)
		if err != nil {
			return fmt.Errorf("listen again on %s: %v", s.addr, err)
		}
		s.serve(l)
	case !up && s.srv != nil:
		s.stop()
	}
	return nil
}

func (s *Switch) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	if s.srv != nil {
		s.stop()
	}
}

// stop closes the listener itself, not only through the server: Serve,
// started on a goroutine, may not have taken the listener yet, and the
// port must be free when Set(true) listens again.
func (s *Switch) stop() {
	s.l.Close()
	s.srv.Close()
	s.srv, s.l = nil, nil
}

// Package truthclient is the independent client of drain-test's
// differential test: it sends its own requests, each on a fresh
// connection, through a service's shutdown and records what every one of
// them got, by the time it was made. It is imported only by tests and
// shares no code with internal/drain or internal/probe on purpose: a bug
// there must not be able to hide itself here.
package truthclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"time"
)

// Config says what the client sends.
type Config struct {
	// Traffic gets a new request every Interval; Ready and Live are polled
	// every Interval too. Empty: not sent.
	Traffic, Ready, Live string
	// KeepAlive (optional) gets a request every 100 ms on one kept-alive
	// connection, opened at Start.
	KeepAlive string
	// Slow is the in-flight path: Inflight slow requests are kept running
	// until Signalled.
	Slow     string
	Inflight int
	// Interval between traffic requests and readiness polls, start to
	// start (20 ms); PollInterval between liveness polls (50 ms).
	Interval, PollInterval time.Duration
	// Window bounds one request (1 s); SlowWindow one in-flight request.
	Window, SlowWindow time.Duration
	// TrafficInterval and TrafficWindow are the traffic requests' own
	// interval and window (0: Interval and Window): a slow traffic path
	// is sent less often and answered later.
	TrafficInterval, TrafficWindow time.Duration
	// TrafficAccept says which traffic statuses are served (nil: 200-399).
	TrafficAccept func(int) bool
	// TrafficFor is how long traffic goes on after Signalled (0: until
	// Stop): drain-test's traffic checks the pre-drain and stops at P, so
	// that no client load keeps a service alive that exits once nothing
	// is in flight.
	TrafficFor time.Duration
}

// Client runs Config's requests until Stop.
type Client struct {
	cfg       Config
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	slow      sync.WaitGroup
	mu        sync.Mutex
	recs      []Record
	signalled chan struct{}
	once      sync.Once
}

// Start starts sending at once.
func Start(cfg Config) *Client {
	if cfg.Interval <= 0 {
		cfg.Interval = 20 * time.Millisecond
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 50 * time.Millisecond
	}
	if cfg.Window <= 0 {
		cfg.Window = time.Second
	}
	if cfg.SlowWindow <= 0 {
		cfg.SlowWindow = 30 * time.Second
	}
	if cfg.TrafficInterval <= 0 {
		cfg.TrafficInterval = cfg.Interval
	}
	if cfg.TrafficWindow <= 0 {
		cfg.TrafficWindow = cfg.Window
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{cfg: cfg, ctx: ctx, cancel: cancel, signalled: make(chan struct{})}
	for kind, u := range map[string]string{KindTraffic: cfg.Traffic, KindReady: cfg.Ready, KindLive: cfg.Live} {
		if u == "" {
			continue
		}
		accept := (func(int) bool)(nil)
		if kind == KindTraffic {
			accept = cfg.TrafficAccept
		}
		every, window := cfg.PollInterval, cfg.Window
		switch kind {
		case KindReady:
			// Readiness every Interval: a flap that lasts one of
			// drain-test's polls is seen here too.
			every = cfg.Interval
		case KindTraffic:
			every, window = cfg.TrafficInterval, cfg.TrafficWindow
		}
		c.wg.Add(1)
		go c.every(kind, u, every, window, accept, kind == KindTraffic)
	}
	if cfg.KeepAlive != "" {
		c.wg.Add(1)
		go c.keepAlive(cfg.KeepAlive)
	}
	if cfg.Slow != "" {
		for i := range cfg.Inflight {
			c.slow.Add(1)
			go c.keepInflight(time.Duration(i) * 20 * time.Millisecond)
		}
	}
	return c
}

// every makes a request every Interval, each on its own goroutine, so
// that a request that hangs does not delay the next.
func (c *Client) every(kind, u string, interval, window time.Duration, accept func(int) bool, traffic bool) {
	defer c.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	var until <-chan time.Time
	signalled := c.signalled
	for {
		if traffic && c.cfg.TrafficFor > 0 {
			select {
			case <-signalled:
				// Stop TrafficFor after the signal.
				until, signalled = time.After(c.cfg.TrafficFor), nil
			case <-until:
				return
			default:
			}
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			r := Get(c.ctx, u, window, accept)
			r.Kind = kind
			c.add(r)
		}()
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// keepAlive opens one connection once the service answers on it and sends
// a request every 100 ms until the connection ends or Stop. Each request
// is a record: served, or cut once the response had begun (a byte of it
// read); a close or reset before any byte of a response, or while idle, is
// a record with no status (the clean close every kept-alive client meets),
// except a reset while idle (Reset).
func (c *Client) keepAlive(rawURL string) {
	defer c.wg.Done()
	u, err := url.Parse(rawURL)
	if err != nil {
		return
	}
	var conn net.Conn
	for conn == nil {
		if c.ctx.Err() != nil {
			return
		}
		if conn, err = (&net.Dialer{Timeout: time.Second}).DialContext(c.ctx, "tcp", u.Host); err != nil {
			conn = nil
			time.Sleep(c.cfg.Interval)
		}
	}
	defer conn.Close()
	stop := context.AfterFunc(c.ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	cr := &countingReader{r: conn}
	br := bufio.NewReader(cr)
	for c.ctx.Err() == nil {
		r := Record{Kind: KindKeepAlive, Made: time.Now()}
		// Idle: has the server closed or reset it meanwhile?
		_ = conn.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := br.Peek(1); err != nil {
			var ne net.Error
			if !(errors.As(err, &ne) && ne.Timeout()) {
				if c.ctx.Err() != nil {
					return
				}
				r.Ended, r.Outcome, r.Err = time.Now(), EOF, "closed while idle: "+err.Error()
				if transport(err, false) == Reset {
					r.Outcome = Reset
				}
				c.add(r)
				return
			}
		}
		_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: truthclient\r\n\r\n", u.RequestURI(), u.Host); err != nil {
			r.Ended, r.Outcome, r.Err = time.Now(), EOF, "closed as a request went out: "+err.Error()
			c.add(r)
			return
		}
		start := cr.n - int64(br.Buffered())
		status, length, chunked, err := readHead(br)
		if err == nil {
			_, _, err = readBody(br, length, chunked)
		}
		if err != nil {
			r.Ended = time.Now()
			if c.ctx.Err() != nil {
				return
			}
			if got := cr.n - int64(br.Buffered()) - start; got > 0 {
				r.Status, r.Outcome, r.Err = status, Cut, fmt.Sprintf("cut %d bytes into a response: %v", got, err)
			} else {
				// Closed (or reset: unread data turns a FIN into a
				// reset) as the request arrived: the close race every
				// kept-alive client meets and retries.
				r.Outcome, r.Err = EOF, "closed before any byte of the response: "+err.Error()
			}
			c.add(r)
			return
		}
		r.Ended, r.Status, r.Outcome = time.Now(), status, Served
		c.add(r)
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// keepInflight keeps one slow request running until the signal: a new
// one as soon as the last ended (or, refused, 20 ms later).
func (c *Client) keepInflight(stagger time.Duration) {
	defer c.slow.Done()
	// Barely staggered: drain-test signals soon after the service is
	// ready, so the first requests, made as its listener came up, are the
	// ones in flight then.
	time.Sleep(stagger)
	for {
		select {
		case <-c.signalled:
			return
		default:
		}
		r := Get(context.Background(), c.cfg.Slow, c.cfg.SlowWindow, func(s int) bool { return s >= 200 && s < 300 })
		r.Kind = KindInflight
		c.add(r)
		if !r.Outcome.Answered() {
			time.Sleep(c.cfg.Interval)
		}
	}
}

func (c *Client) add(r Record) {
	if c.ctx.Err() != nil && (r.Outcome == NoAnswer || r.Outcome == Failed) {
		// Cut by Stop, not by the service.
		return
	}
	c.mu.Lock()
	c.recs = append(c.recs, r)
	c.mu.Unlock()
}

// AddInflight starts n more slow requests now, one each (the caller's
// cue: the service was just seen ready, so they are as young at the signal
// as drain-test's own in-flight requests).
func (c *Client) AddInflight(n int) {
	if c.cfg.Slow == "" {
		return
	}
	for range n {
		c.slow.Add(1)
		go func() {
			defer c.slow.Done()
			r := Get(context.Background(), c.cfg.Slow, c.cfg.SlowWindow, func(s int) bool { return s >= 200 && s < 300 })
			r.Kind = KindInflight
			c.add(r)
		}()
	}
}

// Signalled says the signal was sent: no new in-flight request starts.
func (c *Client) Signalled() { c.once.Do(func() { close(c.signalled) }) }

// Stop waits for the in-flight requests (each bounded by SlowWindow), then
// stops the polls, waits for every request out and returns the log.
func (c *Client) Stop() []Record {
	c.Signalled()
	c.slow.Wait()
	c.cancel()
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Record(nil), c.recs...)
}

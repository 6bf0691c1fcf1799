// Package statsd sends StatsD counters over UDP without ever making the
// caller wait: lines are queued, a goroutine resolves the host (with the
// wait's --dns-server when given), dials and writes them with short
// deadlines, and errors are reported to a log function, never returned.
// Close flushes what is queued, within a bound.
package statsd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/crash"
)

// DefaultPrefix is prepended to every counter (--statsd-prefix).
const DefaultPrefix = "healthctl"

// Bounds on how long the network may take: a name lookup and dial, one
// write, and the final flush. A wait never waits on StatsD longer.
const (
	dialTimeout  = time.Second
	writeTimeout = 100 * time.Millisecond
	// FlushTimeout bounds Close.
	FlushTimeout = 500 * time.Millisecond
)

// Client is a fire-and-forget StatsD counter sink.
type Client struct {
	// dnsServer is --dns-server ("" for the system's), named in lookup errors.
	dnsServer string
	addr      string
	prefix    string
	logf      func(format string, args ...any)
	dial      func(ctx context.Context, network, addr string) (net.Conn, error)
	lines     chan string
	done      chan struct{}
	// cancel ends a name lookup or dial still running when Close gives up.
	cancel context.CancelFunc
}

// Options are a client's optional settings.
type Options struct {
	// Logf receives the errors that are otherwise ignored (nil: none).
	Logf func(format string, args ...any)
	// DNSServer ("addr:port"), when set, is the only server asked for the
	// StatsD host's address, as --dns-server is for probes.
	DNSServer string
}

// ParseAddr checks a host:port StatsD address without resolving it.
func ParseAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want HOST:PORT")
	}
	if host == "" {
		return fmt.Errorf("want HOST:PORT, the host is missing")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("bad port %q", port)
	}
	return nil
}

// ParsePrefix checks a metric prefix: StatsD's separators (':', '|', '@')
// and whitespace would corrupt the line.
func ParsePrefix(p string) error {
	if strings.ContainsAny(p, ":|@ \t\r\n") {
		return fmt.Errorf("must not contain ':', '|', '@' or whitespace")
	}
	return nil
}

// New validates addr and prefix and starts the sender, which resolves and
// dials in the background: nothing here waits on the network.
func New(addr, prefix string, opts Options) (*Client, error) {
	if err := ParseAddr(addr); err != nil {
		return nil, err
	}
	if err := ParsePrefix(prefix); err != nil {
		return nil, err
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	d := &net.Dialer{Resolver: &net.Resolver{PreferGo: true}}
	if srv := opts.DNSServer; srv != "" {
		d.Resolver.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var nd net.Dialer
			return nd.DialContext(ctx, network, srv)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	c := &Client{
		addr: addr, prefix: strings.TrimSuffix(prefix, "."), logf: logf, dial: d.DialContext, dnsServer: opts.DNSServer,
		lines: make(chan string, 16), done: make(chan struct{}), cancel: cancel,
	}
	go func() {
		defer crash.Recover()
		c.send(ctx)
	}()
	return c, nil
}

// Name is the full metric name of a counter.
func (c *Client) Name(name string) string {
	if c.prefix == "" {
		return name
	}
	return c.prefix + "." + name
}

// Count queues "<prefix>.<name>:1|c". It never blocks: when the queue is
// full the line is dropped (and logged).
func (c *Client) Count(name string) {
	line := c.Name(name) + ":1|c"
	select {
	case c.lines <- line:
	default:
		c.logf("statsd: queue full, dropped %s", line)
	}
}

// Close sends what is queued, waiting at most timeout, and stops the
// sender (a lookup or dial still running is abandoned).
func (c *Client) Close(timeout time.Duration) {
	close(c.lines)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.logf("statsd: %s: not flushed within %v, lines dropped", c.addr, timeout)
	}
	c.cancel()
}

func (c *Client) send(ctx context.Context) {
	defer close(c.done)
	conn, err := c.dial(ctx, "udp", c.addr)
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) && c.dnsServer != "" {
			// Go names resolv.conf's server even when Dial went to
			// --dns-server.
			de.Server = c.dnsServer
		}
		if de != nil {
			err = de // "lookup HOST on SERVER: …", without Go's "dial udp:"
		}
		c.logf("statsd: %v", err)
		for range c.lines { // drain so Close returns
		}
		return
	}
	defer conn.Close()
	for line := range c.lines {
		conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := conn.Write([]byte(line + "\n")); err != nil {
			c.logf("statsd: %v", err)
		}
	}
}

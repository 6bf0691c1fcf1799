// Package statsd sends StatsD counters over UDP without ever making the
// caller wait: lines are queued, a goroutine dials and writes them with a
// short deadline, and errors are reported to a log function, never
// returned. Close flushes what is queued, within a bound.
package statsd

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
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
	addr   string
	prefix string
	logf   func(format string, args ...any)
	lines  chan string
	done   chan struct{}
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

// New validates addr and prefix and starts the sender. logf (may be nil)
// receives the errors that are otherwise ignored.
func New(addr, prefix string, logf func(format string, args ...any)) (*Client, error) {
	if err := ParseAddr(addr); err != nil {
		return nil, err
	}
	if err := ParsePrefix(prefix); err != nil {
		return nil, err
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	c := &Client{addr: addr, prefix: strings.TrimSuffix(prefix, "."), logf: logf, lines: make(chan string, 16), done: make(chan struct{})}
	go c.send()
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
// sender.
func (c *Client) Close(timeout time.Duration) {
	close(c.lines)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.logf("statsd: %s: not flushed within %v, lines dropped", c.addr, timeout)
	}
}

func (c *Client) send() {
	defer close(c.done)
	conn, err := net.DialTimeout("udp", c.addr, dialTimeout)
	if err != nil {
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

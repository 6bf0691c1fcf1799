// Package heartbeat is watch's --heartbeat: a dead-man's switch pinged
// after each completed sweep (healthchecks.io's convention and Uptime
// Kuma's push), through the probe's proxy rules, the URL never named in
// what it says; Sender sends the pings one at a time behind the sweeps.
package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/scheme"
)

// DefaultTimeout bounds one heartbeat ping: the connection, the
// request and the answer (curl -m 10, as healthchecks.io's examples have
// it).
const DefaultTimeout = 10 * time.Second

// Pinger pings a URL after each completed sweep: a dead-man's switch
// that alerts when the pings stop (the watcher itself, its cron or timer,
// died). The URL is a secret (its path or query is the check's key), so
// nothing it returns names it.
//
// Two conventions: healthchecks.io's (and Cronitor's, Better Stack's) — a
// POST to the URL, to URL/fail for a failure, to URL/start before a
// sweep, the sweep's line as the body — and Uptime Kuma's push monitors,
// chosen by a status= in the query: a GET with status=up or status=down
// and msg= the line (no start signal).
type Pinger struct {
	URL     *url.URL
	Timeout time.Duration
	// UserAgent names healthctl to the receiver.
	UserAgent string
	// Proxy selects the proxy for the ping as it does for a probe
	// (proxyenv.FromEnv over the same environment and --noproxy); nil:
	// no proxy.
	Proxy func(*url.URL) (*url.URL, error)
	// Client sends the ping (nil: one of its own, through Proxy, no
	// redirects followed).
	Client *http.Client
}

// Ping is the kind of a heartbeat ping.
type Ping int

const (
	// PingSuccess says a sweep completed: the watcher is alive.
	PingSuccess Ping = iota
	// PingFail says a sweep completed with a failure (a target failed,
	// when asked for, or the state or metrics were not written).
	PingFail
	// PingStart says a sweep begins (healthchecks.io's /start: the
	// receiver measures the run and alerts on one that never ends).
	PingStart
)

func (p Ping) String() string {
	switch p {
	case PingFail:
		return "fail"
	case PingStart:
		return "start"
	}
	return "success"
}

// HasStart reports whether the URL's receiver takes a start signal: the
// healthchecks.io convention does (URL/start), Uptime Kuma's push (a
// status= query) does not.
func HasStart(u *url.URL) bool { return !u.Query().Has("status") }

// Parse checks a --heartbeat URL: http or https, with a host.
// Its error never repeats the URL.
func Parse(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	// An HTTP request is sent: a row that takes request options.
	if row, ok := scheme.LookupScheme(u.Scheme); !ok || row.Options&scheme.AppliesRequest == 0 {
		return nil, errors.New("want " + scheme.SchemeList(true, scheme.With(scheme.AppliesRequest)))
	}
	if u.Host == "" {
		return nil, errors.New("the URL has no host")
	}
	return u, nil
}

// Request is the ping of kind p, with msg (one line) as what it says. A
// start for a receiver without one (HasStart) is an error.
func (h *Pinger) Request(ctx context.Context, p Ping, msg string) (*http.Request, error) {
	failed := p == PingFail
	u := *h.URL
	var req *http.Request
	var err error
	if q := u.Query(); q.Has("status") {
		// Uptime Kuma's push URL: /api/push/TOKEN?status=up&msg=OK&ping=
		if p == PingStart {
			return nil, errors.New("the receiver (a status= query: Uptime Kuma's push) has no start signal")
		}
		status := "up"
		if failed {
			status = "down"
		}
		q.Set("status", status)
		q.Set("msg", msg)
		u.RawQuery = q.Encode()
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	} else {
		if p != PingSuccess {
			u.Path = strings.TrimSuffix(u.Path, "/") + "/" + p.String()
			u.RawPath = ""
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(msg+"\n"))
		if req != nil {
			req.Header.Set("Content-Type", "text/plain; charset=utf-8")
		}
	}
	if err != nil {
		return nil, errors.New("cannot build the request")
	}
	if h.UserAgent != "" {
		req.Header.Set("User-Agent", h.UserAgent)
	}
	return req, nil
}

// proxy is the Transport's Proxy: the probe's rule, its error without the
// setting (a proxy URL may carry a password).
func (h *Pinger) proxy(r *http.Request) (*url.URL, error) {
	if h.Proxy == nil {
		return nil, nil
	}
	u, err := h.Proxy(r.URL)
	if err != nil {
		return nil, errors.New("the proxy setting is not a URL")
	}
	return u, nil
}

// Ping sends one ping within the timeout. Its error says what went wrong
// without the URL (a *url.Error would repeat it); the sweep is never
// failed by it: the caller reports it.
func (h *Pinger) Ping(ctx context.Context, p Ping, msg string) error {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := h.Request(ctx, p, msg)
	if err != nil {
		return err
	}
	c := h.Client
	if c == nil {
		c = &http.Client{
			Transport: &http.Transport{Proxy: h.proxy, DisableKeepAlives: true},
			// A redirect would send the key's ping elsewhere: not followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("no answer within %s", timeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the receiver answered %d", resp.StatusCode)
	}
	return nil
}

package drain

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
)

// Inflight names the --inflight endpoint among Config.Opts.
const Inflight Probe = "inflight"

// endpoints are the probe options of each URL drain-test speaks to.
type endpoints map[Probe]*probe.Options

// endpoints returns each configured URL's options: the command's, or
// plain defaults (a GET, no TLS settings) for a URL given without.
func (cfg Config) endpoints() endpoints {
	ep := endpoints{}
	for which, u := range map[Probe]string{Ready: cfg.ReadyURL, Live: cfg.LiveURL, Inflight: cfg.InflightURL, Traffic: cfg.TrafficURL} {
		if u == "" {
			continue
		}
		if o := cfg.Opts[which]; o != nil {
			ep[which] = o
			continue
		}
		pu, err := url.Parse(u)
		if err != nil {
			continue
		}
		ep[which] = &probe.Options{URL: pu, Method: http.MethodGet, Header: http.Header{},
			ConnectTimeout: pollTimeout, ReadTimeout: pollTimeout, MaxBody: 64 << 10,
			Redactor: probe.NewRedactor(nil, nil)}
	}
	return ep
}

// poll is one health request through the probe, on a fresh connection (as
// the kubelet does), bounded by pollTimeout: its failure carries the
// probe's classified reason.
func poll(ctx context.Context, opts *probe.Options, which Probe) timedPoll {
	tp := timedPoll{Poll: Poll{Probe: which}, start: time.Now()}
	o := *opts
	o.Follow = 0 // the kubelet's 3xx is an answer
	o.ConnectTimeout = min(nonZero(o.ConnectTimeout, pollTimeout), pollTimeout)
	o.ReadTimeout = min(nonZero(o.ReadTimeout, pollTimeout), pollTimeout)
	o.MaxTime = pollTimeout
	o.Expect = probe.Expectations{} // the status is judged here, 200-399
	res := proberOf(ctx)(ctx, &o)
	tp.Took = time.Since(tp.start)
	if res.HTTPStatus != 0 {
		tp.Status = res.HTTPStatus
		return tp
	}
	tp.Refused = res.Reason == classify.ConnRefused
	switch {
	case tp.Refused:
		tp.Err = "connection refused"
	case res.Outcome == classify.Timeout:
		tp.Err = "timeout (" + string(res.Reason) + ")"
	case res.Reason != "":
		tp.Err = string(res.Reason) + ": " + res.Error
	default:
		tp.Err = res.Error
	}
	return tp
}

func nonZero(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

type timedPoll struct {
	Poll
	start time.Time
}

// tlsFor is the TLS configuration of opts (--cacert, --insecure, --cert,
// --servername), with the URL's host as the server name by default.
func tlsFor(opts *probe.Options) *tls.Config {
	tc := opts.TLSConfig.Clone()
	if tc == nil {
		tc = &tls.Config{}
	}
	if tc.ServerName == "" {
		tc.ServerName = opts.URL.Hostname()
		if opts.Host != "" {
			if h, _, err := net.SplitHostPort(opts.Host); err == nil {
				tc.ServerName = h
			} else {
				tc.ServerName = opts.Host
			}
		}
	}
	return tc
}

// dialFor dials as opts says: --resolve's address for host:port, the -4/-6
// network.
func dialFor(opts *probe.Options, timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	nw := "tcp"
	if opts.Network != "" {
		nw = opts.Network
	}
	return func(ctx context.Context, _, addr string) (net.Conn, error) {
		addrs, ok := opts.Resolve[addr]
		if !ok || len(addrs) == 0 {
			return d.DialContext(ctx, nw, addr)
		}
		// --resolve's addresses in order: the first that connects.
		_, port, _ := net.SplitHostPort(addr)
		var err error
		for _, a := range addrs {
			if _, _, perr := net.SplitHostPort(a); perr != nil {
				a = net.JoinHostPort(a, port)
			}
			var c net.Conn
			if c, err = d.DialContext(ctx, nw, a); err == nil {
				return c, nil
			}
		}
		return nil, err
	}
}

// transportFor is the in-flight requests' transport: a fresh connection
// each, the options' TLS and dialling, no proxy (a proxy would buffer the
// body whose timing is watched).
func transportFor(opts *probe.Options) *http.Transport {
	return &http.Transport{
		DialContext:       dialFor(opts, pollTimeout),
		TLSClientConfig:   tlsFor(opts),
		DisableKeepAlives: true,
		Proxy:             nil,
	}
}

// newRequest is a request as opts says: method, headers, Host, user
// agent, basic auth.
func newRequest(ctx context.Context, opts *probe.Options) (*http.Request, error) {
	var body io.Reader
	if opts.Body != nil {
		body = bytes.NewReader(opts.Body)
	}
	req, err := http.NewRequestWithContext(ctx, nonEmpty(opts.Method, http.MethodGet), opts.URL.String(), body)
	if err != nil {
		return nil, err
	}
	for k, vs := range opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if opts.Host != "" {
		req.Host = opts.Host
	}
	req.Header.Set("User-Agent", nonEmpty(opts.UserAgent, "healthctl-drain-test"))
	if opts.HasUser {
		req.SetBasicAuth(opts.User, opts.Password)
	}
	return req, nil
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

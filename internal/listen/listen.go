package listen

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/icmp"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/crash"
	"github.com/healthctl/healthctl/internal/listen/board"
	"github.com/healthctl/healthctl/internal/metrics"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
)

// DefaultProbeRate is --probe-rate's default: /probe requests a second
// (a burst of as many is allowed). 1,000 a second is a Prometheus
// scraping 5,000 targets every 5 s, or 15,000 every 15 s.
const DefaultProbeRate = 1000

// DefaultProbeConcurrency is how many /probe probes run at once when
// Config.ProbeConcurrency is not set (watch sets --concurrency's).
const DefaultProbeConcurrency = 256

// Config is what the service runs with.
type Config struct {
	// Interval is the watch's cadence: /healthz fails when no sweep has
	// completed for 2 intervals plus MaxSweep.
	Interval time.Duration
	// MaxSweep is the longest a sweep's probe may take (--max-time).
	MaxSweep time.Duration
	Now      func() time.Time
	Probe    probe.Prober
	Modules  map[string]*blackbox.Module
	// ModuleSet, when set, is where /probe takes its modules from
	// (Modules is then unused), reloaded by POST /-/reload and shown
	// by /config.
	ModuleSet *ModuleSet
	Allow     *Allow
	// Rate is /probe's token bucket, requests a second.
	Rate float64
	// ProbeConcurrency is how many /probe probes run at once; a request
	// past it waits for one to end, within its own budget (Budget).
	ProbeConcurrency int
	// Refresh is the page's meta refresh, in seconds.
	Refresh int
	// ICMPSocket opens an icmp module's socket (nil: golang.org/x/net's
	// icmp.ListenPacket); tests give one that is refused.
	ICMPSocket ICMPSocket
	// Fold is the --exit-1 decision on an exit code (nil: none): each
	// target of /status.json is the sweep's -o json line, exit_code too.
	Fold func(int) int
	// Hook says an --on-redeploy hook is set: without one (or for a
	// recover: false target) a redeploy decision restarts nothing, and
	// the page says so.
	Hook bool
}

// ICMPSocket opens the socket an echo request goes out on, as
// golang.org/x/net/icmp.ListenPacket: network "udp4"/"udp6" is an
// unprivileged ping socket, "ip4:icmp"/"ip6:ipv6-icmp" a raw one.
type ICMPSocket func(network, address string) (*icmp.PacketConn, error)

// Service serves the endpoints.
type Service struct {
	cfg    Config
	board  board.Board
	bucket *bucket
	// probes holds a token for each /probe probe under way.
	probes chan struct{}
	// answers counts /probe's answers by kind (answerKinds).
	answers [len(answerKinds)]atomic.Int64
	started time.Time
}

// New returns the service; publish each sweep with Publish.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rate <= 0 {
		cfg.Rate = DefaultProbeRate
	}
	if cfg.ProbeConcurrency <= 0 {
		cfg.ProbeConcurrency = DefaultProbeConcurrency
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = int(math.Ceil(min(max(cfg.Interval.Seconds(), 5), 60)))
	}
	now := cfg.Now()
	return &Service{cfg: cfg, bucket: newBucket(cfg.Rate, now), probes: make(chan struct{}, cfg.ProbeConcurrency), started: now}
}

// Publish makes a sweep's metrics (written from in) and its status (made
// from the same in) what the endpoints serve, together. The metrics are
// kept gzip-compressed (~1.2 KB of text a target, a tenth of it
// compressed: the largest part of what a long-running --listen keeps
// between sweeps) and decompressed as /metrics is served; each target's
// -o json line is encoded beside them, while they are written. The error
// is the rendering's.
func (s *Service) Publish(in metrics.Input) error {
	lines := make(chan board.Lines, 1)
	crash.Go(func() { lines <- board.EncodeLines(in.Latest, s.cfg.Fold, s.board.LinesSize()) })
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	err := metrics.Write(zw, in)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	s.board.Publish(in, slices.Clip(b.Bytes()), s.cfg.Now(), <-lines)
	return err
}

// Status is the status last published (nil before the first sweep).
func (s *Service) Status() *board.Status {
	if c := s.board.Current(); c != nil {
		return c.Status
	}
	return nil
}

// Handler serves /, /status.json, /metrics, /healthz and /probe. Only
// /probe's probes wait for a slot (Config.ProbeConcurrency): the other
// endpoints answer from the last snapshot, whatever /probe is doing.
func (s *Service) Handler() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /metrics", s.serveMetrics)
	m.HandleFunc("GET /status.json", s.serveJSON)
	m.HandleFunc("GET /healthz", s.serveHealthz)
	m.HandleFunc("GET /probe", s.serveProbe)
	if ms := s.cfg.ModuleSet; ms != nil {
		m.HandleFunc("POST /-/reload", ms.ServeReload)
		m.HandleFunc("GET /config", ms.ServeConfig)
	}
	m.HandleFunc("GET /{$}", s.servePage)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every answer, a refusal too: never framed, never sniffed
		// into another type than it says.
		h := w.Header()
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		// The server has no read timeout (it would end /probe's
		// context at its expiry): each request's read deadline is
		// its write deadline, WriteTimeout here, /probe's budget
		// there. (A recorder has no deadlines: the error is moot.)
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(WriteTimeout))
		m.ServeHTTP(w, r)
	})
}

// The kinds of /probe answer healthctl_listen_probe_requests_total counts.
const (
	answerProbed = iota
	answerBusy
	answerRefused
	answerRateLimited
)

var answerKinds = [...]string{answerProbed: "probed", answerBusy: "busy", answerRefused: "refused", answerRateLimited: "rate_limited"}

func (s *Service) count(kind int) { s.answers[kind].Add(1) }

// refuse answers a /probe request with an error status and text.
func (s *Service) refuse(w http.ResponseWriter, text string, code int) {
	s.count(answerRefused)
	http.Error(w, text, code)
}

func (s *Service) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if c := s.board.Current(); c != nil {
		// The fleet's series are kept compressed between sweeps. A copy
		// that cannot be read back is a failed scrape (up == 0), never an
		// answer whose targets silently vanished from Prometheus.
		zr, err := gzip.NewReader(bytes.NewReader(c.Metrics))
		if err != nil {
			http.Error(w, "the fleet's metrics cannot be read: "+err.Error(), http.StatusInternalServerError)
			return
		}
		if _, err := io.Copy(w, zr); err != nil {
			panic(http.ErrAbortHandler) // cut the answer: Prometheus records the scrape as failed
		}
	}
	metrics.WriteProcess(w, metrics.ReadProcess())
	s.writeOwn(w)
}

// writeOwn writes the listener's own series (the exporter's, apart from
// the fleet's): /probe's probes under way, its limit, and its answers.
func (s *Service) writeOwn(w io.Writer) {
	var b bytes.Buffer
	gauge := func(name, help string, v int) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n%s %d\n", name, help, name, name, v)
	}
	gauge("healthctl_listen_probes_in_flight", "/probe probes running now.", len(s.probes))
	gauge("healthctl_listen_probe_limit", "/probe probes that may run at once (--concurrency).", cap(s.probes))
	const total = "healthctl_listen_probe_requests_total"
	fmt.Fprintf(&b, "# HELP %s /probe requests by answer: probed, busy (no probe slot within the scrape's budget), refused (400, 403), rate_limited (429).\n# TYPE %s counter\n", total, total)
	for i, k := range answerKinds {
		fmt.Fprintf(&b, "%s{answer=%q} %d\n", total, k, s.answers[i].Load())
	}
	w.Write(b.Bytes())
}

func (s *Service) serveJSON(w http.ResponseWriter, r *http.Request) {
	st := s.Status()
	if q := r.URL.Query(); q.Has("limit") || q.Has("after") {
		page, err := st.Page(q.Get("limit"), q.Get("after"), q.Has("after"))
		if err != nil {
			http.Error(w, output.Bounded(output.Untrusted(err.Error()), MaxErrorText), http.StatusBadRequest)
			return
		}
		st = page
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err := board.WriteJSON(w, st); err != nil {
		http.Error(w, "status: "+err.Error(), http.StatusInternalServerError)
	}
}

func (s *Service) servePage(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	if err := board.WritePage(&b, s.Status(), s.cfg.Now(), s.cfg.Refresh, r.URL.Query(), s.cfg.Hook); err != nil {
		http.Error(w, "healthctl: page: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// Nothing the page needs comes from anywhere else.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; frame-ancestors 'none'")
	w.Write(b.Bytes())
}

// serveHealthz is the watcher's own health: 200 while sweeps complete on
// the cadence (or the first is not overdue yet), 503 when none has
// completed for two intervals and a probe's longest time: the loop is
// stuck, and a supervisor should restart it.
func (s *Service) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	now := s.cfg.Now()
	limit := 2*s.cfg.Interval + s.cfg.MaxSweep + 10*time.Second
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	c := s.board.Current()
	switch {
	case c == nil && now.Sub(s.started) <= limit:
		fmt.Fprintf(w, "ok: starting, no sweep completed yet\n")
	case c == nil:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "stuck: no sweep completed in %s (limit %s)\n", now.Sub(s.started).Round(time.Second), limit)
	case now.Sub(c.At) > limit:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "stuck: the last sweep completed %s ago (limit %s)\n", now.Sub(c.At).Round(time.Second), limit)
	default:
		n := int64(0)
		if c.Status.Sweep != nil {
			n = c.Status.Sweep.N
		}
		fmt.Fprintf(w, "ok: sweep %d completed %s ago\n", n, now.Sub(c.At).Round(time.Millisecond))
	}
}

// serveProbe is blackbox_exporter's /probe?target=…&module=…: one probe
// with the module's options, answered in blackbox's metric names. 400 for
// a missing target or an unknown module (as blackbox), 403 for a target
// outside --probe-allow, 429 past --probe-rate (which every request
// counts against, refused or not). Every answer with a probe
// comes within the request's budget (Budget): the probe's windows are
// what is left of it once a probe slot is free, and a request that gets
// no slot within it is answered probe_success 0 (busy).
func (s *Service) serveProbe(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	// Every request takes a token, a refused one too: a client cannot
	// try its guesses (a target, a module) faster than it may probe.
	if ok, wait := s.bucket.take(s.cfg.Now()); !ok {
		s.count(answerRateLimited)
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		http.Error(w, "too many /probe requests (--probe-rate "+strconv.FormatFloat(s.cfg.Rate, 'g', -1, 64)+"/s)", http.StatusTooManyRequests)
		return
	}
	q := r.URL.Query()
	tgt := q.Get("target")
	if tgt == "" {
		s.refuse(w, "Target parameter is missing", http.StatusBadRequest)
		return
	}
	name := q.Get("module")
	if name == "" {
		name = blackbox.DefaultModule
	}
	mods := s.cfg.Modules
	if s.cfg.ModuleSet != nil {
		mods = s.cfg.ModuleSet.Modules()
	}
	mod, ok := mods[name]
	if !ok {
		s.refuse(w, fmt.Sprintf("Unknown module %q", output.Bounded(output.Untrusted(name), 64)), http.StatusBadRequest)
		return
	}
	budget, err := Budget(r.Header.Get(ScrapeTimeoutHeader), mod.Timeout)
	if err != nil {
		s.refuse(w, err.Error(), http.StatusBadRequest)
		return
	}
	deadline := start.Add(budget)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(deadline.Add(WriteSlack))
	_ = rc.SetReadDeadline(deadline.Add(WriteSlack))
	o, err := mod.Options(tgt, budget)
	var res probe.Result
	var wf *blackbox.WrongFamily
	var nh *blackbox.NoHost
	switch {
	case errors.As(err, &nh):
		// Blackbox looks it up and finds nothing: probe_success 0.
		res = nh.Result(mod)
	case errors.As(err, &wf):
		// Blackbox resolves it to no address: probe_success 0.
		if !s.cfg.Allow.Permits(wf.URL) {
			s.refuse(w, "target "+strconv.Quote(output.Bounded(displayHost(wf.URL), 128))+" is not allowed by --probe-allow", http.StatusForbidden)
			return
		}
		res = wf.Result()
	case err != nil:
		s.refuse(w, output.Bounded(output.Untrusted(err.Error()), MaxErrorText), http.StatusBadRequest)
		return
	default:
		if !s.cfg.Allow.Permits(o.URL) {
			s.refuse(w, "target "+strconv.Quote(output.Bounded(displayHost(o.URL), 128))+" is not allowed by --probe-allow", http.StatusForbidden)
			return
		}
		if !s.acquire(r.Context(), deadline) {
			if r.Context().Err() == nil {
				s.count(answerBusy)
				writeBusy(w, time.Since(start))
			}
			return
		}
		defer func() { <-s.probes }()
		if mod.HasToken() {
			// The token first, within the same budget: blackbox's
			// client fetches one for each probe.
			ctx, cancel := context.WithDeadline(r.Context(), deadline)
			auth, err := mod.Token(ctx)
			cancel()
			if r.Context().Err() != nil {
				return // the scraper went away
			}
			if err != nil {
				s.count(answerProbed)
				writeTokenFailed(w, r, mod, o, budget, time.Since(start), o.Redactor.String(err.Error()))
				return
			}
			if _, tok, ok := strings.Cut(auth, " "); ok {
				o.Redactor.AddSecret(tok)
			}
			if o.Header == nil {
				o.Header = http.Header{}
			}
			o.Header.Set("Authorization", auth)
		}
		fit(o, time.Until(deadline))
		o.ICMPSocket = s.cfg.ICMPSocket
		res = s.cfg.Probe(r.Context(), o)
		if res.Canceled || r.Context().Err() != nil {
			return // the scraper went away
		}
	}
	s.count(answerProbed)
	var b bytes.Buffer
	if err := metrics.WriteProbe(&b, mod.Prober, &res); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if q.Get("debug") == "true" {
		WriteDebug(w, mod, o, budget, &res, b.Bytes())
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write(b.Bytes())
}

// MaxErrorText bounds the text of a /probe refusal (400): it quotes the
// client's own input, and need not quote more than a line of it.
const MaxErrorText = 256

// minProbe is the least of a budget a probe starts with: a slot freed
// later than that is not taken.
const minProbe = 50 * time.Millisecond

// acquire takes a probe slot, waiting until deadline (less minProbe) at
// most; false when none came (or the scraper went away).
func (s *Service) acquire(ctx context.Context, deadline time.Time) bool {
	select {
	case s.probes <- struct{}{}:
		return true
	default:
	}
	wait := time.Until(deadline) - minProbe
	if wait <= 0 {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case s.probes <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// writeBusy is the answer to a /probe request that got no probe slot
// within its budget: probe_success 0 (as blackbox answers a probe its
// timeout ended), and why, in a series of the listener's own.
func writeBusy(w http.ResponseWriter, waited time.Duration) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	fmt.Fprintf(w, `# HELP probe_success Displays whether or not the probe was a success
# TYPE probe_success gauge
probe_success 0
# HELP probe_duration_seconds Returns how long the probe took to complete in seconds
# TYPE probe_duration_seconds gauge
probe_duration_seconds %s
# HELP healthctl_probe_not_started Why /probe answered without probing (always 1): busy, every probe slot (--concurrency) was taken for the scrape's whole budget.
# TYPE healthctl_probe_not_started gauge
healthctl_probe_not_started{why="busy"} 1
`, strconv.FormatFloat(waited.Seconds(), 'g', -1, 64))
}

// displayHost is a URL's host:port for an error (never its userinfo,
// path or query).
func displayHost(u *url.URL) string {
	port := portOf(u)
	if port == "" {
		return output.Untrusted(u.Hostname())
	}
	return output.Untrusted(net.JoinHostPort(u.Hostname(), port))
}

// ListenAddr is the address --listen binds: a port alone (9115, :9115)
// is loopback's (127.0.0.1), so the listener is never on every interface
// unless the address says so (0.0.0.0:9115, [::]:9115).
func ListenAddr(s string) string {
	if _, err := strconv.Atoi(s); err == nil {
		return "127.0.0.1:" + s
	}
	if h, p, err := net.SplitHostPort(s); err == nil && h == "" {
		return "127.0.0.1:" + p
	}
	return s
}

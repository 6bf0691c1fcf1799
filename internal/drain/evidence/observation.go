package evidence

// What drain-test saw, as the experiment hands it to Judge: the settings,
// the polls, the in-flight requests, the kept-alive connection, the exit
// and drain-test's own lateness.

import (
	"fmt"
	"strconv"
	"time"
)

// Settings are the timing a service promises, from drain-test's flags.
type Settings struct {
	// PreDrain is P (--pre-drain, PRE_DRAIN_MS): readiness 503 while the
	// listener still serves.
	PreDrain time.Duration
	// ShutdownTimeout is S (--shutdown-timeout, SHUTDOWN_TIMEOUT_MS): the
	// process is gone by then.
	ShutdownTimeout time.Duration
	// ReadyFlipMax is how soon after the signal readiness must answer 503.
	ReadyFlipMax time.Duration
}

// Probe names a health endpoint.
type Probe string

// The polled endpoints.
const (
	Ready Probe = "readiness"
	Live  Probe = "liveness"
	// Traffic is a short request to the traffic endpoint (--inflight's
	// host:port, path /) during [0, P): the orchestrator still routes
	// requests there until it sees the flip.
	Traffic Probe = "traffic"
	// Inflight names the --inflight endpoint among Config.Opts.
	Inflight Probe = "inflight"
)

// Interval is how often readiness and liveness are polled.
const Interval = 50 * time.Millisecond

// PollTimeout bounds one health poll.
const PollTimeout = time.Second

// OKStatus is the kubelet's httpGet rule: 200-399 is success, anything
// else (400 and above) is failure.
func OKStatus(status int) bool { return status >= 200 && status < 400 }

// Poll is one health request on a fresh connection.
type Poll struct {
	Probe Probe
	// At is when the request started, since the signal (negative before).
	At time.Duration
	// Status is the HTTP status; 0 when no answer came.
	Status int
	// Err is the transport error when no answer came.
	Err string
	// Refused says nothing accepted the connection.
	Refused bool
	// Cut says an answer came (Status is set) but its body did not arrive
	// whole: shorter than its Content-Length, a chunked body without its
	// last chunk, or a reset or timeout while reading it (Err says which).
	Cut bool
	// Took is how long the poll ran.
	Took time.Duration
	// GRPC is a gRPC health answer ("SERVING", "NOT_SERVING",
	// "UNIMPLEMENTED"…); Status is then 200 for SERVING and 503 for any
	// other answer, as an HTTP readiness endpoint would say it.
	GRPC string
}

// Said is what the endpoint answered, as the user knows it: the HTTP
// status, or the gRPC health answer.
func (p Poll) Said() string {
	if p.GRPC != "" {
		return p.GRPC
	}
	return strconv.Itoa(p.Status)
}

// End is when the poll ended, since the signal.
func (p Poll) End() time.Duration { return p.At + p.Took }

// Answered says an HTTP answer came back.
func (p Poll) Answered() bool { return p.Status != 0 }

// Request is one slow request on --inflight, started before the signal.
type Request struct {
	// Made is when its connection attempt started, End when it ended,
	// both since the signal (negative: before it).
	Made   time.Duration
	End    time.Duration
	Status int
	// Complete says the body was read to its end without an error: as long
	// as Content-Length said, to the chunked body's last chunk, or, without
	// either, until the server closed the connection (then Delimited).
	Complete bool
	// Delimited says the body had no length: it ended when the connection
	// closed, which the server's death does too. Judge decides whether that
	// close was the service's answer or its exit.
	Delimited bool
	// Framing is how the body's end was marked: FramingLength,
	// FramingChunked or FramingClose ("" when no answer came).
	Framing string
	Bytes   int64
	Err     string
}

// How an HTTP/1.1 body's end is marked (RFC 9112 §6.3), as the request
// log says it.
const (
	FramingLength  = "content-length"
	FramingChunked = "chunked"
	// FramingClose is a body without a length: it ends when the server
	// closes the connection, which is complete by HTTP/1.1's own rule.
	FramingClose = "close-delimited"
)

// OK says the request was served: 2xx with its whole body, no error.
func (r Request) OK() bool { return r.Err == "" && r.Complete && r.Status >= 200 && r.Status < 300 }

// KeepAliveKind is what happened on the watched kept-alive connection.
type KeepAliveKind string

// What the kept-alive connection can see.
const (
	// KeepAliveClosedIdle: the server closed it between responses (FIN), as
	// a graceful server does with idle connections.
	KeepAliveClosedIdle KeepAliveKind = "closed_idle"
	// KeepAliveClosedByHeader: a response said Connection: close.
	KeepAliveClosedByHeader KeepAliveKind = "closed_by_header"
	// KeepAliveReset: a TCP reset, or the connection ended mid-response.
	KeepAliveReset KeepAliveKind = "reset"
	// KeepAliveNoAnswer: a request on it got no answer within 2s; it was
	// no longer watched (neither a clean close nor a reset).
	KeepAliveNoAnswer KeepAliveKind = "no_answer"
)

// KeepAliveEvent is something seen on the kept-alive connection.
type KeepAliveEvent struct {
	At     time.Duration
	Kind   KeepAliveKind
	Detail string
}

// KeepAlive is what the watched kept-alive connection saw.
type KeepAlive struct {
	// Watched says a kept-alive connection was open at the signal; Why says
	// why not otherwise.
	Watched bool
	Why     string
	// Requests counts responses read on it after the signal.
	Requests int
	Events   []KeepAliveEvent
}

// Exit is how the process ended.
type Exit struct {
	// Gone says the process is no longer running, At since the signal.
	Gone bool
	At   time.Duration
	// Known says the exit status could be read (a child of healthctl).
	Known bool
	Code  int
	// Signal names the signal that ended it ("SIGTERM"), if one did.
	Signal string
	// Killed says healthctl killed it, past S plus a margin, at KilledAt.
	Killed   bool
	KilledAt time.Duration
}

func (e Exit) String() string {
	switch {
	case !e.Known:
		return "gone (exit status unknown)"
	case e.Signal != "":
		return "killed by " + e.Signal
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

// Observation is everything drain-test saw, for Judge.
type Observation struct {
	Pid    int
	Signal string
	// SignalledAt is t=0 on the wall clock: when the signal was sent
	// (zero when none was).
	SignalledAt time.Time
	// SignalNumber is the signal's number (15 for SIGTERM): an exit status
	// of 128 plus it is the conventional exit after handling it.
	SignalNumber int
	// Command is the signalled program's name (the base of --exec's
	// first word; "" when attached): an init or a shell is named in the
	// verdict about it.
	Command string
	// Endpoints are each endpoint's URL (redacted), for the request log.
	Endpoints map[Probe]string
	// HostPorts are each endpoint's host:port, with its scheme's default
	// port when the URL names none; GRPC says which endpoints speak gRPC
	// health. Run reads both from probe's scheme table, which the judge
	// does not import.
	HostPorts map[Probe]string
	GRPC      map[Probe]bool
	// TrafficOK says which statuses serve a traffic request (--traffic-expect;
	// nil: 200-399).
	TrafficOK func(status int) bool
	// Traffic says where the traffic went and within what window.
	Traffic TrafficInfo
	// ReadyBefore says readiness and liveness both answered 200 before the
	// signal; NotReadyWhy says what they answered otherwise (then nothing
	// was signalled and nothing else is judged).
	ReadyBefore bool
	NotReadyWhy string
	Polls       []Poll
	// InflightURL says --inflight was given; InflightGRPC that it is a
	// gRPC call (grpc://HOST:PORT/pkg.Service/Method).
	InflightURL, InflightGRPC bool
	Inflight                  []Request
	// InflightBaseline is the length of the --inflight URL's whole
	// answer read before the signal (-1: none): a close-delimited
	// in-flight body that ended with the process is cut only when
	// shorter than it.
	InflightBaseline int64
	KeepAlive        KeepAlive
	Exit             Exit
	// Leftover says processes of the child's group outlived it (and were
	// killed).
	Leftover bool
	// Lateness is the worst scheduling lateness drain-test measured of
	// itself after the signal (its timer, its pollers): the seam through
	// which a starved run is told from a broken service.
	Lateness Lateness
}

// Lateness is how late drain-test's own timers and pollers ran.
type Lateness struct {
	// Max is the worst lateness, At when it was seen (since the signal),
	// What what was late ("the readiness poller", "a 10 ms timer").
	Max  time.Duration
	At   time.Duration
	What string
}

// TrafficInfo is the traffic endpoint of a run, as the report names it.
type TrafficInfo struct {
	// URL is the traffic endpoint (redacted); "" when there was none.
	URL string
	// FromInflight says it is the --inflight URL: no --traffic was given.
	FromInflight bool
	// Window bounds each traffic request (--traffic-timeout, else
	// min(S, 5 s)).
	Window time.Duration
}

// Source says where the traffic endpoint came from.
func (t TrafficInfo) Source() string {
	if t.FromInflight {
		return "--inflight"
	}
	return "--traffic"
}

// String names the endpoint for a verdict: "http://h/slow (the --inflight
// URL: no --traffic given; each answered within 5000 ms)".
func (t TrafficInfo) String() string {
	from := "--traffic"
	if t.FromInflight {
		from = "the --inflight URL: no --traffic given"
	}
	return fmt.Sprintf("%s (%s; each request within %d ms)", t.URL, from, t.Window.Milliseconds())
}

// Describe says what a poll got: "503", "connection refused", "timeout".
func Describe(p Poll) string {
	switch {
	case p.Cut:
		return fmt.Sprintf("HTTP %d with its body cut (%s)", p.Status, p.Err)
	case p.GRPC != "":
		return "gRPC " + p.GRPC
	case p.Answered():
		return fmt.Sprintf("HTTP %d", p.Status)
	case p.Refused:
		return "connection refused"
	case p.Err != "":
		return p.Err
	}
	return "no answer"
}

// DescribeRequest says what an in-flight request got: an error, "HTTP
// 503", "body cut after 120 bytes" or "ok".
func DescribeRequest(q Request) string {
	switch {
	case q.Err != "":
		return q.Err
	case q.Status < 200 || q.Status > 299:
		return fmt.Sprintf("HTTP %d", q.Status)
	case !q.Complete:
		return fmt.Sprintf("body cut after %d bytes", q.Bytes)
	}
	return "ok"
}

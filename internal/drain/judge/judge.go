package judge

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/shutdown"

	"github.com/healthctl/healthctl/internal/words"
)

// The verdict names (SPEC.md §7, §9): each names the invariant that failed.
const (
	NotReadyBefore            = "NOT_READY_BEFORE"
	ReadinessNeverFlips       = "READINESS_NEVER_FLIPS"
	ReadyFlipLate             = "READY_FLIP_LATE"
	ReadinessFlaps            = "READINESS_FLAPS"
	LivenessFailedDuringDrain = "LIVENESS_FAILED_DURING_DRAIN"
	ListenerClosedEarly       = "LISTENER_CLOSED_EARLY"
	NewRequestsRefused        = "NEW_REQUESTS_REFUSED"
	InflightAborted           = "INFLIGHT_ABORTED"
	KeepaliveReset            = "KEEPALIVE_RESET"
	ShutdownHang              = "SHUTDOWN_HANG"
	NonzeroExit               = "NONZERO_EXIT"
	SignalNotForwarded        = "SIGNAL_NOT_FORWARDED"
	WrapperExitedEarly        = "WRAPPER_EXITED_EARLY"
	ExitCodeUnknown           = "EXIT_CODE_UNKNOWN"
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

// failStatus is an HTTP answer the kubelet counts as a failure.
func failStatus(status int) bool { return status >= 400 }

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

// said is what the endpoint answered, as the user knows it: the HTTP
// status, or the gRPC health answer.
func (p Poll) said() string {
	if p.GRPC != "" {
		return p.GRPC
	}
	return strconv.Itoa(p.Status)
}

// end is when the poll ended, since the signal.
func (p Poll) end() time.Duration { return p.At + p.Took }

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

// StarvedBound is how late drain-test may run and still name the
// invariants a service broke: a quarter of a poll's 1 s window. A run
// later than that could see a poll time out, a flip come late or the
// listener look closed because drain-test itself was not scheduled, and
// calls a run that failed unknown (exit 9) instead of naming invariants.
const StarvedBound = PollTimeout / 4

// Starved says a run that failed was measured while drain-test itself was
// starved: its failures are not named.
type Starved struct {
	LatenessMS float64 `json:"lateness_ms"`
	AtMS       float64 `json:"at_ms"`
	What       string  `json:"what"`
	BoundMS    float64 `json:"bound_ms"`
	// Seen are the invariants it would have named.
	Seen []string `json:"seen"`
}

// Unknown says the run's outcome is unknown: it failed only on what
// drain-test's own lateness could have made (exit 9).
func (r Report) Unknown() bool {
	if r.Starved == nil {
		return false
	}
	for _, v := range r.Verdicts {
		if !v.OK {
			return false
		}
	}
	return true
}

// byTimingAlone says a failed verdict rests only on what a starved
// prober can fake: a request that got no answer within its window, or a
// moment (the flip, the exit) seen within late of its bound. A refusal, a
// reset, a close, a status, an exit status are the server's doing.
func byTimingAlone(o Observation, s Settings, name string, flip, late time.Duration) bool {
	timedOut := func(p Poll) bool {
		return !p.Answered() && !p.Refused && transportResult(p.Err) == ResultNoAnswer
	}
	P := s.PreDrain
	switch name {
	case ListenerClosedEarly:
		race := raceWindow(o, P)
		for _, p := range o.Polls {
			if p.At >= 0 && p.At < P-race && !p.Answered() && !timedOut(p) && !cutAfterPreDrain(o, p, P) && !(o.Exit.Killed && p.end() >= o.Exit.KilledAt) {
				return false // refused, reset or closed: the server's
			}
		}
		return true
	case LivenessFailedDuringDrain:
		for _, p := range o.Polls {
			if p.Probe == Live && p.At >= 0 && p.At < P && p.Answered() && !OKStatus(p.Status) {
				return false // a status: the server's
			}
		}
		return true
	case ReadinessNeverFlips:
		for _, p := range o.Polls {
			if p.Probe == Ready && p.At >= 0 && timedOut(p) {
				return true
			}
		}
		return false
	case ReadyFlipLate:
		return flip >= 0 && flip-late <= s.ReadyFlipMax
	case InflightAborted:
		for _, q := range o.Inflight {
			if !q.OK() && !strings.Contains(q.Err, "timeout") || shortDelimited(q, o) {
				return false
			}
		}
		for _, p := range o.Polls {
			if p.Probe == Traffic && cutAfterPreDrain(o, p, P) {
				return false
			}
		}
		return true
	case ShutdownHang:
		at := o.Exit.At
		if o.Exit.Killed {
			at = o.Exit.KilledAt
		}
		return o.Exit.Gone && at-late <= s.ShutdownTimeout
	}
	return false
}

// Why is the sentence the report's first line and each row give.
func (s Starved) Why() string {
	return fmt.Sprintf("drain-test itself was starved: %s ran %.0f ms late at %.0f ms (more than the %.0f ms a verdict allows: a loaded machine)", s.What, s.LatenessMS, s.AtMS, s.BoundMS)
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
	return fmt.Sprintf("%s (%s; each request within %s)", t.URL, from, ms(t.Window))
}

// Verdict is one invariant judged.
type Verdict struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Skipped says the invariant could not be judged in this run (no
	// --inflight URL, exit status unknown, ...); it does not fail the run.
	Skipped bool   `json:"skipped"`
	Detail  string `json:"detail"`
}

// Event is one point of the timeline, in ms since the signal.
type Event struct {
	TMS    float64 `json:"t_ms"`
	Event  string  `json:"event"`
	Detail string  `json:"detail,omitempty"`
}

// Report is Judge's answer.
type Report struct {
	OK       bool
	Verdicts []Verdict
	Timeline []Event
	// Requests is the request log every verdict was judged from.
	Requests []Record
	// Facts are the measured moments; Formulas uses the exit.
	Facts Facts
	// NotChecked are the invariants this run could not judge (skipped
	// verdicts): a PASS is bare only when there are none.
	NotChecked []NotChecked
	// Starved is set when the run failed while drain-test was starved
	// past StarvedBound: the outcome is unknown (exit 9), and the
	// failures seen are not named as the service's.
	Starved *Starved
}

// NotChecked is an invariant a run did not check, and why.
type NotChecked struct {
	Verdict string `json:"verdict"`
	// What is what was not checked, as the PASS line says it:
	// "in-flight", "traffic", "keep-alive", "exit status".
	What string `json:"what"`
	Why  string `json:"why"`
}

// checkedWhat names what each verdict checks, for "in-flight not checked".
var checkedWhat = map[string]string{
	InflightAborted:           "in-flight",
	NewRequestsRefused:        "traffic",
	KeepaliveReset:            "keep-alive",
	NonzeroExit:               "exit status",
	ExitCodeUnknown:           "exit status",
	ReadinessFlaps:            "readiness flaps",
	LivenessFailedDuringDrain: "liveness",
	NotReadyBefore:            "readiness before the signal",
	ReadinessNeverFlips:       "readiness flip",
	ReadyFlipLate:             "readiness flip",
	ListenerClosedEarly:       "listener",
	ShutdownHang:              "exit time",
	SignalNotForwarded:        "signal",
	WrapperExitedEarly:        "wrapper",
}

// NotCheckedLine is "in-flight not checked, keep-alive not checked" ("":
// every invariant was checked).
func (r Report) NotCheckedLine() string {
	var parts []string
	for _, n := range r.NotChecked {
		parts = append(parts, n.What+" not checked")
	}
	return strings.Join(parts, ", ")
}

// Facts are the measured moments, since the signal (negative: not seen).
type Facts struct {
	Flip, ListenerClosed, LastInflight, Exit time.Duration
}

const notSeen = time.Duration(-1)

// ms renders a duration as whole milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

// Judge checks each invariant drain-test judges against what was observed,
// one verdict per invariant, in a fixed order. It is pure: the same
// observation always gives the same report.
func Judge(o Observation, s Settings) Report {
	r := Report{Timeline: timeline(o, s.PreDrain), Requests: requestLog(o)}
	if !o.ReadyBefore {
		r.Verdicts = []Verdict{verdict(NotReadyBefore, false, o.NotReadyWhy+"; no signal was sent, nothing else was judged")}
		r.Facts = Facts{notSeen, notSeen, notSeen, notSeen}
		return r
	}
	ready, live := pollsAfterSignal(o.Polls)
	flipV, flipIdx := judgeFlip(ready, s.ReadyFlipMax, upWord(o, Ready))
	liveV, liveFailed := judgeLiveness(o, live, s.PreDrain)
	closeV, closed := judgeListener(o, s.PreDrain)
	inflightV, lastInflight := judgeInflight(o, s.PreDrain)
	flip := notSeen
	if flipIdx >= 0 {
		flip = ready[flipIdx].At
	}
	r.Verdicts = []Verdict{
		verdict(NotReadyBefore, true, readyBeforeWords(o)),
		flipV,
		judgeFlaps(ready, flipIdx),
		liveV,
		closeV,
		judgeTraffic(o, s.PreDrain),
		inflightV,
		judgeKeepAlive(o.KeepAlive),
		judgeShutdown(o.Exit, s),
		judgeExitStatus(o, flip, closed, s.PreDrain),
		judgeSignal(o, flip, liveFailed),
		judgeWrapper(o, flip),
	}
	r.OK = true
	for _, v := range r.Verdicts {
		if !v.OK {
			r.OK = false
		}
	}
	if !r.OK && o.Lateness.Max > StarvedBound {
		// What failed by timing alone (a poll that timed out, a flip or
		// an exit seen late) may be drain-test's own lateness: not named,
		// each row keeps what was seen. What the server did (a refusal,
		// a reset, a status, an exit status) is named all the same.
		st := &Starved{LatenessMS: tms(o.Lateness.Max), AtMS: tms(o.Lateness.At), What: o.Lateness.What, BoundMS: tms(StarvedBound)}
		for i, v := range r.Verdicts {
			if !v.OK && byTimingAlone(o, s, v.Name, flip, o.Lateness.Max) {
				st.Seen = append(st.Seen, v.Name)
				r.Verdicts[i] = skipped(v.Name, "not judged, "+st.Why()+"; seen: "+v.Detail)
			}
		}
		if len(st.Seen) > 0 {
			r.Starved = st
		}
		// r.OK stays false: a failed verdict is named or unknown now.
	}
	for _, v := range r.Verdicts {
		if v.Skipped {
			r.NotChecked = append(r.NotChecked, NotChecked{Verdict: v.Name, What: checkedWhat[v.Name], Why: v.Detail})
		}
	}
	exitAt := notSeen
	if o.Exit.Gone && !o.Exit.Killed {
		exitAt = o.Exit.At
	}
	r.Facts = Facts{Flip: flip, ListenerClosed: closed, LastInflight: lastInflight, Exit: exitAt}
	return r
}

// verdict is an invariant judged; skipped is one that could not be.
func verdict(name string, ok bool, detail string) Verdict {
	return Verdict{Name: name, OK: ok, Detail: detail}
}

func skipped(name, detail string) Verdict {
	return Verdict{Name: name, OK: true, Skipped: true, Detail: detail}
}

// pollsAfterSignal splits the polls made from the signal on by endpoint,
// each in the order they started.
func pollsAfterSignal(polls []Poll) (ready, live []Poll) {
	for _, p := range polls {
		if p.At < 0 {
			continue
		}
		switch p.Probe {
		case Ready:
			ready = append(ready, p)
		case Live:
			live = append(live, p)
		}
	}
	sort.SliceStable(ready, func(i, j int) bool { return ready[i].At < ready[j].At })
	sort.SliceStable(live, func(i, j int) bool { return live[i].At < live[j].At })
	return ready, live
}

// judgeFlip: readiness answers a status >= 400 (a status, not a transport
// error) within flipMax. flipIdx is the first such answer in ready, -1 when
// none came.
func judgeFlip(ready []Poll, flipMax time.Duration, up string) (v Verdict, flipIdx int) {
	flipIdx = -1
	for i, p := range ready {
		if failStatus(p.Status) {
			flipIdx = i
			break
		}
	}
	if flipIdx < 0 {
		seen := up + " on every poll"
		for _, p := range ready {
			if !OKStatus(p.Status) {
				seen = Describe(p) + " at " + ms(p.At)
				break
			}
		}
		want := "a status >= 400"
		if up != httpUp {
			// A gRPC (or other) health answer: no HTTP words in its row.
			want = "a health answer other than " + up
		}
		return verdict(ReadinessNeverFlips, false, "readiness never answered "+want+" after the signal (first other answer: "+seen+")"), flipIdx
	}
	if p := ready[flipIdx]; p.At > flipMax {
		return verdict(ReadyFlipLate, false, fmt.Sprintf("readiness answered %s at %s > --ready-flip-max %s", p.said(), ms(p.At), ms(flipMax))), flipIdx
	}
	p := ready[flipIdx]
	return verdict(ReadyFlipLate, true, fmt.Sprintf("readiness answered %s at %s <= --ready-flip-max %s", p.said(), ms(p.At), ms(flipMax))), flipIdx
}

// httpUp is how an HTTP endpoint's up answer is said.
const httpUp = "200-399"

// upWord says how endpoint p answers when up, in its own protocol's
// words: "200-399" over HTTP, else what its polls said ("SERVING" for
// gRPC health, "connected" for tcp://, "PONG" for Redis).
func upWord(o Observation, p Probe) string {
	if o.GRPC[p] {
		return "SERVING"
	}
	for _, q := range o.Polls {
		if q.Probe == p && OKStatus(q.Status) {
			if q.GRPC != "" {
				return q.GRPC
			}
			return httpUp
		}
	}
	return httpUp
}

// readyBeforeWords is NOT_READY_BEFORE's ok row in each endpoint's words.
func readyBeforeWords(o Observation) string {
	r, l := upWord(o, Ready), upWord(o, Live)
	if r == l {
		return "readiness and liveness " + answeredWord(r) + " before the signal"
	}
	return fmt.Sprintf("readiness %s and liveness %s before the signal", answeredWord(r), answeredWord(l))
}

// answeredWord is "answered SERVING", or "accepted a connection" for a
// tcp:// endpoint.
func answeredWord(up string) string {
	if up == "connected" {
		return "accepted a connection"
	}
	return "answered " + up
}

// judgeFlaps: readiness never answers 200-399 again once it flipped at
// ready[flipIdx].
func judgeFlaps(ready []Poll, flipIdx int) Verdict {
	if flipIdx < 0 {
		return skipped(ReadinessFlaps, "readiness never flipped")
	}
	for _, p := range ready[flipIdx+1:] {
		if OKStatus(p.Status) {
			return verdict(ReadinessFlaps, false, fmt.Sprintf("readiness answered %s again at %s after flipping at %s", p.said(), ms(p.At), ms(ready[flipIdx].At)))
		}
	}
	return verdict(ReadinessFlaps, true, "readiness stayed not-ready after the flip")
}

// judgeLiveness: liveness answers 200-399 on every poll made during
// [0, P) while the process still ran. A poll that got no answer is the
// listener's (LISTENER_CLOSED_EARLY), unless its port answered other
// requests made then: a liveness handler that hangs on an open port is
// liveness's own failure. failed says a poll failed (something reacted to
// the signal).
func judgeLiveness(o Observation, live []Poll, P time.Duration) (v Verdict, failed bool) {
	x := o.Exit
	bad, n := -1, 0
	for i, p := range live {
		if p.At >= P || (x.Gone && p.At >= x.At) {
			continue
		}
		n++
		hung := !p.Answered() && !p.Refused && strings.Contains(p.Err, "timeout") && portAnswered(o, p)
		if bad < 0 && ((p.Answered() && !OKStatus(p.Status)) || hung) {
			bad = i
		}
	}
	if bad < 0 && n == 0 {
		// No row says "all 0 polls" and calls it ok.
		return skipped(LivenessFailedDuringDrain, fmt.Sprintf("no liveness poll was made in [0, %s) while pid %d ran (it was gone at %s)", ms(P), o.Pid, ms(x.At))), false
	}
	if bad < 0 {
		return verdict(LivenessFailedDuringDrain, true, fmt.Sprintf("liveness %s on %s made in [0, %s) that got an answer", answeredWord(upWord(o, Live)), allOf(n, "poll"), ms(P))), false
	}
	p := live[bad]
	return verdict(LivenessFailedDuringDrain, false, fmt.Sprintf("liveness answered %s to a poll made at %s, inside the pre-drain window (P = %s): %s", Describe(p), ms(p.At), ms(P), livenessWho)), true
}

// livenessWho says who acts on a liveness failure during the drain.
const livenessWho = "Docker with autoheal, ECS, Nomad, Consul and older Kubernetes restart a service whose liveness fails instead of letting it drain (current Kubernetes stops liveness probes once a pod is terminating)"

// closeRace is how close to P a connection attempt may be made and lose
// the race with the close the pre-drain ends with (accepted, then closed
// before its request was read) without failing the listener: a service
// that closes at P, as PRE_DRAIN_MS = P says, meets its contract.
const closeRace = 40 * time.Millisecond

// raceWindow is how close to P an attempt may be made and still only have
// lost the race with the close at P: closeRace, or longer when the
// service's own health answers inside P took longer (a loaded machine: a
// request made within the service's own answer time of P could not have
// been answered before a close at P, however correct the service).
// Capped at a quarter of P, so a slow service cannot excuse its pre-drain.
func raceWindow(o Observation, P time.Duration) time.Duration {
	w := closeRace
	for _, p := range o.Polls {
		if p.At >= 0 && p.At < P && p.Answered() && (p.Probe == Ready || p.Probe == Live) && p.Took > w {
			w = p.Took
		}
	}
	return min(w, P/4)
}

// judgeListener: every connection attempt made during [0, P) to the health
// port or the traffic endpoint is accepted and answered. A refused, reset
// or unanswered attempt fails it at the time it was made (a stall late in
// P is charged when it began, not when its poll gave up). closed is when
// the first such attempt after the signal was made.
func judgeListener(o Observation, P time.Duration) (v Verdict, closed time.Duration) {
	closed = notSeen
	var early *Poll
	n, failed, raced, cutLater := 0, 0, 0, 0
	race := raceWindow(o, P)
	for i, p := range o.Polls {
		if p.At < 0 {
			continue
		}
		unanswered := !p.Answered() && !(o.Exit.Killed && p.end() >= o.Exit.KilledAt)
		if unanswered && p.Probe == Live && !p.Refused && portAnswered(o, p) {
			unanswered = false // liveness's own hang: LIVENESS_FAILED_DURING_DRAIN
		}
		if unanswered && cutAfterPreDrain(o, p, P) {
			// Accepted inside P and cut once P was over: the listener was
			// open when it was made; the cut is INFLIGHT_ABORTED's.
			n++
			cutLater++
			continue
		}
		if unanswered && (closed < 0 || p.At < closed) {
			closed = p.At
		}
		if p.At >= P {
			continue
		}
		n++
		if unanswered && p.At >= P-race {
			raced++
		}
		if unanswered && p.At < P-race {
			failed++
			if early == nil || p.At < early.At {
				early = &o.Polls[i]
			}
		}
	}
	if early != nil {
		return verdict(ListenerClosedEarly, false, fmt.Sprintf("a new connection (%s) made at %s got %s, inside the pre-drain window (P = %s); %d of %d connection attempts made in [0, %s) failed: routed requests would fail%s", early.Probe, ms(early.At), Describe(*early), ms(P), failed, n, ms(P), queuedAtClose(o, *early, P))), closed
	}
	detail := fmt.Sprintf("%d of %d connection attempts made in [0, %s) were accepted and answered", n-raced-cutLater, n, ms(P))
	if cutLater > 0 {
		detail += fmt.Sprintf("; %d more were accepted and cut after P (%s)", cutLater, InflightAborted)
	}
	if raced > 0 {
		detail += fmt.Sprintf("; the other %d, made in its last %s, lost the race with the close at P", raced, ms(race))
	}
	return verdict(ListenerClosedEarly, true, detail), closed
}

// queuedAtClose is the listener row's note when what failed it is what a
// service too slow for its load (or starved of CPU) shows: the attempt's
// connection was accepted (not refused) and ended only after P, and the
// service's own health answers in P took longer than the close race can
// excuse (a quarter of P). The listener was open then; the service had
// not taken the connection from its accept queue when it closed.
func queuedAtClose(o Observation, p Poll, P time.Duration) string {
	if p.Refused || p.end() < P {
		return ""
	}
	var slow time.Duration
	for _, q := range o.Polls {
		if q.At >= 0 && q.At < P && q.Answered() && (q.Probe == Ready || q.Probe == Live) && q.Took > slow {
			slow = q.Took
		}
	}
	if slow <= P/4 {
		return ""
	}
	return fmt.Sprintf(" (that connection was accepted and ended at %s, after P, and the service's own health answers in P took up to %s: the listener was open, but the service, behind on its load or starved of CPU, had not yet taken the connections queued when it closed)", ms(p.end()), ms(slow))
}

// cutAfterPreDrain says p was made inside the pre-drain window, its
// connection accepted (not refused, no connect timeout), and was cut — a
// reset or a close, before or during its answer — once P was over (or in
// the close race just before it): a request in flight when the pre-drain
// ended, which the listener being open through P explains, and whose cut
// is INFLIGHT_ABORTED's. A request cut by healthctl's kill is not.
func cutAfterPreDrain(o Observation, p Poll, P time.Duration) bool {
	if p.At < 0 || p.At >= P || p.Refused || p.end() < P-closeRace {
		return false
	}
	if o.Exit.Killed && p.end() >= o.Exit.KilledAt {
		return false
	}
	if p.Answered() {
		return p.Cut
	}
	switch transportResult(p.Err) {
	case ResultReset, ResultEOF:
		// No answer at all: held by a handler, or parked in the accept
		// queue of a listener that stopped accepting? The port tells:
		// a fresh request to it made later inside P was answered.
		return answeredLaterInP(o, p, P)
	}
	return false
}

// answeredLaterInP says a request to p's host:port made after p and
// before P got an answer: the port was still accepting and serving then.
func answeredLaterInP(o Observation, p Poll, P time.Duration) bool {
	h := o.hostOf(p.Probe)
	if h == "" {
		return false
	}
	for _, q := range o.Polls {
		if q.At > p.At && q.At < P && q.Answered() && o.hostOf(q.Probe) == h {
			return true
		}
	}
	return false
}

// judgeInflight: every request in flight at the signal completes 2xx with
// its body. last is when the last request ended (notSeen: none ran).
func judgeInflight(o Observation, P time.Duration) (v Verdict, last time.Duration) {
	last = notSeen
	// Traffic requests accepted inside P and cut after it were in flight
	// when the pre-drain ended: their cut is this invariant's.
	var cutTraffic []string
	polls := append([]Poll(nil), o.Polls...)
	sort.SliceStable(polls, func(i, j int) bool { return polls[i].At < polls[j].At })
	for _, p := range polls {
		if p.Probe == Traffic && cutAfterPreDrain(o, p, P) {
			how := "a reset before any answer"
			switch {
			case p.Answered():
				how = Describe(p)
			case transportResult(p.Err) == ResultEOF:
				how = "the connection closed before any answer"
			}
			cutTraffic = append(cutTraffic, fmt.Sprintf("a traffic request made at %s (inside P, accepted) got %s at %s", ms(p.At), how, ms(p.end())))
		}
	}
	if len(cutTraffic) > 0 && (!o.InflightURL || len(o.Inflight) == 0) {
		return verdict(InflightAborted, false, "requests in flight when the pre-drain ended were cut: "+strings.Join(firstFew(cutTraffic), "; ")), last
	}
	switch {
	case !o.InflightURL:
		return skipped(InflightAborted, "no --inflight URL"), last
	case len(o.Inflight) == 0:
		return skipped(InflightAborted, "no in-flight request could be started"), last
	}
	var bad []string
	inFlight, delimited := 0, 0
	for i, q := range o.Inflight {
		last = max(last, q.End)
		if q.End < 0 && q.OK() && !shortDelimited(q, o) {
			continue // done before the signal: not in flight
		}
		inFlight++
		switch {
		case !q.OK():
			bad = append(bad, fmt.Sprintf("#%d %s at %s", i+1, DescribeRequest(q), ms(q.End)))
		case shortDelimited(q, o):
			bad = append(bad, fmt.Sprintf("#%d %s at %s", i+1, shortDelimitedWhy(q, o), ms(q.End)))
		case q.Framing == FramingClose:
			delimited++
		}
	}
	switch {
	case len(bad) > 0:
		detail := "in-flight requests cut: " + strings.Join(bad, "; ")
		if len(cutTraffic) > 0 {
			detail += "; and requests in flight when the pre-drain ended: " + strings.Join(firstFew(cutTraffic), "; ")
		}
		return verdict(InflightAborted, false, detail), last
	case len(cutTraffic) > 0:
		return verdict(InflightAborted, false, "requests in flight when the pre-drain ended were cut: "+strings.Join(firstFew(cutTraffic), "; ")), last
	case inFlight == 0:
		return skipped(InflightAborted, "every --inflight request finished before the signal: use a slower endpoint"), last
	}
	detail := fmt.Sprintf("%s completed 2xx with a full body (last at %s)", allOf(inFlight, "in-flight request"), ms(last))
	if delimited > 0 {
		detail += fmt.Sprintf("; %d close-delimited (no length: complete when the server closed the connection", delimited)
		if o.InflightBaseline > 0 {
			detail += fmt.Sprintf(", as long as the %d bytes the URL answered before the signal", o.InflightBaseline)
		}
		detail += ")"
	}
	return verdict(InflightAborted, true, detail), last
}

// firstFew is the first three of what, and how many more.
func firstFew(what []string) []string {
	if len(what) <= 3 {
		return what
	}
	return append(what[:3:3], fmt.Sprintf("%d more", len(what)-3))
}

// shortDelimited says q's body had no length, ended with the process and
// is shorter than the same URL's answer before the signal: a cut body. A
// close-delimited body is otherwise complete (RFC 9112 §6.3): Jetty's
// graceful stop answers in-flight requests so, then the JVM exits.
func shortDelimited(q Request, o Observation) bool {
	return q.OK() && endedWithProcess(q, o.Exit) && o.InflightBaseline >= 0 && q.Bytes < o.InflightBaseline
}

func shortDelimitedWhy(q Request, o Observation) string {
	return fmt.Sprintf("a close-delimited body of %d bytes, shorter than the %d bytes the same URL answered before the signal, ended with the process", q.Bytes, o.InflightBaseline)
}

// exitSlack is how close to the process's exit a body without a length
// may end and still count as ended by it: the kernel closes a dying
// process's sockets before its parent learns of the exit.
const exitSlack = 100 * time.Millisecond

// endedWithProcess says q's body had no length and ended when the process
// exited (or was killed): its end proves nothing.
func endedWithProcess(q Request, x Exit) bool {
	if !q.Delimited {
		return false
	}
	switch {
	case x.Killed:
		return q.End >= x.KilledAt-exitSlack
	case x.Gone:
		return q.End >= x.At-exitSlack
	}
	return false
}

// judgeTraffic: every traffic request made during [0, P) that got an
// answer was served: 200-399 (or --traffic-expect) with its whole body.
// One that got no answer is the listener's (LISTENER_CLOSED_EARLY) and is
// never counted as served.
func judgeTraffic(o Observation, P time.Duration) Verdict {
	switch {
	case o.Endpoints[Traffic] == "" && !o.InflightURL:
		return skipped(NewRequestsRefused, "no --traffic or --inflight URL: no traffic endpoint to send new requests to")
	case o.Endpoints[Traffic] == "" && o.InflightGRPC:
		return skipped(NewRequestsRefused, "no --traffic URL, and the --inflight URL is a gRPC call, not a traffic endpoint: name an HTTP app path with --traffic")
	}
	served := OKStatus
	if o.TrafficOK != nil {
		served = o.TrafficOK
	}
	var first *Poll
	n, answered, ok, cutLater, unansweredCut := 0, 0, 0, 0, 0
	for i, p := range o.Polls {
		if p.Probe != Traffic || p.At < 0 || p.At >= P {
			continue
		}
		n++
		if !p.Answered() {
			if cutAfterPreDrain(o, p, P) {
				cutLater++
				unansweredCut++
			}
			continue
		}
		answered++
		if cutAfterPreDrain(o, p, P) && served(p.Status) {
			// Served through P, its body cut once P was over:
			// INFLIGHT_ABORTED's, not a new request refused.
			cutLater++
			continue
		}
		if !p.Cut && served(p.Status) {
			ok++
			continue
		}
		if first == nil || p.At < first.At {
			first = &o.Polls[i]
		}
	}
	switch {
	case n == 0:
		return skipped(NewRequestsRefused, "no traffic request was made during the pre-drain")
	case first != nil:
		what := fmt.Sprintf("HTTP %d", first.Status)
		if first.Cut {
			what = fmt.Sprintf("HTTP %d with its body cut (%s)", first.Status, first.Err)
		}
		return verdict(NewRequestsRefused, false, fmt.Sprintf("a new request made at %s got %s, inside the pre-drain window (P = %s); %d of %d answered requests made in [0, %s) were not served: the orchestrator still routes requests there until it sees the flip%s", ms(first.At), what, ms(P), answered-ok-cutLater, answered, ms(P), trafficTo(o.Traffic)))
	case ok == 0:
		// Nothing was served, and nothing refused: no row says "0 of N
		// served" and calls it ok.
		why := fmt.Sprintf("none of the %s made in [0, %s) was served or refused", words.Plural(n, "traffic request"), ms(P))
		if cutLater > 0 {
			why += fmt.Sprintf(" (%d accepted, then cut after the pre-drain: %s)", cutLater, InflightAborted)
		}
		if rest := n - answered - unansweredCut; rest > 0 {
			why += fmt.Sprintf(" (%d got no answer)", rest)
		}
		return skipped(NewRequestsRefused, why+trafficTo(o.Traffic))
	}
	detail := fmt.Sprintf("%d of %d requests made in [0, %s) served", ok, n, ms(P))
	if cutLater > 0 {
		detail += fmt.Sprintf("; %d more accepted, then cut after the pre-drain (%s)", cutLater, InflightAborted)
	}
	if rest := n - answered - unansweredCut; rest > 0 {
		detail += fmt.Sprintf("; the other %d got no answer (%s)", rest, ListenerClosedEarly)
	}
	return verdict(NewRequestsRefused, true, detail+trafficTo(o.Traffic))
}

// trafficTo is "; traffic: URL (where it came from; its window)", "" when
// the observation does not say.
func trafficTo(t TrafficInfo) string {
	if t.URL == "" {
		return ""
	}
	return "; traffic to " + t.String()
}

// allOf is "the 1 request", "all 2 requests".
func allOf(n int, word string) string {
	if n == 1 {
		return "the 1 " + word
	}
	return "all " + words.Plural(n, word)
}

// judgeKeepAlive: no reset mid-response on a kept-alive connection.
func judgeKeepAlive(k KeepAlive) Verdict {
	if !k.Watched {
		return skipped(KeepaliveReset, k.Why)
	}
	for _, e := range k.Events {
		if e.Kind == KeepAliveReset {
			return verdict(KeepaliveReset, false, fmt.Sprintf("the kept-alive connection was reset at %s: %s", ms(e.At), e.Detail))
		}
	}
	how := "it stayed open"
	if n := len(k.Events); n > 0 {
		// The same words as the timeline's event.
		how = fmt.Sprintf("then at %s: %s", ms(k.Events[n-1].At), k.Events[n-1].Detail)
	}
	return verdict(KeepaliveReset, true, fmt.Sprintf("%s on the kept-alive connection after the signal; %s", words.Plural(k.Requests, "response"), how))
}

// judgeShutdown: the process exits by S: the whole teardown (pre-drain,
// server close, then its own cleanup, which may take any part of S).
func judgeShutdown(x Exit, s Settings) Verdict {
	S := s.ShutdownTimeout
	switch {
	case x.Killed:
		return verdict(ShutdownHang, false, fmt.Sprintf("still running at %s > SHUTDOWN_TIMEOUT %s: killed by healthctl", ms(x.KilledAt), ms(S)))
	case !x.Gone:
		return verdict(ShutdownHang, false, "the process did not exit")
	case x.At > S:
		return verdict(ShutdownHang, false, fmt.Sprintf("exited at %s > SHUTDOWN_TIMEOUT %s", ms(x.At), ms(S)))
	}
	return verdict(ShutdownHang, true, fmt.Sprintf("exited at %s <= SHUTDOWN_TIMEOUT %s", ms(x.At), ms(S)))
}

// judgeExitStatus: exit status 0, or 128+N after signal N was sent (the
// conventional exit of a runtime that handled it: the JVM exits 143 after
// its shutdown hooks ran). Killed by the signal itself after a visible
// drain (readiness flipped, listener open through P) is a service that
// re-raised it. In attach mode the status usually cannot be read:
// EXIT_CODE_UNKNOWN, skipped.
func judgeExitStatus(o Observation, flip, closed, P time.Duration) Verdict {
	x := o.Exit
	switch {
	case x.Killed:
		return skipped(NonzeroExit, "killed by healthctl (see "+ShutdownHang+")")
	case !x.Gone:
		return skipped(NonzeroExit, "the process did not exit")
	case !x.Known:
		return skipped(ExitCodeUnknown, "pid "+fmt.Sprint(o.Pid)+" is gone; the exit status of a process healthctl did not start cannot be read (use --exec to judge it)")
	case diedOfSignal(o) && outlived(o) != "":
		// A wrapper (npm, sh -c without exec) that died of the signal
		// while what it started ran on: the signal was not passed on.
		// Whatever the in-flight requests did, nothing here shows that
		// the service handled the signal.
		if flip >= 0 {
			// The service got the signal too (tini -g, dumb-init's group
			// mode): the wrapper's exit first is WRAPPER_EXITED_EARLY's,
			// and its status says nothing of the service's.
			return skipped(NonzeroExit, fmt.Sprintf("%s ended (%s) at %s before the service it ran (see %s): its exit status is not the service's", who(o), x, ms(x.At), WrapperExitedEarly))
		}
		return verdict(NonzeroExit, false, fmt.Sprintf("%s was %s at %s while %s: the wrapper did not pass %s on, and the service never got it (readiness never flipped); nothing here shows the service handling %s; exec the service (sh -c 'exec svc …'), or run it under an init that forwards signals", who(o), x, ms(x.At), outlived(o), o.Signal, o.Signal))
	case x.Signal != "" && x.Signal == o.Signal && flip >= 0 && (closed < 0 || closed >= P):
		return verdict(NonzeroExit, false, fmt.Sprintf("re-raised %s after draining (readiness flipped at %s, the listener stayed open through P): the process ended killed by %s, which supervisors count as a failed exit; exit 0 once drained instead (%s)", o.Signal, ms(flip), o.Signal, reRaiseFix))
	case x.Signal != "" && x.Signal == o.Signal && finishedAfterSignal(o) > 0:
		// Puma: a graceful stop (in-flight requests finish), then the
		// signal raised again: handled, not ignored.
		return verdict(NonzeroExit, false, fmt.Sprintf("re-raised %s after finishing %s in flight at the signal: it handled %s, then ended killed by it, which supervisors count as a failed exit; exit 0 once drained instead (%s)", o.Signal, words.Plural(finishedAfterSignal(o), "request"), o.Signal, reRaiseFix))
	case x.Signal != "" && x.Signal != o.Signal:
		return verdict(NonzeroExit, false, fmt.Sprintf("the process was %s, not by the %s sent: it crashed or was killed while shutting down", x, o.Signal))
	case x.Signal != "":
		return verdict(NonzeroExit, false, "the process was "+x.String()+": it did not handle "+o.Signal)
	case x.Code != 0 && o.SignalNumber > 0 && x.Code == 128+o.SignalNumber && wrappers[o.Command]:
		// tini, catatonit, dumb-init and shells pass on the exit of the
		// process they ran: 143 is that process ended by SIGTERM.
		return verdict(NonzeroExit, true, fmt.Sprintf("exit status %d = 128 + %d (%s): %s passes on that the process it ran ended by %s", x.Code, o.SignalNumber, o.Signal, o.Command, o.Signal))
	case x.Code != 0 && o.SignalNumber > 0 && x.Code == 128+o.SignalNumber:
		return verdict(NonzeroExit, true, fmt.Sprintf("exit status %d = 128 + %d (%s): the conventional exit after handling %s (%s)", x.Code, o.SignalNumber, o.Signal, o.Signal, conventionalExitNote(o.Command)))
	case x.Code != 0:
		return verdict(NonzeroExit, false, fmt.Sprintf("exit status %d", x.Code))
	}
	return verdict(NonzeroExit, true, "exit status 0")
}

// conventionalExitNote says which runtime exits 128+N after handling
// signal N: the signalled program's own when it is one known to (java,
// next), else both.
func conventionalExitNote(command string) string {
	const jvm, next = "the JVM exits so after its shutdown hooks ran", "next start exits so once its server has closed and the requests in flight are done"
	switch command {
	case "java":
		return jvm
	case "next":
		return next
	}
	return jvm + "; " + next
}

// diedOfSignal says the signalled process ended of the signal sent: killed
// by it, or the 128+N a shell or init reports for it.
func diedOfSignal(o Observation) bool {
	x := o.Exit
	return x.Signal != "" && x.Signal == o.Signal || x.Signal == "" && o.SignalNumber > 0 && x.Code == 128+o.SignalNumber
}

// outlived says what of the signalled process outlived it ("": nothing
// seen): an endpoint that answered after it exited, or processes of its
// group left running.
func outlived(o Observation) string {
	if a := answeredAfterExit(o); a != nil {
		return fmt.Sprintf("what it started still answered (%s %s at %s)", a.Probe, a.said(), ms(a.At))
	}
	if o.Leftover {
		return "processes it started outlived it (killed by healthctl)"
	}
	return ""
}

// who names the signalled process: "pid 42 (sh)".
func who(o Observation) string {
	w := fmt.Sprintf("pid %d", o.Pid)
	if o.Command != "" {
		w += " (" + o.Command + ")"
	}
	return w
}

// reRaiseFix names the settings that stop the common servers re-raising
// the signal after a graceful stop.
const reRaiseFix = "Puma: raise_exception_on_sigterm false; @godaddy/terminus: useExit0: true"

// finishedAfterSignal counts the in-flight requests that completed after
// the signal, before the process exited.
func finishedAfterSignal(o Observation) int {
	n := 0
	for _, q := range o.Inflight {
		if q.OK() && q.End >= 0 && !shortDelimited(q, o) {
			n++
		}
	}
	return n
}

// judgeSignal: something reacted to the signal, it was the service (no
// endpoint answers after the signalled process exited), and nothing of its
// process group outlived it. flip is when readiness flipped (notSeen:
// never); liveFailed says liveness failed during the pre-drain.
func judgeSignal(o Observation, flip time.Duration, liveFailed bool) Verdict {
	x := o.Exit
	after := answeredAfterExit(o)
	var why []string
	wrapperFirst := after != nil && flip >= 0
	if wrapperFirst {
		// The service got the signal (readiness flipped) but outlived
		// the process signalled: WRAPPER_EXITED_EARLY's, not this.
		after = nil
	}
	if after != nil {
		why = append(why, fmt.Sprintf("pid %d exited (%s) at %s, but %s still answered %d at %s: the signal reached a wrapper (a shell?), not the service; exec the service or use an init that forwards signals", o.Pid, x, ms(x.At), after.Probe, after.Status, ms(after.At)))
	} else if !reacted(o, flip, liveFailed) {
		why = append(why, fmt.Sprintf("nothing reacted to %s: readiness stayed 200, the listener stayed open and the process kept running (a wrapper that swallows the signal?)", o.Signal))
	}
	if o.Leftover && !wrapperFirst {
		why = append(why, "processes of its group outlived the signalled process (killed by healthctl)")
	}
	if len(why) > 0 {
		return verdict(SignalNotForwarded, false, strings.Join(why, "; "))
	}
	return verdict(SignalNotForwarded, true, "the service reacted to "+o.Signal)
}

// answeredAfterExit is the first poll answered after the signalled
// process exited (nil: none was).
func answeredAfterExit(o Observation) *Poll {
	x := o.Exit
	if !x.Gone || x.Killed {
		return nil
	}
	var after *Poll
	for i, p := range o.Polls {
		if p.At > x.At && p.Answered() && (after == nil || p.At < after.At) {
			after = &o.Polls[i]
		}
	}
	return after
}

// wrappers are the programs that run a service rather than being it:
// inits and shells. In a container one is PID 1, and its exit ends the
// container, whatever still runs under it.
var wrappers = map[string]bool{
	"tini": true, "tini-static": true, "dumb-init": true, "catatonit": true, "s6-svscan": true,
	"sh": true, "bash": true, "dash": true, "ash": true, "zsh": true, "ksh": true, "busybox": true,
	"supervisord": true, "npm": true, "yarn": true, "pnpm": true,
	"runsvdir": true, "runsv": true, "pm2-runtime": true,
}

// judgeWrapper: the signalled process does not exit before the service
// it runs. When the signal reached the service (readiness flipped) and the
// service still answered after the signalled process exited, that process
// was an init or shell that exited first: in a container, PID 1's exit
// kills the service mid-drain (under tini -g or dumb-init's group mode,
// the sh -c between them dies of the signal; the init then exits). flip
// is when readiness flipped (notSeen: never).
func judgeWrapper(o Observation, flip time.Duration) Verdict {
	x := o.Exit
	after := answeredAfterExit(o)
	if after == nil || flip < 0 {
		if after != nil {
			return verdict(WrapperExitedEarly, true, "the service never got the signal (see "+SignalNotForwarded+")")
		}
		return verdict(WrapperExitedEarly, true, fmt.Sprintf("nothing answered after pid %d exited", o.Pid))
	}
	fix := "exec the service from the process signalled, or make it wait for the service"
	if wrappers[o.Command] || o.Command == "" {
		fix = "exec the service: sh -c 'exec svc …' (a shell that does not exec dies of the signal, and an init — tini, dumb-init — exits with its child, orphaning the service)"
	}
	return verdict(WrapperExitedEarly, false, fmt.Sprintf("%s exited (%s) at %s while the service it ran still answered (%s %s at %s; readiness had flipped at %s: the service got the signal): in a container PID 1's exit kills the service mid-drain; %s", who(o), x, ms(x.At), after.Probe, after.said(), ms(after.At), ms(flip), fix))
}

// reacted says anything changed after the signal and before healthctl
// killed the process: readiness flipped, liveness failed, the process
// exited, a poll, the kept-alive connection or an in-flight request failed.
func reacted(o Observation, flip time.Duration, liveFailed bool) bool {
	x := o.Exit
	// Only what happened before healthctl killed the process counts.
	before := func(t time.Duration) bool { return t >= 0 && (!x.Killed || t < x.KilledAt) }
	if before(flip) || liveFailed || (x.Gone && !x.Killed) {
		return true
	}
	for _, p := range o.Polls {
		// A poll that failed because healthctl killed the process under it
		// is no reaction: judge it by when it ended.
		if p.At >= 0 && !p.Answered() && before(p.end()) {
			return true
		}
	}
	for _, e := range o.KeepAlive.Events {
		if before(e.At) {
			return true
		}
	}
	for _, q := range o.Inflight {
		if !q.OK() && before(q.End) {
			return true
		}
	}
	return false
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

// timeline orders what happened after the signal.
func timeline(o Observation, P time.Duration) []Event {
	if !o.ReadyBefore {
		return nil
	}
	ev := []Event{{0, "signal", fmt.Sprintf("%s sent to pid %d", o.Signal, o.Pid)}}
	served := OKStatus
	if o.TrafficOK != nil {
		served = o.TrafficOK
	}
	ev = append(ev, pollEvents(o, P, served)...)
	last, done := notSeen, 0
	for i, q := range o.Inflight {
		if !q.OK() {
			ev = append(ev, Event{tms(q.End), "inflight_aborted", fmt.Sprintf("in-flight request #%d: %s", i+1, DescribeRequest(q))})
			continue
		}
		if shortDelimited(q, o) {
			ev = append(ev, Event{tms(q.End), "inflight_aborted", fmt.Sprintf("in-flight request #%d: %s", i+1, shortDelimitedWhy(q, o))})
			continue
		}
		done++
		last = max(last, q.End)
	}
	if last >= 0 {
		ev = append(ev, Event{tms(last), "inflight_done", fmt.Sprintf("last of %d completed in-flight requests done", done)})
	}
	for _, e := range o.KeepAlive.Events {
		ev = append(ev, Event{tms(e.At), "keepalive_" + string(e.Kind), e.Detail})
	}
	if o.Exit.Killed {
		ev = append(ev, Event{tms(o.Exit.KilledAt), "killed", "still running past SHUTDOWN_TIMEOUT plus a margin: process group killed by healthctl"})
	} else if o.Exit.Gone {
		ev = append(ev, Event{tms(o.Exit.At), "exit", o.Exit.String()})
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].TMS < ev[j].TMS })
	return ev
}

// tms is a time since the signal in the timeline's unit, milliseconds.
func tms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// pollEvents are the first time each thing was seen in the polls after the
// signal: the flip, a flap back to 200, a liveness failure, the listener
// closing; and the first answer that came after the process exited.
func pollEvents(o Observation, P time.Duration, served func(int) bool) []Event {
	x := o.Exit
	var ev []Event
	var flipped, flapped, liveFailed, closed, refused bool
	polls := append([]Poll(nil), o.Polls...)
	sort.SliceStable(polls, func(i, j int) bool { return polls[i].At < polls[j].At })
	for _, p := range polls {
		if p.At < 0 {
			continue
		}
		switch {
		case p.Probe == Ready && failStatus(p.Status) && !flipped:
			flipped = true
			ev = append(ev, Event{tms(p.At), "ready_flip", fmt.Sprintf("readiness answered %s", p.said())})
		case p.Probe == Ready && OKStatus(p.Status) && flipped && !flapped:
			flapped = true
			ev = append(ev, Event{tms(p.At), "ready_flap", fmt.Sprintf("readiness answered %s again", p.said())})
		case p.Probe == Traffic && p.Answered() && (p.Cut || !served(p.Status)) && !refused && !cutAfterPreDrain(o, p, P):
			refused = true
			what := fmt.Sprintf("HTTP %d", p.Status)
			if p.Cut {
				what += " with its body cut"
			}
			ev = append(ev, Event{tms(p.At), "traffic_refused", "a new request made then to the traffic endpoint got " + what})
		case p.Probe == Live && p.Answered() && !OKStatus(p.Status) && !liveFailed:
			liveFailed = true
			ev = append(ev, Event{tms(p.At), "live_fail", fmt.Sprintf("liveness answered %s", p.said())})
		}
		if !p.Answered() && !closed && !(x.Killed && p.end() >= x.KilledAt) && !cutAfterPreDrain(o, p, P) {
			closed = true
			ev = append(ev, Event{tms(p.At), "listener_closed", "a new connection (" + string(p.Probe) + ") made then got " + Describe(p)})
		}
		if x.Gone && !x.Killed && p.At > x.At && p.Answered() {
			ev = append(ev, Event{tms(p.At), "answered_after_exit", fmt.Sprintf("%s answered %s after the process exited", p.Probe, p.said())})
			break
		}
	}
	return ev
}

// Formula is one timing rule (PRE_DRAIN_MS < SHUTDOWN_TIMEOUT_MS, preStop
// sleep >= PRE_DRAIN_MS, ...) filled with this run's numbers.
type Formula struct {
	Formula string `json:"formula"`
	// Result is "holds", "fails", or the setting the numbers call for.
	Result string `json:"result"`
	// Holds is false when the rule is broken by the numbers themselves.
	Holds bool `json:"holds"`
}

// Formulas fills the timing rules with P, S and the measured exit: P < S,
// the exit within S, and the preStop, terminationGracePeriodSeconds and
// stop_grace_period a deployment of this service needs (the same rules the
// manifest lint checks, seeds/003).
func Formulas(s Settings, f Facts) []Formula {
	P, S := s.PreDrain.Milliseconds(), s.ShutdownTimeout.Milliseconds()
	holds := func(ok bool) string {
		if ok {
			return "holds"
		}
		return "fails"
	}
	out := []Formula{{
		Formula: fmt.Sprintf("PRE_DRAIN_MS (%d) < SHUTDOWN_TIMEOUT_MS (%d)", P, S),
		Result:  holds(P < S), Holds: P < S,
	}}
	if f.Exit >= 0 {
		ok := f.Exit <= s.ShutdownTimeout
		out = append(out, Formula{
			Formula: fmt.Sprintf("measured exit (%d ms) <= SHUTDOWN_TIMEOUT_MS (%d)", f.Exit.Milliseconds(), S),
			Result:  holds(ok) + " (measured)", Holds: ok,
		})
	}
	pre := shutdown.PreStopSeconds(s.PreDrain)
	grace := shutdown.GraceSeconds(s.PreDrain, s.ShutdownTimeout)
	stop := shutdown.StopGraceSeconds(s.ShutdownTimeout)
	out = append(out,
		Formula{Formula: fmt.Sprintf("preStop sleep >= PRE_DRAIN_MS (%d)", P), Result: fmt.Sprintf("Kubernetes: preStop sleep %ds", pre), Holds: true},
		Formula{Formula: fmt.Sprintf("terminationGracePeriodSeconds > PRE_DRAIN_MS (%d) + SHUTDOWN_TIMEOUT_MS (%d)", P, S),
			Result: fmt.Sprintf("Kubernetes: terminationGracePeriodSeconds: %d (default 30: %s)", grace, holds(time.Duration(grace)*time.Second <= shutdown.DefaultTerminationGrace)), Holds: true},
		Formula{Formula: fmt.Sprintf("stop_grace_period >= SHUTDOWN_TIMEOUT_MS (%d) + %s", S, shutdown.Margin),
			Result: fmt.Sprintf("Compose: stop_grace_period: %ds (default 10s: %s)", stop, holds(s.ShutdownTimeout+shutdown.Margin <= shutdown.DefaultStopGrace)), Holds: true},
	)
	return out
}

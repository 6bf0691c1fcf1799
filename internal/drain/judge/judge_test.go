package judge

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/drain/evidence"
)

const msec = time.Millisecond

var settings = evidence.Settings{PreDrain: 500 * msec, ShutdownTimeout: 2 * time.Second, ReadyFlipMax: 300 * msec}

// polls returns polls of probe every 50 ms in [from, to) answering status
// (0: refused).
func polls(probe evidence.Probe, from, to time.Duration, status int) []evidence.Poll {
	var ps []evidence.Poll
	for t := from; t < to; t += 50 * msec {
		p := evidence.Poll{Probe: probe, At: t, Status: status}
		if status == 0 {
			p.Refused, p.Err = true, "connection refused"
		}
		ps = append(ps, p)
	}
	return ps
}

// endpointsAt sets o's endpoints as Run does: each URL (these name their
// ports), its host:port, and whether it speaks gRPC health.
func endpointsAt(o *evidence.Observation, urls map[evidence.Probe]string) {
	o.Endpoints, o.HostPorts, o.GRPC = urls, map[evidence.Probe]string{}, map[evidence.Probe]bool{}
	for p, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			panic(err)
		}
		o.HostPorts[p], o.GRPC[p] = pu.Host, pu.Scheme == "grpc"
	}
}

// good is a service that drains as seeds/003 asks, with P = 500 ms.
func good() evidence.Observation {
	o := evidence.Observation{Pid: 42, Signal: "SIGTERM", ReadyBefore: true, InflightURL: true}
	o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Ready, At: -100 * msec, Status: 200}, evidence.Poll{Probe: evidence.Live, At: -100 * msec, Status: 200})
	o.Polls = append(o.Polls, polls(evidence.Ready, 0, 10*msec, 200)...)
	o.Polls = append(o.Polls, polls(evidence.Ready, 50*msec, 500*msec, 503)...)
	o.Polls = append(o.Polls, polls(evidence.Ready, 500*msec, 900*msec, 0)...)
	o.Polls = append(o.Polls, polls(evidence.Live, 0, 500*msec, 200)...)
	o.Polls = append(o.Polls, polls(evidence.Live, 500*msec, 900*msec, 0)...)
	o.Polls = append(o.Polls, polls(evidence.Traffic, 0, 500*msec, 200)...)
	o.Inflight = []evidence.Request{{End: 800 * msec, Status: 200, Complete: true, Bytes: 100}}
	o.KeepAlive = evidence.KeepAlive{Watched: true, Requests: 5, Events: []evidence.KeepAliveEvent{{At: 500 * msec, Kind: evidence.KeepAliveClosedIdle}}}
	o.Exit = evidence.Exit{Gone: true, At: 850 * msec, Known: true}
	return o
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name   string
		change func(*evidence.Observation)
		fail   []string
		skip   []string
	}{
		{"good", func(*evidence.Observation) {}, nil, nil},
		{"not ready before", func(o *evidence.Observation) { o.ReadyBefore, o.NotReadyWhy = false, "readiness answered 503" }, []string{NotReadyBefore}, nil},
		{"never flips", func(o *evidence.Observation) {
			for i := range o.Polls {
				if o.Polls[i].Status == 503 {
					o.Polls[i].Status = 200
				}
			}
		}, []string{ReadinessNeverFlips}, []string{ReadinessFlaps}},
		{"refused is no flip", func(o *evidence.Observation) {
			for i := range o.Polls {
				if o.Polls[i].Probe == evidence.Ready && o.Polls[i].Status == 503 {
					o.Polls[i] = evidence.Poll{Probe: evidence.Ready, At: o.Polls[i].At, Refused: true, Err: "connection refused"}
				}
			}
		}, []string{ReadinessNeverFlips, ListenerClosedEarly}, []string{ReadinessFlaps}},
		{"late flip", func(o *evidence.Observation) {
			for i := range o.Polls {
				if o.Polls[i].Probe == evidence.Ready && o.Polls[i].Status == 503 && o.Polls[i].At < 400*msec {
					o.Polls[i].Status = 200
				}
			}
		}, []string{ReadyFlipLate}, nil},
		{"flaps", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Ready, At: 320 * msec, Status: 200})
		}, []string{ReadinessFlaps}, nil},
		{"liveness 503 in P", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Live, At: 200 * msec, Status: 503})
		}, []string{LivenessFailedDuringDrain}, nil},
		{"liveness 503 after P is fine", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Live, At: 600 * msec, Status: 503})
		}, nil, nil},
		{"listener closed in P", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Live, At: 100 * msec, Refused: true, Err: "connection refused"})
		}, []string{ListenerClosedEarly}, nil},
		{"inflight cut", func(o *evidence.Observation) {
			o.Inflight[0] = evidence.Request{End: 500 * msec, Err: "read: connection reset by peer"}
		}, []string{InflightAborted}, nil},
		{"inflight short body", func(o *evidence.Observation) { o.Inflight[0].Complete = false }, []string{InflightAborted}, nil},
		{"inflight 500", func(o *evidence.Observation) { o.Inflight[0].Status = 500 }, []string{InflightAborted}, nil},
		{"inflight done before the signal", func(o *evidence.Observation) { o.Inflight[0].End = -10 * msec }, nil, []string{InflightAborted}},
		{"no inflight URL", func(o *evidence.Observation) { o.InflightURL, o.Inflight = false, nil }, nil, []string{NewRequestsRefused, InflightAborted}},
		{"keep-alive reset", func(o *evidence.Observation) {
			o.KeepAlive.Events = []evidence.KeepAliveEvent{{At: 500 * msec, Kind: evidence.KeepAliveReset, Detail: "connection reset by peer"}}
		}, []string{KeepaliveReset}, nil},
		{"keep-alive not watched", func(o *evidence.Observation) { o.KeepAlive = evidence.KeepAlive{Why: "https"} }, nil, []string{KeepaliveReset}},
		{"killed", func(o *evidence.Observation) {
			o.Exit = evidence.Exit{Gone: true, At: 3 * time.Second, Known: true, Signal: "SIGKILL", Killed: true, KilledAt: 3 * time.Second}
		}, []string{ShutdownHang}, []string{NonzeroExit}},
		{"exit after S", func(o *evidence.Observation) { o.Exit.At = 2100 * msec }, []string{ShutdownHang}, nil},
		{"exit 1", func(o *evidence.Observation) { o.Exit.Code = 1 }, []string{NonzeroExit}, nil},
		{"killed by SIGTERM", func(o *evidence.Observation) { o.Exit.Signal = "SIGTERM" }, []string{NonzeroExit}, nil},
		{"attached: unknown status", func(o *evidence.Observation) { o.Exit.Known = false }, nil, []string{ExitCodeUnknown}},
		{"wrapper exits, service answers", func(o *evidence.Observation) {
			o.Exit = evidence.Exit{Gone: true, At: 2 * msec, Known: true, Signal: "SIGTERM"}
			o.Polls = append(polls(evidence.Ready, 0, 900*msec, 200), polls(evidence.Live, 0, 900*msec, 200)...)
			o.KeepAlive.Events = nil
		}, []string{ReadinessNeverFlips, NonzeroExit, SignalNotForwarded}, []string{ReadinessFlaps, NewRequestsRefused}},
		{"init exits before the service it forwarded to", func(o *evidence.Observation) {
			// tini -g -- sh -c 'svc': the service flipped, the shell died,
			// tini exited 143 at 20 ms, the service still answered.
			o.Command, o.SignalNumber, o.Leftover = "tini", 15, true
			o.Exit = evidence.Exit{Gone: true, At: 20 * msec, Known: true, Code: 143}
			o.Polls = append(polls(evidence.Ready, 0, 900*msec, 503), polls(evidence.Live, 0, 900*msec, 200)...)
		}, []string{WrapperExitedEarly}, []string{NewRequestsRefused, NonzeroExit}},
		{"nothing reacts", func(o *evidence.Observation) {
			o.Exit = evidence.Exit{Gone: true, At: 3 * time.Second, Known: true, Signal: "SIGKILL", Killed: true, KilledAt: 3 * time.Second}
			o.Polls = append(polls(evidence.Ready, 0, 3*time.Second, 200), polls(evidence.Live, 0, 3*time.Second, 200)...)
			o.KeepAlive.Events = nil
			o.Inflight[0].End = 1 * time.Second
		}, []string{ReadinessNeverFlips, ShutdownHang, SignalNotForwarded}, []string{ReadinessFlaps, NewRequestsRefused, NonzeroExit}},
		{"readiness 204 is ready, 500 is a flip", func(o *evidence.Observation) {
			for i := range o.Polls {
				switch {
				case o.Polls[i].Probe == evidence.Ready && o.Polls[i].Status == 503:
					o.Polls[i].Status = 500
				case o.Polls[i].Status == 200:
					o.Polls[i].Status = 204
				}
			}
		}, nil, nil},
		{"readiness 302 after the flip flaps", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Ready, At: 320 * msec, Status: 302})
		}, []string{ReadinessFlaps}, nil},
		{"cleanup inside S is no hang", func(o *evidence.Observation) { o.Exit.At = 1900 * msec }, nil, nil},
		{"traffic endpoint 503 in P", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Traffic, At: 120 * msec, Status: 503})
		}, []string{NewRequestsRefused}, nil},
		{"traffic endpoint refused in P", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Traffic, At: 120 * msec, Refused: true, Err: "connection refused"})
		}, []string{ListenerClosedEarly}, nil},
		{"no traffic polls", func(o *evidence.Observation) {
			var keep []evidence.Poll
			for _, p := range o.Polls {
				if p.Probe != evidence.Traffic {
					keep = append(keep, p)
				}
			}
			o.Polls = keep
		}, nil, []string{NewRequestsRefused}},
		{"close-delimited body shorter than the baseline ended with the process", func(o *evidence.Observation) {
			o.InflightBaseline = 26000
			o.Inflight[0] = evidence.Request{End: 849 * msec, Status: 200, Complete: true, Delimited: true, Framing: evidence.FramingClose, Bytes: 13000}
		}, []string{InflightAborted}, nil},
		{"close-delimited body as long as the baseline ended with the process (Jetty)", func(o *evidence.Observation) {
			o.InflightBaseline = 26000
			o.Inflight[0] = evidence.Request{End: 849 * msec, Status: 200, Complete: true, Delimited: true, Framing: evidence.FramingClose, Bytes: 26000}
		}, nil, nil},
		{"close-delimited body without a baseline ended with the process", func(o *evidence.Observation) {
			o.InflightBaseline = -1
			o.Inflight[0] = evidence.Request{End: 849 * msec, Status: 200, Complete: true, Delimited: true, Framing: evidence.FramingClose, Bytes: 13000}
		}, nil, nil},
		{"close-delimited body reset at the exit", func(o *evidence.Observation) {
			o.InflightBaseline = 26000
			o.Inflight[0] = evidence.Request{End: 849 * msec, Status: 200, Framing: evidence.FramingClose, Bytes: 13000, Err: "connection reset"}
		}, []string{InflightAborted}, nil},
		{"content-length body short at the exit", func(o *evidence.Observation) {
			o.Inflight[0] = evidence.Request{End: 849 * msec, Status: 200, Framing: evidence.FramingLength, Bytes: 13000, Err: "unexpected EOF"}
		}, []string{InflightAborted}, nil},
		{"body without a length ended before the exit", func(o *evidence.Observation) {
			o.Inflight[0] = evidence.Request{End: 600 * msec, Status: 200, Complete: true, Delimited: true, Bytes: 26000}
		}, nil, nil},
		{"body without a length cut by the kill", func(o *evidence.Observation) {
			o.InflightBaseline = 26000
			o.Inflight[0] = evidence.Request{End: 3 * time.Second, Status: 200, Complete: true, Delimited: true, Bytes: 13000}
			o.Exit = evidence.Exit{Gone: true, At: 3 * time.Second, Known: true, Signal: "SIGKILL", Killed: true, KilledAt: 3 * time.Second}
		}, []string{InflightAborted, ShutdownHang}, []string{NonzeroExit}},
		{"leftover group", func(o *evidence.Observation) { o.Leftover = true }, []string{SignalNotForwarded}, nil},
		{"traffic body cut in P", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Traffic, At: 120 * msec, Status: 200, Cut: true, Err: "protocol_error"})
		}, []string{NewRequestsRefused}, nil},
		{"traffic 410 in P", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Traffic, At: 120 * msec, Status: 410})
		}, []string{NewRequestsRefused}, nil},
		{"traffic 410 expected", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Traffic, At: 120 * msec, Status: 410})
			o.TrafficOK = func(s int) bool { return s == 200 || s == 410 }
		}, nil, nil},
		{"traffic 410 after P", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Traffic, At: 520 * msec, Status: 410})
		}, nil, nil},
		{"a stall made late in P is charged when made", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Traffic, At: 400 * msec, Err: "timeout (headers_timeout)", Took: time.Second})
		}, []string{ListenerClosedEarly}, nil},
		{"an attempt made in the last 40 ms of P races the close", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Live, At: 470 * msec, Err: "protocol_error: EOF"})
		}, nil, nil},
		{"one made 50 ms before P does not", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Live, At: 450 * msec, Err: "protocol_error: EOF"})
		}, []string{ListenerClosedEarly}, nil},
		{"a service answering its health polls in 120 ms races the close for its last 120 ms", func(o *evidence.Observation) {
			// A loaded machine: the service's own answers in P took
			// 120 ms; one made 80 ms before P could not have been
			// answered before a close at P.
			for i := range o.Polls {
				if p := &o.Polls[i]; p.At >= 0 && p.At < 500*msec && (p.Probe == evidence.Ready || p.Probe == evidence.Live) && p.Status != 0 {
					p.Took = 120 * msec
				}
			}
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Live, At: 420 * msec, Err: "conn_reset: connection reset by peer", Took: 82 * msec})
		}, nil, nil},
		{"a slow service races the close for a quarter of P at most", func(o *evidence.Observation) {
			for i := range o.Polls {
				if p := &o.Polls[i]; p.At >= 0 && p.At < 500*msec && (p.Probe == evidence.Ready || p.Probe == evidence.Live) && p.Status != 0 {
					p.Took = 400 * msec
				}
			}
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Live, At: 300 * msec, Err: "conn_reset: connection reset by peer", Took: 10 * msec})
		}, []string{ListenerClosedEarly}, nil},
		{"a service 400 ms behind whose queued connection is reset after P still fails the listener", func(o *evidence.Observation) {
			// The Next.js stack under two CPU hogs: the verdict stands
			// (the truth client names it too); the detail says what the
			// evidence shows (TestListenerQueuedAtClose).
			for i := range o.Polls {
				if p := &o.Polls[i]; p.At >= 0 && p.At < 500*msec && (p.Probe == evidence.Ready || p.Probe == evidence.Live) && p.Status != 0 {
					p.Took = 400 * msec
				}
			}
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Live, At: 300 * msec, Err: "conn_reset: connection reset by peer", Took: 320 * msec})
		}, []string{ListenerClosedEarly}, nil},
		{"traffic accepted in P and cut at the exit after P is in-flight's, not the listener's", func(o *evidence.Observation) {
			// The listener stayed open through P (fresh requests to the
			// port answered after these were made); the service cut
			// what it had accepted when it exited 500 ms later.
			endpointsAt(o, map[evidence.Probe]string{evidence.Ready: "http://127.0.0.1:1/ready", evidence.Live: "http://127.0.0.1:1/live", evidence.Traffic: "http://127.0.0.1:1/slow"})
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Traffic, At: 0, Err: "protocol_error: EOF", Took: 1000 * msec},
				evidence.Poll{Probe: evidence.Traffic, At: 100 * msec, Err: "conn_reset: connection reset", Took: 900 * msec})
			o.Exit.At = 1000 * msec
		}, []string{InflightAborted}, nil},
		{"traffic answered in P, body cut after P, is in-flight's, not a refusal", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Traffic, At: 10 * msec, Status: 200, Cut: true, Err: "conn_reset", Took: 600 * msec})
		}, []string{InflightAborted}, nil},
		{"traffic cut after P without --inflight still fails in-flight", func(o *evidence.Observation) {
			o.InflightURL, o.Inflight = false, nil
			endpointsAt(o, map[evidence.Probe]string{evidence.Ready: "http://127.0.0.1:1/ready", evidence.Live: "http://127.0.0.1:1/live", evidence.Traffic: "http://127.0.0.1:1/app"})
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Traffic, At: 10 * msec, Err: "protocol_error: EOF", Took: 600 * msec})
		}, []string{InflightAborted}, nil},
		{"traffic parked in a listener that stopped accepting, reset after P, is the listener's", func(o *evidence.Observation) {
			// No fresh request to the traffic port was answered after
			// it: the accept queue, not a handler, held it.
			endpointsAt(o, map[evidence.Probe]string{evidence.Ready: "http://127.0.0.1:1/ready", evidence.Live: "http://127.0.0.1:1/live", evidence.Traffic: "http://127.0.0.1:2/slow"})
			var keep []evidence.Poll
			for _, p := range o.Polls {
				if p.Probe != evidence.Traffic || p.At < 300*msec {
					keep = append(keep, p)
				}
			}
			o.Polls = append(keep, evidence.Poll{Probe: evidence.Traffic, At: 300 * msec, Err: "conn_reset: connection reset", Took: 400 * msec})
		}, []string{ListenerClosedEarly}, nil},
		{"traffic reset inside P is the listener's", func(o *evidence.Observation) {
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Traffic, At: 10 * msec, Err: "conn_reset: connection reset", Took: 100 * msec})
		}, []string{ListenerClosedEarly}, nil},
		{"exit 143 after SIGTERM is handled", func(o *evidence.Observation) { o.SignalNumber, o.Exit.Code = 15, 143 }, nil, nil},
		{"exit 130 after SIGTERM is not", func(o *evidence.Observation) { o.SignalNumber, o.Exit.Code = 15, 130 }, []string{NonzeroExit}, nil},
		{"liveness timeout on a dead port is the listener's", func(o *evidence.Observation) {
			endpointsAt(o, map[evidence.Probe]string{evidence.Ready: "http://127.0.0.1:1/ready", evidence.Live: "http://127.0.0.1:1/live", evidence.Traffic: "http://127.0.0.1:2/app"})
			var keep []evidence.Poll
			for _, p := range o.Polls {
				if p.Probe == evidence.Traffic || p.At < 100*msec || p.At > 400*msec {
					keep = append(keep, p)
				}
			}
			o.Polls = append(keep, evidence.Poll{Probe: evidence.Live, At: 250 * msec, Err: "timeout (headers_timeout)", Took: time.Second})
		}, []string{ListenerClosedEarly}, nil},
		{"liveness timeout on an answering port is liveness's", func(o *evidence.Observation) {
			endpointsAt(o, map[evidence.Probe]string{evidence.Ready: "http://127.0.0.1:1/ready", evidence.Live: "http://127.0.0.1:1/live"})
			o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Live, At: 250 * msec, Err: "timeout (headers_timeout)", Took: time.Second})
		}, []string{LivenessFailedDuringDrain}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good()
			tt.change(&o)
			r := Judge(o, settings)
			var fail, skip []string
			for _, v := range r.Verdicts {
				if !v.OK {
					fail = append(fail, v.Name)
				}
				if v.Skipped {
					skip = append(skip, v.Name)
				}
			}
			if strings.Join(fail, ",") != strings.Join(tt.fail, ",") || strings.Join(skip, ",") != strings.Join(tt.skip, ",") {
				t.Errorf("failed %v skipped %v, want failed %v skipped %v\n%+v", fail, skip, tt.fail, tt.skip, r.Verdicts)
			}
			if r.OK != (len(tt.fail) == 0) {
				t.Errorf("OK = %v with failures %v", r.OK, fail)
			}
		})
	}
}

func TestJudgeExitDetails(t *testing.T) {
	o := good()
	o.SignalNumber, o.Exit.Code = 15, 143
	if d := Judge(o, settings).Verdicts[9]; !d.OK || !strings.Contains(d.Detail, "128 + 15") {
		t.Errorf("143: %+v", d)
	}
	// The note names the runtime that exits so: the JVM for java, next
	// start for next (drain_truth_next: not the JVM's note), both else.
	for _, tc := range []struct{ command, want, not string }{
		{"java", "the JVM exits so", "next start"},
		{"next", "next start exits so", "JVM"},
		{"env", "the JVM exits so after its shutdown hooks ran; next start exits so", ""},
	} {
		o := good()
		o.Command, o.SignalNumber, o.Exit.Code = tc.command, 15, 143
		d := Judge(o, settings).Verdicts[9]
		if !d.OK || !strings.Contains(d.Detail, tc.want) || tc.not != "" && strings.Contains(d.Detail, tc.not) {
			t.Errorf("143 from %s: %+v", tc.command, d)
		}
	}
	o = good()
	o.Exit.Signal = "SIGTERM"
	if d := Judge(o, settings).Verdicts[9]; d.OK || !strings.Contains(d.Detail, "re-raised SIGTERM after draining") || !strings.Contains(d.Detail, "useExit0") {
		t.Errorf("re-raised: %+v", d)
	}
	o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Live, At: 100 * msec, Refused: true, Err: "connection refused"})
	// Puma: the listener closed at once, the in-flight request finished,
	// then SIGTERM raised again: handled (fails without naming Puma's
	// setting: "did not handle SIGTERM").
	if d := Judge(o, settings).Verdicts[9]; d.OK || !strings.Contains(d.Detail, "re-raised SIGTERM after finishing 1 request") || !strings.Contains(d.Detail, "raise_exception_on_sigterm false") {
		t.Errorf("re-raised after a graceful stop: %+v", d)
	}
	o.Inflight[0].Err, o.Inflight[0].End = "connection reset", 2*msec
	if d := Judge(o, settings).Verdicts[9]; d.OK || !strings.Contains(d.Detail, "did not handle SIGTERM") {
		t.Errorf("killed without a drain: %+v", d)
	}
	o.Exit.Signal = "SIGSEGV"
	if d := Judge(o, settings).Verdicts[9]; d.OK || !strings.Contains(d.Detail, "killed by SIGSEGV, not by the SIGTERM sent") {
		t.Errorf("crashed: %+v", d)
	}
}

func TestJudgeAttributesByTimeMade(t *testing.T) {
	o := good()
	o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Traffic, At: 401 * msec, Err: "timeout (headers_timeout)", Took: time.Second})
	r := Judge(o, settings)
	if v := r.Verdicts[4]; v.OK || !strings.Contains(v.Detail, "made at 401 ms") {
		t.Errorf("listener: %+v", v)
	}
	if v := r.Verdicts[5]; !v.OK || !strings.Contains(v.Detail, "10 of 11 requests made in [0, 500 ms) served; the other 1 got no answer") {
		t.Errorf("traffic must not call the unanswered request served: %+v", v)
	}
	found := false
	for _, rec := range r.Requests {
		if rec.Kind == "traffic" && rec.MadeMS == 401 && rec.Result == ResultNoAnswer && rec.EndedMS == 1401 {
			found = true
		}
	}
	if !found {
		t.Errorf("the request log has no traffic record made at 401 ms, no answer: %+v", r.Requests)
	}
}

func TestJudgeTimeline(t *testing.T) {
	r := Judge(good(), settings)
	var got []string
	for _, e := range r.Timeline {
		got = append(got, e.Event)
	}
	want := "signal ready_flip listener_closed keepalive_closed_idle inflight_done exit"
	if strings.Join(got, " ") != want {
		t.Errorf("timeline %v, want %s", got, want)
	}
	f := r.Facts
	if f.Flip != 50*msec || f.ListenerClosed != 500*msec || f.LastInflight != 800*msec || f.Exit != 850*msec {
		t.Errorf("facts %+v", f)
	}
	if len(r.Verdicts) != 12 {
		t.Errorf("%d verdicts, want one per invariant (12)", len(r.Verdicts))
	}
}

// TestNoCutTrafficRowSaysZeroServed: a traffic row with nothing served is
// not "ok: 0 of N served".
func TestNoCutTrafficRowSaysZeroServed(t *testing.T) {
	o := good()
	var keep []evidence.Poll
	for _, p := range o.Polls {
		if p.Probe != evidence.Traffic {
			keep = append(keep, p)
		}
	}
	o.Polls = append(keep, evidence.Poll{Probe: evidence.Traffic, At: 0, Err: "protocol_error: EOF", Took: 700 * msec})
	endpointsAt(&o, map[evidence.Probe]string{evidence.Ready: "http://127.0.0.1:1/ready", evidence.Live: "http://127.0.0.1:1/live", evidence.Traffic: "http://127.0.0.1:1/slow"})
	r := Judge(o, settings)
	for _, v := range r.Verdicts {
		if v.Name == NewRequestsRefused && (!v.Skipped || strings.Contains(v.Detail, "0 of")) {
			t.Errorf("%s: %+v: want skipped, without \"0 of\"", v.Name, v)
		}
		if v.Name == ListenerClosedEarly && !v.OK {
			t.Errorf("%s: %+v", v.Name, v)
		}
	}
}

// TestWrapperDiedOfTheSignal: a wrapper (sh -c 'svc & wait', npm) killed
// by SIGTERM at once while the service it started ran on, finishing the
// requests in flight: the verdict says the signal was not passed on, never
// that the service handled it, and gives no Puma or terminus advice.
func TestWrapperDiedOfTheSignal(t *testing.T) {
	for _, exit := range []evidence.Exit{
		{Gone: true, At: 1 * msec, Known: true, Signal: "SIGTERM"},
		{Gone: true, At: 1 * msec, Known: true, Code: 143},
	} {
		o := good()
		o.Command, o.SignalNumber, o.Leftover = "sh", 15, true
		o.Exit = exit
		o.Polls = append(polls(evidence.Ready, 0, 900*msec, 200), polls(evidence.Live, 0, 900*msec, 200)...)
		o.Inflight[0] = evidence.Request{End: 800 * msec, Status: 200, Complete: true, Bytes: 100}
		r := Judge(o, settings)
		var ne Verdict
		for _, v := range r.Verdicts {
			if v.Name == NonzeroExit {
				ne = v
			}
		}
		if ne.OK || !strings.Contains(ne.Detail, "pid 42 (sh) was ") || !strings.Contains(ne.Detail, "the wrapper did not pass SIGTERM on") {
			t.Errorf("exit %v: %+v", exit, ne)
		}
		for _, v := range r.Verdicts {
			for _, bad := range []string{"handled SIGTERM", "Puma", "terminus", "JVM"} {
				if strings.Contains(v.Detail, bad) {
					t.Errorf("exit %v: %s says %q: %s", exit, v.Name, bad, v.Detail)
				}
			}
		}
	}
}

// TestInitExit143HasNoJVMNote: tini or catatonit exiting 143 passes on
// its child's end; the JVM is not mentioned.
func TestInitExit143HasNoJVMNote(t *testing.T) {
	for _, cmd := range []string{"tini", "catatonit", "dumb-init"} {
		o := good()
		o.Command, o.SignalNumber = cmd, 15
		o.Exit.Code = 143
		r := Judge(o, settings)
		for _, v := range r.Verdicts {
			if v.Name == NonzeroExit && (!v.OK || strings.Contains(v.Detail, "JVM") || !strings.Contains(v.Detail, cmd+" passes on")) {
				t.Errorf("%s: %+v", cmd, v)
			}
		}
	}
}

// TestStarvedRunIsUnknown: lateness is injected through the observation
// (the seam the experiment fills from its own timer and pollers). A run
// that failed while drain-test was late past StarvedBound names no
// invariant: unknown, naming the lateness; the same lateness under a run
// that passed is still a PASS; lateness within the bound changes nothing.
func TestStarvedRunIsUnknown(t *testing.T) {
	broken := func() evidence.Observation {
		o := good()
		// What a starved prober sees of a correct service: a poll made at
		// 120 ms that timed out, the listener seemingly closed.
		o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Live, At: 120 * msec, Err: "timeout (headers_timeout)", Took: time.Second})
		endpointsAt(&o, map[evidence.Probe]string{evidence.Ready: "http://127.0.0.1:1/ready", evidence.Live: "http://127.0.0.1:1/live"})
		return o
	}
	late := evidence.Lateness{Max: 730 * msec, At: 110 * msec, What: "its 10 ms timer"}

	o := broken()
	if r := Judge(o, settings); r.OK || r.Starved != nil {
		t.Fatalf("without lateness: OK %v starved %+v, want a named failure", r.OK, r.Starved)
	}
	o.Lateness = late
	r := Judge(o, settings)
	if r.Starved == nil || r.OK {
		t.Fatalf("starved: OK %v starved %+v", r.OK, r.Starved)
	}
	if why := r.Starved.Why(); !strings.Contains(why, "its 10 ms timer ran 730 ms late at 110 ms") || !strings.Contains(why, "250 ms") {
		t.Errorf("why = %q", why)
	}
	for _, v := range r.Verdicts {
		if !v.OK {
			t.Errorf("%s FAILs in a starved run: %s", v.Name, v.Detail)
		}
	}
	if len(r.Starved.Seen) == 0 {
		t.Errorf("starved run names nothing it saw")
	}

	o = good()
	o.Lateness = late
	if r := Judge(o, settings); !r.OK || r.Starved != nil {
		t.Errorf("a good run with lateness: OK %v starved %+v, want PASS", r.OK, r.Starved)
	}

	o = broken()
	o.Lateness = evidence.Lateness{Max: StarvedBound, What: "its readiness poller"}
	if r := Judge(o, settings); r.OK || r.Starved != nil {
		t.Errorf("lateness at the bound: OK %v starved %+v, want a named failure", r.OK, r.Starved)
	}
}

// TestGRPCRowsSayNoHTTP: a gRPC health service's rows speak gRPC health
// (SERVING, NOT_SERVING), never HTTP statuses; a tcp:// liveness accepts
// connections.
func TestGRPCRowsSayNoHTTP(t *testing.T) {
	grpcPolls := func(p evidence.Probe, from, to time.Duration, answer string) []evidence.Poll {
		ps := polls(p, from, to, 200)
		for i := range ps {
			ps[i].GRPC = answer
			if answer != "SERVING" && answer != "connected" {
				ps[i].Status = 503
			}
		}
		return ps
	}
	for _, tt := range []struct {
		name  string
		ready string
	}{{"flips", "NOT_SERVING"}, {"never flips", "SERVING"}} {
		o := good()
		o.InflightURL, o.Inflight = false, nil
		endpointsAt(&o, map[evidence.Probe]string{evidence.Ready: "grpc://127.0.0.1:1", evidence.Live: "tcp://127.0.0.1:1"})
		o.Polls = append(grpcPolls(evidence.Ready, 0, 500*msec, tt.ready), grpcPolls(evidence.Live, 0, 500*msec, "connected")...)
		r := Judge(o, settings)
		for _, v := range r.Verdicts {
			for _, bad := range []string{"200-399", "HTTP", "status >="} {
				if strings.Contains(v.Detail, bad) {
					t.Errorf("%s: %s says %q: %s", tt.name, v.Name, bad, v.Detail)
				}
			}
		}
		if d := r.Verdicts[0].Detail; d != "readiness answered SERVING and liveness accepted a connection before the signal" {
			t.Errorf("%s: NOT_READY_BEFORE %q", tt.name, d)
		}
	}
}

// TestStarvedRunStillNamesWhatTheServerDid: lateness cannot fake a
// refusal, a reset or a process still running long past S: those stay
// named (exit 7); only the timeouts beside them are not.
func TestStarvedRunStillNamesWhatTheServerDid(t *testing.T) {
	late := evidence.Lateness{Max: 430 * msec, At: 470 * msec, What: "its traffic poller"}
	o := good()
	o.Lateness = late
	o.Polls = append(o.Polls, evidence.Poll{Probe: evidence.Traffic, At: 100 * msec, Refused: true, Err: "connection refused"},
		evidence.Poll{Probe: evidence.Ready, At: 120 * msec, Err: "timeout (headers_timeout)", Took: time.Second})
	o.Exit = evidence.Exit{Gone: true, Known: true, Signal: "SIGKILL", Killed: true, KilledAt: 3400 * msec, At: 3400 * msec}
	r := Judge(o, settings)
	failed := map[string]bool{}
	for _, v := range r.Verdicts {
		if !v.OK {
			failed[v.Name] = true
		}
	}
	if !failed[ListenerClosedEarly] || !failed[ShutdownHang] || r.Unknown() {
		t.Errorf("failed %v, unknown %v: want LISTENER_CLOSED_EARLY (a refusal) and SHUTDOWN_HANG (killed at 3400 ms, S 2000 ms) named", failed, r.Unknown())
	}

	// Killed just past S, within the lateness: not named.
	o.Polls = o.Polls[:len(o.Polls)-2]
	o.Exit.KilledAt, o.Exit.At = 2300*msec, 2300*msec
	r = Judge(o, settings)
	if !r.Unknown() || r.Starved == nil || r.Starved.Seen[0] != ShutdownHang {
		t.Errorf("killed at 2300 ms with 430 ms of lateness: unknown %v starved %+v", r.Unknown(), r.Starved)
	}
}

// A listener failure whose evidence is a loaded service's says so: an
// accepted connection ended after P while the service's health answers in
// P were slower than the close race excuses (the Next.js stack under two
// CPU hogs: answers 600 ms late, the queue reset at its close after P).
// A refused connection, an attempt ended inside P, or a service answering
// promptly gets no such note.
func TestListenerQueuedAtClose(t *testing.T) {
	slow := func(o *evidence.Observation, took time.Duration) {
		for i := range o.Polls {
			if p := &o.Polls[i]; p.At >= 0 && p.At < 500*msec && (p.Probe == evidence.Ready || p.Probe == evidence.Live) && p.Status != 0 {
				p.Took = took
			}
		}
	}
	for _, tc := range []struct {
		name string
		took time.Duration
		poll evidence.Poll
		note bool
	}{
		{"queued, reset after P, service slow", 400 * msec, evidence.Poll{Probe: evidence.Traffic, At: 300 * msec, Err: "conn_reset: connection reset by peer", Took: 320 * msec}, true},
		{"refused", 400 * msec, evidence.Poll{Probe: evidence.Traffic, At: 300 * msec, Err: "connection refused", Refused: true, Took: 1 * msec}, false},
		{"reset inside P", 400 * msec, evidence.Poll{Probe: evidence.Traffic, At: 300 * msec, Err: "conn_reset: connection reset by peer", Took: 10 * msec}, false},
		{"service prompt", 20 * msec, evidence.Poll{Probe: evidence.Traffic, At: 300 * msec, Err: "conn_reset: connection reset by peer", Took: 320 * msec}, false},
	} {
		o := good()
		slow(&o, tc.took)
		o.Polls = append(o.Polls, tc.poll)
		var v Verdict
		for _, x := range Judge(o, settings).Verdicts {
			if x.Name == ListenerClosedEarly {
				v = x
			}
		}
		if v.OK {
			t.Errorf("%s: %+v, want FAIL", tc.name, v)
		}
		if got := strings.Contains(v.Detail, "the listener was open, but the service"); got != tc.note {
			t.Errorf("%s: note %v, want %v: %s", tc.name, got, tc.note, v.Detail)
		}
	}
}

package truthclient

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// rawServer answers every connection with resp, then closes it.
func rawServer(t *testing.T, resp string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				_, _ = c.Read(buf)
				_, _ = c.Write([]byte(resp))
			}()
		}
	}()
	return "http://" + l.Addr().String() + "/app"
}

func TestGet(t *testing.T) {
	for _, tt := range []struct {
		name, resp string
		want       Outcome
	}{
		{"whole body", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", Served},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\nhello", Cut},
		{"chunked whole", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", Served},
		{"chunked without its last chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", Cut},
		{"410", "HTTP/1.1 410 Gone\r\nContent-Length: 0\r\n\r\n", BadStatus},
		{"closed before a status", "", EOF},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := Get(context.Background(), rawServer(t, tt.resp), time.Second, nil)
			if r.Outcome != tt.want {
				t.Errorf("outcome %s (%s), want %s", r.Outcome, r.Err, tt.want)
			}
			if r.Made.IsZero() || r.Ended.Before(r.Made) {
				t.Errorf("times: made %v ended %v", r.Made, r.Ended)
			}
		})
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	if r := Get(context.Background(), "http://"+addr+"/", time.Second, nil); r.Outcome != Refused {
		t.Errorf("closed port: %s (%s), want refused", r.Outcome, r.Err)
	}
}

func TestJudgeByTimeMade(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var recs []Record
	for ms := 0; ms < 1000; ms += 20 {
		out, took := Served, 1000
		if ms >= 800 {
			// Reset at once: the listener gone (a reset only once P
			// was over, after later requests were answered, is a
			// request in flight cut: TestJudgeCutAfterP).
			out, took = Reset, 1
		}
		recs = append(recs, Record{Kind: KindTraffic, Made: at(ms), Ended: at(ms + took), Outcome: out, Status: 200})
	}
	for ms := 0; ms < 1500; ms += 50 {
		recs = append(recs, Record{Kind: KindReady, Made: at(ms), Ended: at(ms + 1), Outcome: BadStatus, Status: 503},
			Record{Kind: KindLive, Made: at(ms), Ended: at(ms + 1), Outcome: Served, Status: 200})
	}
	recs = append(recs, Record{Kind: KindInflight, Made: at(-500), Ended: at(1200), Outcome: Served, Status: 200})
	p := Params{T0: t0, P: time.Second, S: 3 * time.Second, FlipMax: time.Second, PollInterval: 50 * time.Millisecond,
		Gone: true, GoneAt: at(1500), ExitKnown: true, ExitCode: 143, Sent: 15}
	tr := Judge(recs, p)
	if len(tr.Violated) != 1 || !strings.Contains(tr.Violated[ListenerClosedEarly], "made at 800 ms") {
		t.Errorf("truth %s", tr)
	}
	if d := Agree(tr, []string{ListenerClosedEarly}); len(d) != 0 {
		t.Errorf("agree: %v", d)
	}
	if d := Agree(tr, nil); len(d) != 1 {
		t.Errorf("a PASS while clients failed must disagree: %v", d)
	}
	if d := Agree(tr, []string{ListenerClosedEarly, NonzeroExit}); len(d) != 1 {
		t.Errorf("143 after SIGTERM is a handled exit: %v", d)
	}
	p.ExitSignal, p.ExitCode = 15, 0
	if tr := Judge(recs, p); tr.Violated[NonzeroExit] == "" {
		t.Errorf("killed by the signal is not a clean exit: %s", tr)
	}
}

// A listener gone at the signal leaves the truth's traffic and liveness
// unanswered: NEW_REQUESTS_REFUSED and LIVENESS_FAILED_DURING_DRAIN are
// then open, for drain-test's client may have met
// an answer cut short a millisecond earlier (CI, a JVM stopping at once).
func TestJudgeNoAnsweredTrafficLeavesRefusalOpen(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var recs []Record
	for ms := 16; ms < 1000; ms += 20 {
		recs = append(recs, Record{Kind: KindTraffic, Made: at(ms), Ended: at(ms + 1), Outcome: Refused},
			Record{Kind: KindLive, Made: at(ms), Ended: at(ms + 1), Outcome: Refused})
	}
	p := Params{T0: t0, P: time.Second, S: 3 * time.Second, FlipMax: time.Second, PollInterval: 50 * time.Millisecond,
		Gone: true, GoneAt: at(40), ExitKnown: true, ExitCode: 143, Sent: 15}
	tr := Judge(recs, p)
	if tr.Violated[ListenerClosedEarly] == "" {
		t.Errorf("refused traffic must violate LISTENER_CLOSED_EARLY: %s", tr)
	}
	if _, open := tr.Open[NewRequestsRefused]; !open {
		t.Errorf("no answered traffic must leave NEW_REQUESTS_REFUSED open: %s", tr)
	}
	if _, open := tr.Open[LivenessFailed]; !open {
		t.Errorf("no answered liveness poll must leave LIVENESS_FAILED_DURING_DRAIN open: %s", tr)
	}
	for _, failed := range [][]string{{ListenerClosedEarly}, {ListenerClosedEarly, NewRequestsRefused, LivenessFailed}} {
		for _, d := range Agree(tr, failed) {
			if strings.Contains(d, NewRequestsRefused) || strings.Contains(d, LivenessFailed) {
				t.Errorf("drain-test failing %v: %s", failed, d)
			}
		}
	}
	// No request of the kind sent: nothing is open, and a FAIL of it is
	// drain-test's own invention.
	if tr := Judge(nil, p); tr.Open[NewRequestsRefused] != "" || tr.Open[LivenessFailed] != "" {
		t.Errorf("nothing sent leaves nothing open: %s", tr)
	}
	// One answered and served: decided, and a FAIL disagrees.
	recs = append(recs, Record{Kind: KindTraffic, Made: at(5), Ended: at(6), Outcome: Served, Status: 200})
	if tr := Judge(recs, p); tr.Open[NewRequestsRefused] != "" {
		t.Errorf("served traffic decides NEW_REQUESTS_REFUSED: %s", tr)
	}
}

// TestTrafficStopsAfterTrafficFor: as drain-test, the truth client sends
// no new traffic once TrafficFor has passed after the signal; readiness
// polls go on.
func TestTrafficStopsAfterTrafficFor(t *testing.T) {
	u := rawServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	c := Start(Config{Traffic: u, Ready: u, Interval: 10 * time.Millisecond, TrafficFor: 100 * time.Millisecond})
	time.Sleep(50 * time.Millisecond)
	t0 := time.Now()
	c.Signalled()
	time.Sleep(1500 * time.Millisecond)
	recs := c.Stop()
	late, ready := 0, 0
	for _, r := range recs {
		switch {
		case r.Kind == KindTraffic && r.Made.After(t0.Add(time.Second)):
			late++
		case r.Kind == KindReady && r.Made.After(t0.Add(time.Second)):
			ready++
		}
	}
	if late != 0 || ready == 0 {
		t.Errorf("%d traffic requests made more than 1 s after the signal (TrafficFor 100 ms), %d readiness polls: want none, and polls going on", late, ready)
	}
}

// TestJudgeCutAfterP: traffic requests accepted inside P, held, and cut
// once P was over (fresh requests made after them were answered) are a
// request in flight cut, not a listener closed early.
func TestJudgeCutAfterP(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var recs []Record
	for ms := 0; ms < 1000; ms += 100 {
		recs = append(recs, Record{Kind: KindTraffic, Made: at(ms), Ended: at(1500), Outcome: Reset})
	}
	for ms := 0; ms < 1500; ms += 50 {
		recs = append(recs, Record{Kind: KindReady, Made: at(ms), Ended: at(ms + 1), Outcome: BadStatus, Status: 503},
			Record{Kind: KindLive, Made: at(ms), Ended: at(ms + 1), Outcome: Served, Status: 200})
	}
	p := Params{T0: t0, P: time.Second, S: 3 * time.Second, FlipMax: time.Second, PollInterval: 50 * time.Millisecond,
		Gone: true, GoneAt: at(1500), ExitKnown: true, ExitCode: 0, Sent: 10}
	tr := Judge(recs, p)
	if tr.Violated[ListenerClosedEarly] != "" || !strings.Contains(tr.Violated[InflightAborted], "made at 0 ms (accepted inside P)") {
		t.Errorf("truth %s", tr)
	}
}

// A service whose health answers inside P took 120 ms (a loaded machine):
// a connection made 80 ms before P and reset at the close at P lost the
// race with that close, as drain-test's judge says: open, not violated.
// One made 300 ms before P still violates (the window is the service's
// slowest answer, a quarter of P at most).
func TestJudgeRaceAsWideAsTheServicesAnswers(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var recs []Record
	for ms := 0; ms < 1000; ms += 50 {
		recs = append(recs, Record{Kind: KindReady, Made: at(ms), Ended: at(ms + 120), Outcome: BadStatus, Status: 503},
			Record{Kind: KindLive, Made: at(ms), Ended: at(ms + 120), Outcome: Served, Status: 200})
	}
	p := Params{T0: t0, P: time.Second, S: 3 * time.Second, FlipMax: time.Second, PollInterval: 50 * time.Millisecond,
		Gone: true, GoneAt: at(1500), ExitKnown: true}
	// Only polls made before it: none later in P was answered, so it is
	// no request in flight cut after P either.
	var before []Record
	for _, r := range recs {
		if r.Made.Before(at(920)) {
			before = append(before, r)
		}
	}
	late := append(before, Record{Kind: KindLive, Made: at(920), Ended: at(1001), Outcome: Reset})
	if tr := Judge(late, p); tr.Violated[ListenerClosedEarly] != "" || tr.Open[ListenerClosedEarly] == "" {
		t.Errorf("made 80 ms before P, service answers of 120 ms: %s", tr)
	}
	early := append(append([]Record(nil), recs...), Record{Kind: KindLive, Made: at(700), Ended: at(701), Outcome: Reset})
	if tr := Judge(early, p); tr.Violated[ListenerClosedEarly] == "" {
		t.Errorf("made 300 ms before P: %s", tr)
	}
}

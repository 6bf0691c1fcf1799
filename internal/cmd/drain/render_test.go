package draincmd

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/healthctl/healthctl/internal/drain/evidence"
	"github.com/healthctl/healthctl/internal/drain/judge"
	"github.com/healthctl/healthctl/internal/output"
)

func TestTrafficURL(t *testing.T) {
	for _, c := range []struct{ inflight, traffic, want string }{
		{"", "", ""},
		{"http://127.0.0.1:8080/slow?ms=300", "", "http://127.0.0.1:8080/slow?ms=300"},
		{"http://127.0.0.1:8080/slow", "http://127.0.0.1:9090/app", "http://127.0.0.1:9090/app"},
		{"", "http://127.0.0.1:9090/app", "http://127.0.0.1:9090/app"},
	} {
		o := &Options{Inflight: c.inflight, Traffic: c.traffic}
		if got := o.trafficURL(); got != c.want {
			t.Errorf("--inflight %q --traffic %q: traffic URL %q, want %q", c.inflight, c.traffic, got, c.want)
		}
	}
}

func TestReportFitsWidth(t *testing.T) {
	s := evidence.Settings{PreDrain: 5 * time.Second, ShutdownTimeout: 30 * time.Second, ReadyFlipMax: time.Second}
	o := evidence.Observation{Pid: 1, Signal: "SIGTERM", ReadyBefore: true, InflightURL: true,
		Exit: evidence.Exit{Gone: true, At: 5200 * time.Millisecond, Known: true}}
	r := judge.Judge(o, s)
	for _, width := range []int{72, 80, 120} {
		var b bytes.Buffer
		if err := drainReport(&b, output.TableOptions{Terminal: true}, r, judge.Formulas(s, r.Facts), 1, "SIGTERM", false, width); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("width %d: a line of %d: %q", width, n, l)
			}
		}
	}
}

// TestStarvedFirstLine: a starved run's first line says UNKNOWN and the
// lateness, and names no invariant as failed.
func TestStarvedFirstLine(t *testing.T) {
	r := judge.Report{Starved: &judge.Starved{LatenessMS: 730, AtMS: 110, What: "its 10 ms timer", BoundMS: 250, Seen: []string{judge.ListenerClosedEarly}}}
	line := drainFirstLine(r, 42, "SIGTERM", false)
	if !strings.HasPrefix(line, "UNKNOWN drain-test pid 42 SIGTERM: drain-test itself was starved: its 10 ms timer ran 730 ms late at 110 ms") || strings.Contains(line, "FAIL") {
		t.Errorf("first line %q", line)
	}
}

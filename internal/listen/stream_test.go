package listen

import (
	"encoding/json"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/listen/board"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
)

// TestStatusStreamedAsWhole: the document written a target at a time
// reads as the one encoded whole (hostile names and errors included, with
// and without paging's fields, and with no targets): each target its
// line, each board entry its own.
func TestStatusStreamedAsWhole(t *testing.T) {
	svc := New(Config{Interval: time.Minute, Now: func() time.Time { return t0.Add(time.Hour) }})
	h := svc.Handler()
	check := func(path string, st *board.Status) {
		t.Helper()
		d := board.Document{SchemaVersion: board.SchemaVersion, Targets: []json.RawMessage{}, Board: []board.TargetStatus{}}
		if st != nil {
			d = board.Document{SchemaVersion: st.SchemaVersion, Shard: st.Shard, Sweep: st.Sweep, Fleet: st.Fleet,
				Targets: make([]json.RawMessage, len(st.Targets)), Board: st.Targets, Total: st.Total, Next: st.Next}
			for i := range st.Targets {
				d.Targets[i] = st.Line(i)
			}
		}
		var whole []byte
		if err := output.JSONIndent(&sink{&whole}, &d, "  "); err != nil {
			t.Fatal(err)
		}
		_, got := get(t, h, path)
		var a, b any
		if err := json.Unmarshal([]byte(got), &a); err != nil {
			t.Fatalf("%s: %v\n%s", path, err, got)
		}
		if err := json.Unmarshal(whole, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s:\n%s\nwant\n%s", path, got, whole)
		}
	}
	check("/status.json", nil)
	for n := int64(1); n <= 3; n++ {
		publish(t, svc, sweepInput(n, policy.HoldFleet))
	}
	check("/status.json", svc.Status())
	p, err := svc.Status().Page("2", "", false)
	if err != nil {
		t.Fatal(err)
	}
	check("/status.json?limit=2", p)
	after := p.Next
	if p, err = svc.Status().Page("1", after, true); err != nil {
		t.Fatal(err)
	}
	check("/status.json?limit=1&after="+url.QueryEscape(after), p)
}

// sink appends what is written to a byte slice.
type sink struct{ b *[]byte }

func (s *sink) Write(p []byte) (int, error) { *s.b = append(*s.b, p...); return len(p), nil }

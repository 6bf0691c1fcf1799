package listen

import (
	"encoding/json"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/listen/board"
	"github.com/healthctl/healthctl/internal/policy"
)

// statusLine is what the tests read of a /status.json target: watch -o
// json's line for its last probe.
type statusLine struct {
	Target   string           `json:"target"`
	URL      string           `json:"url"`
	Outcome  classify.Outcome `json:"outcome"`
	Reason   classify.Reason  `json:"reason"`
	ExitCode int              `json:"exit_code"`
	Streak   int              `json:"streak"`
	Decision *policy.Decision `json:"decision"`
}

// statusDoc is /status.json decoded: the document, and each target's line.
type statusDoc struct {
	board.Document
	lines []statusLine
}

// readStatus decodes a /status.json body and fails t unless its board
// entries are its targets', one each, in the same order.
func readStatus(t testing.TB, body string) *statusDoc {
	t.Helper()
	var d statusDoc
	if err := json.Unmarshal([]byte(body), &d.Document); err != nil {
		t.Fatalf("/status.json: %v\n%s", err, body)
	}
	if len(d.Targets) != len(d.Board) {
		t.Fatalf("/status.json: %d targets, %d board entries", len(d.Targets), len(d.Board))
	}
	d.lines = make([]statusLine, len(d.Targets))
	for i, raw := range d.Targets {
		if err := json.Unmarshal(raw, &d.lines[i]); err != nil {
			t.Fatalf("/status.json target %d: %v: %s", i, err, raw)
		}
		if d.lines[i].Target != d.Board[i].Target {
			t.Fatalf("/status.json target %d is %q, its board entry %q", i, d.lines[i].Target, d.Board[i].Target)
		}
	}
	return &d
}

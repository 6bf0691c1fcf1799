package board

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/watch"
)

// MaxPage is the most targets a page of /status.json holds (?limit=).
const MaxPage = 10000

// Document is /status.json: the sweep's own fields, then each target's
// object as watch -o json writes its line (targets) and, in the same order,
// each target's board entry (board: what the line does not say — since,
// the timeline, the state's redeploys, recover, the held group).
type Document struct {
	SchemaVersion int                `json:"schema_version"`
	Shard         string             `json:"shard"`
	Sweep         *watch.SweepCounts `json:"sweep"`
	Fleet         FleetStatus        `json:"fleet"`
	Targets       []json.RawMessage  `json:"targets"`
	Board         []TargetStatus     `json:"board"`
	Total         *int               `json:"total,omitempty"`
	Next          string             `json:"next,omitempty"`
}

// WriteJSON writes st (nil: before the first sweep) as /status.json.
// An error is the document's, before anything is written (the writer's
// own are not returned: a client that went away is no error of ours).
func WriteJSON(w io.Writer, st *Status) error {
	if st == nil {
		st = &Status{SchemaVersion: SchemaVersion}
	}
	// The document is written a target at a time: the whole fleet's is
	// tens of MB at 100,000, and was built whole (three times over) to be
	// written.
	head := Document{SchemaVersion: st.SchemaVersion, Shard: st.Shard, Sweep: st.Sweep, Fleet: st.Fleet,
		Targets: []json.RawMessage{}, Board: []TargetStatus{}, Total: st.Total, Next: st.Next}
	var b bytes.Buffer
	if err := output.JSONIndent(&b, &head, "  "); err != nil {
		return err
	}
	doc := b.Bytes()
	at := bytes.Index(doc, []byte(listsKey))
	if at < 0 {
		return errors.New("no targets key")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if len(st.Targets) == 0 {
		bw.Write(doc)
		bw.Flush()
		return nil
	}
	bw.Write(doc[:at])
	// Each target's line as -o json writes it, one a line.
	bw.WriteString("\"targets\": [\n")
	for i := range st.Targets {
		bw.WriteString("    ")
		bw.Write(st.Line(i))
		if i < len(st.Targets)-1 {
			bw.WriteString(",")
		}
		bw.WriteString("\n")
	}
	bw.WriteString("  ],\n  \"board\": [\n")
	var one bytes.Buffer
	enc := json.NewEncoder(&one)
	enc.SetEscapeHTML(false)
	for i := range st.Targets {
		one.Reset()
		one.WriteString("    ")
		if err := enc.Encode(&st.Targets[i]); err != nil {
			return nil // cannot happen: the head encoded; the answer is cut
		}
		bw.Write(output.JSONEscape(bytes.TrimSuffix(one.Bytes(), []byte("\n"))))
		if i < len(st.Targets)-1 {
			bw.WriteString(",")
		}
		bw.WriteString("\n")
	}
	bw.WriteString("  ]")
	bw.Write(doc[at+len(listsKey):])
	bw.Flush()
	return nil
}

// listsKey is how the status document's empty lists of targets read (the
// document is written around them, a target at a time).
const listsKey = "\"targets\": [],\n  \"board\": []"

// PageError is a page asked for that cannot be given: the client's input.
type PageError struct{ Err error }

func (e *PageError) Error() string { return e.Err.Error() }

// Page is st's page (nil: before the first sweep) of at most limit targets
// after the one named after (from the first without it): the same
// document with those targets, the total and the next page's after= (none
// on the last page).
func (st *Status) Page(limitText, after string, hasAfter bool) (*Status, error) {
	if st == nil {
		st = &Status{SchemaVersion: SchemaVersion}
	}
	limit := MaxPage
	if limitText != "" || !hasAfter {
		n, err := strconv.Atoi(limitText)
		if err != nil || n < 1 || n > MaxPage {
			return nil, &PageError{fmt.Errorf("limit %q: want a number of targets from 1 to %d", limitText, MaxPage)}
		}
		limit = n
	}
	from := 0
	if hasAfter {
		from = -1
		for i := range st.Targets {
			if st.Targets[i].Target == after {
				from = i + 1
				break
			}
		}
		if from < 0 {
			return nil, &PageError{fmt.Errorf("after %q: no such target (the targets were reloaded? start again without after=)", after)}
		}
	}
	p := *st
	end := min(from+limit, len(st.Targets))
	p.Targets, p.from = st.Targets[from:end], st.from+from
	total := len(st.Targets)
	p.Total, p.Next = &total, ""
	if end < len(st.Targets) && end > 0 {
		p.Next = st.Targets[end-1].Target
	}
	return &p, nil
}

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
)

// MaxPage is the most targets a page of /status.json holds (?limit=).
const MaxPage = 10000

// WriteJSON writes st (nil: before the first sweep) as /status.json.
// An error is the document's, before anything is written (the writer's
// own are not returned: a client that went away is no error of ours).
func WriteJSON(w io.Writer, st *Status) error {
	if st == nil {
		st = &Status{SchemaVersion: SchemaVersion, Targets: []TargetStatus{}}
	}
	// The document is written a target at a time: the whole fleet's is
	// tens of MB at 100,000, and was built whole (three times over) to be
	// written.
	head := *st
	head.Targets = []TargetStatus{}
	var b bytes.Buffer
	if err := output.JSONIndent(&b, &head, "  "); err != nil {
		return err
	}
	doc := b.Bytes()
	at := bytes.Index(doc, []byte(targetsKey))
	if at < 0 {
		return errors.New("no targets key")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if len(st.Targets) == 0 {
		bw.Write(doc)
		bw.Flush()
		return nil
	}
	bw.Write(doc[:at+len(targetsKey)-1])
	bw.WriteString("\n")
	var one bytes.Buffer
	enc := json.NewEncoder(&one)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	for i := range st.Targets {
		one.Reset()
		one.WriteString("    ")
		if err := enc.Encode(&st.Targets[i]); err != nil {
			return nil // cannot happen: the head encoded; the answer is cut
		}
		t := bytes.TrimSuffix(one.Bytes(), []byte("\n"))
		bw.Write(output.JSONEscape(t))
		if i < len(st.Targets)-1 {
			bw.WriteString(",")
		}
		bw.WriteString("\n")
	}
	bw.WriteString("  ]")
	bw.Write(doc[at+len(targetsKey):])
	bw.Flush()
	return nil
}

// targetsKey is how the status document's empty list of targets reads
// (the document is written around it, a target at a time).
const targetsKey = `"targets": []`

// PageError is a page asked for that cannot be given: the client's input.
type PageError struct{ Err error }

func (e *PageError) Error() string { return e.Err.Error() }

// Page is st's page (nil: before the first sweep) of at most limit targets
// after the one named after (from the first without it): the same
// document with those targets, the total and the next page's after= (none
// on the last page).
func (st *Status) Page(limitText, after string, hasAfter bool) (*Status, error) {
	if st == nil {
		st = &Status{SchemaVersion: SchemaVersion, Targets: []TargetStatus{}}
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
			if st.Targets[i].Name == after {
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
	p.Targets = st.Targets[from:end]
	total := len(st.Targets)
	p.Total, p.Next = &total, ""
	if end < len(st.Targets) && end > 0 {
		p.Next = st.Targets[end-1].Name
	}
	return &p, nil
}

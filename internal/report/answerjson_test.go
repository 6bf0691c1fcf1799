package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/pgwire"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
)

// TestAnswerJSONInPlace: a kind's answer is one object under its kind's
// name, where the per-protocol fields stood (after proxy_tls, before the
// decision and the addresses), written as encoding/json writes a field:
// HTML unescaped by a line writer, escaped by json.Marshal.
func TestAnswerJSONInPlace(t *testing.T) {
	r := probe.Result{URL: "postgres://h/db", Outcome: classify.Unreachable, Reason: pgwire.ServerError, Error: "a <b> & c",
		Answer: &pgwire.Reply{User: "postgres", Database: "db", Read: true, SQLState: "08P01", Message: "<x>"}}
	r.Addresses = []probe.Result{{URL: "postgres://h/db", Outcome: classify.Refused, Reason: classify.ConnRefused}}
	d := &policy.Decision{Action: policy.Stay, Why: "w"}
	var line bytes.Buffer
	if err := output.JSONLine(&line, NewResultJSON(r, d, 1)); err != nil {
		t.Fatal(err)
	}
	want := `"body_truncated":false,"postgres":{"user":"postgres","database":"db","sqlstate":"08P01","message":"<x>"},"decision":{`
	if !bytes.Contains(line.Bytes(), []byte(want)) || !bytes.Contains(line.Bytes(), []byte(`"error":"a <b> & c"`)) ||
		!bytes.Contains(line.Bytes(), []byte(`,"addresses":[{"schema_version":1,`)) {
		t.Errorf("line:\n%s\nwant it to contain %s and the addresses last", line.Bytes(), want)
	}
	b, err := json.Marshal(NewResultJSON(r, d, 1))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"message":"\u003cx\u003e"`)) {
		t.Errorf("json.Marshal: %s", b)
	}
	none, _ := json.Marshal(NewResultJSON(probe.Result{URL: "http://h/"}, nil, 0))
	var m map[string]any
	if err := json.Unmarshal(none, &m); err != nil || len(m) == 0 {
		t.Fatalf("%s: %v", none, err)
	}
}

package policycmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/render"
)

func parse(t *testing.T, args ...string) *Options {
	return clitest.ParseOptions(t, NewCmd, args...)
}

func TestPolicyFlags(t *testing.T) {
	s, err := parse(t, "--grace", "5m", "--failure-threshold", "3", "--tls-pending-max", "1h").Settings()
	if err != nil || s.Grace != 5*time.Minute || s.FailureThreshold != 3 || s.TLSPendingMax != time.Hour {
		t.Fatalf("settings %+v, %v", s, err)
	}
}

func TestPolicyRunJSON(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	fk.F.Format = render.JSON
	if err := Run(context.Background(), fk.F, parse(t, "--failure-threshold", "4")); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Settings struct {
			FailureThreshold int `json:"failure_threshold"`
		} `json:"settings"`
		Rows []json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(fk.Out.Bytes(), &j); err != nil || j.Settings.FailureThreshold != 4 || len(j.Rows) == 0 {
		t.Fatalf("%v: %s", err, fk.Out)
	}
}

func TestPolicyRunBadSetting(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	err := Run(context.Background(), fk.F, parse(t, "--failure-threshold", "0"))
	if clitest.Code(err) != exitcode.Usage || !strings.Contains(err.Error(), "failure-threshold") {
		t.Fatalf("got %v (exit %d)", err, clitest.Code(err))
	}
}

// TestPolicyRunAnswers: the rows of the answers no redeploy fixes (401,
// 403, 407: stay, the challenge named) and of a throttled one (429: held as
// a timeout is) are in the printed table, numbered 3a and 3b, in text and
// JSON.
func TestPolicyRunAnswers(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	if err := Run(context.Background(), fk.F, parse(t)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"3a\tunreachable\tHTTP 401\tstay\tunreachable (http_status 401): the server wants credentials",
		`WWW-Authenticate: Basic realm="app"; a redeploy cannot fix that, stay running`,
		"3a\tunreachable\tHTTP 403\tstay\t",
		"3a\tunreachable\tHTTP 407\tstay\t",
		"3a\tunreachable\ta login refused (amqp_auth, amqp_vhost, mysql_auth, postgres_auth, redis_auth)\tstay\t",
		"3b\tunreachable\tHTTP 429\tignore-timeout\tunreachable (http_status 429), the 1st in a row: the server is throttling",
	} {
		if !strings.Contains(fk.Out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, fk.Out)
		}
	}

	fk = clitest.New(nil, classify.Pass)
	fk.F.Format = render.JSON
	if err := Run(context.Background(), fk.F, parse(t, "--escalate-timeouts-after", "2")); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Rows []struct {
			Rule      int    `json:"rule"`
			Sub       string `json:"sub"`
			Condition string `json:"condition"`
			Action    string `json:"action"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(fk.Out.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, r := range j.Rows {
		seen[r.Condition] = fmt.Sprintf("%d%s %s", r.Rule, r.Sub, r.Action)
	}
	for cond, want := range map[string]string{
		"HTTP 401":               "3a stay",
		"HTTP 429, < 2 in a row": "3b ignore-timeout",
		"HTTP 429, >= 2 in a row, past grace, streak reaches 1": "6 redeploy",
	} {
		if seen[cond] != want {
			t.Errorf("row %q = %q, want %q (rows %v)", cond, seen[cond], want, seen)
		}
	}
}

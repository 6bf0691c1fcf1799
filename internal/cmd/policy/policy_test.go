package policycmd

import (
	"context"
	"encoding/json"
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

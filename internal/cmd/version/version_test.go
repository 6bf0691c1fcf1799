package versioncmd

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/version"
)

func TestVersionFlags(t *testing.T) {
	fk := clitest.New(nil, classify.Pass)
	var got *Options
	if err := clitest.Parse(NewCmd(fk.F, func(_ context.Context, o *Options) error { got = o; return nil })); err != nil || got == nil {
		t.Fatalf("version: %v", err)
	}
	if err := clitest.Parse(NewCmd(fk.F, func(context.Context, *Options) error { return nil }), "extra"); err == nil {
		t.Error("version took an argument")
	}
}

func TestVersionRun(t *testing.T) {
	in := version.Info{Version: "v1.2.3", Commit: "abc", GoVersion: "go1.26", Platform: "linux/amd64"}
	fk := clitest.New(nil, classify.Pass)
	if err := Run(context.Background(), fk.F, &Options{Info: &in}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(fk.Out.String(), "healthctl v1.2.3\n  commit   abc\n") {
		t.Errorf("text %q", fk.Out)
	}
	fk = clitest.New(nil, classify.Pass)
	fk.F.Format = render.JSON
	if err := Run(context.Background(), fk.F, &Options{Info: &in}); err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(fk.Out.Bytes(), &j); err != nil || j["schema_version"] != float64(1) || j["version"] != "v1.2.3" {
		t.Errorf("%v: %s", err, fk.Out)
	}
	fk.F.Streams.Out = clitest.FailingWriter{Err: syscall.EPIPE}
	if err := Run(context.Background(), fk.F, &Options{Info: &in}); !output.IsWriteFailure(err) {
		t.Errorf("a closed stdout: %v, want a write failure", err)
	}
}

// Package clitest is what the command packages' tests share: a factory of
// fakes (buffers for streams, a map for the environment, a fixed clock, a
// fake prober) and a flag parser that runs a command's RunE up to runF.
// Only tests import it.
package clitest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
)

// Now is the fake clock's time.
var Now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Fakes are the factory and what a test reads back.
type Fakes struct {
	F        *cli.Factory
	Out, Err *bytes.Buffer
	// Env is the environment the factory's Getenv reads.
	Env map[string]string

	mu     sync.Mutex
	probed []string
}

// New returns a factory whose streams are buffers (not a terminal), whose
// environment is env, whose clock stands at Now and whose prober answers
// every URL with outcome (and its first reason) at once.
func New(env map[string]string, outcome classify.Outcome) *Fakes {
	s, out, errb := output.Test(false)
	fk := &Fakes{Out: out, Err: errb, Env: env}
	fk.F = &cli.Factory{
		Streams: s,
		Getenv:  func(k string) string { return env[k] },
		Now:     func() time.Time { return Now },
		UserConfigDir: func() (string, error) {
			return "", errors.New("no user config dir in tests")
		},
	}
	fk.F.Prober = func(_ context.Context, o *scheme.Options) probe.Result {
		fk.mu.Lock()
		fk.probed = append(fk.probed, o.URL.String())
		fk.mu.Unlock()
		return Result(o.URL, outcome)
	}
	return fk
}

// Probed are the URLs the fake prober was asked for, in order.
func (fk *Fakes) Probed() []string {
	fk.mu.Lock()
	defer fk.mu.Unlock()
	return append([]string(nil), fk.probed...)
}

// Result is a probe result of outcome for u, as the prober would return
// it (a status for pass and unreachable, the outcome's first reason).
func Result(u *url.URL, outcome classify.Outcome) probe.Result {
	r := probe.Result{URL: u.String(), Outcome: outcome, Started: Now}
	for _, reason := range classify.Reasons {
		if reason.Outcome() == outcome {
			r.Reason = reason
			break
		}
	}
	switch outcome {
	case classify.Pass:
		r.HTTPStatus = 200
	case classify.Unreachable:
		r.HTTPStatus, r.Reason = 503, classify.HTTPStatus
	default:
		r.Error = "fake " + string(outcome)
	}
	return r
}

// Parse runs cmd's flag parsing and RunE on args, as the root would (bare
// seconds for durations), with output discarded; a command's runF captures
// its options. It returns RunE's error.
func Parse(cmd *cobra.Command, args ...string) error {
	cli.BareSecondsDurations(cmd)
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.UsageError(err) })
	return cmd.ExecuteContext(context.Background())
}

// ParseOptions runs the flag parsing (and the checks before runF) of the
// command newCmd builds, the one shape every command has
// (NewCmd(f, runF)), and returns the options it would run with; a parse
// error fails t.
func ParseOptions[O any](t testing.TB, newCmd func(*cli.Factory, func(context.Context, *O) error) *cobra.Command, args ...string) *O {
	t.Helper()
	fk := New(nil, classify.Pass)
	var got *O
	cmd := newCmd(fk.F, func(_ context.Context, o *O) error { got = o; return nil })
	if err := Parse(cmd, args...); err != nil {
		t.Fatalf("%s %v: %v", cmd.Name(), args, err)
	}
	return got
}

// Code is the exit code an error carries (0 for nil, -1 for an error
// without one).
func Code(err error) int {
	if err == nil {
		return 0
	}
	var ee *cli.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return -1
}

// FailingWriter fails every write with Err: a closed stdout or a full disk.
type FailingWriter struct{ Err error }

func (w FailingWriter) Write([]byte) (int, error) { return 0, w.Err }

package democmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/output"
)

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 0},
		{[]string{"--port-base", "20000"}, 20000},
	} {
		streams, _, _ := output.Test(false)
		var got *Options
		cmd := NewCmd(&cli.Factory{Streams: streams}, func(_ context.Context, o *Options) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got == nil || got.PortBase != tc.want {
			t.Errorf("%q: options %+v, want port base %d", tc.args, got, tc.want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		base int
		want string
	}{
		{base: 70000, want: "--port-base 70000: want a port from 1 to 65523"},
	} {
		streams, _, _ := output.Test(false)
		f := &cli.Factory{Streams: streams}
		err := Run(context.Background(), f, &Options{PortBase: tc.base})
		var ee *cli.ExitError
		if !errors.As(err, &ee) || ee.Code != exitcode.Usage || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want exit 2 and %q", tc, err, tc.want)
		}
	}
}

// fakeExec stands in for the root's in-process run: probe -o json answers
// one passing object per URL, every other command prints its name.
func fakeExec(seen *[]string, mu *sync.Mutex) func(context.Context, *cli.Factory, []string) int {
	return func(_ context.Context, sub *cli.Factory, args []string) int {
		mu.Lock()
		*seen = append(*seen, strings.Join(args, " "))
		mu.Unlock()
		if args[0] == "probe" && args[1] == "-o" {
			for _, a := range args {
				if strings.Contains(a, "://") {
					b, _ := json.Marshal(map[string]any{"url": a, "outcome": "pass", "reason": "ok", "exit_code": 0})
					fmt.Fprintf(sub.Streams.Out, "%s\n", b)
				}
			}
			return 0
		}
		fmt.Fprintf(sub.Streams.Out, "ran %s\n", args[0])
		return 0
	}
}

func TestRunShowsEveryCommandAndCleansUp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	streams, out, _ := output.Test(false)
	var (
		seen []string
		mu   sync.Mutex
	)
	f := &cli.Factory{Streams: streams, Getenv: func(string) string { return "" }, Exec: fakeExec(&seen, &mu)}
	if err := Run(context.Background(), f, &Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"healthctl demo: 8 services", "\nhealthy\tpass\tok\t0\t", "$ healthctl wait-healthy ", "$ healthctl watch --once ", "$ healthctl drain-test ", "Demo done in "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if f.Streams != streams {
		t.Error("Run left its own streams in the factory")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "healthctl-demo-*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// brokenOut fails every write after the first, as a pipe whose reader
// went away after one line.
type brokenOut struct{ n int }

func (b *brokenOut) Write(p []byte) (int, error) {
	b.n++
	if b.n > 1 {
		return 0, errors.New("write |1: broken pipe")
	}
	return len(p), nil
}

func TestRunStopsWhenTheOutputCloses(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	streams, _, _ := output.Test(false)
	streams.Out = &brokenOut{}
	var (
		seen []string
		mu   sync.Mutex
	)
	f := &cli.Factory{Streams: streams, Getenv: func(string) string { return "" }, Exec: fakeExec(&seen, &mu)}
	err := Run(context.Background(), f, &Options{})
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != exitcode.SIGPIPE {
		t.Fatalf("got %v, want a quiet exit %d", err, exitcode.SIGPIPE)
	}
	for _, c := range seen {
		if strings.HasPrefix(c, "drain-test") || strings.HasPrefix(c, "watch") {
			t.Errorf("ran %q after its output closed", c)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "healthctl-demo-*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestShellJoin(t *testing.T) {
	got := shellJoin([]string{"probe", "a b", "it's", "", "--x=1"})
	if want := `probe 'a b' 'it'\''s' '' --x=1`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

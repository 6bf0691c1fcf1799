package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/source"
	"github.com/healthctl/healthctl/internal/target"
	"github.com/healthctl/healthctl/internal/version"
)

// FlagSource names where a flag's value came from: the variable or the
// config file and key when the config loader set it, else "--name".
func FlagSource(fs *pflag.FlagSet, name string) string {
	if fs != nil {
		if f := fs.Lookup(name); f != nil {
			return flagSource(f)
		}
	}
	return "--" + name
}

func flagSource(f *pflag.Flag) string {
	if s := f.Annotations[source.Annotation]; len(s) > 0 {
		return s[0]
	}
	return "--" + f.Name
}

// Named is the one way a validation error names a value: its source and
// the value as written there ("--interval 0s",
// "HEALTHCTL_WAIT_HEALTHY_INTERVAL=0", `config f.yaml: watch.shard "3/3"`).
// Text values are in Go quotes (the line stays one line, a space or an
// empty value shows); numbers, durations and booleans are not.
func Named(fs *pflag.FlagSet, name string) string {
	var f *pflag.Flag
	if fs != nil {
		f = fs.Lookup(name)
	}
	if f == nil {
		return "--" + name
	}
	from, val := flagSource(f), f.Value.String()
	if raw := f.Annotations[source.RawAnnotation]; len(raw) > 0 {
		val = raw[0]
	}
	if _, several := f.Value.(pflag.SliceValue); several || f.Value.Type() == "string" {
		return source.Quote(from, val)
	}
	return source.Join(from, val)
}

// ProbeFlags registers the request, TLS, window and expectation flags shared
// by probe, wait-healthy and watch into a target.Input; building the probe
// options is internal/target's job.
type ProbeFlags struct {
	in target.Input
	fs *pflag.FlagSet
	// Stdin is what --data @- reads (the command's input stream); nil
	// where the command has none to give.
	Stdin io.Reader

	// sources are the names of the values the loader set, read once:
	// watch builds its targets' inputs on several goroutines.
	sourcesOnce sync.Once
	sources     map[string]string
}

func (f *ProbeFlags) Register(fs *pflag.FlagSet) {
	f.fs = fs
	f.in = target.Defaults()
	f.in.UserAgent = "healthctl/" + version.String()
	for i := range target.Options {
		o := &target.Options[i]
		switch p := o.Field(&f.in).(type) {
		case *[]string:
			StringArrayVar(fs, p, o.Flag, o.Short, o.Help())
			continue
		case *string:
			fs.StringVarP(p, o.Flag, o.Short, *p, o.Help())
		case *bool:
			fs.BoolVarP(p, o.Flag, o.Short, *p, o.Help())
		case *int:
			fs.IntVarP(p, o.Flag, o.Short, *p, o.Help())
		case *time.Duration:
			fs.DurationVarP(p, o.Flag, o.Short, *p, o.Help())
		case *int64:
			fs.VarP(&sizeValue{text: target.FormatSize(*p), n: p}, o.Flag, o.Short, o.Help())
		}
		if o.NoOptDefault != "" {
			fs.Lookup(o.Flag).NoOptDefVal = o.NoOptDefault
		}
	}
	fs.Bool(Exit1Flag, false, "exit 1 for every failure, whatever its outcome (Docker's HEALTHCHECK: 0 healthy, 1 unhealthy, 2 reserved)")
}

// Exit1Flag is --exit-1: every non-zero exit code becomes 1 (see Exit1).
const Exit1Flag = "exit-1"

// Exit1 reports whether cmd runs with --exit-1 (from the command line,
// HEALTHCTL_EXIT_1=true or the config file). The root reads it once, after
// the configuration is applied, into Factory.Exit1: every exit code then
// goes through Factory.ExitCode.
func Exit1(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	f := cmd.Flags().Lookup(Exit1Flag)
	return f != nil && f.Value.String() == "true"
}

// Input returns the registered flags as a target.Input whose errors name
// each value's source.
func (f *ProbeFlags) Input() target.Input {
	in := f.in
	f.sourcesOnce.Do(func() { f.sources = sources(f.fs) })
	in.Sources = f.sources
	in.Stdin = f.Stdin
	return in
}

// sources names the flags of fs that the config loader set (from a
// variable or the config file), for target.Input.Sources; nil when none
// was: the command line names the rest. The loader sets a value without
// marking the flag changed, so every flag is looked at. The map is shared
// by every Input and never written after.
func sources(fs *pflag.FlagSet) map[string]string {
	var m map[string]string
	fs.VisitAll(func(f *pflag.Flag) {
		if s := f.Annotations[source.Annotation]; len(s) > 0 {
			if m == nil {
				m = map[string]string{}
			}
			m[f.Name] = s[0]
		}
	})
	return m
}

// Template is a validated target.Template for URL arguments.
type Template struct{ *target.Template }

// Build validates the flags and returns the shared options.
func (f *ProbeFlags) Build(getenv func(string) string) (*Template, error) {
	in := f.Input()
	t, err := in.Build(getenv)
	if err != nil {
		return nil, UsageError(err)
	}
	return &Template{t}, nil
}

// ForURL returns the options for one URL argument, validated.
func (t *Template) ForURL(raw string) (*scheme.Options, error) {
	o, err := t.Template.ForURL(raw)
	return o, UsageError(err)
}

// CustomExpectations reports whether anything beyond the default 2xx is
// asked of an answer.
func (f *ProbeFlags) CustomExpectations() bool {
	in := &f.in
	return in.ExpectStatus != "2xx" || len(in.ExpectBody)+len(in.ExpectBodyRegex)+len(in.ExpectJSON)+len(in.ExpectHeader)+
		len(in.ExpectBodyNot)+len(in.ExpectHeaderNot)+len(in.DegradedIfBody)+len(in.DegradedIfJSON) > 0
}

// BareSecondsDurations lets every duration flag of cmd and its subcommands
// (--connect-timeout, -m, --interval, --grace, ...) take a bare number as
// seconds, as curl does: --connect-timeout 5, -m 8. Variables and config
// files set flags through the same values, so HEALTHCTL_MAX_TIME=8 and
// "interval: 30" work too.
func BareSecondsDurations(cmd *cobra.Command) {
	wrap := func(f *pflag.Flag) {
		if f.Value.Type() == "duration" {
			if _, done := f.Value.(secondsValue); !done {
				f.Value = secondsValue{f.Value}
				if f.DefValue == "0s" {
					f.DefValue = "0" // still no "(default 0s)" in --help
				}
			}
		}
	}
	for _, fs := range []*pflag.FlagSet{cmd.Flags(), cmd.PersistentFlags()} {
		// In registration order: VisitAll would otherwise sort ~90 flags
		// for nothing (the order does not matter here; cobra sorts again
		// once it has added its own).
		sorted := fs.SortFlags
		fs.SortFlags = false
		fs.VisitAll(wrap)
		fs.SortFlags = sorted
	}
	for _, c := range cmd.Commands() {
		BareSecondsDurations(c)
	}
}

// secondsValue is a duration flag that reads a bare number as seconds.
type secondsValue struct{ pflag.Value }

func (v secondsValue) Set(s string) error { return v.Value.Set(target.BareSeconds(s)) }

// sizeValue is a byte size flag, checked when set (so a bad value from env
// or file is reported with its origin).
type sizeValue struct {
	text string
	n    *int64
}

func (v *sizeValue) String() string { return v.text }
func (v *sizeValue) Type() string   { return "size" }
func (v *sizeValue) Set(s string) error {
	n, err := target.ParseSize(s)
	if err != nil {
		return err
	}
	v.text, *v.n = s, n
	return nil
}

// ageValue is --age: a non-negative duration, or unknown when never set.
type ageValue struct {
	d   time.Duration
	set bool
}

func (v *ageValue) String() string {
	if !v.set {
		return "unknown"
	}
	return v.d.String()
}
func (v *ageValue) Type() string { return "duration" }
func (v *ageValue) Set(s string) error {
	d, err := target.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration like 90s or 10m (a bare number is seconds)")
	}
	if d < 0 {
		return fmt.Errorf("an age cannot be negative")
	}
	v.d, v.set = d, true
	return nil
}

// PolicyFlags are the reconciler settings and the target's age.
type PolicyFlags struct {
	startedAt             string
	age                   ageValue
	grace                 time.Duration
	failureThreshold      int
	escalateTimeoutsAfter int
	tlsPendingMax         time.Duration
	fs                    *pflag.FlagSet
}

func (f *PolicyFlags) Register(fs *pflag.FlagSet, withAge bool) {
	f.fs = fs
	d := policy.DefaultSettings()
	if withAge {
		fs.StringVar(&f.startedAt, "started-at", "", "when the target started (RFC 3339 or unix seconds); none means past grace")
		fs.Var(&f.age, "age", "the target's age instead of --started-at; unknown counts as past grace")
	}
	fs.DurationVar(&f.grace, "grace", d.Grace, "a target younger than this is still booting: decisive failures are ignored")
	fs.IntVar(&f.failureThreshold, "failure-threshold", d.FailureThreshold, "decisive failures in a row, past grace, before a redeploy")
	fs.IntVar(&f.escalateTimeoutsAfter, "escalate-timeouts-after", d.EscalateTimeoutsAfter, "from the Nth timeout in a row on, a timeout counts as decisive (0: never)")
	fs.DurationVar(&f.tlsPendingMax, "tls-pending-max", d.TLSPendingMax, "a TLS error older than this counts as decisive (0: wait forever)")
}

func (f *PolicyFlags) Settings() (policy.Settings, error) {
	s := policy.Settings{
		Grace:                 f.grace,
		FailureThreshold:      f.failureThreshold,
		EscalateTimeoutsAfter: f.escalateTimeoutsAfter,
		TLSPendingMax:         f.tlsPendingMax,
	}
	err := s.Validate()
	var se *policy.SettingError
	if errors.As(err, &se) {
		if src := FlagSource(f.fs, se.Setting); !strings.HasPrefix(src, "--") {
			return s, UsageError(&target.Error{Source: src, Err: errors.New(se.Msg)})
		}
	}
	return s, UsageError(err)
}

// AgeAt returns the target's age at now, whether it is known, and a warning
// to show when --started-at lies in the future (clock skew: counted as age 0).
func (f *PolicyFlags) AgeAt(now time.Time) (age time.Duration, known bool, warning string, err error) {
	switch {
	case f.startedAt != "" && f.age.set:
		return 0, false, "", UsageErrorf("%s and %s contradict each other: give one", FlagSource(f.fs, "started-at"), FlagSource(f.fs, "age"))
	case f.age.set:
		return f.age.d, true, "", nil
	case f.startedAt != "":
		t, err := target.ParseTime(f.startedAt)
		if err != nil {
			return 0, false, "", UsageError(&target.Error{Source: Named(f.fs, "started-at"), Err: err})
		}
		if t.After(now) {
			return 0, true, fmt.Sprintf("%s %s is %s in the future (clock skew?): counting the age as 0",
				FlagSource(f.fs, "started-at"), f.startedAt, t.Sub(now).Round(time.Second)), nil
		}
		return now.Sub(t), true, "", nil
	}
	return 0, false, "", nil
}

package target

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOptionsSetEveryKind: each option's Set parses its kind and fills the
// field its flag fills; keys are unique and derived from the flag.
func TestOptionsSetEveryKind(t *testing.T) {
	seen := map[string]bool{}
	for i := range Options {
		o := &Options[i]
		if seen[o.Key()] || seen[o.Flag] {
			t.Errorf("%s: flag or key %q declared twice", o.Flag, o.Key())
		}
		seen[o.Key()], seen[o.Flag] = true, true
		in := Defaults()
		var val []string
		switch o.Kind {
		case String:
			val = []string{"v"}
		case Bool:
			val = []string{"yes"}
		case Int:
			val = []string{"3"}
		case Duration:
			val = []string{"1500ms"}
		case Size:
			val = []string{"2KiB"}
		case List:
			val = []string{"a", "b"}
		}
		if err := o.Set(&in, val); err != nil {
			t.Fatalf("%s: Set(%q): %v", o.Flag, val, err)
		}
		switch p := o.Field(&in).(type) {
		case *string:
			if *p != "v" {
				t.Errorf("%s = %q", o.Flag, *p)
			}
		case *bool:
			if !*p {
				t.Errorf("%s not set", o.Flag)
			}
		case *int:
			if *p != 3 {
				t.Errorf("%s = %d", o.Flag, *p)
			}
		case *time.Duration:
			if *p != 1500*time.Millisecond {
				t.Errorf("%s = %v", o.Flag, *p)
			}
		case *int64:
			if *p != 2048 {
				t.Errorf("%s = %d", o.Flag, *p)
			}
		case *[]string:
			if !slices.Equal(*p, val) {
				t.Errorf("%s = %q", o.Flag, *p)
			}
		default:
			t.Errorf("%s: field of type %T", o.Flag, p)
		}
		if o.Kind != List && o.Set(&in, []string{"a", "b"}) == nil {
			t.Errorf("%s: two values for a scalar accepted", o.Flag)
		}
	}
	if OptionByKey("headers") == nil || OptionByKey("expect_status") == nil || OptionByKey("header") != nil {
		t.Error("keys: want headers and expect_status, not header")
	}
}

func TestParseDurationBareSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"5": 5 * time.Second, "0.5": 500 * time.Millisecond, "8": 8 * time.Second, "0": 0,
		"2s": 2 * time.Second, "500ms": 500 * time.Millisecond, "1m30s": 90 * time.Second,
	} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "5x", ".", "1.", "-", "soon", "1e3", "0x10"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
	// A targets file's connect_timeout: 5 (YAML gives a number).
	var in Input
	if err := OptionByKey("connect_timeout").Set(&in, []string{"5"}); err != nil || in.ConnectTimeout != 5*time.Second {
		t.Fatalf("connect_timeout: 5 -> %v, %v", in.ConnectTimeout, err)
	}
}

// TestOptionHelpNamesTheRows: an option of one of the scheme table's
// groups (For) names the URLs that take it from the table, never by hand;
// every other help names none to fill.
func TestOptionHelpNamesTheRows(t *testing.T) {
	for _, o := range Options {
		if got, want := strings.Count(o.Usage, "%s"), 0; o.For == 0 && got != want || o.For != 0 && got != 1 {
			t.Errorf("--%s: %d %%s in its usage with For %v", o.Flag, got, o.For)
		}
		if h := o.Help(); strings.Contains(h, "%!") || o.For != 0 && !strings.Contains(h, "://") {
			t.Errorf("--%s: help %q", o.Flag, h)
		}
	}
	for _, o := range Options {
		if o.Flag == "grpc-service" && !strings.Contains(o.Help(), "a grpc:// or grpcs:// probe") {
			t.Errorf("--grpc-service: %q", o.Help())
		}
	}
}

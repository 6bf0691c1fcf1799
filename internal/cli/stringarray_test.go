package cli

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

// TestStringArrayMatchesPflag: StringArrayVar behaves as pflag's
// StringArrayVarP does: the same help text, the same values after parsing
// (repeats append, commas do not split), the same String and Type, and the
// same slice operations.
func TestStringArrayMatchesPflag(t *testing.T) {
	var theirs, ours []string
	pf := pflag.NewFlagSet("pflag", pflag.ContinueOnError)
	pf.StringArrayVarP(&theirs, "header", "H", nil, "request header (repeatable)")
	of := pflag.NewFlagSet("ours", pflag.ContinueOnError)
	StringArrayVar(of, &ours, "header", "H", "request header (repeatable)")

	if p, o := pf.FlagUsages(), of.FlagUsages(); p != o {
		t.Errorf("help differs:\npflag: %q\nours:  %q", p, o)
	}
	pv, ov := pf.Lookup("header").Value, of.Lookup("header").Value
	if pv.Type() != ov.Type() || pv.String() != ov.String() {
		t.Errorf("empty: pflag %s %q, ours %s %q", pv.Type(), pv.String(), ov.Type(), ov.String())
	}
	args := []string{"-H", "Accept: a, b", "--header", `X-Q: "quoted"`, "-H", ""}
	if err := pf.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := of.Parse(args); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(theirs, ours) || len(ours) != 3 {
		t.Errorf("parsed: pflag %q, ours %q", theirs, ours)
	}
	if pv.String() != ov.String() {
		t.Errorf("String: pflag %q, ours %q", pv.String(), ov.String())
	}
	ps, os := pv.(pflag.SliceValue), ov.(pflag.SliceValue)
	for _, f := range []func(pflag.SliceValue) error{
		func(s pflag.SliceValue) error { return s.Append("appended") },
		func(s pflag.SliceValue) error { return s.Replace([]string{"x", "y"}) },
	} {
		if err := f(ps); err != nil {
			t.Fatal(err)
		}
		if err := f(os); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ps.GetSlice(), os.GetSlice()) || !slices.Equal(theirs, ours) {
			t.Errorf("slice ops: pflag %q %q, ours %q %q", ps.GetSlice(), theirs, os.GetSlice(), ours)
		}
	}
}

package words

import "testing"

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 probes", 1: "1 probe", 2: "2 probes"} {
		if got := Plural(n, "probe"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestParseBool(t *testing.T) {
	for in, want := range map[string]bool{"true": true, "YES": true, " on ": true, "1": true, "false": false, "No": false, "off": false, "0": false} {
		if got, err := ParseBool(in); err != nil || got != want {
			t.Errorf("ParseBool(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"maybe", "", "2"} {
		if _, err := ParseBool(bad); err == nil {
			t.Errorf("ParseBool(%q) accepted", bad)
		}
	}
}

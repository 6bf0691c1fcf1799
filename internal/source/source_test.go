package source

import "testing"

func TestQuote(t *testing.T) {
	for _, c := range []struct{ src, val, want string }{
		{"--interval", "0s", `--interval "0s"`},
		{"HEALTHCTL_WAIT_HEALTHY_INTERVAL", "0", `HEALTHCTL_WAIT_HEALTHY_INTERVAL="0"`},
		{"config f.yaml: wait-healthy.timeout", "-5s", `config f.yaml: wait-healthy.timeout "-5s"`},
		{"targets.yaml:3", "x", `targets.yaml:3 "x"`},
		{"", "x", ` "x"`},
	} {
		if got := Quote(c.src, c.val); got != c.want {
			t.Errorf("Quote(%q, %q) = %q, want %q", c.src, c.val, got, c.want)
		}
	}
}

func TestIsVariable(t *testing.T) {
	for src, want := range map[string]bool{
		"HEALTHCTL_X": true, "--x": false, "-H": false, "f.yaml:3": false,
		"config f: key": false, "": false, "Mixed": false,
	} {
		if got := IsVariable(src); got != want {
			t.Errorf("IsVariable(%q) = %v, want %v", src, got, want)
		}
	}
}

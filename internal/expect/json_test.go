package expect

import (
	"regexp"
	"testing"

	"github.com/tidwall/gjson"
)

// TestJSONEqual: a value is compared as a user reading the body means it:
// numbers as numbers (however written), null as the word, integers past
// float64's precision digit by digit.
func TestJSONEqual(t *testing.T) {
	body := `{"s":"ready","e":"","n":3,"f":1.50,"x":1e3,"z":-0,"big":12345678901234567890,
		"t":true,"no":false,"nil":null,"sn":"null","s3":"3","o":{"a":1},"a":[1,2]}`
	cases := []struct {
		path, value string
		want        bool
	}{
		{"s", "ready", true}, {"s", "Ready", false}, {"e", "", true}, {"e", "null", false},
		{"n", "3", true}, {"n", "3.0", true}, {"n", "03", false}, {"n", "+3", false}, {"n", "4", false}, {"n", "three", false},
		{"f", "1.50", true}, {"f", "1.5", true}, {"f", "1.500", true}, {"f", "1.51", false},
		{"x", "1000", true}, {"x", "1e3", true}, {"x", "1E+3", true}, {"x", "1001", false},
		{"z", "0", true}, {"z", "-0", true}, {"z", "1", false},
		{"big", "12345678901234567890", true}, {"big", "12345678901234567891", false},
		{"t", "true", true}, {"t", "True", false}, {"no", "false", true},
		{"nil", "null", true}, {"nil", "", false}, {"sn", "null", true},
		{"s3", "3", true}, {"s3", "3.0", false},
		{"o", `{"a":1}`, true}, {"a", "[1,2]", true},
	}
	for _, c := range cases {
		got := gjson.Get(body, c.path)
		if !got.Exists() {
			t.Fatalf("%s missing", c.path)
		}
		if jsonEqual(got, c.value) != c.want {
			t.Errorf("%s=%s: %v, want %v (body has %s)", c.path, c.value, !c.want, c.want, got.Raw)
		}
	}
	if s := jsonText(gjson.Get(body, "f")); s != "1.50" {
		t.Errorf("jsonText(f) = %q, want the body's 1.50", s)
	}
	if s := jsonText(gjson.Get(body, "nil")); s != "null" {
		t.Errorf("jsonText(nil) = %q, want null", s)
	}
}

// TestIsJSONNumber holds the hand-written grammar to RFC 8259's, as the
// regular expression of it says.
func TestIsJSONNumber(t *testing.T) {
	re := regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	for _, s := range []string{"", "0", "-0", "00", "01", "1", "-", "12", "1.", "1.5", ".5", "1.50", "1e", "1e3", "1E+3",
		"1e-3", "1e+", "-1.5e10", "+1", "1.5.5", "1ee3", "0x10", "Inf", "NaN", "1_000", " 1", "1 ", "--1", "0.0e0"} {
		if got, want := isJSONNumber(s), re.MatchString(s); got != want {
			t.Errorf("isJSONNumber(%q) = %v, want %v", s, got, want)
		}
	}
}

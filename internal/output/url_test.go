package output

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDisplayURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://xn--bcher-kva.invalid:8080/health":      "http://bücher.invalid:8080/health",
		"http://b%C3%BCcher.invalid/health":             "http://bücher.invalid/health",
		"https://***@xn--bcher-kva.invalid/h?token=***": "https://***@bücher.invalid/h?token=***",
		"http://127.0.0.1:8080/xn--bcher-kva":           "http://127.0.0.1:8080/xn--bcher-kva",
		"http://[::1]:8080/":                            "http://[::1]:8080/",
		"http://app.invalid/a":                          "http://app.invalid/a",
		"not a url %zz":                                 "not a url %zz",
	} {
		if got := DisplayURL(in); got != want {
			t.Errorf("DisplayURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestElideURLKeepsTheHost(t *testing.T) {
	long := "https://preview-1234.staging.example.com:8443/api/v2/internal/health/readiness?verbose=1"
	for _, n := range []int{30, 50, 60, 80} {
		got := ElideURL(long, n)
		if utf8.RuneCountInString(got) > n {
			t.Errorf("%d: %q is %d columns", n, got, utf8.RuneCountInString(got))
		}
		if n >= 50 && !strings.HasPrefix(got, "https://preview-1234.staging.example.com:8443/") {
			t.Errorf("%d: the host was cut: %q", n, got)
		}
	}
	if got := ElideURL("http://bücher.invalid/a/very/long/path/to/health", 30); !strings.HasPrefix(got, "http://bücher.invalid/") || utf8.RuneCountInString(got) > 30 {
		t.Errorf("unicode host: %q", got)
	}
	if got := ElideURL("http://a.invalid/h", 80); got != "http://a.invalid/h" {
		t.Errorf("short URL changed: %q", got)
	}
}

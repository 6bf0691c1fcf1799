package main

import (
	"testing"

	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/target"
)

// FuzzUserInput: whatever a user types as a URL, a status set, a --resolve
// or a size, parsing returns a value or an error, never panics. The seeds
// run with every `go test`; `go test -fuzz FuzzUserInput ./cmd/healthctl`
// explores further.
func FuzzUserInput(f *testing.F) {
	for _, s := range []string{"http://[::1]:8080/", "127.0.0.1:80/h", "2xx,300-399", "h:80:[::1]", "64KiB", "%zz", "http://u:p@h/?token=x", "://", "[", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if u, err := target.ParseURL(s); err == nil {
			r := probe.NewRedactor(nil, nil)
			r.AddURL(u)
			_ = r.URL(u)
		}
		if set, err := probe.ParseStatusSet(s); err == nil {
			_ = set.Contains(200)
		}
		_, _, _ = target.ParseResolve(s)
		_, _ = target.ParseSize(s)
		_, _ = target.HostPortDefault(s, "53")
		_, _ = target.ParseTime(s)
	})
}

package redact

import (
	"net/url"
	"strings"
	"sync"
	"testing"
)

func TestRedactorRawURLAndConcurrency(t *testing.T) {
	r := NewRedactor(nil, []string{"session"})
	for raw, want := range map[string]string{
		"http://[::1/bad?token=SECRET&page=2":    "http://[::1/bad?token=***&page=2",
		"http://user:pw@[::1/x?session=S1#frag":  "http://user:***@[::1/x?session=***#frag",
		"http://tok3n@h/x":                       "http://***@h/x",
		"https://h:99999999/p?Token=ABC&sig=DEF": "https://h:99999999/p?Token=***&sig=***",
		"no url at all":                          "no url at all",
		"/relative?access_token=XYZ&ok=1":        "/relative?access_token=***&ok=1",
	} {
		if got := r.RawURL(raw); got != want {
			t.Errorf("RawURL(%q) = %q, want %q", raw, got, want)
		}
	}
	// AddURL and String from many goroutines (run with -race).
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, _ := url.Parse("http://u:SECRETPW" + strings.Repeat("x", i) + "@h/?token=T" + strings.Repeat("y", i+3))
			r.AddURL(u)
			_ = r.String("SECRETPW and more")
		}()
	}
	wg.Wait()
	if got := r.String("SECRETPWxxx"); strings.Contains(got, "SECRET") {
		t.Errorf("not scrubbed: %q", got)
	}
}

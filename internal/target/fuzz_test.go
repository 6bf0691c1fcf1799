package target

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// fileFlags read files named by their value: the fuzzer must not make
// them read /dev/zero.
var fileFlags = map[string]bool{"cacert": true, "cert": true, "key": true}

// FuzzOptions: any value of any probe option, with any URL, is a usage
// error naming the option (or the URL) or a probe's options with a URL
// with a host, of a scheme healthctl speaks (grpc, grpcs, tcp and tls ones
// no more than host, port and a path); the redacted URL never shows the
// password.
func FuzzOptions(f *testing.F) {
	seeds := []struct {
		flag, val, url string
	}{
		{"expect-status", "2xx", "http://127.0.0.1:8080/health"},
		{"expect-json", `checks.#(name=="db").ok=true`, "http://h.invalid/"},
		{"expect-json", "status=ok", "https://u:pw@h.invalid:8443/p?token=x"},
		{"expect-header", "Content-Type=^application/json", "http://[::1]:80/"},
		{"expect-header", "X=(", "http://h/"},
		{"resolve", "h.invalid:443:127.0.0.1", "https://h.invalid/"},
		{"max-body", "64KiB", "http://h/"},
		{"connect-timeout", "-1s", "http://h/"},
		{"header", "Authorization: Bearer abc", "http://h/"},
		{"grpc-service", "pkg.Svc", "grpc://h.invalid:50051/x"},
		{"http2-prior-knowledge", "true", "tcp://u:pw@h.invalid:5432"},
		{"user", "bob:hunter2", "http://h/"},
		{"method", "GET\n", "http://h/"},
		{"user-agent", "ua\r\nX: y", "http://h/"},
		{"dns-server", "127.0.0.1:5353", "http://h/"},
		{"follow", "99999999999", "http://h/"},
		{"noproxy", "*", "http://h/"},
		{"secret-param", "session", "http://h/?session=abcd#session=efgh"},
	}
	for _, s := range seeds {
		f.Add(s.flag, s.val, s.url)
	}
	f.Fuzz(func(t *testing.T, flag, val, raw string) {
		opt := OptionByKey(strings.ReplaceAll(flag, "-", "_"))
		if opt == nil || fileFlags[opt.Flag] || strings.Contains(val, "@") {
			return
		}
		in := Defaults()
		vals := []string{val}
		if opt.Kind == List {
			vals = strings.Split(val, "\n")
		}
		if err := opt.Set(&in, vals); err != nil {
			return
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			tmpl, err := in.Build(func(string) string { return "" })
			if err != nil {
				var te *Error
				if !errors.As(err, &te) || !strings.Contains(err.Error(), "--"+opt.Flag) {
					t.Errorf("--%s %q: error %q does not name the flag", opt.Flag, val, err)
				}
				return
			}
			o, err := tmpl.ForURL(raw)
			if err != nil {
				return
			}
			if o.URL == nil || o.URL.Hostname() == "" {
				t.Errorf("ForURL(%q) = %v: not a URL with a host", raw, o.URL)
				return
			}
			switch o.URL.Scheme {
			case "http", "https":
			case "grpc", "grpcs", "tcp", "tls":
				// Host and port only (and a gRPC service): nothing a
				// health call cannot send.
				if o.URL.Port() == "" || o.URL.User != nil || o.URL.RawQuery != "" || o.URL.Fragment != "" {
					t.Errorf("ForURL(%q) = %v: a %s URL with more than host, port and path", raw, o.URL, o.URL.Scheme)
				}
			default:
				t.Errorf("ForURL(%q) = %v: scheme %q", raw, o.URL, o.URL.Scheme)
			}
			red := o.Redactor.URL(o.URL)
			if pw, ok := o.URL.User.Password(); ok && len(pw) >= 3 && strings.Contains(red, pw) &&
				!strings.Contains(o.URL.Host+o.URL.Path+o.URL.RawQuery+o.URL.Fragment+o.URL.User.Username()+"***", pw) {
				t.Errorf("ForURL(%q): redacted %q shows the password", raw, red)
			}
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("--%s %q with %q: building the options took over 5s", opt.Flag, val, raw)
		}
	})
}

// FuzzExpectJSON: a PATH=VALUE condition splits at the first '=' outside
// gjson's #(...) queries and quotes (GOTCHAS: `checks.#(name=="db").ok=true`
// is the path `checks.#(name=="db").ok` and the value `true`).
func FuzzExpectJSON(f *testing.F) {
	for _, s := range []string{`status=ok`, `checks.#(name=="db").ok=true`, `a.#(b="=").c==`, `=x`, `x`, `#(a=b`, `"a=b"=c`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in := Defaults()
		in.ExpectJSON = []string{s}
		tmpl, err := in.Build(func(string) string { return "" })
		if err != nil {
			return
		}
		j := tmpl.opts.Expect.JSON[0]
		if j.Path == "" || j.Path+"="+j.Value != s {
			t.Fatalf("%q split as %q = %q", s, j.Path, j.Value)
		}
		if depth, quoted := openAt(j.Path); depth > 0 || quoted {
			t.Fatalf("%q split inside a query or a quote: path %q, value %q", s, j.Path, j.Value)
		}
	})
}

// openAt reports how deep inside #( ... ) and whether inside quotes the
// end of s is. A backslash escapes the next character everywhere, as in
// gjson's paths (fuzzing found `0\"=`: an escaped quote opens nothing).
func openAt(s string) (depth int, quoted bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++ // gjson's escape, inside quotes or not: `a\"b` is a path, not a quote
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '(' && i > 0 && s[i-1] == '#':
			depth++
		case c == ')' && depth > 0:
			depth--
		}
	}
	return depth, quoted
}

// FuzzSizeTimeResolve: sizes, start times and --resolve values parse to
// sane values or fail: a size round-trips through FormatSize and stays in
// 0..MaxSize; a time is one JSON can write (year 0..9999) — GOTCHAS: a
// started_at past 9999 once broke every state write.
func FuzzSizeTimeResolve(f *testing.F) {
	for _, s := range []string{"64KiB", "1m", "9223372036854775807", "1TiB", "1025tib", "-1", "0", " 7 ",
		"2026-11-30T12:00:00Z", "1764504000", "1764504000000", "253402300800", "-62135596801",
		"h.invalid:443:127.0.0.1", "[::1]:80:::1", "h:0:1.2.3.4", "H:443:[::1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseSize(s); err == nil {
			if n < 0 || n > MaxSize {
				t.Fatalf("ParseSize(%q) = %d: out of range", s, n)
			}
			if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
				t.Fatalf("ParseSize(%q) = %d; FormatSize = %q reads back as %d, %v", s, n, FormatSize(n), back, err)
			}
		}
		if tm, err := ParseTime(s); err == nil && !tm.IsZero() {
			if _, err := tm.MarshalJSON(); err != nil {
				t.Fatalf("ParseTime(%q) = %v: JSON cannot write it: %v", s, tm, err)
			}
		}
		if key, addrs, err := ParseResolve(s); err == nil {
			if _, err := url.Parse("http://" + key); err != nil || len(addrs) == 0 || slices.Contains(addrs, "") {
				t.Fatalf("ParseResolve(%q) = %q, %q: not usable", s, key, addrs)
			}
		}
	})
}

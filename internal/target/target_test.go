package target

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	for raw, want := range map[string]string{
		"127.0.0.1:8080/health":    "http://127.0.0.1:8080/health",
		"http://[::1]:8080/":       "http://[::1]:8080/",
		"https://app.invalid/h?x":  "https://app.invalid/h?x",
		"localhost:9000":           "http://localhost:9000",
		"ftp://x/":                 "error",
		"http://":                  "error",
		"":                         "error",
		"http://h:0/":              "error",
		"http://[::1/":             "error",
		"3":                        "error",
		"HTTP://App.Invalid:80/ok": "http://App.Invalid:80/ok",
		// Other protocols: host and port, a gRPC service as the path.
		"grpc://127.0.0.1:50051":          "grpc://127.0.0.1:50051",
		"grpc://127.0.0.1:50051/":         "grpc://127.0.0.1:50051/",
		"GRPCS://app.invalid:443/pkg.Svc": "grpcs://app.invalid:443/pkg.Svc",
		"tcp://[::1]:5432":                "tcp://[::1]:5432",
		"tls://app.invalid:636/":          "tls://app.invalid:636/",
		"grpc://127.0.0.1":                "error",
		"tcp://db.invalid":                "error",
		"tcp://h:1/path":                  "error",
		"grpc://u:p@h:1":                  "error",
		"grpc://h:1/s?x=1":                "error",
		"tls://h:1#frag":                  "error",
		"grpc://h:70000":                  "error",
	} {
		u, err := ParseURL(raw)
		got := "error"
		if err == nil {
			got = u.String()
		}
		if got != want {
			t.Errorf("ParseURL(%q) = %s (%v), want %s", raw, got, err, want)
		}
	}
}

func TestParseResolveAndSizes(t *testing.T) {
	for in, want := range map[string]string{
		"App.invalid:443:127.0.0.1":      "app.invalid:443=127.0.0.1",
		"h:80:[::1]":                     "h:80=::1",
		"h:80":                           "error",
		"h:x:127.0.0.1":                  "error",
		"h:80:example":                   "error",
		"h:80:127.0.0.1,[::1],127.0.0.1": "h:80=127.0.0.1,::1",
		"h:80:127.0.0.1,":                "error",
	} {
		k, a, err := ParseResolve(in)
		got := k + "=" + strings.Join(a, ",")
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("ParseResolve(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]int64{"65536": 65536, "64KiB": 65536, "1MiB": 1 << 20, "2k": 2048, "1mb": 1000000, "x": -1, "-1": -1, "1GiB": 1 << 30, "2048MiB": 2 << 30, "1TiB": 1 << 40, "1025GiB": -1, "9007199254740992k": -1, "9223372036854775807": -1} {
		got, err := ParseSize(in)
		if err != nil {
			got = -1
		}
		if got != want {
			t.Errorf("ParseSize(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestErrorsNameTheirSource(t *testing.T) {
	src := map[string]string{}
	for _, o := range Options {
		src[o.Flag] = `targets.yaml:12: target "api": ` + o.Flag
	}
	for _, tc := range []struct {
		name string
		mod  func(*Input)
		want string
	}{
		{"resolve", func(in *Input) { in.Resolve = []string{"bad"} }, `targets.yaml:12: target "api": resolve "bad": want HOST:PORT:ADDR[,ADDR...]`},
		{"status", func(in *Input) { in.ExpectStatus = "99" }, `targets.yaml:12: target "api": expect-status "99": "99" is not a status code, range or class`},
		{"header", func(in *Input) { in.Headers = []string{"Authorization Bearer sekrit"} }, `targets.yaml:12: target "api": header: want 'Name: value', got a header without a colon or with a bad name`},
		{"ua", func(in *Input) { in.UserAgent = "a\nb" }, `targets.yaml:12: target "api": user-agent: the value has a control character (a newline?)`},
		{"timeout", func(in *Input) { in.ConnectTimeout = 0 }, `targets.yaml:12: target "api": connect-timeout "0s": must be positive`},
	} {
		in := Defaults()
		in.Sources = src
		tc.mod(&in)
		_, err := in.Build(func(string) string { return "" })
		var te *Error
		if !errors.As(err, &te) || err.Error() != tc.want {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "sekrit") {
			t.Errorf("%s: a header value leaked into the error", tc.name)
		}
	}
	// Variables are shown as NAME="value".
	in := Defaults()
	in.Resolve = []string{"bad"}
	in.Sources = map[string]string{"resolve": "HEALTHCTL_RESOLVE"}
	if _, err := in.Build(func(string) string { return "" }); err == nil || err.Error() != `HEALTHCTL_RESOLVE="bad": want HOST:PORT:ADDR[,ADDR...]` {
		t.Errorf("got %v", err)
	}
}

func TestFamilyAndLiteral(t *testing.T) {
	in := Defaults()
	in.IPv4 = true
	tm, err := in.Build(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tm.ForURL("http://[::1]:8080/"); err == nil {
		t.Error("-4 with an IPv6 literal must be an error")
	}
	if _, err := tm.ForURLFrom("http://[::ffff:127.0.0.1]:8080/", `t.yaml:3`); err != nil {
		t.Errorf("a v4-mapped literal is IPv4: %v", err)
	}
	if _, err := tm.ForURLFrom("ftp://x/", `t.yaml:3: target "a": url`); err == nil || !strings.HasPrefix(err.Error(), `t.yaml:3: target "a": url: unsupported scheme`) {
		t.Errorf("got %v", err)
	}
}

func TestFormatSizeRoundTrips(t *testing.T) {
	for _, n := range []int64{0, 1, 1023, 1024, 65536, 1 << 20, 3 << 30, MaxSize} {
		got, err := ParseSize(FormatSize(n))
		if err != nil || got != n {
			t.Errorf("%d: %s parsed as %d (%v)", n, FormatSize(n), got, err)
		}
	}
}

// TestResolveFamilyContradiction: -6 with a --resolve entry that has only
// IPv4 addresses (or -4 with only IPv6) is a usage error, as the same
// contradiction with an IP literal is.
func TestResolveFamilyContradiction(t *testing.T) {
	for _, c := range []struct {
		v4, v6  bool
		resolve string
		want    string
	}{
		{false, true, "x.test:80:127.0.0.1", `--resolve "x.test:80:127.0.0.1": has no IPv6 address, but --ipv6 asks for IPv6 only`},
		{true, false, "x.test:80:[::1]", `--resolve "x.test:80:[::1]": has no IPv4 address, but --ipv4 asks for IPv4 only`},
		{false, true, "x.test:80:127.0.0.1,::1", ""},
		{true, false, "x.test:80:127.0.0.1", ""},
	} {
		in := Defaults()
		in.IPv4, in.IPv6 = c.v4, c.v6
		in.Resolve = []string{c.resolve}
		_, err := in.Build(func(string) string { return "" })
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%v/%v %s: got %q, want %q", c.v4, c.v6, c.resolve, got, c.want)
		}
	}
}

// TestOptionsForTheProtocol: an option a URL's protocol does not use is
// refused for that URL; what it uses is taken.
func TestOptionsForTheProtocol(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Input)
		url  string
		flag string // "" when the URL takes it
	}{
		{"body on tcp", func(in *Input) { in.ExpectBody = []string{"ok"} }, "tcp://127.0.0.1:5432", "expect-body"},
		{"regex on tls", func(in *Input) { in.ExpectBodyRegex = []string{"."} }, "tls://127.0.0.1:636", "expect-body-regex"},
		{"json on grpc", func(in *Input) { in.ExpectJSON = []string{"a=b"} }, "grpc://127.0.0.1:50051", "expect-json"},
		{"header check on grpcs", func(in *Input) { in.ExpectHeader = []string{"X=y"} }, "grpcs://127.0.0.1:50051", "expect-header"},
		{"status on tcp", func(in *Input) { in.ExpectStatus = "200" }, "tcp://127.0.0.1:1", "expect-status"},
		{"the default status", func(in *Input) {}, "tcp://127.0.0.1:1", ""},
		{"data on grpc", func(in *Input) { in.Data = "x" }, "grpc://127.0.0.1:1", "data"},
		{"method on tls", func(in *Input) { in.Method = "POST" }, "tls://127.0.0.1:1", "method"},
		{"user on grpc", func(in *Input) { in.User = "a:b" }, "grpc://127.0.0.1:1", "user"},
		{"follow on tcp", func(in *Input) { in.Follow = 3 }, "tcp://127.0.0.1:1", "follow"},
		{"h2c on grpc", func(in *Input) { in.HTTP2Prior = true }, "grpc://127.0.0.1:1", "http2-prior-knowledge"},
		{"headers on tcp", func(in *Input) { in.Headers = []string{"X: y"} }, "tcp://127.0.0.1:1", "header"},
		{"headers on grpc (metadata)", func(in *Input) { in.Headers = []string{"X: y"} }, "grpc://127.0.0.1:1", ""},
		{"service on grpc", func(in *Input) { in.GRPCService = "db" }, "grpc://127.0.0.1:1", ""},
		{"service on http", func(in *Input) { in.GRPCService = "db" }, "http://127.0.0.1:1/", "grpc-service"},
		{"service on tls", func(in *Input) { in.GRPCService = "db" }, "tls://127.0.0.1:1", "grpc-service"},
		{"body on https", func(in *Input) { in.ExpectBody = []string{"ok"} }, "https://127.0.0.1:1/", ""},
	} {
		in := Defaults()
		tc.mod(&in)
		tmpl, err := in.Build(func(string) string { return "" })
		if err != nil {
			t.Fatalf("%s: Build: %v", tc.name, err)
		}
		_, err = tmpl.ForURL(tc.url)
		switch {
		case tc.flag == "" && err != nil:
			t.Errorf("%s: %v, want it taken", tc.name, err)
		case tc.flag != "" && (err == nil || !strings.HasPrefix(err.Error(), "--"+tc.flag+":") && !strings.HasPrefix(err.Error(), "--"+tc.flag+" ")):
			t.Errorf("%s: %v, want an error naming --%s", tc.name, err, tc.flag)
		case tc.flag != "" && !strings.Contains(err.Error(), tc.url):
			t.Errorf("%s: %v does not name the URL", tc.name, err)
		}
	}
}

// TestDataFile: -d @FILE is checked when the input is built (there, a
// regular file) and kept as a path and a size to stream from, not read;
// a POST by default, with the form Content-Type.
func TestDataFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "body.bin")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := Defaults()
	in.Data = "@" + path
	tm, err := in.Build(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	o := tm.Options()
	if o.BodyFile != path || o.BodySize != 10 || len(o.Body) != 0 || o.Method != "POST" ||
		o.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Errorf("options: file %q size %d body %q method %s type %q", o.BodyFile, o.BodySize, o.Body, o.Method, o.Header.Get("Content-Type"))
	}
	for name, want := range map[string]string{
		filepath.Join(dir, "missing"): "no such file or directory",
		dir:                           "not a regular file: it is a directory",
	} {
		in := Defaults()
		in.Data = "@" + name
		_, err := in.Build(func(string) string { return "" })
		if err == nil || !strings.HasPrefix(err.Error(), `--data "@`+name+`": `+want) {
			t.Errorf("-d @%s: %v, want %q", name, err, want)
		}
	}
}

// TestParseDialogue: --dialogue's steps, in order, an expect's send and
// starttls joined to it as blackbox's query_response entries are.
func TestParseDialogue(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string // each step: expect|send|starttls
		err  string
	}{
		{[]string{"expect:^SSH-2.0-"}, "[^SSH-2.0-||false]", ""},
		{[]string{"send:NICK p", "expect:PING :(.+)", "send:PONG ${1}"}, "[|NICK p|false] [PING :(.+)|PONG ${1}|false]", ""},
		{[]string{"expect:^220 ", "send:STARTTLS", "expect:^220 ", "starttls", "expect:^250"}, "[^220 |STARTTLS|false] [^220 ||true] [^250||false]", ""},
		{[]string{"starttls", "send:x"}, "[||true] [|x|false]", ""},
		{[]string{"hello"}, "", `"hello": want expect:RE, send:TEXT or starttls`},
		{[]string{"expect:("}, "", `"expect:(": error parsing regexp`},
		{[]string{"send:a\nb"}, "", "one line"},
		{[]string{"starttls:yes"}, "", "takes no value"},
	} {
		steps, err := ParseDialogue(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want %q", c.in, err, c.err)
			}
			continue
		}
		var got []string
		for _, s := range steps {
			re := ""
			if s.Expect != nil {
				re = s.Expect.String()
			}
			got = append(got, fmt.Sprintf("[%s|%s|%v]", re, s.Send, s.StartTLS))
		}
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%q: %v %s, want %s", c.in, err, strings.Join(got, " "), c.want)
		}
	}
}

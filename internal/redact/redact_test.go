package redact

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestRedactorServerText: error text quotes what a server sent (Go's
// "malformed MIME header line" error quotes the whole line); secrets in it
// are found by their shape, since no flag registered them.
func TestRedactorServerText(t *testing.T) {
	r := NewRedactor([]string{"X-Custom"}, []string{"session"})
	for _, in := range []string{
		`net/http: HTTP/1.x transport connection broken: malformed MIME header line: "Location: /next\x7f?access_token=SECRETTOK2"`,
		`malformed MIME header line: "Location: http://bob:SECRETPW@h.invalid/\x7f"`,
		`malformed MIME header line: "Refresh: 0; url=/x?a=1&token=SECRETTOK3&b=2"`,
		`malformed MIME header line: "Link: </a#access_token=SECRETFRAG&state=1>"`,
		`malformed MIME header line: "Set-Cookie: sid=SECRETCOOKIE\x01"`,
		`malformed MIME header line: "X-Custom: SECRETCUSTOM\x01"`,
		`not an http(s) URL: /p?SESSION=SECRETSESS`,
		`proxy http://u:SECRETPROXY@127.0.0.1:1: refused`,
	} {
		if got := r.String(in); strings.Contains(got, "SECRET") {
			t.Errorf("String(%q)\n = %q: a secret is left", in, got)
		}
	}
	// Words that only look alike are kept.
	for _, keep := range []string{
		"dial tcp 127.0.0.1:80: connect: connection refused",
		"JSON checks.#(name==\"db\").ok is false, want true",
		"unexpected status 503 (want 2xx)",
		"mailto bob@example.invalid",
	} {
		if got := r.String(keep); got != keep {
			t.Errorf("String(%q) = %q, want it unchanged", keep, got)
		}
	}
}

// TestRedactorFragment: a fragment carries the same parameters as a query
// (OAuth's implicit grant: #access_token=…), in the user's URL and in a
// server's Location.
func TestRedactorFragment(t *testing.T) {
	r := NewRedactor(nil, []string{"session"})
	u, err := url.Parse("https://h.invalid/cb?x=1#access_token=SECRETA&state=ok&session=SECRETS")
	if err != nil {
		t.Fatal(err)
	}
	r.AddURL(u)
	if got, want := r.URL(u), "https://h.invalid/cb?x=1#access_token=***&state=ok&session=***"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	if got := r.String("seen SECRETA and SECRETS"); strings.Contains(got, "SECRET") {
		t.Errorf("String after AddURL = %q", got)
	}
	if got, want := r.RawURL("http://[::1/cb#token=SECRETT&x=1"), "http://[::1/cb#token=***&x=1"; got != want {
		t.Errorf("RawURL = %q, want %q", got, want)
	}
}

// TestSharedNamesKeepSecretsApart: redactors of the default names share
// them (one pattern, one list, however many templates a watch builds), and
// each keeps its own secrets: one target's password is not another's.
func TestSharedNamesKeepSecretsApart(t *testing.T) {
	a, b := NewRedactor(nil, nil), NewRedactor(nil, nil)
	if a.names != b.names {
		t.Error("two redactors of the default names do not share them")
	}
	if c := NewRedactor([]string{"X-Token"}, nil); c.names == a.names || !c.IsSecretHeader("x-token") || a.IsSecretHeader("X-Token") {
		t.Error("a redactor with a name of its own shares the defaults' names")
	}
	a.AddSecret("hunter2-a")
	if got := b.String("pw hunter2-a"); got != "pw hunter2-a" {
		t.Errorf("b redacted a's secret: %q", got)
	}
	if got := a.String("pw hunter2-a"); strings.Contains(got, "hunter2-a") {
		t.Errorf("a did not redact its own secret: %q", got)
	}
	// The shape pattern, compiled once for both.
	if a.String("Authorization: Bearer abcdef") == "Authorization: Bearer abcdef" || b.String("Authorization: Bearer abcdef") == "Authorization: Bearer abcdef" {
		t.Error("a secret header line was not redacted by its shape")
	}
	if h := append(a.Headers(), "X-Mine"); slices.Contains(b.Headers(), "X-Mine") {
		t.Errorf("an append to one redactor's Headers wrote into the shared names: %v", h)
	}
}

// TestUserNameIsNoSecret: the user name before a password is shown, in the
// URL and in free text (masking its letters garbled every message:
// "postgres" in "PostgreSQL"); the password, a lone word before @ (a token,
// redis://PASSWORD@host) and secret parameters are masked everywhere.
func TestUserNameIsNoSecret(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
		text      string // free text redacted: must come back as it is
		secret    string // never in the URL or the text
	}{
		{"postgres://postgres:PW1234@127.0.0.1/postgres", "postgres://postgres:***@127.0.0.1/postgres", "PostgreSQL refused user postgres", "PW1234"},
		{"redis://alice:s3cr3t@h:6379/2", "redis://alice:***@h:6379/2", "alice's connection", "s3cr3t"},
		{"redis://:s3cr3t@h", "redis://***@h", "", "s3cr3t"},
		{"redis://s3cr3t@h", "redis://***@h", "", "s3cr3t"},
		{"https://ghp_token123@github.test/x", "https://***@github.test/x", "", "ghp_token123"},
		{"https://us%40er:pa%3Ass@h/", "https://us%40er:***@h/", "", "pa:ss"},
		{"postgres://app:pw9876@h/db?password=pw9876&sslmode=require", "postgres://app:***@h/db?password=***&sslmode=require", "application_name=app", "pw9876"},
		// The user name is the credential when no real password follows:
		// an API key as KEY: (curl -u KEY:), GitHub's TOKEN:x-oauth-basic.
		{"https://sk_live_ABC123:@api.test/v1", "https://***@api.test/v1", "", "sk_live_ABC123"},
		{"https://ghp_TOKEN99:x-oauth-basic@github.test/x", "https://***@github.test/x", "", "ghp_TOKEN99"},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		r := NewRedactor(nil, nil)
		r.AddURL(u)
		if got := r.URL(u); got != tc.want {
			t.Errorf("URL(%s) = %q, want %q", tc.raw, got, tc.want)
		}
		if got := r.String(r.URL(u)); got != tc.want {
			t.Errorf("String(URL(%s)) = %q, want %q (stable)", tc.raw, got, tc.want)
		}
		if got := r.String(tc.text); got != tc.text {
			t.Errorf("%s: String(%q) = %q", tc.raw, tc.text, got)
		}
		if got := r.String("dial " + tc.raw + ": refused"); strings.Contains(got, tc.secret) || !strings.Contains(got, Mask) {
			t.Errorf("%s: free text %q", tc.raw, got)
		}
		if got := r.RawURL(tc.raw); strings.Contains(got, tc.secret) {
			t.Errorf("RawURL(%s) = %q", tc.raw, got)
		}
	}
}

// TestCloneAndBlank: a clone has the secrets so far and learns its own
// apart; a blank redactor has the names and no secret.
func TestCloneAndBlank(t *testing.T) {
	r := NewRedactor([]string{"X-Own"}, nil)
	r.AddSecret("first-secret")
	c := r.Clone()
	c.AddSecret("second-secret")
	if got := r.String("second-secret"); got != "second-secret" {
		t.Errorf("the original learnt the clone's secret: %q", got)
	}
	if got := c.String("first-secret second-secret"); got != Mask+" "+Mask {
		t.Errorf("the clone: %q", got)
	}
	b := r.Blank()
	if got := b.String("first-secret"); got != "first-secret" {
		t.Errorf("blank: %q", got)
	}
	if !b.IsSecretHeader("X-Own") {
		t.Error("blank lost the names")
	}
}

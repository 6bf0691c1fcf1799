package proxyenv

import (
	"net/url"
	"testing"
)

func TestCheck(t *testing.T) {
	for p, ok := range map[string]bool{
		"127.0.0.1:3128": true, "http://p.invalid:3128": true, "socks5h://127.0.0.1:1080": true,
		"ftp://p.invalid": false, "http://": false, "http://[::1": false,
	} {
		if err := Check(p); (err == nil) != ok {
			t.Errorf("Check(%q) = %v, want ok %v", p, err, ok)
		}
	}
}

// TestFromEnv: curl's variables, ALL_PROXY as the fallback, and NO_PROXY
// (or --noproxy) by host, domain, CIDR and '*'; loopback is proxied too.
func TestFromEnv(t *testing.T) {
	env := map[string]string{"HTTP_PROXY": "127.0.0.1:3128", "ALL_PROXY": "socks5://127.0.0.1:1080", "NO_PROXY": "skip.invalid,.corp.invalid,10.0.0.0/8,svc.invalid:9999,[::1]:8443"}
	sel := FromEnv(func(k string) string { return env[k] }, "")
	for raw, want := range map[string]string{
		"http://127.0.0.1/":        "http://127.0.0.1:3128",
		"https://a.invalid/":       "socks5://127.0.0.1:1080",
		"http://skip.invalid/":     "",
		"http://x.corp.invalid/":   "",
		"http://10.1.2.3:8080/":    "",
		"http://notskip.invalid/x": "http://127.0.0.1:3128",
		// An entry with a port matches that port only.
		"http://svc.invalid:9999/":  "",
		"http://svc.invalid:28080/": "http://127.0.0.1:3128",
		"http://svc.invalid/":       "http://127.0.0.1:3128",
		"https://[::1]:8443/":       "",
		"https://[::1]/":            "socks5://127.0.0.1:1080",
	} {
		u, _ := url.Parse(raw)
		p, err := sel(u)
		got := ""
		if p != nil {
			got = p.String()
		}
		if err != nil || got != want {
			t.Errorf("%s: proxy %q (%v), want %q", raw, got, err, want)
		}
	}
	if all := FromEnv(func(k string) string { return env[k] }, "*"); all != nil {
		u, _ := url.Parse("http://127.0.0.1/")
		if p, _ := all(u); p != nil {
			t.Errorf("--noproxy '*': proxied through %s", p)
		}
	}
	// Under CGI, HTTP_PROXY is a request header (httpoxy): not read.
	cgi := map[string]string{"HTTP_PROXY": "127.0.0.1:3128", "REQUEST_METHOD": "GET"}
	if FromEnv(func(k string) string { return cgi[k] }, "") != nil {
		t.Error("REQUEST_METHOD set: HTTP_PROXY was read (httpoxy)")
	}
	if FromEnv(func(string) string { return "" }, "") != nil {
		t.Error("no variables: want no proxy function")
	}
}

// TestFixed: one proxy for every URL but those the list names (hosts,
// domains, CIDRs, host:port), as NO_PROXY reads.
func TestFixed(t *testing.T) {
	p, _ := Parse("http://proxy.invalid:3128")
	sel := Fixed(p, "direct.invalid,10.0.0.0/8,svc.invalid:9999")
	for _, c := range []struct {
		url     string
		proxied bool
	}{
		{"http://app.invalid/", true}, {"https://app.invalid/", true}, {"http://direct.invalid/", false},
		{"http://a.direct.invalid/", false}, {"http://10.1.2.3/", false}, {"http://svc.invalid:9999/", false},
		{"http://svc.invalid:80/", true},
	} {
		u, _ := url.Parse(c.url)
		got, err := sel(u)
		if err != nil || (got != nil) != c.proxied || got != nil && got.String() != "http://proxy.invalid:3128" {
			t.Errorf("%s: %v %v, want proxied %v", c.url, got, err, c.proxied)
		}
	}
}

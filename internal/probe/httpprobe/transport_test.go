package httpprobe

import (
	"crypto/tls"
	"errors"
	"net/url"
	"testing"

	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
)

// TestPlainOnly: the transport skips TLS and HTTP/2 set-up only when the
// probe cannot leave plain HTTP: an http:// URL, --follow 0, and no proxy
// reached over TLS.
func TestPlainOnly(t *testing.T) {
	proxy := func(raw string, err error) func(*url.URL) (*url.URL, error) {
		return func(*url.URL) (*url.URL, error) {
			if raw == "" {
				return nil, err
			}
			return url.Parse(raw)
		}
	}
	cases := []struct {
		name   string
		url    string
		follow int
		proxy  func(*url.URL) (*url.URL, error)
		want   bool
	}{
		{"plain", "http://127.0.0.1/", 0, nil, true},
		{"https", "https://127.0.0.1/", 0, nil, false},
		{"plain, follow", "http://127.0.0.1/", 1, nil, false},
		{"plain, no proxy for it", "http://127.0.0.1/", 0, proxy("", nil), true},
		{"plain via http proxy", "http://127.0.0.1/", 0, proxy("http://127.0.0.1:3128", nil), true},
		{"plain via socks proxy", "http://127.0.0.1/", 0, proxy("socks5://127.0.0.1:1080", nil), true},
		{"plain via https proxy", "http://127.0.0.1/", 0, proxy("https://127.0.0.1:3129", nil), false},
		{"proxy error", "http://127.0.0.1/", 0, proxy("", errors.New("bad")), false},
	}
	for _, tc := range cases {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		p := newRun(&scheme.Options{URL: u, Follow: tc.follow, Proxy: tc.proxy, TLSConfig: &tls.Config{}, Redactor: redact.NewRedactor(nil, nil)}, hooks{})
		if got := plainOnly(p.Probe); got != tc.want {
			t.Errorf("%s: plainOnly = %v, want %v", tc.name, got, tc.want)
		}
		tr := transport(p.Probe)
		if tls := tr.TLSClientConfig != nil && tr.ForceAttemptHTTP2; tls == tc.want {
			t.Errorf("%s: TLS config set %v, HTTP/2 forced %v", tc.name, tr.TLSClientConfig != nil, tr.ForceAttemptHTTP2)
		}
	}
}

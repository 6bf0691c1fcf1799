package classify

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestSentence: the error sentence is made from the observation and the
// facts the probe recorded, never from the exchange.
func TestSentence(t *testing.T) {
	win := Facts{WindowFlag: "--read-timeout", WindowLimit: 2 * time.Second, Address: "127.0.0.1:80", Host: "app.invalid"}
	cut := errors.New("context canceled")
	for _, c := range []struct {
		o    Observation
		r    Reason
		f    Facts
		want string
	}{
		{Observation{Err: cut, WindowClosed: true, Stage: StageHeaders}, HeadersTimeout, win, "no response headers within --read-timeout 2s"},
		{Observation{Err: cut, WindowClosed: true, Stage: StageWrite}, RequestBodyTimeout, Facts{WindowFlag: "--read-timeout", WindowLimit: 2 * time.Second, BodySent: 4227072, BodySize: 52428800},
			"request body not sent: wrote 4227072 of 52428800 bytes, and no response headers within --read-timeout 2s (the server stopped reading the request)"},
		{Observation{Err: cut, WindowClosed: true, Stage: StageDNS}, DNSTimeout, win, "DNS lookup of app.invalid did not finish within --read-timeout 2s"},
		{Observation{Err: cut, WindowClosed: true, Stage: StageConnect, Proxied: true}, ConnectTimeout, win, "TCP connect to the proxy to 127.0.0.1:80 did not finish within --read-timeout 2s"},
		{Observation{Err: cut, WindowClosed: true, Stage: StageProxy}, ProxyError, Facts{WindowFlag: "--connect-timeout", WindowLimit: time.Second, Address: "127.0.0.1:3128", ProxySOCKS: true}, "SOCKS5 proxy did not open the connection within --connect-timeout 1s (proxy 127.0.0.1:3128)"},
		{Observation{Err: &url.Error{Op: "Get", URL: "http://u:pw@h/", Err: errors.New("readLoopPeekFailLocked: EOF")}}, ProtocolError, Facts{}, "EOF"},
		{Observation{Err: errors.New("EOF")}, ProtocolError, Facts{PlainHTTP: true},
			"EOF: the server closed the connection without answering (an empty reply; a TLS port does this to plain HTTP: is the URL https://?)"},
		{Observation{Err: errors.New(`net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x15\x03\x01\x00\x02\x02F"`)}, ProtocolError, Facts{PlainHTTP: true},
			`net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x15\x03\x01\x00\x02\x02F": the server answered TLS (a TLS record) to plain HTTP: is the URL https://?`},
		{Observation{StatusCode: 503}, HTTPStatus, Facts{Want: "2xx"}, "unexpected status 503 (want 2xx)"},
		{Observation{StatusCode: 302, HasLocation: true}, Redirect, Facts{Want: "2xx", Location: "https://b.invalid/", OtherHost: true}, "status 302 redirects to https://b.invalid/ (another host; want 2xx, or --follow)"},
		{Observation{StatusCode: 302, HasLocation: true}, Redirect, Facts{Location: "/x", Limited: true, Hops: 2, Follow: 2, CredentialsDropped: true}, "stopped after 2 redirects (--follow=2): status 302 redirects to /x (credentials were not sent to the redirect's origin)"},
		{Observation{StatusCode: 407, Proxied: true}, ProxyError, Facts{Proxy: "http://***@p.invalid:3128", Status: "407 Proxy Authentication Required"}, "proxy http://***@p.invalid:3128 answered 407 Proxy Authentication Required"},
		{Observation{StatusCode: 200, StatusExpected: true, ConditionFailed: true}, ConditionFailed, Facts{Condition: "body has token=SECRET", Redact: func(s string) string { return strings.ReplaceAll(s, "SECRET", "***") }}, "body has token=***"},
		{Observation{StatusCode: 200, StatusExpected: true}, OK, Facts{CredentialsDropped: true}, ""},
	} {
		if got := Sentence(c.o, c.r, c.f); got != c.want {
			t.Errorf("%s: got %q, want %q", c.r, got, c.want)
		}
	}
}

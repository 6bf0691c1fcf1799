package classify

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// h2Answer says whether text, the error of a probe that spoke HTTP/1.1, quotes an
// answer that begins as an HTTP/2 server's does: a SETTINGS frame (type 4,
// a length that is a multiple of 6) on stream 0. A server that speaks only
// HTTP/2 answers an HTTP/1.1 request so, then closes (nghttpd without
// TLS); net/http quotes the bytes it could not read as a status line.
func h2Answer(text string) bool {
	const mark = "malformed HTTP response "
	i := strings.Index(text, mark)
	if i < 0 {
		return false
	}
	quoted, err := strconv.QuotedPrefix(text[i+len(mark):])
	if err != nil {
		return false
	}
	b, err := strconv.Unquote(quoted)
	if err != nil || len(b) < 9 {
		return false
	}
	n := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
	return b[3] == 0x04 && n%6 == 0 && n <= 1<<14 && b[5]&0x7f == 0 && b[6]|b[7]|b[8] == 0
}

// malformedAnswer is the bytes net/http's reader quoted as a malformed
// answer, nil when text quotes none.
func malformedAnswer(text string) []byte {
	const mark = "malformed HTTP response "
	i := strings.Index(text, mark)
	if i < 0 {
		return nil
	}
	quoted, err := strconv.QuotedPrefix(text[i+len(mark):])
	if err != nil {
		return nil
	}
	b, err := strconv.Unquote(quoted)
	if err != nil {
		return nil
	}
	return []byte(b)
}

// tlsAnswer says the bytes begin a TLS record (an alert or a handshake
// record of SSL 3.0 to TLS 1.3): a TLS server's answer to plain HTTP.
func tlsAnswer(b []byte) bool {
	return len(b) >= 3 && (b[0] == 0x15 || b[0] == 0x16) && b[1] == 0x03 && b[2] <= 0x04
}

// plainToTLS is what a plain-HTTP probe adds when the answer was a TLS
// record, or nothing at all (what a TLS server such as openssl s_server
// or nginx's ssl port without "error_page 497" may do with a request that
// is not TLS).
func plainToTLS(text string) string {
	if tlsAnswer(malformedAnswer(text)) {
		return ": the server answered TLS (a TLS record) to plain HTTP: is the URL https://?"
	}
	if text == "EOF" || strings.HasSuffix(text, ": EOF") {
		return ": the server closed the connection without answering (an empty reply; a TLS port does this to plain HTTP: is the URL https://?)"
	}
	return ""
}

// Facts are what the error sentence needs beyond the Observation. The probe
// records them; the sentence is made from them here, in one place, so the
// exchange never writes prose.
type Facts struct {
	// WindowFlag and WindowLimit name the window that closed
	// ("--read-timeout", 2s) when Observation.WindowClosed is set.
	WindowFlag  string
	WindowLimit time.Duration
	// Address is the address being dialled or talked to when the window
	// closed ("" when none was yet).
	Address string
	// Host is the host name of the hop being requested.
	Host string
	// Proxy is the proxy the request went through (already redacted), ""
	// when direct; ProxySOCKS says it is a SOCKS5 proxy.
	Proxy      string
	ProxySOCKS bool
	// FirstByte: the answer's first byte had come (a window that closed
	// in the headers closed on headers begun, not on silence).
	FirstByte bool
	// PlainHTTP: the probe spoke HTTP without TLS (an answer that is TLS,
	// or none, may mean the URL wants TLS).
	PlainHTTP bool
	// ThroughProxy: the read window closed while a forward proxy (plain
	// HTTP through an HTTP proxy) had not answered.
	ThroughProxy bool
	// BodySent and BodySize are, for a window that closed in StageWrite,
	// how many bytes of the request body went out and how many it has.
	BodySent, BodySize int64
	// Status is the final answer's status line ("503 Service
	// Unavailable"); Want is the expected status set as the user wrote it.
	Status string
	Want   string
	// The redirect not followed: its Location (resolved and redacted),
	// whether it goes to another host, whether it is not an http(s) URL,
	// and whether --follow=Follow stopped at its limit after Hops hops.
	Location    string
	OtherHost   bool
	BadLocation bool
	Limited     bool
	// Loop: the redirect goes to a URL already requested (--follow would
	// go round for ever).
	Loop   bool
	Hops   int
	Follow int
	// Condition describes the first --expect condition that failed.
	Condition string
	// ProxyStatus is the status line a proxy answered the CONNECT with
	// (when not 200); ProxyDetail is the mark of an error answer the
	// proxy generated itself (X-Squid-Error, Proxy-Status), redacted.
	ProxyStatus string
	ProxyDetail string
	// PostHandshakeAuth: a 403 over TLS 1.3 with a client certificate
	// configured that the server never asked for during the handshake —
	// the mark of a post-handshake authentication Go cannot answer.
	PostHandshakeAuth bool
	// CredentialsDropped: a hop changed origin and the credentials stayed
	// behind.
	CredentialsDropped bool
	// Redact scrubs secrets from text that may quote them; nil keeps the
	// text as it is.
	Redact func(string) string
}

// Sentence is the user-facing error of a probe classified as r: "" for a
// pass. Go's error text is kept (without the *url.Error wrapper, which
// repeats the URL, and without Go's internal function names); a closed
// window says which window closed during which phase.
func Sentence(o Observation, r Reason, f Facts) string {
	red := f.Redact
	if red == nil {
		red = func(s string) string { return s }
	}
	var msg string
	switch {
	case o.Answer != nil && !o.WindowClosed && o.Kind.Owns(r) && o.Answer.Text(r, o.Err) != "":
		msg = red(o.Answer.Text(r, o.Err))
	case o.Err != nil && o.WindowClosed && (r == ResolverError || r == ResolverRefused):
		// The replies that came were no answer: say what they were.
		msg = red(dropGoNames(windowText(o, f)) + ": " + o.DNS.Describe())
	case o.Err != nil && o.WindowClosed:
		msg = red(dropGoNames(windowText(o, f)))
	case o.Err != nil && f.ProxySOCKS && SOCKSReply(o.Err) != "":
		msg = red(socksText(SOCKSReply(o.Err), r, f))
	case o.Err != nil && f.ProxyStatus != "" && isProxyReason(r):
		msg = red(fmt.Sprintf("proxy %s answered the CONNECT with %s%s", f.Proxy, f.ProxyStatus, detail(f.ProxyDetail)))
	case o.Err != nil && r == ProxyTLS:
		msg = red("proxy " + f.Proxy + ": its own TLS handshake failed (verified against the proxy's name with --proxy-cacert, or the system's roots; -k and --cacert are the target's): " + ErrorText(o.Err))
	case o.Err != nil && isProxyReason(r):
		msg = red("proxy " + f.Proxy + ": " + ErrorText(o.Err))
	case o.Err != nil && r == TLSInsecureAlgorithm:
		msg = insecureAlgorithmText(o.Err)
	case o.Err != nil && r == ProtocolError && f.PlainHTTP && !o.Proxied && plainToTLS(ErrorText(o.Err)) != "":
		msg = red(ErrorText(o.Err)) + plainToTLS(ErrorText(o.Err))
	case o.Err != nil && r == TLSRemoteAlert && strings.HasSuffix(ErrorText(o.Err), "handshake failure"):
		msg = red(ErrorText(o.Err)) + ": the server accepted nothing healthctl offered, most often no cipher suite in common " +
			"(healthctl offers Go's default suites of TLS 1.2 and 1.3; openssl s_client -connect shows what the server takes)"
	case o.Err != nil && r == ProtocolError && h2Answer(ErrorText(o.Err)):
		msg = red(ErrorText(o.Err)) + ": that is an HTTP/2 SETTINGS frame, what a server that speaks only HTTP/2 " +
			"sends to an HTTP/1.1 request; for an http:// URL (cleartext HTTP/2, h2c) probe it with --http2-prior-knowledge"
	case o.Err != nil:
		msg = red(ErrorText(o.Err))
	case r == ProxyError && f.ProxyDetail != "":
		msg = red(fmt.Sprintf("proxy %s answered %s itself%s: the server behind it may be down", f.Proxy, f.Status, detail(f.ProxyDetail)))
	case isProxyReason(r):
		msg = red(fmt.Sprintf("proxy %s answered %s%s", f.Proxy, f.Status, detail(f.ProxyDetail)))
	case r == HTTPStatus && f.PostHandshakeAuth:
		msg = fmt.Sprintf("unexpected status %d (want %s) over TLS 1.3 with a client certificate the server never asked for at the handshake: "+
			"it may have asked after it (post-handshake authentication, which Go cannot answer); require the certificate at the handshake, or allow TLS 1.2 (renegotiation)", o.StatusCode, f.Want)
	case r == Redirect:
		msg = redirectText(o.StatusCode, f)
	case r == HTTPStatus:
		msg = fmt.Sprintf("unexpected status %d (want %s)", o.StatusCode, f.Want)
	case r == ConditionFailed:
		msg = red(f.Condition)
	}
	if msg != "" && f.CredentialsDropped && r != OK {
		msg += " (credentials were not sent to the redirect's origin)"
	}
	return msg
}

// socksText is the error of a SOCKS5 CONNECT the proxy answered with a
// failure: the target's fate when the reply reports one, else the proxy's.
func socksText(reply string, r Reason, f Facts) string {
	if isProxyReason(r) {
		return fmt.Sprintf("SOCKS5 proxy %s refused the CONNECT to %s: %s", f.Proxy, f.Host, reply)
	}
	return fmt.Sprintf("%s: %s (SOCKS5 proxy %s reports it)", f.Host, reply, f.Proxy)
}

// isProxyReason says r blames the proxy.
func isProxyReason(r Reason) bool {
	switch r {
	case ProxyError, ProxyUnreachable, ProxyAuthRequired, ProxyRefused, ProxyTimeout:
		return true
	}
	return false
}

// detail is " (d)", or "" for no d. A squid error that carries the errno
// of its connect says what became of the server behind it.
func detail(d string) string {
	if d == "" {
		return ""
	}
	if _, errno, ok := strings.Cut(d, "ERR_CONNECT_FAIL "); ok {
		if what := squidConnect(errno); what != "" {
			return " (" + d + ": " + what + ")"
		}
	}
	return " (" + d + ")"
}

// squidConnect names an errno squid's ERR_CONNECT_FAIL carries (Linux's
// numbers, squid's own platform as a proxy), "" for another.
func squidConnect(errno string) string {
	switch errno {
	case "111":
		return "the server refused the connection"
	case "113":
		return "no route to the server"
	case "101":
		return "the server's network is unreachable"
	case "110":
		return "the connect to the server timed out"
	}
	return ""
}

// windowText says which window closed during which phase, e.g.
// "no response headers within --read-timeout 2s". It never is empty.
func windowText(o Observation, f Facts) string {
	w := fmt.Sprintf("%s %s", f.WindowFlag, f.WindowLimit)
	to := ""
	if f.Address != "" {
		to = " to " + f.Address
	}
	var what string
	switch o.Stage {
	case StageDNS:
		what = "DNS lookup of " + f.Host + " did not finish"
	case StageConnect:
		what = "TCP connect" + to + " did not finish"
		if o.Proxied {
			what = "TCP connect to the proxy" + to + " did not finish"
		}
	case StageProxy:
		at := ""
		if f.Address != "" {
			at = " (proxy " + f.Address + ")"
		}
		if f.ProxySOCKS {
			return fmt.Sprintf("SOCKS5 proxy did not open the connection within %s%s", w, at)
		}
		return fmt.Sprintf("proxy CONNECT did not answer within %s%s", w, at)
	case StageTLS:
		what = "TLS handshake" + to + " did not finish"
	case StageWrite:
		return fmt.Sprintf("request body not sent: wrote %d of %d bytes, and no response headers within %s (the server stopped reading the request)",
			f.BodySent, f.BodySize, w)
	case StageHeaders:
		what = "no response headers"
		if o.Kind != nil && o.Kind.Silence != "" {
			what = o.Kind.Silence
		} else if f.FirstByte {
			what = "response headers begun but not complete"
		}
		if f.ThroughProxy {
			at := ""
			if f.Address != "" {
				at = " " + f.Address
			}
			return fmt.Sprintf("no response headers within %s through the proxy%s (the proxy or the server behind it hangs)", w, at)
		}
	default:
		what = "response body not complete"
	}
	return fmt.Sprintf("%s within %s", what, w)
}

// redirectText is the error of a redirect that was not followed.
func redirectText(status int, f Facts) string {
	switch {
	case f.BadLocation:
		return fmt.Sprintf("status %d redirects to a Location that is not an http(s) URL: %s", status, f.Location)
	case f.Loop:
		n := "redirects"
		if f.Hops == 1 {
			n = "redirect"
		}
		return fmt.Sprintf("redirect loop: status %d redirects to %s, already requested (after %d %s)", status, f.Location, f.Hops, n)
	case f.Limited:
		return fmt.Sprintf("stopped after %d redirects (--follow=%d): status %d redirects to %s", f.Hops, f.Follow, status, f.Location)
	}
	where := "the same host"
	if f.OtherHost {
		where = "another host"
	}
	return fmt.Sprintf("status %d redirects to %s (%s; want %s, or --follow)", status, f.Location, where, f.Want)
}

// ErrorText strips the *url.Error wrapper (it repeats the URL, which may
// carry secrets) and Go's internal function names ("readLoopPeekFailLocked:
// "), and keeps the rest of Go's text.
func ErrorText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return dropGoNames(err.Error())
}

// goName matches a word used as an error prefix, at the start or after
// another prefix; dropGoNames drops those that are Go identifiers in
// camelCase (readLoopPeekFailLocked, persistConn.writeLoop).
// Compiled on first use: package initialisation is paid by every start.
var goName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|: )([a-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)*): `)
})

func dropGoNames(s string) string {
	return goName().ReplaceAllStringFunc(s, func(m string) string {
		sub := goName().FindStringSubmatch(m)
		if strings.ToLower(sub[2]) == sub[2] {
			return m // "dial", "read", "connect": plain words stay
		}
		return sub[1]
	})
}

// insecureAlgorithmText says which signature was too weak, instead of Go's
// "signed by unknown authority (possibly because of …)".
func insecureAlgorithmText(err error) string {
	var ua x509.UnknownAuthorityError
	if errors.As(err, &ua) && ua.Cert != nil {
		return fmt.Sprintf("certificate %q is signed with %s, an insecure algorithm: its issuer %q is trusted, the signature is too weak",
			ua.Cert.Subject.String(), ua.Cert.SignatureAlgorithm, ua.Cert.Issuer.String())
	}
	return "certificate signed with an insecure algorithm (SHA-1 or MD5): " + ErrorText(err)
}

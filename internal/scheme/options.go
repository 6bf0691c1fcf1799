package scheme

import (
	"crypto/tls"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"golang.org/x/net/icmp"

	"github.com/healthctl/healthctl/internal/expect"
	"github.com/healthctl/healthctl/internal/redact"
)

// Defaults of the windows: two seconds to open, two to read, as the
// reconciler this tool was built for probes.
const (
	DefaultConnectTimeout = 2 * time.Second
	DefaultReadTimeout    = 2 * time.Second
	DefaultMaxBody        = 64 << 10
)

// Options is everything one probe needs. It is built and validated from
// what the user typed by internal/target (Input.Build, Template.ForURL);
// the probe itself never parses flags.
type Options struct {
	URL    *url.URL
	Method string
	// Body is the request body in memory (-d TEXT, -d @-); nil: none,
	// unless BodyFile is set.
	Body []byte
	// BodyFile is the file -d @FILE names, checked when the options were
	// built (a regular file of BodySize bytes) and opened for each request
	// to stream its body (reqbody.go); it wins over Body.
	BodyFile string
	BodySize int64
	Header   http.Header
	// Host overrides the request host (from -H 'Host: x').
	Host      string
	UserAgent string
	// User and Password come from -u; the URL's own userinfo is used otherwise.
	User, Password string
	HasUser        bool

	// Network is "tcp", "tcp4" or "tcp6" (-4 / -6).
	Network string
	// Prefer (4 or 6; 0: none) keeps only the addresses of that family
	// when the name has any, else the others: blackbox_exporter's
	// preferred_ip_protocol with ip_protocol_fallback.
	Prefer int
	// Resolve maps "host:port" to its addresses, as curl's --resolve.
	Resolve map[string][]string
	// DNSServer, when set, is the only resolver used ("addr:port").
	DNSServer string
	// AllAddresses probes every address of the URL's host, one probe each
	// (Result.Addresses), instead of the first that connects.
	AllAddresses bool

	TLSConfig *tls.Config
	// ProxyTLSConfig verifies an https:// proxy's own certificate, against
	// the proxy's name: its RootCAs (nil: the system's) and
	// InsecureSkipVerify (--proxy-insecure), apart from the target's.
	ProxyTLSConfig *tls.Config
	// InsecureWhy names where TLSConfig.InsecureSkipVerify came from
	// (--insecure, HEALTHCTL_INSECURE, a config key), shown with the
	// unverified chain ("--insecure" when empty).
	InsecureWhy string

	// Follow is how many redirects to follow (0: report, do not follow).
	Follow int
	// HopAllowed, when set, is asked before each redirect is followed:
	// a next hop it refuses is reported as the redirect it is, not
	// followed (the listener's --probe-allow).
	HopAllowed func(*url.URL) bool
	// Proxy selects the proxy for a request URL; nil means no proxy.
	Proxy func(*url.URL) (*url.URL, error)

	ConnectTimeout time.Duration
	ReadTimeout    time.Duration
	MaxTime        time.Duration
	MaxBody        int64

	Expect expect.Expectations

	// ICMPSocket opens an icmp:// probe's socket, as
	// golang.org/x/net/icmp.ListenPacket (nil: that): network "udp4" or
	// "udp6" is a ping socket, "ip4:icmp" or "ip6:ipv6-icmp" a raw one.
	// A test gives one that is refused.
	ICMPSocket func(network, address string) (*icmp.PacketConn, error)
	// Dialogue is what a tcp:// or tls:// probe says and expects once
	// connected (blackbox's query_response); none: connecting is all.
	Dialogue []Step

	// GRPCService is the service a grpc:// or grpcs:// probe asks about
	// (--grpc-service); "" takes the URL's path, and an empty path is the
	// server's overall health.
	GRPCService string
	// HTTP2PriorKnowledge speaks HTTP/2 over cleartext to an http:// URL
	// (h2c with prior knowledge, curl's --http2-prior-knowledge).
	HTTP2PriorKnowledge bool

	Redactor *redact.Redactor
	// Display, when set for URL, is its redacted text as the options'
	// builder rendered it: the probe's result takes it instead of
	// redacting URL again (a sweep makes one probe a target, and its
	// builder has rendered every target's URL already).
	Display Display
}

// Display is a URL's text as Redactor.URL rendered it, with what it holds
// for: the URL and the redactor (the pointers: options copied for another
// URL or redactor do not take it) and the redactor's generation (a secret
// added since may change it).
type Display struct {
	For  *url.URL
	By   *redact.Redactor
	Text string
	Gen  uint64
}

// DisplayOf renders u with r, for Options.Display (the generation is read
// first: a secret added while it renders makes it stale, never wrong).
func DisplayOf(r *redact.Redactor, u *url.URL) Display {
	g := r.Generation()
	return Display{For: u, By: r, Text: r.URL(u), Gen: g}
}

// DisplayURL is the redacted text of o.URL: Display's while it holds.
func (o *Options) DisplayURL() string {
	if d := &o.Display; d.For != nil && d.For == o.URL && d.By == o.Redactor && d.Gen == o.Redactor.Generation() {
		return d.Text
	}
	return o.Redactor.URL(o.URL)
}

// Step is one step of a tcp:// or tls:// dialogue (blackbox_exporter's
// query_response): read lines until one matches Expect (when set), then
// send Send and a newline (when set; ${1} and ${name} are Expect's
// groups), then upgrade the connection to TLS (StartTLS: SMTP, IMAP,
// POP3 after their STARTTLS command).
type Step struct {
	Expect   *regexp.Regexp
	Send     string
	StartTLS bool
}

// HasBody reports whether o sends a request body (possibly empty).
func (o *Options) HasBody() bool { return o.Body != nil || o.BodyFile != "" }

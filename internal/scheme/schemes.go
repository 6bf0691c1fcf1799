package scheme

import (
	"net/url"
	"strings"

	"github.com/healthctl/healthctl/internal/amqpwire"
	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/dnswire"
	"github.com/healthctl/healthctl/internal/follow"
	"github.com/healthctl/healthctl/internal/grpchealth"
	"github.com/healthctl/healthctl/internal/icmpwire"
	"github.com/healthctl/healthctl/internal/mysqlwire"
	"github.com/healthctl/healthctl/internal/pgwire"
	"github.com/healthctl/healthctl/internal/rediswire"
)

// Applies is a set of option groups a protocol uses. Any option outside
// its set is refused (exit 2, naming its source and the URL): a condition on
// an answer that never comes would pass unchecked, a request option would be
// silently dropped.
type Applies uint8

// The option groups.
const (
	// AppliesRequest: -X, -d, -u, --follow, --http2-prior-knowledge.
	AppliesRequest Applies = 1 << iota
	// AppliesAnswer: --expect-status, --expect-body, --expect-body-regex,
	// --expect-json, --expect-header, --max-body.
	AppliesAnswer
	// AppliesHeader: -H (gRPC sends it as request metadata).
	AppliesHeader
	// AppliesGRPCService: --grpc-service.
	AppliesGRPCService
	// AppliesProxy: the proxy variables are read (a CONNECT tunnel, a
	// forward proxy, SOCKS5).
	AppliesProxy
	// AppliesDialogue: --dialogue (lines expected and sent once
	// connected, STARTTLS: blackbox's query_response).
	AppliesDialogue
)

// Scheme is one row of the scheme table: a protocol healthctl speaks, and
// everything the rest of the program needs to know about it. Nothing
// outside this table and the protocol's exchange file names a scheme
// (TestSchemeNamesStayInTheTable holds it).
type Scheme struct {
	// Name is the URL scheme; Aliases are other names for the same row.
	Name    string
	Aliases []string
	// Secure names the row of the same protocol over TLS ("https" for
	// "http"); "" for a TLS row or a protocol without one.
	Secure string
	// TLS: the exchange speaks TLS (the chain is captured and verified;
	// --cacert, --cert/--key, --servername apply).
	TLS bool
	// DefaultPort is the port of a URL that names none; "" when the URL
	// must name one.
	DefaultPort string
	// Form is the URL's shape, for the errors that refuse another
	// (e.g. "grpc://HOST:PORT[/SERVICE]"); "" for HTTP's, which is any.
	Form string
	// Path: what a path means — PathAny (HTTP's request target),
	// PathService (a gRPC service name) or PathNone (refused).
	Path PathRule
	// Options are the option groups that apply.
	Options Applies
	// Words are what the errors and docs say of it.
	Words Words
	// Drain says what drain-test's URL flags mean for it.
	Drain Drain
	// Manifest names the Kubernetes probe kinds that map to it.
	Manifest []string
	// Prober is blackbox_exporter's name for the row's prober in a
	// module file (prober: and its section's key), "" for a row no
	// prober names: /probe reads the row through it (ProberRow).
	Prober string
	// MultiHost: the URL may name several hosts, tried in order
	// (libpq's h1:p1,h2:p2).
	MultiHost bool
	// socket, when set, is the Unix socket a URL of the row names ("" when
	// it names a host): postgres' host=/DIR, redis' unix:///PATH (its wire
	// package's Socket).
	socket func(*url.URL) string
	// check, when set, holds a URL to the protocol's own form (its wire
	// package's CheckURL, behind the rules the database rows share:
	// databaseURL), instead of Form's generic ones.
	check func(*url.URL) error
	// Kind is the row's kind (its reasons and its answer's judge), nil
	// for HTTP's rows; its exchange gives an Answer of it.
	Kind *classify.Kind
}

// Words are what the errors and docs say of a protocol.
type Words struct {
	// Does says what the exchange does, in the words of the error that
	// refuses an option it does not use ("only connects"); "" for HTTP.
	Does string
	// Pass says what a pass is (docs, completion).
	Pass string
	// Missing names what never came when a wait runs out ("no 2xx").
	Missing string
}

// Drain says what drain-test's --ready and --live mean for a protocol (""
// = not accepted), and what --inflight and --traffic mean ("" = not
// accepted).
type Drain struct {
	Ready, Inflight string
	// Call is the form of an --inflight URL that is one of the protocol's
	// unary calls ("" when --inflight takes none): drain-test keeps calls
	// in flight as it keeps requests.
	Call string
}

// PathRule is what a URL's path means for a protocol.
type PathRule uint8

// The path rules.
const (
	PathAny PathRule = iota
	PathService
	PathNone
)

// schemes is the table: one row per protocol, in the order the docs and
// errors list them. Its exchanges (internal/probe's exchanges map gives
// each row's kind its own): http.go (and http1.go, its plain
// HTTP/1.1 case), grpc.go, tcp.go, redis.go, postgres.go, dnsprobe.go, amqp.go,
// mysql.go, icmp.go.
var schemes = table()

func table() []Scheme {
	return []Scheme{
		{Name: "http", Secure: "https", DefaultPort: "80", Path: PathAny,
			Options:  AppliesRequest | AppliesAnswer | AppliesHeader | AppliesProxy,
			Words:    Words{Pass: "a status in --expect-status (default 2xx) and every --expect condition held", Missing: "no 2xx"},
			Drain:    Drain{Ready: "a 2xx is ready; anything else (a 503) is the flip", Inflight: "a request that must complete while the service drains"},
			Manifest: []string{"httpGet"}, Prober: "http"},
		{Name: "https", TLS: true, DefaultPort: "443", Path: PathAny,
			Options:  AppliesRequest | AppliesAnswer | AppliesHeader | AppliesProxy,
			Words:    Words{Pass: "as http://, over a verified TLS chain", Missing: "no 2xx"},
			Drain:    Drain{Ready: "a 2xx is ready; anything else (a 503) is the flip", Inflight: "a request that must complete while the service drains"},
			Manifest: []string{"httpGet"}},
		{Name: "grpc", Secure: "grpcs", Form: "grpc://HOST:PORT[/SERVICE]", Path: PathService,
			Options:  AppliesHeader | AppliesGRPCService,
			Words:    Words{Does: "is a gRPC health call (its answer is a serving status, not an HTTP response)", Pass: "grpc.health.v1.Health/Check answers SERVING", Missing: "no SERVING answer"},
			Drain:    Drain{Ready: "SERVING is ready; NOT_SERVING (health Shutdown) is the flip", Call: "grpc://HOST:PORT/pkg.Service/Method"},
			Manifest: []string{"grpc"}, Kind: grpchealth.Kind, Prober: "grpc"},
		{Name: "grpcs", TLS: true, Form: "grpcs://HOST:PORT[/SERVICE]", Path: PathService,
			Options:  AppliesHeader | AppliesGRPCService | AppliesProxy,
			Words:    Words{Does: "is a gRPC health call (its answer is a serving status, not an HTTP response)", Pass: "as grpc://, over a verified TLS chain", Missing: "no SERVING answer"},
			Drain:    Drain{Ready: "SERVING is ready; NOT_SERVING (health Shutdown) is the flip"},
			Manifest: []string{"grpc"}, Kind: grpchealth.Kind},
		{Name: "tcp", Secure: "tls", Form: "tcp://HOST:PORT", Path: PathNone, Options: AppliesDialogue,
			Words:    Words{Does: "only connects", Pass: "the connection is established", Missing: "no connection"},
			Drain:    Drain{Ready: "a connection is ready; a refused one is the flip"},
			Manifest: []string{"tcpSocket"}, Kind: StreamKind, Prober: "tcp"},
		{Name: "tls", TLS: true, Form: "tls://HOST:PORT", Path: PathNone, Options: AppliesDialogue,
			Words: Words{Does: "only connects and completes a TLS handshake", Pass: "the handshake completes and the chain verifies", Missing: "no TLS handshake"},
			Drain: Drain{Ready: "a verified handshake is ready; anything else is the flip"},
			Kind:  StreamKind},
		// unix:// and redis+socket://: Redis over its Unix socket, as
		// go-redis, redis-py and redis-rb (unix://) and Celery
		// (redis+socket://) write it.
		{Name: "redis", Aliases: []string{"unix", "redis+socket"}, Secure: "rediss", DefaultPort: "6379", Path: PathAny,
			Words: Words{Does: "is a Redis PING (its answer is a reply, not an HTTP response)", Pass: "PING answers +PONG (after an AUTH that succeeded when the URL has credentials), on a server that is no Sentinel and no failed cluster", Missing: "no PONG"},
			Drain: Drain{Ready: "+PONG is ready; anything else (a refused connection, LOADING) is the flip"},
			Kind:  rediswire.Kind, socket: rediswire.Socket, check: databaseURL(rediswire.URLForm, rediswire.CheckURL)},
		{Name: "rediss", TLS: true, DefaultPort: "6379", Path: PathAny,
			Words: Words{Does: "is a Redis PING (its answer is a reply, not an HTTP response)", Pass: "as redis://, over a verified TLS chain", Missing: "no PONG"},
			Drain: Drain{Ready: "+PONG is ready; anything else (a refused connection, LOADING) is the flip"},
			Kind:  rediswire.Kind, check: databaseURL(rediswire.URLForm, rediswire.CheckURL)},
		// TLS with ?sslmode=require (the shared TLS capture after the
		// SSLRequest).
		{Name: "postgres", Aliases: []string{"postgresql"}, TLS: true, DefaultPort: pgwire.DefaultPort, Path: PathAny,
			Words:     Words{Does: "is a PostgreSQL startup message (its answer is whether it accepts connections, not an HTTP response)", Pass: "with a password in the URL, logged in with it and an empty query answered (as psql); without one, an authentication request: the server accepts connections, as pg_isready says (not logged in)", Missing: "no connection accepted"},
			Drain:     Drain{Ready: "accepting connections is ready; a refused connection or 57P03 is the flip"},
			MultiHost: true, Kind: pgwire.Kind, socket: pgwire.Socket, check: databaseURL(pgwire.URLForm, pgwire.CheckURL)},
		// The server is the target; the query is the URL's path and
		// parameters (blackbox's dns prober).
		{Name: "dns", DefaultPort: "53", Form: dnswire.Form, Path: PathAny,
			Words: Words{Does: "is a DNS query (its answer is an rcode and records, not an HTTP response)", Pass: "the server answers an rcode the URL allows (rcode=, default NOERROR) and every record validator holds", Missing: "no valid DNS answer"},
			Kind:  dnswire.Kind, check: dnswire.CheckURL, Prober: "dns"},
		{Name: "amqp", Secure: "amqps", DefaultPort: "5672", Path: PathAny,
			Words: Words{Does: "is an AMQP 0-9-1 connection open (its answer is the broker's, not an HTTP response)", Pass: "with credentials in the URL, logged in with them and the URL's virtual host opened (Connection.Open-Ok, as a client connects); without any, Connection.Start: the broker accepts connections (not logged in)", Missing: "no connection opened"},
			Drain: Drain{Ready: "Connection.Open-Ok (or Start, without credentials) is ready; a refused connection or a Close is the flip"},
			Kind:  amqpwire.Kind, check: databaseURL(amqpwire.URLForm, amqpwire.CheckURL)},
		{Name: "amqps", TLS: true, DefaultPort: "5671", Path: PathAny,
			Words: Words{Does: "is an AMQP 0-9-1 connection open (its answer is the broker's, not an HTTP response)", Pass: "as amqp://, over a verified TLS chain", Missing: "no connection opened"},
			Drain: Drain{Ready: "Connection.Open-Ok (or Start, without credentials) is ready; a refused connection or a Close is the flip"},
			Kind:  amqpwire.Kind, check: databaseURL(amqpwire.URLForm, amqpwire.CheckURL)},
		{Name: "mysql", Aliases: []string{"mariadb"}, DefaultPort: "3306", Path: PathAny,
			Words: Words{Does: "is a MySQL connection (its answer is the server's greeting or login, not an HTTP response)", Pass: "with a password in the URL, logged in with it and COM_PING answered (as the mysql client); without one, the server's greeting: it accepts connections (not logged in)", Missing: "no connection accepted"},
			Drain: Drain{Ready: "accepting connections is ready; a refused connection or an ERR packet (shutting down, too many connections) is the flip"},
			Kind:  mysqlwire.Kind, check: databaseURL(mysqlwire.URLForm, mysqlwire.CheckURL)},
		// blackbox's icmp prober: one echo request, on a ping socket or
		// a raw one.
		{Name: "icmp", Form: icmpwire.Form, Path: PathNone,
			Words: Words{Does: "is an ICMP echo (its answer is an echo reply, not an HTTP response)", Pass: "the host answers the one echo request with an echo reply", Missing: "no echo reply"},
			Kind:  icmpwire.Kind, check: icmpwire.CheckURL, Prober: "icmp"},
	}
}

// CheckURL holds u to the protocol's own form when it has one (ok false
// when the generic rules of Form apply).
func (s Scheme) CheckURL(u *url.URL) (err error, ok bool) {
	if s.check == nil {
		return nil, false
	}
	return s.check(u), true
}

// SocketPath is the Unix socket u names in place of a host (libpq's
// postgres:///DB?host=/DIR, the Redis clients' unix:///PATH), "" when it
// names a host.
func SocketPath(u *url.URL) string {
	row, ok := LookupScheme(u.Scheme)
	if !ok || row.socket == nil {
		return ""
	}
	return row.socket(u)
}

// OverTLS is the row of s's protocol over TLS: s itself when it speaks
// TLS, false when the protocol has no TLS row.
func (s Scheme) OverTLS() (Scheme, bool) {
	if s.TLS {
		return s, true
	}
	if s.Secure == "" {
		return Scheme{}, false
	}
	return LookupScheme(s.Secure)
}

// URL is a URL of the row's scheme for rest (HOST:PORT[/PATH]).
func (s Scheme) URL(rest string) string { return s.Name + "://" + rest }

// DefaultScheme is the row a URL that names no scheme gets: http, as curl
// and blackbox_exporter assume.
func DefaultScheme() Scheme { return schemes[0] }

// ConnectScheme is the row that only connects (tcp://): what an error
// suggests for a scheme no row speaks.
func ConnectScheme() Scheme {
	s, _ := LookupScheme("tcp")
	return s
}

// LookupScheme is the row of a URL scheme (any case), false for a scheme
// no protocol speaks.
func LookupScheme(name string) (Scheme, bool) {
	for _, s := range schemes {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
		for _, a := range s.Aliases {
			if strings.EqualFold(a, name) {
				return s, true
			}
		}
	}
	return Scheme{}, false
}

// ProberRow is the row blackbox_exporter's prober name stands for (a
// module file's prober: http, grpc, tcp, dns or icmp), false for a name
// no row's prober has.
func ProberRow(prober string) (Scheme, bool) {
	for _, s := range schemes {
		if s.Prober != "" && s.Prober == prober {
			return s, true
		}
	}
	return Scheme{}, false
}

// Probers lists the probers' names, as an error's list ("http, grpc, tcp,
// dns or icmp").
func Probers() string {
	var names []string
	for _, s := range schemes {
		if s.Prober != "" {
			names = append(names, s.Prober)
		}
	}
	return orList(names)
}

// ProbersWith lists the probers whose rows take the option group a, as
// an error's list ("only for prober http").
func ProbersWith(a Applies) string {
	var names []string
	for _, s := range schemes {
		if s.Prober != "" && s.Options&a != 0 {
			names = append(names, s.Prober)
		}
	}
	return orList(names)
}

// orList joins names as an error lists them: "a, b or c".
func orList(names []string) string {
	list := strings.Join(names, ", ")
	if i := strings.LastIndex(list, ", "); i >= 0 {
		list = list[:i] + " or " + list[i+2:]
	}
	return list
}

// Schemes are the table's rows, in order.
func Schemes() []Scheme { return append([]Scheme(nil), schemes...) }

// SchemeList names the schemes whose rows keep says yes to, as an error's
// list: "http, https, grpc, grpcs, tcp or tls" (urls: "an http://,
// https://, ... or tls:// URL").
func SchemeList(urls bool, keep func(Scheme) bool) string {
	var names []string
	for _, s := range schemes {
		if keep == nil || keep(s) {
			n := s.Name
			if urls {
				n += "://"
			}
			names = append(names, n)
		}
	}
	list := orList(names)
	if urls {
		article := "a "
		if strings.IndexByte("aeiou", names[0][0]) >= 0 || strings.HasPrefix(names[0], "http") {
			article = "an "
		}
		return article + list + " URL"
	}
	return list
}

// URLList names the URLs of the rows keep says yes to, as help text lists
// them: "grpc:// or grpcs://".
func URLList(keep func(Scheme) bool) string {
	var names []string
	for _, s := range schemes {
		if keep(s) {
			names = append(names, s.Name+"://")
		}
	}
	return orList(names)
}

// InflightCalls lists the forms of the --inflight URLs that are unary
// calls (Drain.Call), as an error lists them.
func InflightCalls() string {
	var forms []string
	for _, s := range schemes {
		if s.Drain.Call != "" {
			forms = append(forms, s.Drain.Call)
		}
	}
	return orList(forms)
}

// With keeps the rows whose options include a.
func With(a Applies) func(Scheme) bool { return func(s Scheme) bool { return s.Options&a != 0 } }

// Secure says the options' URL is of a row that speaks TLS.
func (o *Options) Secure() bool {
	row, ok := LookupScheme(o.URL.Scheme)
	return ok && row.TLS
}

// DefaultPort is the port a URL of scheme means when it names none: its
// row's (443 for https, 6379 for redis, ...), else HTTP's 80.
func DefaultPort(scheme string) string {
	if row, ok := LookupScheme(scheme); ok && row.DefaultPort != "" {
		return row.DefaultPort
	}
	return follow.DefaultPort(scheme)
}

// StreamKind is tcp:// and tls:// as a kind: a connect (and a handshake)
// is the whole answer; it has no reasons of its own.
var StreamKind = classify.Declare(classify.Kind{Name: "tcp"})

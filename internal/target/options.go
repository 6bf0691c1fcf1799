package target

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/words"
)

// Kind is how an option's value is typed.
type Kind int

// The kinds of probe options.
const (
	String Kind = iota
	Bool
	Int
	Duration
	// Size is a byte size: 65536, 64KiB, 1MiB.
	Size
	// List is repeatable: -H a -H b, or a YAML list (a single string is a
	// list of one).
	List
)

// Option is one probe option, declared once: the flag (and so the
// HEALTHCTL_* variable and the config file key), the targets-file key,
// its kind, its help, and the field of Input it fills. Everything that
// reads probe options from a user derives from Options.
type Option struct {
	// Flag is the long flag name: "connect-timeout".
	Flag  string
	Short string
	Kind  Kind
	// Usage is the flag's help; for an option of one group of the scheme
	// table's (For), its %s is the URLs of the rows that take it (Help).
	Usage string
	For   scheme.Applies
	// NoOptDefault is the value of the flag given without one ("--follow"
	// alone), or "".
	NoOptDefault string
	// key is the targets-file key when it is not Flag with '_' for '-'.
	key   string
	field func(*Input) any
}

// Help is the flag's help: Usage, with the URLs of the rows that take the
// option where it names them (For), as the scheme table says.
func (o *Option) Help() string {
	if o.For == 0 {
		return o.Usage
	}
	return fmt.Sprintf(o.Usage, scheme.URLList(scheme.With(o.For)))
}

// Key is the option's targets-file key: the flag name with '-' written '_'
// (`expect_status` is --expect-status), except `headers` (-H).
func (o *Option) Key() string {
	if o.key != "" {
		return o.key
	}
	return strings.ReplaceAll(o.Flag, "-", "_")
}

// Field returns a pointer to the option's field in in: *string, *bool,
// *int, *time.Duration, *int64 (Size) or *[]string (List).
func (o *Option) Field(in *Input) any { return o.field(in) }

// Set parses vals (one for a scalar, any number for a List) into the
// option's field of in. Errors say what was wanted, not where the value
// came from: the caller knows that.
func (o *Option) Set(in *Input, vals []string) error {
	if o.Kind == List {
		*o.field(in).(*[]string) = append([]string(nil), vals...)
		return nil
	}
	if len(vals) != 1 {
		return fmt.Errorf("want one value, got %d", len(vals))
	}
	v := vals[0]
	switch p := o.field(in).(type) {
	case *string:
		*p = v
	case *bool:
		b, err := words.ParseBool(v)
		if err != nil {
			return err
		}
		*p = b
	case *int:
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("want an integer")
		}
		*p = n
	case *time.Duration:
		d, err := ParseDuration(v)
		if err != nil {
			return fmt.Errorf("want a duration like 2s or 500ms (a bare number is seconds)")
		}
		*p = d
	case *int64:
		n, err := ParseSize(v)
		if err != nil {
			return err
		}
		*p = n
	}
	return nil
}

// ParseDuration reads a duration as Go writes it (2s, 500ms, 1m30s) or, as
// curl's --connect-timeout 5 and -m 8 do, a bare number of seconds: 5, 0.5.
func ParseDuration(s string) (time.Duration, error) {
	return time.ParseDuration(BareSeconds(s))
}

// BareSeconds gives a bare number (digits, optionally a fraction) the unit
// "s"; anything else is returned as it is.
func BareSeconds(s string) string {
	t := strings.TrimSpace(s)
	digits, frac := t, ""
	if i := strings.IndexByte(t, '.'); i >= 0 {
		digits, frac = t[:i], t[i+1:]
		if frac == "" {
			return s
		}
	}
	if digits == "" && frac == "" {
		return s
	}
	for _, r := range digits + frac {
		if r < '0' || r > '9' {
			return s
		}
	}
	return t + "s"
}

// OptionByKey finds an option by its targets-file key.
func OptionByKey(key string) *Option {
	for i := range Options {
		if Options[i].Key() == key {
			return &Options[i]
		}
	}
	return nil
}

// Options are every probe option, in the order --help lists them.
var Options = []Option{
	{Flag: "header", Short: "H", Kind: List, key: "headers", field: func(in *Input) any { return &in.Headers },
		Usage: "request header 'Name: value' (repeatable); @FILE reads one per line; 'Host: x' sets the host; 'Name:' removes it (Accept-Encoding: also stops Go's gzip)"},
	{Flag: "method", Short: "X", Kind: String, field: func(in *Input) any { return &in.Method },
		Usage: "request method (default GET, or POST with --data)"},
	{Flag: "data", Short: "d", Kind: String, field: func(in *Input) any { return &in.Data },
		Usage: "request body; @FILE reads it from a file, @- from standard input"},
	{Flag: "user", Short: "u", Kind: String, field: func(in *Input) any { return &in.User },
		Usage: "basic auth 'user:password' (never printed)"},
	{Flag: "user-agent", Short: "A", Kind: String, field: func(in *Input) any { return &in.UserAgent },
		Usage: "User-Agent header"},
	{Flag: "ipv4", Short: "4", Kind: Bool, field: func(in *Input) any { return &in.IPv4 },
		Usage: "resolve and connect over IPv4 only"},
	{Flag: "ipv6", Short: "6", Kind: Bool, field: func(in *Input) any { return &in.IPv6 },
		Usage: "resolve and connect over IPv6 only"},
	{Flag: "all-addresses", Kind: Bool, field: func(in *Input) any { return &in.AllAddresses },
		Usage: "probe every address of the name (A and AAAA, or every --resolve address), one result each, with the name's Host and SNI; the worst decides"},
	{Flag: "insecure", Short: "k", Kind: Bool, field: func(in *Input) any { return &in.Insecure },
		Usage: "do not verify the server certificate (the chain is still shown)"},
	{Flag: "cacert", Kind: String, field: func(in *Input) any { return &in.CACert },
		Usage: "PEM file of CA certificates to trust instead of the system's"},
	{Flag: "proxy-cacert", Kind: String, field: func(in *Input) any { return &in.ProxyCACert },
		Usage: "PEM file of CA certificates an https:// proxy's own certificate is verified with (instead of the system's; --cacert is the target's)"},
	{Flag: "proxy-insecure", Kind: Bool, field: func(in *Input) any { return &in.ProxyInsecure },
		Usage: "do not verify an https:// proxy's own certificate (-k is the target's)"},
	{Flag: "cert", Kind: String, field: func(in *Input) any { return &in.Cert },
		Usage: "PEM client certificate (with --key)"},
	{Flag: "key", Kind: String, field: func(in *Input) any { return &in.Key },
		Usage: "PEM client key (with --cert)"},
	{Flag: "servername", Kind: String, field: func(in *Input) any { return &in.ServerName },
		Usage: "TLS server name (SNI and verification) instead of the URL's host"},
	{Flag: "resolve", Kind: List, field: func(in *Input) any { return &in.Resolve },
		Usage: "HOST:PORT:ADDR[,ADDR...]: connect to these addresses for HOST:PORT, skipping DNS (repeatable)"},
	{Flag: "dns-server", Kind: String, field: func(in *Input) any { return &in.DNSServer },
		Usage: "ADDR[:PORT] of the only DNS server to ask"},
	{Flag: "follow", Short: "L", Kind: Int, NoOptDefault: "10", field: func(in *Input) any { return &in.Follow },
		Usage: "follow up to N redirects (--follow alone: 10); a hop to another host, port or scheme drops credentials"},
	{Flag: "noproxy", Kind: String, field: func(in *Input) any { return &in.NoProxy },
		Usage: "comma list of hosts to reach without a proxy ('*': none), instead of NO_PROXY"},
	{Flag: "connect-timeout", Kind: Duration, field: func(in *Input) any { return &in.ConnectTimeout },
		Usage: "window for DNS + TCP connect + TLS handshake"},
	{Flag: "read-timeout", Kind: Duration, field: func(in *Input) any { return &in.ReadTimeout },
		Usage: "window from the request written to the last body byte"},
	{Flag: "max-time", Short: "m", Kind: Duration, field: func(in *Input) any { return &in.MaxTime },
		Usage: "cap on the whole probe (default connect + read timeout)"},
	{Flag: "max-body", Kind: Size, field: func(in *Input) any { return &in.MaxBody },
		Usage: "read the body up to this size, e.g. 65536, 64KiB, 1MiB, 1GiB (more is not a failure)"},
	{Flag: "expect-status", Kind: String, field: func(in *Input) any { return &in.ExpectStatus },
		Usage: "expected status: codes, ranges, classes, comma lists (200, 200-399, 2xx)"},
	{Flag: "expect-body", Kind: List, field: func(in *Input) any { return &in.ExpectBody },
		Usage: "the body must contain TEXT (repeatable)"},
	{Flag: "expect-body-regex", Kind: List, field: func(in *Input) any { return &in.ExpectBodyRegex },
		Usage: "the body must match RE (repeatable)"},
	{Flag: "expect-json", Kind: List, field: func(in *Input) any { return &in.ExpectJSON },
		Usage: "PATH=VALUE: the JSON body at gjson PATH must equal VALUE; also PATH!=VALUE, PATH<N, PATH<=N, PATH>N, PATH>=N; a path through a list (checks.#.status) must hold for every element (repeatable)"},
	{Flag: "expect-header", Kind: List, field: func(in *Input) any { return &in.ExpectHeader },
		Usage: "NAME=RE: a response header must match RE (repeatable)"},
	{Flag: "expect-body-not", Kind: List, field: func(in *Input) any { return &in.ExpectBodyNot },
		Usage: "the body must not match RE (repeatable; blackbox's fail_if_body_matches_regexp)"},
	{Flag: "expect-header-not", Kind: List, field: func(in *Input) any { return &in.ExpectHeaderNot },
		Usage: "NAME=RE: no value of a response header may match RE (repeatable; blackbox's fail_if_header_matches)"},
	{Flag: "degraded-if-body", Kind: List, field: func(in *Input) any { return &in.DegradedIfBody },
		Usage: "an answer that passes is degraded when its body matches RE (repeatable)"},
	{Flag: "degraded-if-json", Kind: List, field: func(in *Input) any { return &in.DegradedIfJSON },
		Usage: "an answer that passes is degraded when this JSON condition holds, e.g. status=Degraded (repeatable)"},
	{Flag: "grpc-service", Kind: String, field: func(in *Input) any { return &in.GRPCService },
		Usage: "service whose health a %s probe asks (default: the URL's path; empty: the server's overall health)", For: scheme.AppliesGRPCService},
	{Flag: "dialogue", Kind: List, field: func(in *Input) any { return &in.Dialogue },
		For: scheme.AppliesDialogue, Usage: "%s: one step of a conversation once connected, in order (repeatable): expect:RE reads lines until one matches, send:TEXT sends a line (after an expect:, ${1} is its match's group), starttls upgrades to TLS (blackbox's query_response)"},
	{Flag: "http2-prior-knowledge", Kind: Bool, field: func(in *Input) any { return &in.HTTP2Prior },
		Usage: "speak HTTP/2 over cleartext to http:// URLs (h2c, no upgrade), as curl does"},
	{Flag: "secret-header", Kind: List, field: func(in *Input) any { return &in.SecretHeader },
		Usage: "also redact this request header's value (repeatable)"},
	{Flag: "secret-param", Kind: List, field: func(in *Input) any { return &in.SecretParam },
		Usage: "also redact this query parameter's value (repeatable)"},
}

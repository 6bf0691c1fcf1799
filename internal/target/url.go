package target

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/healthctl/healthctl/internal/scheme"
)

// isNumber reports whether strconv.Atoi takes s (an optional sign, then
// decimal digits, in range), without the error Atoi allocates for every
// URL that is not a number.
func isNumber(s string) bool {
	d := s
	if d != "" && (d[0] == '+' || d[0] == '-') {
		d = d[1:]
	}
	if d == "" {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	_, err := strconv.Atoi(s)
	return err == nil
}

// ParseURL accepts what curl accepts for health URLs: http and https, with
// "http://" assumed when no scheme is given.
func ParseURL(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, fmt.Errorf("empty URL")
	}
	if isNumber(raw) {
		// "--follow 3 URL" parses 3 as a URL: --follow's value is optional.
		return nil, fmt.Errorf("%q is not a URL (for a number of redirects write --follow=%s)", raw, raw)
	}
	s := raw
	if !strings.Contains(s, "://") {
		s = scheme.DefaultScheme().URL(s)
	}
	u, err := url.Parse(s)
	if err != nil {
		msg := err.Error()
		var ue *url.Error
		if errors.As(err, &ue) {
			msg = ue.Err.Error()
		}
		if scheme, rest, ok := strings.Cut(s, "://"); ok && strings.HasPrefix(strings.ToLower(rest[strings.Index(rest, "@")+1:]), "%2f") {
			// libpq's percent-encoded socket directory as the host,
			// which Go's URL parser refuses.
			return nil, fmt.Errorf("malformed URL: %s (a Unix socket's directory goes in the host parameter: %s:///DB?host=/DIR)", msg, scheme)
		}
		return nil, fmt.Errorf("malformed URL: %s", msg)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	row, ok := scheme.LookupScheme(u.Scheme)
	if !ok {
		return nil, fmt.Errorf("unsupported scheme %q (want %s); to check only that its port accepts connections, probe %s", u.Scheme, scheme.SchemeList(false, nil), tcpSuggestion(u))
	}
	if err := checkFieldBytes(u); err != nil {
		return nil, err
	}
	sock := scheme.SocketPath(u)
	if u.Hostname() == "" && sock == "" {
		if err := checkForm(u, row); err != nil {
			// What the row's form says is wrong (a host parameter
			// that is no socket directory).
			return nil, err
		}
		return nil, fmt.Errorf("URL has no host")
	}
	if sock != "" {
		// A Unix socket: its row's own check holds the URL's form.
	} else if row.MultiHost && strings.Contains(u.Host, ",") {
		if err := checkHosts(u); err != nil {
			return nil, err
		}
	} else if err := checkHostName(u); err != nil {
		return nil, err
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("URL port %q out of range", p)
		}
	}
	if err := checkForm(u, row); err != nil {
		return nil, err
	}
	return u, nil
}

// tcpSuggestion is the connect-only URL that checks the port of u, a URL of a
// scheme healthctl does not speak: its host and port when it names one
// host, HOST:PORT where it does not say.
func tcpSuggestion(u *url.URL) string {
	host, port := u.Hostname(), u.Port()
	if host == "" || strings.ContainsAny(u.Host, ",") || !validHostName(host) {
		host = "HOST"
	}
	if port == "" || strings.ContainsAny(u.Host, ",") {
		port = "PORT"
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme.ConnectScheme().URL(host + ":" + port)
}

// badFieldBytes are the bytes no URL field may hold once decoded: NUL ends
// a field of a PostgreSQL startup message (and starts a parameter of the
// URL's choosing), CR and LF end a Redis command or a header line.
const badFieldBytes = "\x00\r\n"

// checkFieldBytes refuses NUL, CR and LF, literal or percent-encoded, in
// every decoded field of a URL: its user name and password for every
// kind, and its path, query and fragment for every kind but HTTP's (the
// rows that send a request), whose request target carries them
// percent-encoded as they were written.
func checkFieldBytes(u *url.URL) error {
	fields := []struct{ name, value string }{}
	if u.User != nil {
		pw, _ := u.User.Password()
		fields = append(fields, struct{ name, value string }{"user name", u.User.Username()}, struct{ name, value string }{"password", pw})
	}
	if row, _ := scheme.LookupScheme(u.Scheme); row.Options&scheme.AppliesRequest == 0 {
		fields = append(fields, struct{ name, value string }{"path", u.Path}, struct{ name, value string }{"fragment", u.Fragment})
		for kv := range strings.SplitSeq(u.RawQuery, "&") {
			k, v, _ := strings.Cut(kv, "=")
			uk, err1 := url.QueryUnescape(k)
			uv, err2 := url.QueryUnescape(v)
			if err1 != nil || err2 != nil {
				uk, uv = k, v
			}
			fields = append(fields, struct{ name, value string }{"query parameter " + strconv.Quote(uk), uk + uv})
		}
	}
	for _, f := range fields {
		if i := strings.IndexAny(f.value, badFieldBytes); i >= 0 {
			return fmt.Errorf("URL's %s holds a %s byte (%%%02X), which no URL field may hold", f.name, byteName(f.value[i]), f.value[i])
		}
	}
	return nil
}

func byteName(b byte) string {
	switch b {
	case 0:
		return "NUL"
	case '\r':
		return "CR"
	}
	return "LF"
}

// checkHostName refuses a host that is not one host's name or address
// before anything can resolve it: two hosts (libpq's h1:p1,h2:p2, read by
// Go's parser as one name with a comma), or any other byte a DNS name
// cannot have.
func checkHostName(u *url.URL) error {
	h := u.Hostname()
	switch {
	case strings.Contains(u.Host, ","):
		return fmt.Errorf("URL names more than one host (%q): give each host a URL of its own", u.Host)
	case !validHostName(h):
		return fmt.Errorf("URL's host %q is not a host name or an IP address", h)
	}
	return nil
}

// checkHosts checks each host of a URL that may name several
// (postgres://h1:5432,h2:5432/db, as libpq reads it): each a host name or
// an address, with a port in range when it names one.
func checkHosts(u *url.URL) error {
	for hp := range strings.SplitSeq(u.Host, ",") {
		h := &url.URL{Host: hp}
		switch p := h.Port(); {
		case h.Hostname() == "":
			return fmt.Errorf("URL's hosts %q: one is empty", u.Host)
		case !validHostName(h.Hostname()):
			return fmt.Errorf("URL's host %q is not a host name or an IP address", h.Hostname())
		case p != "" && !validPort(p):
			return fmt.Errorf("URL port %q out of range", p)
		}
	}
	return nil
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// validHostName says h is an IP address or a name of letters, digits,
// dots, hyphens and underscores (a container's name may hold one), or
// non-ASCII letters (an internationalised name).
func validHostName(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	for _, r := range h {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
		case r >= 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)):
		default:
			return false
		}
	}
	return h != ""
}

// checkForm holds a URL to what its protocol's row says it can mean: a
// protocol with a form of its own (a gRPC health call, a connect) takes
// host and port (no default port), for gRPC a service name as the path, and
// nothing else — no credentials, query or fragment, which no health call
// would send. HTTP's URLs are any.
func checkForm(u *url.URL, row scheme.Scheme) error {
	if err, ok := row.CheckURL(u); ok {
		// The protocol's own rules (its exchange file's).
		return err
	}
	if row.Form == "" {
		return nil
	}
	switch {
	case u.Port() == "" && row.DefaultPort == "":
		return fmt.Errorf("%s URL has no port (want %s)", u.Scheme, row.Form)
	case u.User != nil:
		return fmt.Errorf("%s URL has credentials, which it cannot send (want %s)", u.Scheme, row.Form)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return fmt.Errorf("%s URL has a query or fragment (want %s)", u.Scheme, row.Form)
	case row.Path == scheme.PathNone && u.Path != "" && u.Path != "/":
		return fmt.Errorf("%s URL has a path (want %s)", u.Scheme, row.Form)
	case hasControl(u.Path):
		return fmt.Errorf("%s URL's service name has a control character", u.Scheme)
	}
	return nil
}

package target

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ParseResolve reads curl's --resolve HOST:PORT:ADDR[,ADDR...] (an ADDR
// may be [v6]) into the key "host:port" and the addresses, in order.
func ParseResolve(s string) (key string, addrs []string, err error) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 || parts[0] == "" {
		return "", nil, fmt.Errorf("want HOST:PORT:ADDR[,ADDR...]")
	}
	// A host no URL can have (" app", "a/b": FuzzSizeTimeResolve) would
	// silently never apply.
	if u, err := url.Parse("//" + parts[0] + "/"); err != nil || u.Host != parts[0] || strings.ContainsAny(parts[0], " \t@") {
		return "", nil, fmt.Errorf("%q is not a host name", parts[0])
	}
	if n, err := strconv.Atoi(parts[1]); err != nil || n < 1 || n > 65535 {
		return "", nil, fmt.Errorf("bad port %q", parts[1])
	}
	for _, a := range strings.Split(parts[2], ",") {
		ip, err := netip.ParseAddr(strings.Trim(strings.TrimSpace(a), "[]"))
		if err != nil {
			return "", nil, fmt.Errorf("%q is not an IP address", a)
		}
		if s := ip.Unmap().String(); !slices.Contains(addrs, s) {
			addrs = append(addrs, s)
		}
	}
	return strings.ToLower(parts[0]) + ":" + parts[1], addrs, nil
}

// familyOf is 4 for "tcp4", 6 for "tcp6", 0 for either.
func familyOf(network string) int {
	switch network {
	case "tcp4":
		return 4
	case "tcp6":
		return 6
	}
	return 0
}

// HostPortDefault reads ADDR[:PORT] with an IP address, adding port when
// none is given.
func HostPortDefault(s, port string) (string, error) {
	if ip, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return net.JoinHostPort(ip.String(), port), nil
	}
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("want ADDR[:PORT]")
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return "", fmt.Errorf("%q is not an IP address", h)
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("bad port %q", p)
	}
	return net.JoinHostPort(ip.String(), p), nil
}

// MaxSize is the largest size ParseSize accepts (1 TiB): far past any body a
// health endpoint sends, and far from int64 overflow.
const MaxSize = int64(1) << 40

var sizeUnits = []struct {
	suffix string
	m      int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000}, {"tb", 1000 * 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"b", 1},
}

// ParseSize reads 65536, 64KiB, 64k, 1MiB, 1m, 1GiB (binary units for k, m,
// g, t; kB, MB, GB, TB are decimal), from 0 to MaxSize.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a size like 65536, 64KiB or 1MiB")
	}
	if n > math.MaxInt64/mult || n*mult > MaxSize {
		return 0, fmt.Errorf("too large: at most %s", FormatSize(MaxSize))
	}
	return n * mult, nil
}

// FormatSize prints a size the way ParseSize reads it back: 64KiB, 1TiB.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// ValidToken reports whether s is an HTTP token (method or header name).
func ValidToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) {
			return false
		}
	}
	return true
}

// ParseTime reads RFC 3339 or unix seconds, in years 1 to 9999: a time JSON
// can write (FuzzSizeTimeResolve found unix milliseconds read as seconds,
// year 57884, which no state file could then hold).
func ParseTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		t := time.Unix(n, 0)
		if y := t.Year(); y < 1 || y > 9999 {
			return time.Time{}, fmt.Errorf("unix seconds %d is the year %d (milliseconds?): want seconds", n, y)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, fmt.Errorf("want RFC 3339 (2026-01-02T15:04:05Z) or unix seconds")
	}
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return time.Time{}, fmt.Errorf("the year %d: want a year from 1 to 9999", y)
	}
	return t, nil
}

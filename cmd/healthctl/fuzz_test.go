package main

import (
	"math/big"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/expect"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/target"
)

// FuzzUserInput: whatever a user types as a URL, a status set, a --resolve,
// a DNS server or a size, parsing returns an error or a value that is right:
// a size equals its digits times its unit (no overflow, within MaxSize) and
// round-trips through FormatSize; a status set contains exactly the codes
// its entries name; a URL is http(s) with a host and a valid port, and its
// redacted form never shows its password; a --resolve address and a DNS
// server are IP addresses with a port. The seeds run with every `go test`;
// `go test -fuzz FuzzUserInput ./cmd/healthctl` explores further.
func FuzzUserInput(f *testing.F) {
	for _, s := range []string{
		"http://[::1]:8080/", "127.0.0.1:80/h", "2xx,300-399", "h:80:[::1]", "64KiB", "%zz",
		"http://u:p@h/?token=x", "://", "[", "-", "9007199254740992k", "9223372036854775807",
		"1GiB", "2048MiB", "8tib", "200, 204 ,3XX", "599-100", "http://user:s3cret-pw@app:99999/",
		"127.0.0.1", "[::1]:5353", "10000000000000000000b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkURL(t, s)
		checkStatusSet(t, s)
		checkSize(t, s)
		if key, addrs, err := target.ParseResolve(s); err == nil {
			for _, addr := range addrs {
				if _, err := netip.ParseAddr(addr); err != nil {
					t.Errorf("ParseResolve(%q) address %q is not an IP: %v", s, addr, err)
				}
			}
			if host, port, ok := strings.Cut(key, ":"); !ok || host != strings.ToLower(host) || !validPort(port) {
				t.Errorf("ParseResolve(%q) key %q: want lower-case HOST:PORT", s, key)
			}
		}
		if hp, err := target.HostPortDefault(s, "53"); err == nil {
			h, p, err := net.SplitHostPort(hp)
			if err != nil || !validPort(p) {
				t.Errorf("HostPortDefault(%q) = %q: not IP:PORT (%v)", s, hp, err)
			} else if _, err := netip.ParseAddr(h); err != nil {
				t.Errorf("HostPortDefault(%q) = %q: host is not an IP", s, hp)
			}
		}
		if tm, err := target.ParseTime(s); err == nil && tm.IsZero() && strings.TrimSpace(s) != "" {
			if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil || tm.Unix() != n {
				t.Errorf("ParseTime(%q) = zero time", s)
			}
		}
	})
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

func checkURL(t *testing.T, s string) {
	u, err := target.ParseURL(s)
	if err != nil {
		return
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		t.Errorf("ParseURL(%q): scheme %q", s, u.Scheme)
	}
	if u.Hostname() == "" {
		t.Errorf("ParseURL(%q): no host", s)
	}
	if p := u.Port(); p != "" && !validPort(p) {
		t.Errorf("ParseURL(%q): port %q accepted", s, p)
	}
	r := redact.NewRedactor(nil, nil)
	r.AddURL(u)
	red := r.URL(u)
	if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Contains(red, pw) && !strings.Contains(u.Host+u.Path+u.RawQuery+u.Fragment+u.User.Username(), pw) {
		t.Errorf("ParseURL(%q): redacted %q shows the password", s, red)
	}
}

// checkStatusSet compares a parsed set with the codes its entries name,
// computed independently: N, N-M, Nxx.
func checkStatusSet(t *testing.T, s string) {
	set, err := expect.ParseStatusSet(s)
	if err != nil {
		return
	}
	want := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		switch lo, hi, isRange := strings.Cut(part, "-"); {
		case len(part) == 3 && strings.EqualFold(part[1:], "xx"):
			c := int(part[0]-'0') * 100
			for i := c; i < c+100; i++ {
				want[i] = true
			}
		case isRange:
			a, _ := strconv.Atoi(strings.TrimSpace(lo))
			b, _ := strconv.Atoi(strings.TrimSpace(hi))
			for i := a; i <= b; i++ {
				want[i] = true
			}
		default:
			c, _ := strconv.Atoi(part)
			want[c] = true
		}
	}
	for code := 100; code <= 599; code++ {
		if set.Contains(code) != want[code] {
			t.Fatalf("ParseStatusSet(%q).Contains(%d) = %v, want %v", s, code, set.Contains(code), want[code])
		}
	}
	for _, code := range []int{0, 99, 600, -1} {
		if set.Contains(code) {
			t.Errorf("ParseStatusSet(%q) contains %d", s, code)
		}
	}
}

// checkSize recomputes a size with big integers: digits times unit, within
// 0..MaxSize, and FormatSize reads back to the same value.
func checkSize(t *testing.T, s string) {
	n, err := target.ParseSize(s)
	if err != nil {
		return
	}
	low := strings.ToLower(strings.TrimSpace(s))
	digits := strings.TrimRight(low, "kmgtib")
	unit := strings.TrimPrefix(low, digits)
	mult := map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 1000, "m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
		"g": 1 << 30, "gib": 1 << 30, "gb": 1e9, "t": 1 << 40, "tib": 1 << 40, "tb": 1e12}[unit]
	d, ok := new(big.Int).SetString(strings.TrimSpace(digits), 10)
	if ok && mult != 0 {
		want := new(big.Int).Mul(d, big.NewInt(mult))
		if !want.IsInt64() || want.Int64() != n {
			t.Errorf("ParseSize(%q) = %d, want %v", s, n, want)
		}
	}
	if n < 0 || n > target.MaxSize {
		t.Errorf("ParseSize(%q) = %d, outside 0..%d", s, n, target.MaxSize)
	}
	if back, err := target.ParseSize(target.FormatSize(n)); err != nil || back != n {
		t.Errorf("ParseSize(FormatSize(%d) = %q) = %d, %v", n, target.FormatSize(n), back, err)
	}
}

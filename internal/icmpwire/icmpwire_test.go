package icmpwire

import (
	"encoding/binary"
	"errors"
	"net/url"
	"strings"
	"syscall"
	"testing"
)

func TestParseURL(t *testing.T) {
	for raw, want := range map[string]string{
		"icmp://127.0.0.1":                   "",
		"icmp://[::1]/":                      "",
		"icmp://host.invalid?ttl=5&size=100": "",
		"icmp://127.0.0.1:80":                "has a port",
		"icmp://127.0.0.1/x":                 "has a path",
		"icmp://u:p@127.0.0.1":               "has credentials",
		"icmp://127.0.0.1#f":                 "has a fragment",
		"icmp://127.0.0.1?ttl=0":             `ttl="0": want a TTL from 1 to 255`,
		"icmp://127.0.0.1?ttl=256":           `ttl="256"`,
		"icmp://127.0.0.1?size=-1":           `size="-1"`,
		"icmp://127.0.0.1?ttl=1&ttl=2":       "has ttl twice",
		"icmp://127.0.0.1?count=3":           `has the parameter "count"`,
		"icmp:///":                           "has no host",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ParseURL(u)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
	u, _ := url.Parse("icmp://h?ttl=7&size=64")
	if q, _ := ParseURL(u); q != (Query{TTL: 7, Size: 64}) {
		t.Errorf("%+v", q)
	}
}

func TestData(t *testing.T) {
	if string(Data(0)) != Payload || string(Data(10)) != Payload[:10] {
		t.Errorf("short: %q", Data(10))
	}
	if d := Data(100); len(d) != 100 || !strings.HasPrefix(string(d), Payload) {
		t.Errorf("padded: %q", d)
	}
}

// reply makes an echo reply (or another type) as a socket reads it.
func message(typ byte, id, seq int, data []byte) []byte {
	b := []byte{typ, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(b[4:], uint16(id))
	binary.BigEndian.PutUint16(b[6:], uint16(seq))
	return append(b, data...)
}

// unreachable makes a destination unreachable quoting a request with
// id and seq (after an IP header of hl bytes).
func unreachable(typ, code byte, hl, id, seq int) []byte {
	b := []byte{typ, code, 0, 0, 0, 0, 0, 0}
	ip := make([]byte, hl)
	if hl == 20 {
		ip[0] = 0x45
	}
	b = append(b, ip...)
	return append(b, message(8, id, seq, nil)...)
}

func TestMatch(t *testing.T) {
	data := Data(0)
	for _, c := range []struct {
		name    string
		v6      bool
		msg     []byte
		checkID bool
		want    Verdict
		errno   error
	}{
		{"the reply", false, message(0, 7, 9, data), true, Reply, nil},
		{"a ping socket's reply: another ID", false, message(0, 1234, 9, data), false, Reply, nil},
		{"a raw socket: another ID", false, message(0, 1234, 9, data), true, Other, nil},
		{"another seq", false, message(0, 7, 10, data), true, Other, nil},
		{"other data", false, message(0, 7, 9, []byte("x")), true, Other, nil},
		{"the request looped back", false, message(8, 7, 9, data), true, Other, nil},
		{"garbage", false, []byte{1, 2}, true, Other, nil},
		{"host unreachable", false, unreachable(3, 1, 20, 7, 9), true, Unreachable, syscall.EHOSTUNREACH},
		{"net unreachable", false, unreachable(3, 0, 20, 7, 9), true, Unreachable, syscall.ENETUNREACH},
		{"unreachable for another request", false, unreachable(3, 1, 20, 7, 8), true, Other, nil},
		{"v6 reply", true, message(129, 7, 9, data), true, Reply, nil},
		{"v6 address unreachable", true, unreachable(1, 3, 40, 7, 9), true, Unreachable, syscall.EHOSTUNREACH},
		{"v6 no route", true, unreachable(1, 0, 40, 7, 9), true, Unreachable, syscall.ENETUNREACH},
	} {
		v, err := Match(c.v6, c.msg, 7, 9, c.checkID, data)
		if v != c.want || (c.errno == nil) != (err == nil) || c.errno != nil && !errors.Is(err, c.errno) {
			t.Errorf("%s: %v %v, want %v %v", c.name, v, err, c.want, c.errno)
		}
	}
}

func TestNotPermitted(t *testing.T) {
	err := &NotPermittedError{GID: 1000, Range: "1 0", Err: syscall.EPERM}
	if !errors.Is(err, syscall.EPERM) || !Permission(err) || !strings.Contains(err.Error(), `sysctl -w net.ipv4.ping_group_range="0 2147483647"`) {
		t.Errorf("%v", err)
	}
}

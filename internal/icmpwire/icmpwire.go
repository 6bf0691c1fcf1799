// Package icmpwire is an icmp:// probe's bytes, without I/O: the URL's
// host and options, the one echo request (blackbox_exporter's payload),
// and the reading of what comes back on an ICMP socket — the matching
// echo reply, a destination unreachable that quotes the request, or
// something else to skip.
package icmpwire

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// Form is an icmp:// URL's shape.
const Form = "icmp://HOST[?ttl=N&size=BYTES]"

// Payload is what blackbox_exporter puts in its echo requests.
const Payload = "Prometheus Blackbox Exporter"

// Query is an icmp:// URL read: the request's TTL (hop limit; 0: the
// system's) and payload size (0: Payload alone).
type Query struct {
	TTL, Size int
}

// CheckURL holds an icmp:// URL to its form (the scheme table's row
// applies it): a host, ttl= and size=.
func CheckURL(u *url.URL) error {
	_, err := ParseURL(u)
	return err
}

// ParseURL reads an icmp:// URL: a host and nothing else but ttl= and
// size= (blackbox's ttl and payload_size).
func ParseURL(u *url.URL) (Query, error) {
	var q Query
	switch {
	case u.User != nil:
		return q, fmt.Errorf("%s URL has credentials, which ICMP cannot send (want %s)", u.Scheme, Form)
	case u.Fragment != "":
		return q, fmt.Errorf("%s URL has a fragment (want %s)", u.Scheme, Form)
	case u.Port() != "" || strings.HasSuffix(u.Host, ":"):
		return q, fmt.Errorf("%s URL has a port, which ICMP has none of (want %s)", u.Scheme, Form)
	case u.Path != "" && u.Path != "/":
		return q, fmt.Errorf("%s URL has a path (want %s)", u.Scheme, Form)
	case u.Hostname() == "":
		return q, fmt.Errorf("%s URL has no host (want %s)", u.Scheme, Form)
	}
	return ParseQuery(u)
}

// ParseQuery reads an icmp:// URL's parameters alone: ttl= and size=.
func ParseQuery(u *url.URL) (Query, error) {
	var q Query
	vals, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return q, fmt.Errorf("%s URL's query: %v", u.Scheme, err)
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		vs := vals[k]
		if len(vs) > 1 {
			return q, fmt.Errorf("%s URL has %s twice", u.Scheme, k)
		}
		n, err := strconv.Atoi(vs[0])
		switch k {
		case "ttl":
			if err != nil || n < 1 || n > 255 {
				return q, fmt.Errorf("%s URL's ttl=%q: want a TTL from 1 to 255", u.Scheme, vs[0])
			}
			q.TTL = n
		case "size":
			if err != nil || n < 0 || n > 65000 {
				return q, fmt.Errorf("%s URL's size=%q: want a payload size in bytes (0 to 65000)", u.Scheme, vs[0])
			}
			q.Size = n
		default:
			return q, fmt.Errorf("%s URL has the parameter %q (want ttl= or size=)", u.Scheme, k)
		}
	}
	return q, nil
}

// Data is the echo's payload of size bytes, as blackbox makes it
// (payload_size): Payload cut or padded with zeros to size; 0 is Payload
// alone.
func Data(size int) []byte {
	if size == 0 {
		return []byte(Payload)
	}
	b := make([]byte, size)
	copy(b, Payload)
	return b
}

// Request is the echo request's bytes (ICMPv6's checksum is the
// kernel's).
func Request(v6 bool, id, seq int, data []byte) ([]byte, error) {
	var t icmp.Type = ipv4.ICMPTypeEcho
	if v6 {
		t = ipv6.ICMPTypeEchoRequest
	}
	return (&icmp.Message{Type: t, Body: &icmp.Echo{ID: id, Seq: seq, Data: data}}).Marshal(nil)
}

// Verdict is what one ICMP message read says of the request.
type Verdict uint8

// The verdicts.
const (
	// Other: not about this request (another process's, the request
	// itself looped back): read on.
	Other Verdict = iota
	// Reply: the matching echo reply.
	Reply
	// Unreachable: a destination unreachable quoting the request.
	Unreachable
)

// Match reads msg (an ICMP message, without its IP header) against the
// request (id, seq, data); checkID is false on a ping socket, whose ID
// is the kernel's. For Unreachable, err says which (an
// *UnreachableError).
func Match(v6 bool, msg []byte, id, seq int, checkID bool, data []byte) (Verdict, error) {
	proto := 1
	if v6 {
		proto = 58
	}
	m, err := icmp.ParseMessage(proto, msg)
	if err != nil {
		return Other, nil
	}
	switch b := m.Body.(type) {
	case *icmp.Echo:
		if m.Type != ipv4.ICMPTypeEchoReply && m.Type != ipv6.ICMPTypeEchoReply {
			return Other, nil
		}
		if b.Seq != seq || checkID && b.ID != id || string(b.Data) != string(data) {
			return Other, nil
		}
		return Reply, nil
	case *icmp.DstUnreach:
		if !quotes(v6, b.Data, id, seq, checkID) {
			return Other, nil
		}
		return Unreachable, &UnreachableError{V6: v6, Code: m.Code}
	}
	return Other, nil
}

// quotes says the datagram a destination unreachable carries (the
// request's IP header and its first bytes) is this request's.
func quotes(v6 bool, dg []byte, id, seq int, checkID bool) bool {
	hl := 40
	if !v6 {
		if len(dg) < 1 {
			return false
		}
		hl = int(dg[0]&0x0f) * 4
	}
	if len(dg) < hl+8 {
		return false
	}
	e := dg[hl:]
	gotID, gotSeq := int(e[4])<<8|int(e[5]), int(e[6])<<8|int(e[7])
	return gotSeq == seq && (!checkID || gotID == id)
}

// UnreachableError is a destination unreachable answer to the request:
// a host or its network unreachable (errors.Is with syscall.EHOSTUNREACH
// or syscall.ENETUNREACH, as a connect's error says it).
type UnreachableError struct {
	V6   bool
	Code int
}

// Net says the network, not the host, is unreachable.
func (e *UnreachableError) Net() bool {
	if e.V6 {
		return e.Code == 0 // no route to destination
	}
	return e.Code == 0 || e.Code == 6 || e.Code == 11
}

func (e *UnreachableError) Error() string {
	what := "host unreachable"
	if e.Net() {
		what = "network unreachable"
	}
	return fmt.Sprintf("destination unreachable (ICMP code %d): %s", e.Code, what)
}

// Is makes it a connect's error: no route to the host or its network.
func (e *UnreachableError) Is(target error) bool {
	if e.Net() {
		return target == syscall.ENETUNREACH
	}
	return target == syscall.EHOSTUNREACH
}

// NotPermittedError is neither a ping socket nor a raw one permitted:
// this machine's trouble (errors.Is syscall.EPERM), saying how to allow
// one.
type NotPermittedError struct {
	// GID is the process's group; Range is net.ipv4.ping_group_range
	// now ("unknown" when unread).
	GID   int
	Range string
	Err   error
}

func (e *NotPermittedError) Error() string {
	return fmt.Sprintf("ICMP sockets are not permitted: a ping socket needs the process's group (gid %d) within net.ipv4.ping_group_range (now %q), a raw socket root or CAP_NET_RAW; allow ping sockets with: sysctl -w net.ipv4.ping_group_range=\"0 2147483647\"", e.GID, e.Range)
}

func (e *NotPermittedError) Unwrap() error { return e.Err }

// Permission says err refuses a socket for want of permission.
func Permission(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES)
}

package classify

import (
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
)

// proxyAnswer is the reason for an error answer a proxy generated itself:
// 407 wants the prober's credentials; 502, 503 and 504 say the proxy could
// not reach or hear from the server behind it (which may be down: the
// target's trouble as far as anyone can tell); anything else is the proxy
// refusing to pass the request on.
func proxyAnswer(status int) Reason {
	switch status {
	case http.StatusProxyAuthRequired:
		return ProxyAuthRequired
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return ProxyError
	}
	return ProxyRefused
}

// socksTarget reads a SOCKS5 CONNECT reply that reports the target's fate
// (RFC 1928 §6): 5 the target refused the connection, 3 and 4 it could not
// be reached from the proxy. Codes 1 and 2 (the proxy failed, its rules
// said no) and the rest are the proxy's own trouble (ok false). net/http's
// SOCKS5 client fails such a CONNECT with "unknown error " and the reply's
// standard text under the "socks connect" operation.
func socksTarget(err error) (Reason, bool) {
	switch SOCKSReply(err) {
	case "connection refused":
		return ConnRefused, true
	case "host unreachable":
		return HostUnreachable, true
	case "network unreachable":
		return NetUnreachable, true
	}
	return "", false
}

// SOCKSReply is the SOCKS5 reply text an error carries ("connection
// refused"), "" when it carries none.
func SOCKSReply(err error) string {
	var op *net.OpError
	if err == nil || !errors.As(err, &op) || op.Op != "socks connect" || op.Err == nil {
		return ""
	}
	if t, ok := strings.CutPrefix(op.Err.Error(), "unknown error "); ok {
		return t
	}
	return ""
}

// resolverFault is the reason of a lookup the resolver itself could not
// answer: it refused (REFUSED), could not use the query (FORMERR, NOTIMP)
// or gave no usable answer (a truncated reply whose TCP retry failed, a
// reply that does not parse). None of them says anything about the name.
func resolverFault(o Observation) (Reason, bool) {
	if o.Stage != StageDNS || o.Err == nil {
		return "", false
	}
	switch o.DNS {
	case DNSRefused:
		return ResolverRefused, true
	case DNSQueryError, DNSNoUsableAnswer:
		return ResolverError, true
	}
	return "", false
}

// isLocal says err is this machine's resource or permission failing before
// the target had a say: no descriptors, buffers or ports, or a local
// firewall refusing the socket (EPERM/EACCES only while dialling: later
// they are a file's, not the network's).
func isLocal(err error, stage Stage) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.EADDRNOTAVAIL} {
		if errors.Is(err, e) {
			return true
		}
	}
	if stage == StageDNS || stage == StageConnect {
		return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES)
	}
	return false
}

// resolverUnreachable says a DNS lookup failed because the DNS server
// itself could not be reached: its port refused the query, or no route led
// to it. A server that does not answer in time is a dns_timeout instead.
func resolverUnreachable(err error) bool {
	for _, e := range []error{syscall.ECONNREFUSED, syscall.ENETUNREACH, syscall.EHOSTUNREACH} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func timeoutAt(s Stage) Reason {
	switch s {
	case StageDNS:
		return DNSTimeout
	case StageConnect:
		return ConnectTimeout
	case StageTLS:
		return TLSHandshakeTimeout
	case StageBody, StageDone:
		return BodyTimeout
	case StageWrite:
		// No answer while the request body still went out.
		return RequestBodyTimeout
	}
	// StageHeaders and a forward proxy's silence.
	return HeadersTimeout
}

func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, syscall.ETIMEDOUT) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

package session

import (
	"net/http"
	"strings"

	"github.com/healthctl/healthctl/internal/scheme"
)

// BodyLen is the request body's length.
func BodyLen(o *scheme.Options) int64 {
	if o.BodyFile != "" {
		return o.BodySize
	}
	return int64(len(o.Body))
}

// bodyUnsent reports, for a probe with a request body, whether the body
// has not all gone out to the kernel — the server stopped reading it —
// and how many of its bytes did (p.Mu held). The bytes handed to the
// connection and not yet written (writeBehind's queue) are not counted as
// sent; the Transport's own write buffer (4 KiB) may be.
func (p *Probe) bodyUnsent() (sent, size int64, unsent bool) {
	size = BodyLen(p.Opts)
	if size == 0 {
		return 0, 0, false
	}
	var handed int64
	if p.BodyHanded != nil {
		handed = p.BodyHanded.Load()
	}
	var queued int64
	if p.Wb != nil {
		queued = p.Wb.Pending()
	}
	sent = max(handed-queued, 0)
	return sent, size, handed < size || queued > 0
}

// ClientCertGiven reports whether --cert/--key configured a client
// certificate.
func ClientCertGiven(o *scheme.Options) bool {
	return o.TLSConfig != nil && (len(o.TLSConfig.Certificates) > 0 || o.TLSConfig.GetClientCertificate != nil)
}

// ProxyDetail is the mark a proxy leaves on an error answer it generated
// itself: squid's X-Squid-Error, or an RFC 9209 Proxy-Status entry with an
// error parameter. "" when the answer carries neither.
func ProxyDetail(h http.Header) string {
	if v := HeaderValue(h, "X-Squid-Error"); v != "" {
		return "X-Squid-Error: " + v
	}
	for _, v := range h.Values("Proxy-Status") {
		if strings.Contains(v, "error=") {
			return "Proxy-Status: " + v
		}
	}
	return ""
}

// HeaderValue is h.Get(key) for a key already in canonical form (every
// caller's is a constant): the map's first value, without canonicalizing
// the key again on each of a probe's lookups.
func HeaderValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

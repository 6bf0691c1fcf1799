package probe

import (
	"net/http"
	"strings"
	"testing"
)

// TestHeaderValueKeysCanonical: headerValue skips canonicalizing its key,
// so every key the probe asks it for must already be canonical (or it
// would miss what Header.Get finds).
func TestHeaderValueKeysCanonical(t *testing.T) {
	for _, k := range []string{"Content-Encoding", "Retry-After", "Accept-Encoding", "Range", "User-Agent", "Location", "X-Squid-Error"} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("%q is not canonical (%q)", k, c)
		}
		h := http.Header{}
		h.Set(strings.ToLower(k), "v")
		if headerValue(h, k) != h.Get(k) {
			t.Errorf("%s: headerValue %q, Get %q", k, headerValue(h, k), h.Get(k))
		}
	}
}

package drain

import "testing"

// TestHostPortTakesTheSchemesPort: the judge tells whether a port still
// answered by each endpoint's host:port (evidence.Observation.HostPorts),
// which Run fills with hostPort: a URL without a port is at its scheme's
// default one, so http://h/ready and http://h:80/live share a port.
func TestHostPortTakesTheSchemesPort(t *testing.T) {
	for u, want := range map[string]string{
		"http://127.0.0.1/ready":       "127.0.0.1:80",
		"http://127.0.0.1:80/live":     "127.0.0.1:80",
		"https://[::1]/":               "[::1]:443",
		"redis://127.0.0.1":            "127.0.0.1:6379",
		"http://127.0.0.1:8080/ready":  "127.0.0.1:8080",
		"grpc://127.0.0.1:50051/svc.M": "127.0.0.1:50051",
		"":                             "",
		"%zz":                          "",
	} {
		if got := hostPort(u); got != want {
			t.Errorf("hostPort(%q) = %q, want %q", u, got, want)
		}
	}
}

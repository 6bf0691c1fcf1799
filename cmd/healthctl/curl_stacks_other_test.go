//go:build !linux

package main

import (
	"testing"

	"github.com/healthctl/healthctl/internal/fixture/pkifix"
)

// stackCases: the real servers run on Linux only (CI's platform).
func stackCases(t *testing.T, dir string, pki *pkifix.PKI) []diffCase {
	for _, name := range []string{"nginx", "haproxy", "caddy", "apache", "unbound", "squid", "nghttpd",
		"gunicorn-flask", "uvicorn-fastapi", "node-express", "jdk-httpserver"} {
		skippedStacks.Store(name, true)
	}
	return nil
}

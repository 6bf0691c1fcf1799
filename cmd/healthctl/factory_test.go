package main

import (
	"os"
	"path/filepath"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/output"
)

// testFactory is the factory of an in-process test: its streams, its
// environment, and a user config dir that holds nothing, so a developer's
// own healthctl.yaml never changes what a test sees.
func testFactory(streams *output.Streams, getenv func(string) string) *cli.Factory {
	return &cli.Factory{Streams: streams, Getenv: getenv, UserConfigDir: emptyConfigDir}
}

// emptyConfigDir is a user config dir with no healthctl/healthctl.yaml.
func emptyConfigDir() (string, error) {
	return filepath.Join(os.TempDir(), "healthctl-test-no-config-dir"), nil
}

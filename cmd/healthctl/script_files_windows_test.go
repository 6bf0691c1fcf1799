//go:build windows

package main

import "github.com/rogpeppe/go-internal/testscript"

func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("mkfifo: no named pipes in the file system on Windows")
}

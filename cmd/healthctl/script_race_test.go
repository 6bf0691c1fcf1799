//go:build race

package main

// raceBuild: this test binary, which the scripts run as healthctl, was
// built with -race ([race] in a script; script_norace_test.go).
const raceBuild = true

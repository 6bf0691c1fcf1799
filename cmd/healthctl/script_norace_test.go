//go:build !race

package main

// raceBuild: this test binary, which the scripts run as healthctl, was
// built without -race ([race] in a script; script_race_test.go).
const raceBuild = false

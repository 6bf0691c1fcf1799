// Package kubedocs holds only a test: every Kubernetes manifest in README.md
// and docs/*.md decodes strictly into the k8s.io/api types. It is its own
// package so that k8s.io/api (a test-only dependency) is compiled into this
// test alone, never into healthctl or another package's tests.
package kubedocs

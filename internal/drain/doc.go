// Package drain will hold drain-test: starting or attaching to a service,
// signalling it as PID 1 would, and judging its shutdown from the outside
// (SPEC.md §7), plus the Kubernetes/Compose timing lint. Not built yet.
package drain

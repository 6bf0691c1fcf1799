// Package drain runs healthctl drain-test's experiment: it starts or
// attaches to a service, signals it as an orchestrator signals PID 1,
// watches its shutdown from the outside and judges it.
//
// Run does the I/O and returns what it saw (package evidence); package
// judge is pure and turns it into the request log, verdicts and a
// timeline. The I/O has two sides: the process side (package service:
// start or attach, signal, wait, kill what is left) and the traffic side
// (traffic.go, keepalive.go, endpoint.go: health polls, traffic, in-flight
// requests and the kept-alive connection, all built from probe's request,
// dialler and TLS builders — drain has no HTTP client of its own). Linting
// a manifest's timing, which runs nothing, is package manifest's job.
package drain

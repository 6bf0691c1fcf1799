// Package drain runs healthctl drain-test's experiment: it starts or
// attaches to a service, signals it as an orchestrator signals PID 1,
// watches its shutdown from the outside and judges it.
//
// Run does the I/O and returns an Observation; Judge is pure and turns it
// into verdicts and a timeline. Linting a manifest's timing, which runs
// nothing, is package manifest's job.
package drain

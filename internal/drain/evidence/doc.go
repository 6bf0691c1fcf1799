// Package evidence is what drain-test saw of one shutdown, and the timing
// the service promised: the polls, the in-flight requests, the kept-alive
// connection, the exit and drain-test's own lateness, each moment since the
// signal. The experiment (package drain) gathers it; package judge turns it
// into verdicts. It is pure data and the words for it: no I/O.
package evidence

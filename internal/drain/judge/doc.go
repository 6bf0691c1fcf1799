// Package judge is drain-test's judge: pure, it turns what the experiment
// (package drain) saw of a shutdown (package evidence) into the request
// log and one verdict per invariant, each a function of the log by the
// time each request was made, with a timeline and the formulas of a fix.
// It does no I/O and imports no prober: what the scheme table says of an
// endpoint (its host:port, whether it speaks gRPC) comes in the evidence.
package judge

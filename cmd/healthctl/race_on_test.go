//go:build race

package main

// raceBuilt is true in a -race build (the [race] script condition): a
// fleet-sized script sizes its fleet down under the race detector.
const raceBuilt = true

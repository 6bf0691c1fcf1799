//go:build !race

package main

// raceBuilt is true in a -race build (the [race] script condition).
const raceBuilt = false

// Command healthctl probes HTTP health endpoints and says why they fail.
package main

import "os"

func main() { os.Exit(Main()) }

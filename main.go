// Command planlint finds what is wrong with SQL Server query plans.
package main

import (
	"os"
	"runtime/debug"

	"github.com/planlint/planlint/cli"
)

func main() {
	limitMemory()
	os.Exit(cli.Main(os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}

// limitMemory sets a soft memory ceiling that makes the collector work
// harder before memory grows large (check and compare also let it run
// less often: see the cli package). GOMEMLIMIT in the environment wins.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}

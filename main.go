// Command planlint finds what is wrong with SQL Server query plans.
package main

import (
	"os"
	"runtime/debug"

	"github.com/planlint/planlint/cli"
)

func main() {
	tuneGC()
	os.Exit(cli.Main(os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}

// tuneGC trades memory for speed: decoding plans allocates many short-lived
// objects while the live heap stays small (plans are analysed statement by
// statement), so the collector runs less often, with a soft ceiling that
// makes it work harder before memory grows large. GOGC and GOMEMLIMIT in
// the environment win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}

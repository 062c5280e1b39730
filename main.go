// Command planlint finds what is wrong with SQL Server query plans.
package main

import (
	"os"

	"github.com/planlint/planlint/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}

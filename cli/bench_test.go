package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

// BenchmarkCheckCorpus runs `planlint check --format json` over the whole
// shared corpus in-process (all rules, every core).
func BenchmarkCheckCorpus(b *testing.B) {
	files := sharedtest.Files(b, "corpus/plans")
	args := append([]string{"check", "--format", "json", "--fail-on", "none"}, files...)
	env := Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	for b.Loop() {
		if code := Main(args, env); code != ExitOK {
			b.Fatalf("exit %d", code)
		}
	}
}

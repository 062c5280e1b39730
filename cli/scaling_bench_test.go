package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/plangen"
)

// Scaling benchmarks: each runs one hostile-input path at three sizes, so
// that ns/op and B/op across the sizes show the slope (bench/scaling
// prints the ratios and peak memory of the real binary).

func benchFile(b *testing.B, name, content string) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

func benchMain(b *testing.B, args ...string) {
	b.Helper()
	env := Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	for b.Loop() {
		if code := Main(args, env); code == ExitError {
			var errb bytes.Buffer
			env.Stderr = &errb
			Main(args, env)
			b.Fatalf("exit %d: %s", code, errb.String())
		}
	}
}

func BenchmarkScalingKeyLookups(b *testing.B) {
	for _, n := range []int{1000, 2000, 4000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchMain(b, "check", "--format", "json", benchFile(b, "kl.sqlplan", plangen.KeyLookups(n)))
		})
	}
}

func BenchmarkScalingStatements(b *testing.B) {
	for _, format := range []string{"json", "sarif", "html"} {
		for _, n := range []int{1000, 2000, 4000} {
			b.Run(fmt.Sprintf("%s/%d", format, n), func(b *testing.B) {
				benchMain(b, "check", "--format", format, benchFile(b, "st.sqlplan", plangen.Statements(n)))
			})
		}
	}
}

func BenchmarkScalingTree(b *testing.B) {
	for _, n := range []int{1000, 2000, 4000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchMain(b, "check", "--tree", "--max-depth", "65536", benchFile(b, "nl.sqlplan", plangen.NestedLoops(n)))
		})
	}
}

package catalog

import (
	"flag"
	"os"
	"testing"
)

// TestMain releases parsed tokens as early as possible in tests (not in
// benchmarks, which measure the real threshold), so that any parser step
// that reads a token after its release panics.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		releaseMin = 1
	}
	os.Exit(m.Run())
}

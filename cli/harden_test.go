package cli

import (
	"strings"
	"testing"
)

// TestDepthFlagCeiling: a --max-depth the stack cannot take is a usage
// error, not a crash deep in the parser.
func TestDepthFlagCeiling(t *testing.T) {
	inRoot(t)
	for _, args := range [][]string{
		{"check", "--max-depth", "10000000", "fixtures/queue/literal.sqlplan"},
		{"cache", "--max-depth", "10000000", "-S", "localhost"},
	} {
		_, errOut, code := run(t, "", args...)
		if code != ExitError || !strings.Contains(errOut, "--max-depth 10000000: at most 65536") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

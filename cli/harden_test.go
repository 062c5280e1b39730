package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/plangen"
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

// TestHugeNumbers: numbers past any real plan (1e308 rebinds, 1e19, thread
// rows adding up past 2^63) are saturated when parsed, so JSON and SARIF
// still encode, counts never wrap negative, and the other files keep their
// results.
func TestHugeNumbers(t *testing.T) {
	inRoot(t)
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.sqlplan")
	if err := os.WriteFile(huge, []byte(plangen.HugeNumbers()), 0o644); err != nil {
		t.Fatal(err)
	}
	other := "fixtures/queue/literal.sqlplan"
	for _, format := range []string{"json", "sarif", "text", "markdown", "html", "github"} {
		out, errOut, code := run(t, "", "check", "--format", format, huge, other)
		if code == ExitError || out == "" {
			t.Errorf("%s: exit %d, %d bytes out, stderr %q", format, code, len(out), errOut)
		}
		for _, bad := range []string{"-9,223", "-9223", "+Inf", "Infinity", " -1,", " -2 "} {
			if strings.Contains(out, bad) && (format != "html" || bad != "Infinity") { // the page's script sorts with -Infinity
				t.Errorf("%s: output holds %q", format, bad)
			}
		}
		if format == "json" || format == "sarif" {
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Errorf("%s: %v", format, err)
			}
			if format == "json" && !strings.Contains(out, "literal.sqlplan") {
				t.Errorf("%s: the other file's results are missing", format)
			}
		}
	}
	out, errOut, code := run(t, "", "compare", "--format", "json", huge, huge)
	if code == ExitError || !json.Valid([]byte(out)) {
		t.Errorf("compare: exit %d, stderr %q, output %.200q", code, errOut, out)
	}
	written := filepath.Join(dir, "x.json")
	if _, errOut, code := run(t, "", "check", "--output", "json="+written, huge); code == ExitError {
		t.Errorf("--output json=: exit %d, stderr %q", code, errOut)
	}
	if b, err := os.ReadFile(written); err != nil || !json.Valid(b) {
		t.Errorf("--output json= wrote %d bytes, %v", len(b), err)
	}
}

// TestDeepTreeOutputLinear: --tree on deeply nested joins writes output
// that grows linearly with the depth (indentation is capped), with lines
// of bounded width.
func TestDeepTreeOutputLinear(t *testing.T) {
	dir := t.TempDir()
	size := func(n int) (total, widest int) {
		path := filepath.Join(dir, "nl.sqlplan")
		if err := os.WriteFile(path, []byte(plangen.NestedLoops(n)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := run(t, "", "check", "--tree", "--max-depth", "65536", path)
		if code == ExitError {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, l := range strings.Split(out, "\n") {
			widest = max(widest, len(l))
		}
		return len(out), widest
	}
	small, _ := size(1000)
	big, widest := size(4000)
	if ratio := float64(big) / float64(small); ratio > 4.5 {
		t.Errorf("output %d bytes at depth 1000, %d at 4000: ratio %.1f, want about 4", small, big, ratio)
	}
	if widest > 300 {
		t.Errorf("widest line %d bytes", widest)
	}
}

// TestDepthCeilingAllFormats: a plan at the deepest nesting the parser
// accepts goes through the rules and every renderer without exhausting
// the stack.
func TestDepthCeilingAllFormats(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("renders a 14 MB plan in every format (run without -race and -short)")
	}
	dir := t.TempDir()
	deepest := filepath.Join(dir, "deepest.sqlplan")
	if err := os.WriteFile(deepest, []byte(plangen.NestedLoops((65536-9)/2)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--format", "json"}, {"--format", "sarif"}, {"--format", "dot"}, {"--tree"}, {"--format", "markdown"}, {"--format", "html"},
	} {
		_, errOut, code := run(t, "", append(append([]string{"check", "--max-depth", "65536"}, args...), deepest)...)
		if code == ExitError {
			t.Errorf("%v: exit %d: %.300s", args, code, errOut)
		}
	}
}

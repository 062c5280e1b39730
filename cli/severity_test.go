package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

// plan14 is a real procedure plan with 20 warnings and one info finding
// (a Key Lookup on a system table, statement 49).
func plan14(t *testing.T) string {
	return filepath.Join(sharedtest.Require(t, "corpus/plans"), "supratimas__plans__set01__plans__plan14.sqlplan")
}

// TestMinSeverity: the human formats hide info by default and say so,
// the summary still counts it; --min-severity info shows it and error
// hides warnings; JSON and SARIF keep everything.
func TestMinSeverity(t *testing.T) {
	p := plan14(t)
	tests := []struct {
		args       []string
		want, not  []string
		infoInJSON bool
	}{
		{args: []string{"--format", "text"}, want: []string{"0 errors, 20 warnings, 1 info in 1 file; 1 info finding not shown (--min-severity info shows them)"}, not: []string{": info ["}},
		{args: []string{"--format", "text", "--min-severity", "info"}, want: []string{"stmt 49 node 9: info [PL102 key-lookup]", "0 errors, 20 warnings, 1 info in 1 file\n"}},
		{args: []string{"--format", "text", "--min-severity", "error"}, want: []string{"21 warning and info findings not shown (--min-severity warning shows them)"}, not: []string{": warning ["}},
		{args: []string{"--format", "markdown"}, want: []string{"**0 errors, 20 warnings, 1 info**", "1 info finding not shown"}, not: []string{"| info |"}},
		{args: []string{"--format", "markdown", "--min-severity", "info"}, want: []string{"| info |"}},
		{args: []string{"--format", "github"}, not: []string{"::notice file="}},
		{args: []string{"--format", "github", "--min-severity", "info"}, want: []string{"::notice file="}},
		{args: []string{"--format", "html"}, want: []string{"1 info finding not shown"}},
		{args: []string{"--format", "json"}, want: []string{`"severity": "info"`}},
		{args: []string{"--format", "sarif"}, want: []string{`"level": "note"`}},
	}
	for _, tt := range tests {
		out, errOut, code := runIn(t, t.TempDir(), nil, append([]string{"check", "--fail-on", "none", p}, tt.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errOut)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q", tt.args, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(out, n) {
				t.Errorf("%v: output has %q", tt.args, n)
			}
		}
	}
	if _, errOut, code := runIn(t, t.TempDir(), nil, "check", "--min-severity", "loud", p); code != 2 || !strings.Contains(errOut, "--min-severity") {
		t.Errorf("--min-severity loud: exit %d, %q", code, errOut)
	}
}

// TestTextSortsByImpact: text lists a file's findings worst first (errors,
// then by statement cost), --sort location in plan order.
func TestTextSortsByImpact(t *testing.T) {
	p := plan14(t)
	lines := func(args ...string) []string {
		out, errOut, _ := runIn(t, t.TempDir(), nil, append([]string{"check", "--fail-on", "none", "--min-severity", "info", p}, args...)...)
		if errOut != "" {
			t.Fatalf("%v: %s", args, errOut)
		}
		var ls []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, p) {
				ls = append(ls, strings.TrimPrefix(l, p))
			}
		}
		return ls
	}
	byImpact, byLocation := lines(), lines("--sort", "location")
	if len(byImpact) != 21 || len(byLocation) != 21 {
		t.Fatalf("%d and %d finding lines, want 21", len(byImpact), len(byLocation))
	}
	// StatementSubTreeCost in the XML: stmt 3 0.0132843, stmt 42
	// 0.0132842, stmt 33 (first) 0.0132841, stmt 49 0.0131487. The info
	// finding comes last.
	for i, want := range []string{"stmt 3: warning", "stmt 42: warning", "stmt 33#1: warning"} {
		if !strings.Contains(byImpact[i], want) {
			t.Errorf("by impact, line %d: %s, want %s", i+1, byImpact[i], want)
		}
	}
	if !strings.Contains(byImpact[20], ": info [") {
		t.Errorf("last by impact: %s", byImpact[20])
	}
	if !strings.Contains(byLocation[0], "stmt 3: warning") || !strings.Contains(byLocation[1], "stmt 4: warning") {
		t.Errorf("first by location: %s, %s", byLocation[0], byLocation[1])
	}
	if byImpact[0] == byLocation[0] && byImpact[1] == byLocation[1] {
		t.Errorf("--sort location gives the same order as impact")
	}
	if _, errOut, code := runIn(t, t.TempDir(), nil, "check", "--sort", "name", p); code != 2 || !strings.Contains(errOut, "--sort") {
		t.Errorf("--sort name: exit %d, %q", code, errOut)
	}
}

package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

// spoolPlan is a real actual plan (NOT IN over a nullable column, 1,570 s)
// with one error (the Row Count Spool of the NOT IN, node 15), two warnings
// (the 188,928-page hash spill at node 6 and the missing-index request on
// #OldUsers) and two infos (the repeated inner scan at node 14 and the row
// goal at node 16).
func spoolPlan(t *testing.T) string {
	return filepath.Join(sharedtest.Require(t, "corpus/plans"), "perfstudio__tests__PlanViewer.Core.Tests__Plans__row-count-spool-slow.sqlplan")
}

// TestMinSeverity: the human formats hide info by default and say so,
// the summary still counts it; --min-severity info shows it and error
// hides warnings; JSON and SARIF keep everything.
func TestMinSeverity(t *testing.T) {
	p := spoolPlan(t)
	tests := []struct {
		args      []string
		want, not []string
	}{
		{args: []string{"--format", "text"}, want: []string{"1 error, 2 warnings, 2 infos in 1 file; 2 info findings not shown (--min-severity info shows them)"}, not: []string{": info ["}},
		{args: []string{"--format", "text", "--min-severity", "info"}, want: []string{"stmt 1 node 14: info [PL306 nested-loops-repetition]", "1 error, 2 warnings, 2 infos in 1 file\n"}},
		{args: []string{"--format", "text", "--min-severity", "error"}, want: []string{"4 warning and info findings not shown (--min-severity warning shows them)"}, not: []string{": warning ["}},
		{args: []string{"--format", "markdown"}, want: []string{"**1 error, 2 warnings, 2 infos**", "2 info findings not shown"}, not: []string{"| info |"}},
		{args: []string{"--format", "markdown", "--min-severity", "info"}, want: []string{"| info |"}},
		{args: []string{"--format", "github"}, not: []string{"::notice file="}},
		{args: []string{"--format", "github", "--min-severity", "info"}, want: []string{"::notice file="}},
		{args: []string{"--format", "html"}, want: []string{"2 info findings not shown"}},
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

// TestTextSortsByImpact: text lists a file's findings worst first,
// --sort location in plan order (statement, then node).
func TestTextSortsByImpact(t *testing.T) {
	p := spoolPlan(t)
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
	if len(byImpact) != 5 || len(byLocation) != 5 {
		t.Fatalf("%d and %d finding lines, want 5", len(byImpact), len(byLocation))
	}
	if !strings.Contains(byImpact[0], "node 15: error [PL310") || !strings.Contains(byImpact[4], ": info [") {
		t.Errorf("by impact: first %s, last %s", byImpact[0], byImpact[4])
	}
	// Plan order: the statement-level request, then nodes 6, 14, 15, 16.
	for i, want := range []string{"stmt 1: warning [PL304", "node 6: warning", "node 14: info", "node 15: error", "node 16: info"} {
		if !strings.Contains(byLocation[i], want) {
			t.Errorf("by location, line %d: %s, want %s", i+1, byLocation[i], want)
		}
	}
	if _, errOut, code := runIn(t, t.TempDir(), nil, "check", "--sort", "name", p); code != 2 || !strings.Contains(errOut, "--sort") {
		t.Errorf("--sort name: exit %d, %q", code, errOut)
	}
}

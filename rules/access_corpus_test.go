package rules

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
)

// corpusFindings analyses one shared corpus plan and returns the rule's
// findings.
func corpusFindings(t *testing.T, file string, rule *Rule) []Finding {
	t.Helper()
	dir := sharedtest.Require(t, "corpus/plans")
	return fileFindings(t, filepath.Join(dir, file), rule)
}

// fileFindings analyses a plan file with every rule and keeps one rule's
// findings (rules that read others' findings need them to have run).
func fileFindings(t *testing.T, path string, rule *Rule) []Finding {
	t.Helper()
	d, err := plan.ParseFile(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	all, err := Analyze(d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []Finding
	for _, f := range all {
		if f.Rule == rule.Name {
			out = append(out, f)
		}
	}
	return out
}

// atNode returns the finding at the node, or nil.
func atNode(fs []Finding, node int) *Finding {
	for i := range fs {
		if fs[i].NodeID != nil && *fs[i].NodeID == node {
			return &fs[i]
		}
	}
	return nil
}

// nodeCase is an expectation about one node of a plan: want 0 means no
// finding there; contains lists texts the message or fix must hold.
type nodeCase struct {
	file     string
	node     int
	want     Severity
	contains []string
}

func checkNodeCases(t *testing.T, rule *Rule, cases []nodeCase, findings func(t *testing.T, file string) []Finding) {
	t.Helper()
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			f := atNode(findings(t, c.file), c.node)
			if c.want == 0 {
				if f != nil {
					t.Fatalf("node %d: want no %s finding, got %s: %s", c.node, rule.Name, f.Severity, f.Message)
				}
				return
			}
			if f == nil {
				t.Fatalf("node %d: want a %s %s finding, got none", c.node, c.want, rule.Name)
			}
			if f.Severity != c.want {
				t.Errorf("node %d: severity %s, want %s: %s", c.node, f.Severity, c.want, f.Message)
			}
			for _, s := range c.contains {
				if !strings.Contains(f.Message+" | "+f.Fix, s) {
					t.Errorf("node %d: %q not in %s | %s", c.node, s, f.Message, f.Fix)
				}
			}
		})
	}
}

func corpusCases(t *testing.T, rule *Rule, cases []nodeCase) {
	t.Helper()
	checkNodeCases(t, rule, cases, func(t *testing.T, file string) []Finding { return corpusFindings(t, file, rule) })
}

// fixturePlan is a plan written for these tests in testdata/plans.
func fixturePlan(name string) string { return filepath.Join("testdata", "plans", name) }

func fixtureCases(t *testing.T, rule *Rule, cases []nodeCase) {
	t.Helper()
	checkNodeCases(t, rule, cases, func(t *testing.T, file string) []Finding { return fileFindings(t, fixturePlan(file), rule) })
}

package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/rules"
)

// repeatedIDReport loads a real plan whose batch carries StatementId 33
// twice (INSERT EXEC with two operators, then EXECUTE PROC without a plan)
// and adds one finding on each of the two, both on node 0.
func repeatedIDReport(t *testing.T) (*Report, *Statement, *Statement) {
	t.Helper()
	dir := sharedtest.Require(t, "corpus/plans")
	doc, err := plan.ParseFile(filepath.Join(dir, "supratimas__plans__set01__plans__plan14.sqlplan"), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &File{Path: "plan14.sqlplan", Statements: Summarize(doc), Plans: []*plan.Document{doc}}
	var first, second *Statement
	for _, s := range f.Statements {
		if s.StatementID == 33 {
			if first == nil {
				first = s
			} else {
				second = s
			}
		}
	}
	if first == nil || second == nil || first.Nodes == 0 || second.Nodes != 0 {
		t.Fatalf("plan14 no longer repeats StatementId 33 as INSERT EXEC + EXECUTE PROC")
	}
	zero := 0
	on := func(s *Statement, code string) *Finding {
		return &Finding{Finding: rules.Finding{Rule: "test-" + code, Code: code, Severity: rules.Warning, Batch: s.Batch,
			StatementID: s.StatementID, Ordinal: s.Ordinal, NodeID: &zero, Message: "on " + s.Type}}
	}
	f.Findings = []*Finding{on(first, "PL901"), on(second, "PL902")}
	return &Report{Tool: "planlint", Files: []*File{f}}, first, second
}

// TestFindingsMatchStatementsByOrdinal: a finding on the second of two
// statements with one StatementId belongs to that statement in every
// renderer, not to the first.
func TestFindingsMatchStatementsByOrdinal(t *testing.T) {
	r, first, second := repeatedIDReport(t)
	f := r.Files[0]
	if got := f.StatementOf(f.Findings[0]); got != first {
		t.Errorf("finding on ordinal %d matched ordinal %v", first.Ordinal, got)
	}
	if got := f.StatementOf(f.Findings[1]); got != second {
		t.Errorf("finding on ordinal %d matched %+v", second.Ordinal, got)
	}

	// The tree marks node 0 of the INSERT EXEC with PL901 only: the
	// EXECUTE PROC has no node 0.
	var tree bytes.Buffer
	if err := Text(&tree, r, TextOptions{Tree: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tree.String(), "← PL902") || !strings.Contains(tree.String(), "← PL901") ||
		!strings.Contains(tree.String(), "stmt 33#2 node 0: warning [PL902") {
		t.Errorf("tree marks the wrong statement's node:\n%s", tree.String())
	}
	dot := renderDOT(t, r, DOTOptions{})
	if strings.Contains(dot, "PL902") && !strings.Contains(dot, "EXECUTE PROC") {
		t.Errorf("dot puts PL902 on the INSERT EXEC:\n%s", dot)
	}

	// SARIF: each result names its own statement, and the two results get
	// different fingerprints although rule, node and StatementId agree
	// (the two statements share their text).
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID              string            `json:"ruleId"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
				Fingerprints        map[string]string `json:"fingerprints"`
				Properties          map[string]any    `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(renderSARIF(t, r, SARIFOptions{NoRedact: true}), &log); err != nil {
		t.Fatal(err)
	}
	res := log.Runs[0].Results
	if len(res) != 2 {
		t.Fatalf("%d SARIF results, want 2", len(res))
	}
	ords := map[string]float64{}
	for _, x := range res {
		ords[x.RuleID], _ = x.Properties["statement_ordinal"].(float64)
	}
	if ords["PL901"] != float64(first.Ordinal) || ords["PL902"] != float64(second.Ordinal) {
		t.Errorf("statement_ordinal properties %v, want PL901=%d PL902=%d", ords, first.Ordinal, second.Ordinal)
	}
	if res[0].Fingerprints["planlint/statement/v1"] == "" || res[0].Fingerprints["planlint/statement/v1"] == res[1].Fingerprints["planlint/statement/v1"] {
		t.Errorf("statement fingerprints %v and %v should differ", res[0].Fingerprints, res[1].Fingerprints)
	}

	// The HTML places each finding in its own statement's section.
	page := renderHTML(t, r, HTMLOptions{NoRedact: true})
	i1, i2 := strings.Index(page, "on INSERT EXEC"), strings.Index(page, "on EXECUTE PROC")
	if i1 < 0 || i2 < 0 || i2 < i1 {
		t.Errorf("HTML findings out of place: INSERT EXEC at %d, EXECUTE PROC at %d", i1, i2)
	}
}

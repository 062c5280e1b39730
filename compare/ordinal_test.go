package compare

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/rules"
)

// TestFindingsKeyedByOrdinal: a real plan repeats StatementId 33 (INSERT
// EXEC, then EXECUTE PROC). A finding that moves from one to the other is
// gone from one statement and new on the other, not kept.
func TestFindingsKeyedByOrdinal(t *testing.T) {
	dir := sharedtest.Require(t, "corpus/plans")
	doc, err := plan.ParseFile(filepath.Join(dir, "supratimas__plans__set01__plans__plan14.sqlplan"), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ords []int
	for _, s := range doc.Statements() {
		if s.ID == 33 {
			ords = append(ords, s.Ordinal)
		}
	}
	if len(ords) != 2 {
		t.Fatalf("plan14 has %d statements with id 33, want 2", len(ords))
	}
	on := func(ord int) []rules.Finding {
		return []rules.Finding{{Rule: "set-options", Code: "PL100", Severity: rules.Warning, Batch: 1, StatementID: 33, Ordinal: ord}}
	}
	r := Documents(Side{Name: "a", Document: doc, Findings: on(ords[1])}, Side{Name: "b", Document: doc, Findings: on(ords[0])})
	if r.Findings.Kept != 0 || len(r.Findings.New) != 1 || len(r.Findings.Gone) != 1 {
		t.Errorf("kept %d, new %d, gone %d; want 0, 1, 1", r.Findings.Kept, len(r.Findings.New), len(r.Findings.Gone))
	}
	same := Documents(Side{Name: "a", Document: doc, Findings: on(ords[0])}, Side{Name: "b", Document: doc, Findings: on(ords[0])})
	if same.Findings.Kept != 1 {
		t.Errorf("the same finding on the same statement: kept %d, want 1", same.Findings.Kept)
	}
}

// TestAbsentOperatorIsNull: an operator only one plan has carries no
// figures for the other side (JSON null, not 0).
func TestAbsentOperatorIsNull(t *testing.T) {
	r := Documents(fixture(t, "literal.sqlplan"), fixture(t, "param.sqlplan"))
	if len(r.Statements) == 0 {
		t.Fatal("no statement pair")
	}
	onlyA := 0
	for _, o := range r.Statements[0].Operators {
		if o.NodeB != nil {
			continue
		}
		onlyA++
		if o.CostShare.B != nil || o.EstimatedRows.B != nil || o.CostShare.A == nil {
			t.Errorf("%s only in A: cost share %v → %v, rows → %v", o.Operator, o.CostShare.A, o.CostShare.B, o.EstimatedRows.B)
		}
		b, err := json.Marshal(o.CostShare)
		if err != nil || !strings.HasSuffix(string(b), `"b":null}`) {
			t.Errorf("JSON %s, want b null", b)
		}
	}
	if onlyA == 0 {
		t.Fatal("literal.sqlplan has no operator that param.sqlplan lacks (Top, Index Scan)")
	}
}

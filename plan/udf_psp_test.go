package plan

import (
	"path/filepath"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

// TestScalarUDFCalls: UserDefinedFunction elements are recorded on the
// operator whose expressions call them, in DefinedValues (skipped
// otherwise) and in predicates alike. In plan5, Compute Scalar node 1
// calls [OurLabReporting].[dbo].[Function_GetRoundedDate] in its
// DefinedValues; in ConditionPlan a predicate calls [master].[dbo].[foo].
func TestScalarUDFCalls(t *testing.T) {
	dir := sharedtest.Require(t, "corpus/plans")
	calls := func(file string) map[int][]string {
		d, err := ParseFile(filepath.Join(dir, file), Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[int][]string{}
		for _, s := range d.Statements() {
			for _, q := range s.Plans() {
				for _, n := range q.Nodes {
					for _, u := range n.UDFs {
						out[n.NodeID] = append(out[n.NodeID], u.Name)
					}
				}
			}
		}
		return out
	}
	got := calls("supratimas__plans__set01__plans__plan5.sqlplan")
	if len(got[1]) == 0 || got[1][0] != "[OurLabReporting].[dbo].[Function_GetRoundedDate]" {
		t.Errorf("plan5: UDF calls by node %v", got)
	}
	got = calls("supratimas__plans__ConditionPlan.sqlplan")
	found := false
	for _, names := range got {
		for _, n := range names {
			found = found || n == "[master].[dbo].[foo]"
		}
	}
	if !found {
		t.Errorf("ConditionPlan: [master].[dbo].[foo] not found in %v", got)
	}
}

// TestDispatcher: pspo-example is variant 3 of a PSP-optimized query for
// OwnerUserId = @p with a cardinality range of 100 to 1000.
func TestDispatcher(t *testing.T) {
	dir := sharedtest.Require(t, "corpus/plans")
	d, err := ParseFile(filepath.Join(dir, "perfstudio__tests__PlanViewer.Core.Tests__Plans__pspo-example.sqlplan"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := d.Statements()[0]
	if len(s.PSPPredicates) != 1 || s.PSPPredicates[0].Low != 100 || s.PSPPredicates[0].High != 1000 ||
		s.PSPPredicates[0].Predicate != "[StackOverflow2013].[dbo].[Posts].[OwnerUserId] as [p].[OwnerUserId]=[@p]" {
		t.Fatalf("PSP predicates %+v", s.PSPPredicates)
	}
	if s.QueryPlan.QueryVariantID != 3 {
		t.Errorf("QueryVariantID %d", s.QueryPlan.QueryVariantID)
	}
}

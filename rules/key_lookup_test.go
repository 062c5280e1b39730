package rules

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
)

// lookupPlan is a Nested Loops over an Index Seek on IX_Work_Status
// (seeking on Status) and a Key Lookup into PK_Work with the given output
// columns, residual predicate and attributes.
func lookupPlan(execs float64, outputs []string, residual, seekAttrs, lookupRT string, schema string) string {
	col := func(name string) string {
		return fmt.Sprintf(`<ColumnReference Database="[WorkDb]" Schema="[%s]" Table="[Work]" Column="%s"/>`, schema, name)
	}
	obj := func(index, kind string) string {
		return fmt.Sprintf(`<Object Database="[WorkDb]" Schema="[%s]" Table="[Work]" Index="[%s]" IndexKind="%s"/>`, schema, index, kind)
	}
	var out strings.Builder
	for _, c := range outputs {
		out.WriteString(col(c))
	}
	pred := ""
	if residual != "" {
		pred = `<Predicate><ScalarOperator ScalarString="` + residual + `"><Compare CompareOp="EQ"><ScalarOperator><Identifier>` + col("Kind") +
			`</Identifier></ScalarOperator><ScalarOperator><Const ConstValue="(3)"/></ScalarOperator></Compare></ScalarOperator></Predicate>`
	}
	lookup := op(2, "Clustered Index Seek", "Clustered Index Seek", 1, 5, fmt.Sprintf(`EstimateRebinds="%g"`, execs-1),
		`<IndexScan Lookup="1" Ordered="1">`+obj("PK_Work", "Clustered")+pred+`</IndexScan>`)
	lookup = strings.Replace(lookup, `EstimateRebinds="0" EstimateRewinds="0" `, "", 1)
	lookup = strings.Replace(lookup, "<OutputList/>", "<OutputList>"+out.String()+"</OutputList>"+lookupRT, 1)
	seek := op(1, "Index Seek", "Index Seek", execs, 0.01, "",
		`<IndexScan Ordered="1" `+seekAttrs+`>`+obj("IX_Work_Status", "NonClustered")+
			`<SeekPredicates><SeekPredicateNew><SeekKeys><Prefix ScanType="EQ"><RangeColumns>`+col("Status")+
			`</RangeColumns><RangeExpressions><ScalarOperator><Const ConstValue="(0)"/></ScalarOperator></RangeExpressions></Prefix></SeekKeys></SeekPredicateNew></SeekPredicates></IndexScan>`)
	return op(0, "Nested Loops", "Inner Join", execs, 5.1, "", `<NestedLoops Optimized="0">`+seek+lookup+`</NestedLoops>`)
}

func TestKeyLookupFix(t *testing.T) {
	cases := []struct {
		name  string
		tree  string
		want  Severity // 0: no finding
		fix   []string
		msg   []string
		noFix string
	}{
		{"re-tested predicate column goes in the INCLUDE list", lookupPlan(5000, nil, "[Kind]=(3)", "", "", "dbo"), Error,
			[]string{"CREATE INDEX IX_Work_Status ON dbo.Work (Status) INCLUDE (Kind) WITH (DROP_EXISTING = ON);",
				"the keys shown are those node 1 seeks on (Status)", "remaining key columns and its current INCLUDE columns"},
			[]string{"fetches no columns and re-tests [Kind]=(3)"}, ""},
		{"fetched and re-tested columns", lookupPlan(5000, []string{"CreatedAt"}, "[Kind]=(3)", "", "", "dbo"), Error,
			[]string{"INCLUDE (CreatedAt, Kind) WITH (DROP_EXISTING = ON)"}, nil, ""},
		{"system table", lookupPlan(5000, []string{"CreatedAt"}, "", "", "", "sys"), 0, nil, nil, ""},
		{"forced seek", lookupPlan(5000, []string{"CreatedAt"}, "", `ForcedIndex="1" ForceSeek="1"`, "", "dbo"), Error,
			[]string{"or drop an index hint and FORCESEEK"}, []string{"forces node 1 with an index hint and FORCESEEK"}, ""},
		{"select star", lookupPlan(5000, strings.Fields("A B C D E F G H I J K"), "", "", "", "dbo"), Info,
			[]string{"fetches 11 columns", "no SELECT *"}, nil, "CREATE INDEX"},
		{"actual plan: 2,000 lookups are most of the cost but not an error", lookupPlan(1, []string{"CreatedAt"}, "", "",
			`<RunTimeInformation><RunTimeCountersPerThread Thread="0" ActualRows="2000" ActualExecutions="2000"/></RunTimeInformation>`, "dbo"),
			Warning, []string{"INCLUDE (CreatedAt)"}, []string{"2,000 executions (actual)", "estimated cost scaled to actual executions"}, ""},
		{"quick on an actual plan", lookupPlan(1, []string{"CreatedAt"}, "", "",
			`<RunTimeInformation><RunTimeCountersPerThread Thread="0" ActualRows="5000" ActualExecutions="5000" ActualElapsedms="20" ActualCPUms="20"/></RunTimeInformation>`, "dbo"),
			Info, []string{"INCLUDE (CreatedAt)"}, []string{"5,000 executions (actual)"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := analyze(t, showplan(t, stmt("", "", "", c.tree)), nil, KeyLookup)
			if c.want == 0 {
				if len(fs) != 0 {
					t.Fatalf("want no finding, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 {
				t.Fatalf("want one finding, got %+v", fs)
			}
			f := fs[0]
			if f.Severity != c.want {
				t.Errorf("severity %s, want %s: %s", f.Severity, c.want, f.Message)
			}
			for _, s := range c.fix {
				if !strings.Contains(f.Fix, s) {
					t.Errorf("fix lacks %q: %s", s, f.Fix)
				}
			}
			for _, s := range c.msg {
				if !strings.Contains(f.Message, s) {
					t.Errorf("message lacks %q: %s", s, f.Message)
				}
			}
			if c.noFix != "" && strings.Contains(f.Fix, c.noFix) {
				t.Errorf("fix contains %q: %s", c.noFix, f.Fix)
			}
		})
	}
}

// TestKeyLookupShareFromActualExecutions: an estimated single lookup that
// ran 10,000 times is most of the statement, not its estimated 1%.
func TestKeyLookupShareFromActualExecutions(t *testing.T) {
	tree := lookupPlan(1, []string{"CreatedAt"}, "", "",
		`<RunTimeInformation><RunTimeCountersPerThread Thread="0" ActualRows="10000" ActualExecutions="10000"/></RunTimeInformation>`, "dbo")
	tree = strings.Replace(tree, `EstimatedTotalSubtreeCost="5" Parallel="0" >`, `EstimatedTotalSubtreeCost="0.01" Parallel="0" >`, 1)
	tree = strings.Replace(tree, `EstimatedTotalSubtreeCost="5.1"`, `EstimatedTotalSubtreeCost="1"`, 1)
	fs := analyze(t, showplan(t, stmt("", "", "", tree)), nil, KeyLookup)
	if len(fs) != 1 {
		t.Fatalf("want one finding, got %+v", fs)
	}
	share, _ := fs[0].Evidence["cost_share"].(float64)
	if share < 0.9 || fs[0].Evidence["cost_share_kind"] != "estimated cost scaled to actual executions" {
		t.Errorf("cost share %v (%v), want above 0.9 scaled to actual executions: %s", share, fs[0].Evidence["cost_share_kind"], fs[0].Message)
	}
}

// TestLookupFollowsItsOwnAlias: in a self-join of Posts the lookup into
// jonsAnswer follows the ParentIdIdx seek of jonsAnswer (node 13), not the
// first Posts access of the outer input (node 7, alias myAnswer).
func TestLookupFollowsItsOwnAlias(t *testing.T) {
	plans := sharedtest.Require(t, "corpus/plans")
	d, err := plan.ParseFile(filepath.Join(plans, "hqp__test_plans__stack overflow__jon skeet comparison.sqlplan"), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lookup := d.Statements()[0].Node(15, "")
	if lookup == nil || !lookup.IsLookup() {
		t.Fatalf("node 15 is not a lookup: %+v", lookup)
	}
	if outer := lookupOuterAccess(lookup); outer == nil || outer.NodeID != 13 {
		t.Errorf("outer access of node 15 = %+v, want node 13", outer)
	}
}

package rules

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
)

// corpusFindings runs one rule over a corpus plan.
func corpusFindings(t *testing.T, file string, r *Rule) []Finding {
	t.Helper()
	dir := sharedtest.Require(t, "corpus/plans")
	d, err := plan.ParseFile(filepath.Join(dir, file), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return analyze(t, d, nil, r)
}

// tvScan is a Table Scan of a table variable.
func tvScan(id int, name string, est float64) string {
	return op(id, "Table Scan", "Table Scan", est, 0.0033, "",
		`<TableScan Ordered="0" ForcedIndex="0" ForceScan="0" NoExpandHint="0"><Object Table="[`+name+`]"/></TableScan>`)
}

// withRuntime inserts RunTimeInformation after the RelOp's OutputList.
func withRuntime(relop, rt string) string {
	if rt == "" {
		return relop
	}
	return strings.Replace(relop, "<OutputList/>", "<OutputList/>"+rt, 1)
}

func tvLoop(outerRows, innerExecs int64, actual bool, ce int) string {
	outerRT, innerRT, loopRT := "", "", ""
	if actual {
		outerRT, innerRT, loopRT = runtime(outerRows, 1), runtime(innerExecs, innerExecs), runtime(innerExecs, 1)
	}
	inner := withRuntime(op(2, "Clustered Index Seek", "Clustered Index Seek", 1, 0.0033, "",
		`<IndexScan Ordered="1" ForcedIndex="0" ForceScan="0" NoExpandHint="0"><Object Database="[WorkDb]" Schema="[dbo]" Table="[WorkDetail]" Index="[PK_WorkDetail]" IndexKind="Clustered"/></IndexScan>`), innerRT)
	outer := withRuntime(tvScan(1, "@ids", 1), outerRT)
	loop := withRuntime(op(0, "Nested Loops", "Inner Join", 1, 0.0066, "", `<NestedLoops Optimized="0">`+outer+inner+`</NestedLoops>`), loopRT)
	return stmt(fmt.Sprintf(`StatementSubTreeCost="0.0066" CardinalityEstimationModelVersion="%d"`, ce), "", "", loop)
}

func TestTableVariable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		stmt     string
		want     Severity // 0: no finding
		msg, fix string
	}{
		{"drives a loop 50,000 times", tvLoop(50000, 50000, true, 140), Warning,
			"table variable @ids was estimated at 1 row per execution and returned 50,000 (50,000× under); the plan built for that guess runs the inner side of Nested Loops (node 0), Clustered Index Seek (node 2), 50,000 times",
			"cardinality model 140: at compatibility level 150+"},
		{"a few hundred rows is context", tvLoop(500, 500, true, 150), Info, "returned 500", "deferred compilation (compatibility level 150+) estimated from the row count at first compile"},
		{"a handful of rows is fine", tvLoop(50, 50, true, 150), 0, "", ""},
		{"estimated plans show no actual rows", tvLoop(50000, 50000, false, 150), 0, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := analyze(t, showplan(t, tc.stmt), nil, TableVariable)
			if tc.want == 0 {
				if len(fs) != 0 {
					t.Fatalf("want no finding, got %v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Severity != tc.want || *fs[0].NodeID != 1 {
				t.Fatalf("want one %s at node 1, got %+v", tc.want, fs)
			}
			if !strings.Contains(fs[0].Message, tc.msg) || !strings.Contains(fs[0].Fix, tc.fix) {
				t.Errorf("message %q\nfix %q", fs[0].Message, fs[0].Fix)
			}
		})
	}
}

// TestTableVariableCorpus: in TestPlan02 statement 5 (MERGE) the
// table-valued parameter @PrimaryKeyChangesTvp holds 100 rows, estimated at
// 1, at nodes 34, 47, 108 and 246; through node 47 it drives Nested Loops
// node 43, whose inner Lazy Spool (node 54) replays 363,108 rows 200 times
// (72,621,600 rows). One finding, at node 47, names them all.
func TestTableVariableCorpus(t *testing.T) {
	fs := corpusFindings(t, "supratimas__plans__TestPlan02.sqlplan", TableVariable)
	if len(fs) != 1 {
		t.Fatalf("want one finding, got %d: %+v", len(fs), fs)
	}
	f := fs[0]
	if f.Batch != 5 || f.StatementID != 5 || *f.NodeID != 47 || f.Severity != Warning {
		t.Fatalf("got %+v", f)
	}
	for _, want := range []string{"72,621,600 rows", "nodes 34, 47, 108, 246", "Table Spool (Lazy Spool) (node 54)"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	if fs := corpusFindings(t, "perfstudio__tests__PlanViewer.Core.Tests__Plans__table_variable_plan.sqlplan", TableVariable); len(fs) != 0 {
		t.Errorf("table_variable_plan: estimated 3, actual 3: want silence, got %+v", fs)
	}
}

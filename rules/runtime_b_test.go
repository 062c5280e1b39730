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

// goalScan is a Clustered Index Scan of dbo.Votes under a row goal, with a
// residual predicate PostId = outer reference.
func goalScan(est, noGoal float64, rows, read int64, elapsed string) string {
	rt := ""
	if rows >= 0 {
		rt = fmt.Sprintf(`<RunTimeInformation><RunTimeCountersPerThread Thread="0" ActualRows="%d" ActualRowsRead="%d" ActualEndOfScans="1" ActualExecutions="1" %s/></RunTimeInformation>`, rows, read, elapsed)
	}
	pred := `<Predicate><ScalarOperator ScalarString="[v].[PostId]=[p].[Id]"><Compare CompareOp="EQ">` +
		`<ScalarOperator><Identifier><ColumnReference Database="[SO]" Schema="[dbo]" Table="[Votes]" Alias="[v]" Column="PostId"/></Identifier></ScalarOperator>` +
		`<ScalarOperator><Identifier><ColumnReference Database="[SO]" Schema="[dbo]" Table="[Posts]" Alias="[p]" Column="Id"/></Identifier></ScalarOperator>` +
		`</Compare></ScalarOperator></Predicate>`
	scanOp := withRuntime(op(2, "Clustered Index Scan", "Clustered Index Scan", est, 4.8, fmt.Sprintf(`EstimateRowsWithoutRowGoal="%g"`, noGoal),
		`<IndexScan Ordered="0" ForcedIndex="0" ForceScan="0" NoExpandHint="0"><Object Database="[SO]" Schema="[dbo]" Table="[Votes]" Index="[PK_Votes_Id]" IndexKind="Clustered"/>`+pred+`</IndexScan>`), rt)
	top := op(1, "Top", "Top", 1, 4.8, "", `<Top><TopExpression><ScalarOperator ScalarString="(1)"><Const ConstValue="(1)"/></ScalarOperator></TopExpression>`+scanOp+`</Top>`)
	return stmt(`StatementSubTreeCost="4.8"`, "", "", top)
}

func TestRowGoal(t *testing.T) {
	for _, tc := range []struct {
		name string
		stmt string
		want Severity
		msg  string
	}{
		{"read everything in 5 s", goalScan(1, 49, 0, 52928720, `ActualElapsedms="5120" ActualCPUms="5119"`), Warning,
			"Clustered Index Scan was planned under a row goal for 1 row per execution (49 without the goal) but read 52,928,720 rows to return 0 in 5,120 ms; the goal comes from Top (node 1)"},
		{"fast despite the failure", goalScan(1, 49, 0, 52928720, `ActualElapsedms="90" ActualCPUms="90"`), Info, "in 90 ms"},
		{"no timings: graded by rows", goalScan(1, 49, 0, 2000000, ""), Warning, "read 2,000,000 rows"},
		{"the goal held", goalScan(1, 1000, 1, 3, `ActualElapsedms="0" ActualCPUms="0"`), 0, ""},
		{"the goal barely changed the estimate", goalScan(10, 20, 0, 52928720, ""), 0, ""},
		{"estimated plan", goalScan(1, 49, -1, 0, ""), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := analyze(t, showplan(t, tc.stmt), nil, RowGoal)
			if tc.want == 0 {
				if len(fs) != 0 {
					t.Fatalf("want silence, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Severity != tc.want || *fs[0].NodeID != 2 {
				t.Fatalf("want one %s at node 2, got %+v", tc.want, fs)
			}
			if !strings.Contains(fs[0].Message, tc.msg) {
				t.Errorf("message %q lacks %q", fs[0].Message, tc.msg)
			}
			if !strings.Contains(fs[0].Fix, "CREATE INDEX IX_Votes_PostId ON dbo.Votes (PostId)") || !strings.Contains(fs[0].Fix, "DISABLE_OPTIMIZER_ROWGOAL") {
				t.Errorf("fix %q", fs[0].Fix)
			}
		})
	}
}

// TestRowGoalCorpus checks the real plans by hand:
//   - top_above_scan node 5: Votes scan under NOT EXISTS + TOP (1), EstimateRows 1
//     (49 without the goal), ActualRowsRead 52,928,720, ActualRows 0, 5,120 ms.
//   - many_to_many_merge node 4: a Sort under TOP (100) returned 3,756,598 rows
//     against 1 estimated, but a Sort reads its whole input whatever the goal
//     (its input, node 5, was estimated in full): silent.
//   - row-count-spool-slow node 14: the Top's scan returned 1 row per execution
//     as planned (24,534,730 rows over 24,534,730 executions): the goal held.
func TestRowGoalCorpus(t *testing.T) {
	const prefix = "perfstudio__tests__PlanViewer.Core.Tests__Plans__"
	fs := corpusFindings(t, prefix+"top_above_scan_plan.sqlplan", RowGoal)
	if len(fs) != 1 || *fs[0].NodeID != 5 || fs[0].Severity != Warning {
		t.Fatalf("top_above_scan: want one warning at node 5, got %+v", fs)
	}
	if fs := corpusFindings(t, prefix+"many_to_many_merge_plan.sqlplan", RowGoal); len(fs) != 0 {
		t.Errorf("many_to_many_merge: want silence, got %+v", fs)
	}
	for _, f := range corpusFindings(t, prefix+"row-count-spool-slow.sqlplan", RowGoal) {
		if *f.NodeID == 14 || f.Severity > Info {
			t.Errorf("row-count-spool-slow: unexpected %+v", f)
		}
	}
}

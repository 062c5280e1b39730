package rules

import (
	"fmt"
	"strings"
	"testing"
)

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
			if !oneFinding(t, fs, tc.want, 1) {
				return
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
	for _, want := range []string{"72,621,600 rows", "nodes 34, 47, 108 and 246", "Table Spool (Lazy Spool) (node 54)"} {
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
			if !oneFinding(t, fs, tc.want, 2) {
				return
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

// tvfPlan is a multi-statement function called once: Sequence over the fill
// (node 1) and a Table Scan of its result (node 2), or, correlated, the
// function on the inner side of a Nested Loops join (node 2).
func tvfPlan(correlated bool, readRows, calls int64, actual bool) string {
	obj := `<TableValuedFunction><Object Database="[WorkDb]" Schema="[dbo]" Table="[OpenWork]"/></TableValuedFunction>`
	rt := func(rows, execs int64) string {
		if !actual {
			return ""
		}
		return runtime(rows, execs)
	}
	if correlated {
		fn := strings.Replace(op(2, "Table-valued function", "Table-valued function", 100, 0.1, "", obj), `EstimateRewinds="0"`, fmt.Sprintf(`EstimateRewinds="%d"`, calls-1), 1)
		fn = withRuntime(fn, rt(0, calls))
		outer := withRuntime(scan(1, "Clustered Index Scan", "PK_Work", "Clustered", float64(calls), 1, "", ""), rt(calls, 1))
		return stmt(`StatementSubTreeCost="3"`, "", "", withRuntime(op(0, "Nested Loops", "Inner Join", float64(calls), 3, "", `<NestedLoops Optimized="0">`+outer+fn+`</NestedLoops>`), rt(calls, 1)))
	}
	fill := withRuntime(op(1, "Table-valued function", "Table-valued function", 100, 0.0001, "", obj), rt(0, 1))
	read := withRuntime(op(2, "Table Scan", "Table Scan", 100, 0.0034, "",
		`<TableScan Ordered="0" ForcedIndex="0" ForceScan="0" NoExpandHint="0"><Object Database="[WorkDb]" Schema="[dbo]" Table="[OpenWork]"/></TableScan>`), rt(readRows, 1))
	return stmt(`StatementSubTreeCost="0.0035"`, "", "", withRuntime(op(0, "Sequence", "Sequence", 100, 0.0035, "", `<Sequence>`+fill+read+`</Sequence>`), rt(readRows, 1)))
}

func TestTableValuedFunction(t *testing.T) {
	for _, tc := range []struct {
		name string
		stmt string
		want Severity
		node int
		msg  string
	}{
		{"returned 100 times the guess", tvfPlan(false, 2000000, 1, true), Warning, 2,
			"table-valued function dbo.OpenWork: its result was estimated at 100 rows per read and returned 2,000,000 (20,000× under)"},
		{"about the guess", tvfPlan(false, 150, 1, true), 0, 0, ""},
		{"estimated plan: the fixed guess is context", tvfPlan(false, 0, 1, false), Info, 2, "its result is estimated at a fixed 100 rows"},
		{"called per outer row", tvfPlan(true, 0, 50000, true), Warning, 2, "it ran 50,000 times, once per outer row"},
		{"called a few times", tvfPlan(true, 0, 20, true), 0, 0, ""},
		{"estimated to be called per row", tvfPlan(true, 0, 50000, false), Info, 2, "planned to run 50,000 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := analyze(t, showplan(t, tc.stmt), nil, TableValuedFunction)
			if !oneFinding(t, fs, tc.want, tc.node) {
				return
			}
			if !strings.Contains(fs[0].Message, tc.msg) || !strings.Contains(fs[0].Fix, "inline table-valued function") {
				t.Errorf("message %q\nfix %q", fs[0].Message, fs[0].Fix)
			}
		})
	}
}

// TestTableValuedFunctionCorpus: in S1uW0oS3 the function Object17 sits on
// the inner side of Nested Loops at node 21 (30 executions) and node 121
// (427,576 executions); Object18 is filled once under the Sequence (nodes
// 2–8) and read at 27 and 79 at one row per execution, as estimated. System
// readers ("XML Reader with XPath filter", SYSLANG in plan90) are not user
// functions.
func TestTableValuedFunctionCorpus(t *testing.T) {
	fs := corpusFindings(t, "showplan-dotnet__tests__Showplan.Tests__plans__S1uW0oS3.sqlplan", TableValuedFunction)
	if len(fs) != 1 || *fs[0].NodeID != 121 || fs[0].Severity != Warning || !strings.Contains(fs[0].Message, "427,606 times") {
		t.Fatalf("S1uW0oS3: want one warning at node 121 with 427,606 calls, got %+v", fs)
	}
	for _, file := range []string{"supratimas__plans__set01__plans__plan214.sqlplan", "supratimas__plans__set01__plans__plan90.sqlplan"} {
		if fs := corpusFindings(t, file, TableValuedFunction); len(fs) != 0 {
			t.Errorf("%s: system functions: want silence, got %+v", file, fs)
		}
	}
}

// udfPlan is a Compute Scalar calling dbo.Age over a scan of rows rows.
func udfPlan(rows int64, qpAttrs, qpInner string, cost float64) string {
	scanOp := withRuntime(scan(1, "Clustered Index Scan", "PK_Work", "Clustered", float64(rows), cost, "", ""), runtime(rows, 1))
	cs := op(0, "Compute Scalar", "Compute Scalar", float64(rows), cost, "", `<ComputeScalar><DefinedValues><DefinedValue>`+
		`<ColumnReference Column="Expr1001"/><ScalarOperator ScalarString="[WorkDb].[dbo].[Age]([CreatedAt])">`+
		`<UserDefinedFunction FunctionName="[WorkDb].[dbo].[Age]"><ScalarOperator><Identifier><ColumnReference Column="CreatedAt"/></Identifier></ScalarOperator></UserDefinedFunction>`+
		`</ScalarOperator></DefinedValue></DefinedValues>`+scanOp+`</ComputeScalar>`)
	x := fmt.Sprintf(`<StmtSimple StatementId="1" StatementType="SELECT" StatementSubTreeCost="%g" CardinalityEstimationModelVersion="140"><QueryPlan %s>%s%s</QueryPlan></StmtSimple>`, cost, qpAttrs, qpInner, cs)
	return x
}

func TestScalarUDF(t *testing.T) {
	for _, tc := range []struct {
		name string
		stmt string
		want Severity
		msg  string
	}{
		{"per row over 50,000 rows", udfPlan(50000, "", "", 2), Warning,
			"Compute Scalar (node 0) calls scalar function [WorkDb].[dbo].[Age] about 50,000 times (actual rows through it)"},
		{"kept a costly plan serial", udfPlan(500, `NonParallelPlanReason="TSQLUserDefinedFunctionsNotParallelizable"`, "", 40), Warning,
			"they keep the plan serial (NonParallelPlanReason TSQLUserDefinedFunctionsNotParallelizable, statement cost 40)"},
		{"slow despite few calls", udfPlan(50, "", `<QueryTimeStats CpuTime="2100" ElapsedTime="2500" UdfCpuTime="2000" UdfElapsedTime="2400"/>`, 0.1), Warning,
			"they took 2,400 ms (2,000 ms CPU) of the statement's 2,500 ms"},
		{"a few hundred calls", udfPlan(500, "", "", 0.1), Info, "about 500 times"},
		{"a handful of calls", udfPlan(10, "", "", 0.1), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := analyze(t, showplan(t, tc.stmt), nil, ScalarUDF)
			if !oneFinding(t, fs, tc.want, 0) {
				return
			}
			if !strings.Contains(fs[0].Message, tc.msg) || !strings.Contains(fs[0].Fix, "compatibility level 150+") {
				t.Errorf("message %q\nfix %q", fs[0].Message, fs[0].Fix)
			}
		})
	}
}

// TestScalarUDFCorpus: S1uW0oS3's Compute Scalar node 42 evaluates
// Function2 for 427,576 rows (actual), in a serial plan of cost 234.7
// (CouldNotGenerateValidParallelPlan); plan5's Function_GetRoundedDate is
// called for one estimated row: silent.
func TestScalarUDFCorpus(t *testing.T) {
	fs := corpusFindings(t, "showplan-dotnet__tests__Showplan.Tests__plans__S1uW0oS3.sqlplan", ScalarUDF)
	if len(fs) != 1 || *fs[0].NodeID != 42 || fs[0].Severity != Warning || !strings.Contains(fs[0].Message, "427,576 times") {
		t.Fatalf("S1uW0oS3: got %+v", fs)
	}
	if fs := corpusFindings(t, "supratimas__plans__set01__plans__plan5.sqlplan", ScalarUDF); len(fs) != 0 {
		t.Errorf("plan5: want silence, got %+v", fs)
	}
}

// sniffPlan is an Index Seek on dbo.Work comparing Status with @Status,
// estimated at est rows and returning act, with the parameter's values.
func sniffPlan(compiled, runtimeValue string, est float64, act int64, elapsed int) string {
	seek := `<SeekPredicates><SeekPredicateNew><SeekKeys><Prefix ScanType="EQ"><RangeColumns><ColumnReference Database="[WorkDb]" Schema="[dbo]" Table="[Work]" Column="Status"/></RangeColumns>` +
		`<RangeExpressions><ScalarOperator ScalarString="[@Status]"><Identifier><ColumnReference Column="@Status"/></Identifier></ScalarOperator></RangeExpressions></Prefix></SeekKeys></SeekPredicateNew></SeekPredicates>`
	rt := ""
	if act >= 0 {
		rt = runtime(act, 1)
	}
	s := withRuntime(scan(0, "Index Seek", "IX_Work_Status", "NonClustered", est, 1, "", seek), rt)
	prm := `<ParameterList><ColumnReference Column="@Status" ParameterDataType="tinyint" ParameterCompiledValue="` + compiled + `"`
	if runtimeValue != "" {
		prm += ` ParameterRuntimeValue="` + runtimeValue + `"`
	}
	prm += `/></ParameterList>`
	qts := ""
	if elapsed > 0 {
		qts = fmt.Sprintf(`<QueryTimeStats CpuTime="%d" ElapsedTime="%d"/>`, elapsed, elapsed)
	}
	return fmt.Sprintf(`<StmtSimple StatementId="1" StatementType="SELECT" StatementSubTreeCost="1" CardinalityEstimationModelVersion="150"><QueryPlan CompileCPU="3">%s<RelOp`, qts) +
		strings.TrimPrefix(s, "<RelOp") + prm + `</QueryPlan></StmtSimple>`
}

func TestParameterSensitivity(t *testing.T) {
	for _, tc := range []struct {
		name string
		stmt string
		want Severity
		msg  string
	}{
		{"compiled for the pending few, ran for the finished millions", sniffPlan("(0)", "(2)", 200, 4000000, 15000), Error,
			"the plan was compiled for @Status = (0) and ran with (2): Index Seek on dbo.Work.IX_Work_Status (node 0) was estimated at 200 rows and returned 4,000,000 (20,000× under); the statement took 15,000 ms"},
		{"many rows, fast", sniffPlan("(0)", "(2)", 200, 400000, 300), Warning, "returned 400,000"},
		{"a small misestimate on few rows", sniffPlan("(0)", "(2)", 2, 300, 0), Info, "returned 300"},
		{"same value: not sniffing", sniffPlan("(2)", "(2)", 200, 4000000, 15000), 0, ""},
		{"different values, right estimate", sniffPlan("(0)", "(1)", 200, 250, 10), 0, ""},
		{"estimated plan", sniffPlan("(0)", "", 200, -1, 0), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := analyze(t, showplan(t, tc.stmt), nil, ParameterSensitivity)
			if !oneFinding(t, fs, tc.want, 0) {
				return
			}
			if !strings.Contains(fs[0].Message, tc.msg) {
				t.Errorf("message %q lacks %q", fs[0].Message, tc.msg)
			}
			for _, want := range []string{"OPTION (RECOMPILE)", "3 ms of compile CPU", "OPTIMIZE FOR (@Status = <typical value>)", "parameter-sensitive plan optimization", "cardinality model 150"} {
				if !strings.Contains(fs[0].Fix, want) {
					t.Errorf("fix lacks %q: %s", want, fs[0].Fix)
				}
			}
		})
	}
}

// TestParameterSensitivityCorpus, read from the XML:
//   - param-sniffing-posttypeid2: @VoteTypeId compiled (4), ran (2); Index Seek
//     node 8 estimated 733 rows, returned 37,332,131; the statement took 109,688 ms.
//   - 03-parameter-sniffing-slow: @CustomerId compiled (1), ran (27); the DOP 16
//     Clustered Index Scan node 1 estimated 666,693 rows (all threads), returned
//     27, reading 2,000,000 rows in 46 ms.
//   - pspo-example: variant 3 of a PSP-optimized query (range 100–1000): info.
func TestParameterSensitivityCorpus(t *testing.T) {
	const prefix = "perfstudio__tests__PlanViewer.Core.Tests__Plans__"
	fs := corpusFindings(t, prefix+"param-sniffing-posttypeid2.sqlplan", ParameterSensitivity)
	if len(fs) != 1 || *fs[0].NodeID != 8 || fs[0].Severity != Error || !strings.Contains(fs[0].Message, "@VoteTypeId = (4) and ran with (2)") {
		t.Fatalf("posttypeid2: got %+v", fs)
	}
	fs = corpusFindings(t, "planlab__results__03-parameter-sniffing-slow.sqlplan", ParameterSensitivity)
	if len(fs) != 1 || *fs[0].NodeID != 1 || fs[0].Severity != Warning || !strings.Contains(fs[0].Message, "estimated at 666,693 rows and returned 27 (24,692× over)") {
		t.Fatalf("03-parameter-sniffing-slow: got %+v", fs)
	}
	fs = corpusFindings(t, prefix+"pspo-example.sqlplan", ParameterSensitivity)
	if len(fs) != 1 || fs[0].NodeID != nil || fs[0].Severity != Info || !strings.Contains(fs[0].Message, "variant 3") || !strings.Contains(fs[0].Message, "between 100 and 1,000 rows") {
		t.Fatalf("pspo-example: got %+v", fs)
	}
}

// predPlan is an Index Seek on dbo.Work comparing Status with @Status under
// the given statement text and ParameterList entry ("" for none).
func predPlan(text, paramAttrs string, est float64, act int64, elapsed int, cost float64) string {
	seek := `<SeekPredicates><SeekPredicateNew><SeekKeys><Prefix ScanType="EQ"><RangeColumns><ColumnReference Database="[WorkDb]" Schema="[dbo]" Table="[Work]" Column="Status"/></RangeColumns>` +
		`<RangeExpressions><ScalarOperator ScalarString="[@Status]"><Identifier><ColumnReference Column="@Status"/></Identifier></ScalarOperator></RangeExpressions></Prefix></SeekKeys></SeekPredicateNew></SeekPredicates>`
	rt := ""
	if act >= 0 {
		rt = runtime(act, 1)
	}
	s := withRuntime(scan(0, "Index Seek", "IX_Work_Status", "NonClustered", est, cost, "", seek), rt)
	prm := ""
	if paramAttrs != "" {
		prm = `<ParameterList><ColumnReference Column="@Status" ParameterDataType="tinyint" ` + paramAttrs + `/></ParameterList>`
	}
	qts := ""
	if elapsed > 0 {
		qts = fmt.Sprintf(`<QueryTimeStats CpuTime="%d" ElapsedTime="%d"/>`, elapsed, elapsed)
	}
	return fmt.Sprintf(`<StmtSimple StatementId="1" StatementType="SELECT" StatementText="%s" StatementSubTreeCost="%g" StatementOptmLevel="FULL"><QueryPlan>%s`, text, cost, qts) +
		s + prm + `</QueryPlan></StmtSimple>`
}

func TestLocalVariable(t *testing.T) {
	const q = "SELECT TOP (20) WorkId FROM dbo.Work WHERE Status = @Status"
	for _, tc := range []struct {
		name string
		stmt string
		want Severity
		msg  string
	}{
		{"actual: far off on a few rows", predPlan(q, `ParameterRuntimeValue="(3)"`, 2, 300, 0, 30), Info, "estimated at 2 rows and returned 300 (150× under)"},
		{"actual: far off on the pending few", predPlan(q, `ParameterRuntimeValue="(0)"`, 1666667, 200, 2500, 30), Warning,
			"@Status is a local variable, so the optimizer estimated from the column's average density instead of from the value (@Status = (0) at run time): Index Seek on dbo.Work.IX_Work_Status (node 0) was estimated at 1,666,667 rows and returned 200 (8,333× over); the statement took 2,500 ms"},
		{"actual: the guess was right", predPlan(q, `ParameterRuntimeValue="(1)"`, 1666667, 1500000, 900, 30), 0, ""},
		{"estimated, costly", predPlan(q, "", 1666667, -1, 0, 30), Info, "@Status is a local variable: Index Seek (node 0) is estimated from the column's average density (1,666,667 rows), whatever the value"},
		{"estimated, cheap", predPlan(q, "", 2, -1, 0, 0.01), 0, ""},
		{"a sniffed parameter is not a local variable", predPlan(q, `ParameterCompiledValue="(0)" ParameterRuntimeValue="(0)"`, 1666667, 200, 2500, 30), 0, ""},
		{"OPTIMIZE FOR UNKNOWN is its own rule", predPlan(q+" OPTION (OPTIMIZE FOR UNKNOWN)", `ParameterRuntimeValue="(0)"`, 1666667, 200, 2500, 30), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := showplan(t, tc.stmt)
			var fs []Finding
			for _, s := range d.Statements() {
				prior, err := runAfter(OptimizeForUnknown, d, s, nil, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err := runAfter(LocalVariable, d, s, nil, nil, prior)
				if err != nil {
					t.Fatal(err)
				}
				fs = append(fs, got...)
			}
			if !oneFinding(t, fs, tc.want, 0) {
				return
			}
			if !strings.Contains(fs[0].Message, tc.msg) || !strings.Contains(fs[0].Fix, "OPTION (RECOMPILE)") {
				t.Errorf("message %q\nfix %q", fs[0].Message, fs[0].Fix)
			}
		})
	}
}

func TestOptimizeForUnknown(t *testing.T) {
	for _, tc := range []struct {
		name string
		stmt string
		want Severity
		node bool
		msg  string
	}{
		{"skewed: the average suits no value", predPlan("SELECT WorkId FROM dbo.Work WHERE Status = @Status OPTION (OPTIMIZE FOR UNKNOWN)",
			`ParameterRuntimeValue="(0)"`, 1666667, 200, 2500, 30), Warning, true,
			"OPTIMIZE FOR UNKNOWN estimated @Status from the column's density, and the data is skewed"},
		{"per parameter", predPlan("SELECT WorkId FROM dbo.Work WHERE Status = @Status OPTION (OPTIMIZE FOR (@Status UNKNOWN))",
			`ParameterRuntimeValue="(0)"`, 1666667, 200, 2500, 30), Warning, true, "OPTIMIZE FOR (@Status UNKNOWN) estimated @Status"},
		{"even data: context", predPlan("SELECT WorkId FROM dbo.Work WHERE Status = @Status OPTION (USE HINT ('DISABLE_PARAMETER_SNIFFING'))",
			`ParameterCompiledValue="(1)" ParameterRuntimeValue="(1)"`, 1666667, 1500000, 900, 30), Info, true, "USE HINT ('DISABLE_PARAMETER_SNIFFING') makes Index Seek (node 0) estimate @Status"},
		{"no hint", predPlan("SELECT WorkId FROM dbo.Work WHERE Status = @Status", `ParameterRuntimeValue="(0)"`, 1666667, 200, 2500, 30), 0, false, ""},
		{"a value, not UNKNOWN", predPlan("SELECT WorkId FROM dbo.Work WHERE Status = @Status OPTION (OPTIMIZE FOR (@Status = 0))", `ParameterCompiledValue="(0)"`, 200, -1, 0, 30), 0, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := analyze(t, showplan(t, tc.stmt), nil, OptimizeForUnknown)
			if tc.want == 0 {
				if len(fs) != 0 {
					t.Fatalf("want silence, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Severity != tc.want || (fs[0].NodeID != nil) != tc.node {
				t.Fatalf("want one %s, got %+v", tc.want, fs)
			}
			if !strings.Contains(fs[0].Message, tc.msg) || !strings.Contains(fs[0].Fix, "OPTIMIZE FOR (@Status = <typical value>)") {
				t.Errorf("message %q\nfix %q", fs[0].Message, fs[0].Fix)
			}
		})
	}
}

// oneFinding checks that fs holds exactly one finding of severity want at
// node, or none when want is 0; it reports whether there is one to inspect.
func oneFinding(t *testing.T, fs []Finding, want Severity, node int) bool {
	t.Helper()
	if want == 0 {
		if len(fs) != 0 {
			t.Fatalf("want silence, got %+v", fs)
		}
		return false
	}
	if len(fs) != 1 || fs[0].Severity != want || fs[0].NodeID == nil || *fs[0].NodeID != node {
		t.Fatalf("want one %s at node %d, got %+v", want, node, fs)
	}
	return true
}

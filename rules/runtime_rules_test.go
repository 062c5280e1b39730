package rules

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
)

// runtimeCase is one expectation for a rule on one statement (by ordinal)
// of a plan: a finding of severity sev (0: none) whose message and fix
// contain every string of want.
type runtimeCase struct {
	file    string
	ordinal int
	rule    *Rule
	sev     Severity
	node    int // -1: statement level
	want    []string
}

func checkRuntimeCase(t *testing.T, d *plan.Document, cat *catalog.Catalog, tc runtimeCase) {
	t.Helper()
	var st *plan.Statement
	for _, s := range d.Statements() {
		if s.Ordinal == tc.ordinal {
			st = s
		}
	}
	if st == nil {
		t.Fatalf("%s has no statement %d", tc.file, tc.ordinal)
	}
	// Run every rule, as the driver does, so After and Prior apply.
	all, err := AnalyzeStatement(d, st, cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	var fs []Finding
	for _, f := range all {
		if f.Rule == tc.rule.Name {
			fs = append(fs, f)
		}
	}
	if tc.sev == 0 {
		for _, f := range fs {
			t.Errorf("%s stmt %d: unexpected %s %s: %s", tc.file, tc.ordinal, f.Severity, f.Rule, f.Message)
		}
		return
	}
	if len(fs) != 1 {
		t.Fatalf("%s stmt %d: want one %s finding, got %d: %+v", tc.file, tc.ordinal, tc.rule.Name, len(fs), fs)
	}
	f := fs[0]
	if f.Severity != tc.sev {
		t.Errorf("%s stmt %d: severity %s, want %s: %s", tc.file, tc.ordinal, f.Severity, tc.sev, f.Message)
	}
	switch {
	case tc.node < 0 && f.NodeID != nil:
		t.Errorf("%s stmt %d: finding on node %d, want statement level", tc.file, tc.ordinal, *f.NodeID)
	case tc.node >= 0 && (f.NodeID == nil || *f.NodeID != tc.node):
		t.Errorf("%s stmt %d: finding on node %v, want %d", tc.file, tc.ordinal, f.NodeID, tc.node)
	}
	text := f.Message + "\nfix: " + f.Fix
	for _, w := range tc.want {
		if !strings.Contains(text, w) {
			t.Errorf("%s stmt %d: %s lacks %q:\n%s", tc.file, tc.ordinal, tc.rule.Name, w, text)
		}
	}
}

// TestRuntimeRulesFixtures runs the rules on the hand-made plans in
// testdata/runtime (each statement's expectation is written beside it in
// the generator's comments and here).
func TestRuntimeRulesFixtures(t *testing.T) {
	cases := []runtimeCase{
		{"serial-plan.sqlplan", 1, SerialPlan, Warning, -1, []string{"scalar T-SQL user-defined function", "20 s with 20 s of CPU", "CPU-bound", "19 s of it in user-defined functions", "inline table-valued function"}},
		{"serial-plan.sqlplan", 2, SerialPlan, 0, 0, nil}, // EstimatedDOPIsOne
		{"serial-plan.sqlplan", 3, SerialPlan, 0, 0, nil}, // cost 3, under the threshold
		{"serial-plan.sqlplan", 4, SerialPlan, Info, -1, []string{"table variable", "#temp table", "(5, the default)"}},
		{"serial-plan.sqlplan", 5, SerialPlan, 0, 0, nil}, // Express edition
		{"compile-cost.sqlplan", 1, CompileCost, Error, -1, []string{"1.5 s of CPU", "OPTION (RECOMPILE) pays this on every execution", "remove OPTION (RECOMPILE)"}},
		{"compile-cost.sqlplan", 2, CompileCost, Warning, -1, []string{"150 ms of CPU", "RECOMPILE"}},
		{"compile-cost.sqlplan", 3, CompileCost, 0, 0, nil},
		{"compile-cost.sqlplan", 4, CompileCost, Info, -1, []string{"waited 2.9 s beyond its CPU"}},
		{"compile-cost.sqlplan", 5, CompileCost, Warning, -1, []string{"6.0 s of CPU", "59 MB"}},
		{"optimizer-early-abort.sqlplan", 1, OptimizerEarlyAbort, 0, 0, nil},
		{"optimizer-early-abort.sqlplan", 2, OptimizerEarlyAbort, Info, -1, []string{"timed out", "estimated cost 20"}},
		{"optimizer-early-abort.sqlplan", 3, OptimizerEarlyAbort, Warning, -1, []string{"timed out", "480 ms CPU"}},
		{"optimizer-early-abort.sqlplan", 4, OptimizerEarlyAbort, Error, -1, []string{"compile memory limit", "sys.dm_exec_query_optimizer_memory_gateways"}},
		{"optimizer-early-abort.sqlplan", 5, OptimizerEarlyAbort, 0, 0, nil},
		// compile-cost defers to the timeout finding that carries its figures.
		{"optimizer-early-abort.sqlplan", 3, CompileCost, 0, 0, nil},
		{"memory-grant.sqlplan", 1, MemoryGrant, Warning, 0, []string{"800 MB", "20 MB (3%)", "expected 40,000,000 input rows and received 1,000,000", "MAX_GRANT_PERCENT = 0.3"}},
		{"memory-grant.sqlplan", 2, MemoryGrant, Warning, 0, []string{"waited 3 seconds", "granted 60 MB"}},
		{"memory-grant.sqlplan", 3, MemoryGrant, 0, 0, nil}, // 50 MB: small
		{"memory-grant.sqlplan", 4, MemoryGrant, 0, 0, nil}, // 300 MB, 80% used
		{"memory-grant.sqlplan", 5, MemoryGrant, Warning, 0, []string{"waited 2.5 seconds for its memory grant (RESOURCE_SEMAPHORE wait)"}},
		{"memory-grant-warning.sqlplan", 1, MemoryGrant, Info, 0, []string{"needed more memory than its grant", "Used More Than Granted", "used 256 MB"}},
		{"memory-grant-estimated.sqlplan", 1, MemoryGrant, Warning, 0, []string{"2.4 GB memory grant (DesiredMemory)", "narrow the 5,000-byte rows"}},
		{"memory-grant-estimated.sqlplan", 2, MemoryGrant, 0, 0, nil},
		{"parallel-thread-skew.sqlplan", 1, ParallelThreadSkew, Warning, 2, []string{"450,000 of its 500,000 rows (90%) on thread 1 of 4", "hash of Orders.Status", "SELECT TOP (10) Status, COUNT_BIG(*) AS n FROM dbo.Orders GROUP BY Status"}},
		{"parallel-thread-skew.sqlplan", 2, ParallelThreadSkew, 0, 0, nil}, // output on one thread, CPU spread; Gather Streams on thread 0
		{"parallel-thread-skew.sqlplan", 3, ParallelThreadSkew, 0, 0, nil}, // Broadcast
	}
	for _, tc := range cases {
		d, err := plan.ParseFile(filepath.Join("testdata", "runtime", tc.file), plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkRuntimeCase(t, d, nil, tc)
	}
}

// TestSerialPlanCatalogThreshold: a server whose cost threshold is 50 would
// not consider the cost-40 statement for parallelism.
func TestSerialPlanCatalogThreshold(t *testing.T) {
	d, err := plan.ParseFile(filepath.Join("testdata", "runtime", "serial-plan.sqlplan"), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fifty := 50.0
	cat := &catalog.Catalog{Server: &catalog.Server{CostThresholdForParallelism: &fifty}}
	checkRuntimeCase(t, d, cat, runtimeCase{"serial-plan.sqlplan", 4, SerialPlan, 0, 0, nil})
	checkRuntimeCase(t, d, cat, runtimeCase{"serial-plan.sqlplan", 1, SerialPlan, Warning, -1, []string{"(50, the server's setting)"}})
}

// TestSerialPlanMaxdopSettingOncePerDocument: without a hint, MAXDOP 1 is a
// setting, one root cause for every costly statement of the document.
func TestSerialPlanMaxdopSettingOncePerDocument(t *testing.T) {
	x := func(id, text string) string {
		return `<StmtSimple StatementId="` + id + `" StatementType="SELECT" StatementText="` + text + `" StatementSubTreeCost="300" StatementOptmLevel="FULL">` +
			`<QueryPlan NonParallelPlanReason="MaxDOPSetToOne">` + scan(0, "Clustered Index Scan", "PK_Work", "Clustered", 5e6, 300, "", "") + `</QueryPlan></StmtSimple>`
	}
	d := showplan(t, x("1", "SELECT 1")+x("2", "SELECT 2")+x("3", "SELECT 3 OPTION (MAXDOP 1)"))
	fs := analyze(t, d, nil, SerialPlan)
	if len(fs) != 2 {
		t.Fatalf("want 2 findings (the setting once, the hint once), got %d: %+v", len(fs), fs)
	}
	if fs[0].Ordinal != 1 || !strings.Contains(fs[0].Message, "the same setting keeps 1 other costly statement of this plan serial") {
		t.Errorf("setting finding: %+v", fs[0])
	}
	if fs[1].Ordinal != 3 || !strings.Contains(fs[1].Fix, "remove the MAXDOP 1 hint") {
		t.Errorf("hint finding: %+v", fs[1])
	}
}

// TestSerialPlanDefersToOperatorErrors: when another rule reports an error
// on an operator, the cost is that finding's and the serial plan is info.
func TestSerialPlanDefersToOperatorErrors(t *testing.T) {
	d, err := plan.ParseFile(filepath.Join("testdata", "runtime", "serial-plan.sqlplan"), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := d.Statements()[0]
	prior := []Finding{{Rule: "some-access-rule", Severity: Error, NodeID: Node(0)}}
	fs, err := runAfter(SerialPlan, d, st, nil, nil, prior)
	if err != nil || len(fs) != 1 {
		t.Fatalf("%v %+v", err, fs)
	}
	if fs[0].Severity != Info || !strings.Contains(fs[0].Message, "fix the some-access-rule finding on this statement first") {
		t.Errorf("not deferred: %s %s", fs[0].Severity, fs[0].Message)
	}
	// A statement-level error (no node) does not explain the cost.
	prior[0].NodeID = nil
	fs, _ = runAfter(SerialPlan, d, st, nil, nil, prior)
	if len(fs) != 1 || fs[0].Severity != Warning {
		t.Errorf("deferred to a statement-level finding: %+v", fs)
	}
}

// TestRuntimeRulesCorpus checks the rules on real plans where the problem
// is plain, and their silence on look-alikes; the figures are from the XML.
func TestRuntimeRulesCorpus(t *testing.T) {
	dir := sharedtest.Require(t, "corpus/plans")
	cases := []runtimeCase{
		// GrantedMemory="1395216" MaxUsedMemory="19736"; Sort node 2 EstimateRows 5,097,990, actual 3,926.
		{"hqp__test_plans__stack overflow__inequality_index.sqlplan", 1, MemoryGrant, Warning, 2, []string{"1.3 GB", "19 MB (1%)", "expected 5,097,990 input rows and received 3,926"}},
		// GrantWaitTime="1000", GrantedMemory="10851312" MaxUsedMemory="10232840".
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__memory_grant_wait_plan.sqlplan", 1, MemoryGrant, Error, 11, []string{"waited 1,000 seconds", "10.3 GB"}},
		// 929 MB granted, 86 MB used; Nested Loops node 8 Optimized="true" holds MemoryFractions Output="0.997049".
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__serially-parallel.sqlplan", 1, MemoryGrant, Warning, 8, []string{"929 MB", "DISABLE_OPTIMIZED_NESTED_LOOP"}},
		// MemoryGrantWarning Excessive Grant of 1024 KB, MaxUsedMemory="0": a 1 MB grant.
		{"hqp__test_plans__Columnstore__columnstore_index_update.sqlplan", 1, MemoryGrant, 0, 0, nil},
		// 17.1 s, all 10,810,787 rows of Index Seek node 16 on thread 1 of 8 after Distribute Streams node 12 got 1 row.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__serially-parallel.sqlplan", 1, ParallelThreadSkew, Warning, 16, []string{"10,810,787 of its 10,810,787 rows (100%) on thread 1 of 8", "Distribute Streams) (node 12) had only 1 row"}},
		// 53,946 rows on one thread: below 100,000 rows, and the scans' CPU was even.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__parallel-skew.sqlplan", 1, ParallelThreadSkew, 0, 0, nil},
		// OPTION (MAXDOP 1), QueryTimeStats 6.6 s elapsed, 5.7 s CPU, but the cost is the
		// non-sargable ISNULL scan (an error finding): parallelism would only spread it.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__isnull_plan.sqlplan", 1, SerialPlan, Info, -1, []string{"OPTION (MAXDOP 1)", "fix the non-sargable-predicate finding"}},
		// StatementId 2 (the first statement): NonParallelPlanReason="EstimatedDOPIsOne", cost 0.12.
		{"supratimas__plans__TestPlan01-1.sqlplan", 1, SerialPlan, 0, 0, nil},
		// NoParallelPlansInDesktopOrExpressEdition.
		{"hqp__test_plans__issue_39.sqlplan", 1, SerialPlan, 0, 0, nil},
		// TimeOut on StatementSubTreeCost="1657.71", CompileCPU="9467".
		{"supratimas__plans__uw_plan0.sqlplan", 1, OptimizerEarlyAbort, Warning, -1, []string{"timed out", "9.5 s CPU"}},
		// TimeOut on a 0.22-cost statement: normal.
		{"vscode-mssql__extensions__mssql__test__resources__plan.sqlplan", 1, OptimizerEarlyAbort, 0, 0, nil},
		// MemoryLimitExceeded on a 0.0066-cost two-row lookup.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__compile_memory_exceeded_plan.sqlplan", 1, OptimizerEarlyAbort, Info, -1, []string{"compile memory limit", "compile memory pressure on the server"}},
		// CompileTime="2546" against CompileCPU="46": the compile waited 2.5 s.
		{"supratimas__plans__set01__plans__plan92.sqlplan", 9, CompileCost, Info, -1, []string{"46 ms of CPU", "waited"}},
	}
	for _, tc := range cases {
		d, err := plan.ParseFile(filepath.Join(dir, tc.file), plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkRuntimeCase(t, d, nil, tc)
	}
}

// TestMemoryGrantWithoutGrantedMemory: older actual plans carry only
// QueryPlan/@MemoryGrant; without GrantedMemory and MaxUsedMemory the use
// of the grant is unknown and must not read as 0% used.
func TestMemoryGrantWithoutGrantedMemory(t *testing.T) {
	x := `<StmtSimple StatementId="1" StatementType="SELECT" StatementText="q" StatementSubTreeCost="300" StatementOptmLevel="FULL">` +
		`<QueryPlan MemoryGrant="2000000"><MemoryGrantInfo SerialRequiredMemory="1024" SerialDesiredMemory="2000000"/>` +
		op(0, "Sort", "Sort", 5e6, 300, "", `<Sort Distinct="0"><OrderBy/>`+scan(1, "Clustered Index Scan", "PK_Work", "Clustered", 5e6, 100, "", "")+`</Sort>`) +
		`</QueryPlan></StmtSimple>`
	x = strings.Replace(x, `<OutputList/>`, `<OutputList/>`+runtime(5000000, 1), 1)
	d := showplan(t, x)
	if !d.IsActual() {
		t.Fatal("the test plan should be actual")
	}
	for _, f := range analyze(t, d, nil, MemoryGrant) {
		t.Errorf("unexpected finding: %s %s", f.Severity, f.Message)
	}
}

// TestRuntimeFixturesValidate checks the hand-made plans against
// Microsoft's showplan schema for their Version (1.564, SQL Server 2022).
func TestRuntimeFixturesValidate(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint not found in PATH (Debian package libxml2-utils); schema validation skipped")
	}
	xsd := filepath.Join(sharedtest.Require(t, "xsd"), "showplanxml-1.571-sql2022.xsd")
	paths, err := filepath.Glob(filepath.Join("testdata", "runtime", "*.sqlplan"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range paths {
		out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsd, path).CombinedOutput()
		if err != nil {
			t.Errorf("%s does not validate: %v\n%s", path, err, out)
		}
	}
}

// TestSerialPlanMaxdopSettingFirstStatementDeferred: when the document's
// first costly statement defers to another finding, the setting is still
// reported once, there, as info, and not lost.
func TestSerialPlanMaxdopSettingFirstStatementDeferred(t *testing.T) {
	x := func(id string) string {
		return `<StmtSimple StatementId="` + id + `" StatementType="SELECT" StatementText="SELECT ` + id + `" StatementSubTreeCost="300" StatementOptmLevel="FULL">` +
			`<QueryPlan NonParallelPlanReason="MaxDOPSetToOne">` + scan(0, "Clustered Index Scan", "PK_Work", "Clustered", 5e6, 300, "", "") + `</QueryPlan></StmtSimple>`
	}
	d := showplan(t, x("1")+x("2"))
	sts := d.Statements()
	prior := []Finding{{Rule: "some-access-rule", Severity: Error, NodeID: Node(0)}}
	first, err := runAfter(SerialPlan, d, sts[0], nil, nil, prior)
	if err != nil || len(first) != 1 || first[0].Severity != Info || !strings.Contains(first[0].Message, "1 other costly statement") {
		t.Fatalf("first statement: %v %+v", err, first)
	}
	second, _ := runAfter(SerialPlan, d, sts[1], nil, nil, nil)
	if len(second) != 0 {
		t.Errorf("second statement reported again: %+v", second)
	}
	// Alone in its document, a statement whose cost has another cause
	// gets no serial-plan finding for the setting.
	one := showplan(t, x("1"))
	if fs, _ := runAfter(SerialPlan, one, one.Statements()[0], nil, nil, prior); len(fs) != 0 {
		t.Errorf("single deferred statement reported: %+v", fs)
	}
}

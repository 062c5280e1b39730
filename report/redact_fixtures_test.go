package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/rules"
)

// Reports and helpers shared by the format, golden and redaction tests.

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden from the current output (review the diff)")

// checkGolden compares got with testdata/golden/name, or rewrites that
// file with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with: go test ./report -run %s -update)", err, t.Name())
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s: output differs from the golden file at line %d\n got: %q\nwant: %q\n(if the change is intended, rerun with -update and review the diff)",
				path, i+1, clipForLog(g), clipForLog(w))
		}
	}
}

func clipForLog(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// fixtureVersion keeps golden output independent of the build.
const fixtureVersion = "0.0.0-test"

// queueFixtureReport analyses every plan in fixtures/queue with the
// scenario's schema, keeping the plans, as `planlint check --schema`
// would.
func queueFixtureReport(t testing.TB) *Report {
	t.Helper()
	cat, err := catalog.Load(filepath.Join("..", "fixtures", "queue", "schema.sql"))
	if err != nil {
		t.Fatalf("loading the queue schema: %v", err)
	}
	paths, err := filepath.Glob(filepath.Join("..", "fixtures", "queue", "*.sqlplan"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no queue fixtures found (%v)", err)
	}
	sort.Strings(paths)
	r := &Report{Tool: "planlint", Version: fixtureVersion}
	for _, p := range paths {
		doc, err := plan.ParseFile(p, plan.Options{})
		if err != nil {
			t.Fatalf("parsing %s: %v", p, err)
		}
		fs, err := rules.Analyze(doc, cat, nil)
		if err != nil {
			t.Fatalf("analysing %s: %v", p, err)
		}
		r.Files = append(r.Files, &File{Path: p, Statements: Summarize(doc), Findings: Wrap(fs), Plans: []*plan.Document{doc}})
	}
	return r
}

// Values the synthetic report holds that redaction must hide.
var secretValues = []string{
	"alice@example.com", "DEADBEEF", "987654", "(77)", "(78)", "SECRET-TOKEN", "secret-in-error", "31337",
}

// secretValuesPlain are those of secretValues that every format prints
// verbatim when not redacting (Markdown and annotations escape "@" and
// parentheses differently).
var secretValuesPlain = []string{"DEADBEEF", "987654", "SECRET-TOKEN"}

// explainReport is what `planlint explain` produces for a .sql file: two
// statements with source locations and an actual plan, findings carrying
// literals and parameter values, plus an input that failed.
func explainReport() *Report {
	p := explainPlan()
	stmts := p.Statements()
	const sqlPath = "queries/poll.sql"
	loc1 := &Location{Path: sqlPath, StartLine: 4, StartCol: 1, EndLine: 6, EndCol: 40}
	loc2 := &Location{Path: sqlPath, StartLine: 8, StartCol: 5, EndLine: 8, EndCol: 61}
	s1 := SummarizeStatement(stmts[0], "actual")
	s1.Location = loc1
	s2 := SummarizeStatement(stmts[1], "actual")
	s2.Location = loc2
	broken := "line 3, column 7: unexpected element <Foo> after N'secret-in-error' (expected RelOp)"
	findings := []*Finding{
		{Finding: rules.Finding{
			Rule: "filtered-index-parameterized", Code: "PL201", Severity: rules.Error, Batch: 1, StatementID: 1, NodeID: rules.Node(2),
			Message: "filtered index IX_Work_Pending on dbo.Work (WHERE [Status]=(0)) was not used because [Status] is compared with " +
				"@Status (tinyint, compiled value (77)); the plan reads dbo.Work with Clustered Index Scan (node 2) over 5,000,000 rows",
			Fix: "1) a dedicated query with the literal predicate WHERE [Status]=(0) for pending work, not [Status]=[@Status] AND " +
				"[Email]=N'alice@example.com'; 2) add OPTION (RECOMPILE); 3) not an index hint: it fails with error 8622",
			Evidence: map[string]any{
				"index": "IX_Work_Pending", "filter": "[Status]=(0)", "compiled_value": "(77)", "runtime_value": "(78)",
				"predicate": "[Status]=[@Status] AND [Email]=N'alice@example.com'", "cost_share": 0.62, "rows": []any{int64(5000000)},
			},
		}, Location: loc1},
		{Finding: rules.Finding{
			Rule: "row-estimate-skew", Code: "PL104", Severity: rules.Warning, Batch: 1, StatementID: 1, NodeID: rules.Node(1),
			Message: "Filter: estimated 1 row, actual 1,250,000 (1,250,000× under) for Token = 0xDEADBEEF; 62% of the statement cost",
			Fix:     "update statistics on the objects this operator reads and check the compiled parameter values",
			Evidence: map[string]any{
				"factor": 1250000.0, "direction": "under", "conversion": "CONVERT_IMPLICIT(varbinary(8),0xDEADBEEF,0)",
			},
		}, Location: loc1},
		{Finding: rules.Finding{
			Rule: "queue-claim-not-atomic", Code: "PL204", Severity: rules.Info, Batch: 1, StatementID: 2,
			Message: "SELECT TOP over dbo.Work reads rows that another worker can claim too: Amount >= 987654.25 | `Token` <b>",
			Fix:     "claim atomically: UPDATE ... OUTPUT with UPDLOCK, READPAST (Note = 'SECRET-TOKEN')",
			Evidence: map[string]any{
				"table": "dbo.Work", "pattern": "UPDATE TOP (n) ... OUTPUT", "parameterized_text": "(@0 int)SELECT TOP (@0) * FROM dbo.Work WHERE Note = 'SECRET-TOKEN'",
			},
		}, Location: loc2},
	}
	return &Report{Tool: "planlint", Version: fixtureVersion, Files: []*File{
		{Path: sqlPath, Statements: []*Statement{s1, s2}, Findings: findings, Plans: []*plan.Document{p}},
		{Path: "plans/broken.sqlplan", Error: &broken},
	}}
}

// explainPlan is a small actual plan: Top over a Filter over a clustered
// index scan (statement 1) and a seek (statement 2), with parameters and
// constants that redaction must mask.
func explainPlan() *plan.Document {
	work := plan.ObjectRef{Database: "WorkDb", Schema: "dbo", Table: "Work", Index: "PK_Work", IndexKind: "Clustered"}
	col := func(name string) *plan.ColumnRef {
		return &plan.ColumnRef{Database: "WorkDb", Schema: "dbo", Table: "Work", Column: name}
	}
	scan := &plan.RelOp{
		NodeID: 2, PhysicalOp: "Clustered Index Scan", LogicalOp: "Clustered Index Scan",
		EstimateRows: 200, SubtreeCost: 250, EstimateIO: 240, EstimateCPU: 10, TableCardinality: 5e6,
		Access: &plan.Access{Element: "IndexScan", Objects: []plan.ObjectRef{work}, Predicate: &plan.Scalar{
			Text: "[WorkDb].[dbo].[Work].[Status]=[@Status] AND [WorkDb].[dbo].[Work].[Email]=N'alice@example.com'",
			Kind: plan.ScalarLogical, Op: "AND", Args: []*plan.Scalar{
				{Kind: plan.ScalarCompare, Op: "EQ", Args: []*plan.Scalar{{Kind: plan.ScalarIdentifier, Column: col("Status")}, {Kind: plan.ScalarIdentifier, Column: &plan.ColumnRef{Column: "@Status"}}}},
				{Kind: plan.ScalarCompare, Op: "EQ", Args: []*plan.Scalar{{Kind: plan.ScalarIdentifier, Column: col("Email")}, {Kind: plan.ScalarConst, Value: "N'alice@example.com'"}}},
			}}},
		OutputList: []plan.ColumnRef{*col("WorkId"), *col("Token")},
		RunTime:    &plan.RunTime{ActualRows: 1250000, ActualExecutions: 1, ActualRowsRead: 5000000, HasRowsRead: true, Threads: []plan.ThreadCounters{{ActualRows: 1250000, ActualExecutions: 1}}},
	}
	filter := &plan.RelOp{
		NodeID: 1, PhysicalOp: "Filter", LogicalOp: "Filter", EstimateRows: 1, SubtreeCost: 400,
		Predicate: &plan.Scalar{Text: "[WorkDb].[dbo].[Work].[Token]=0xDEADBEEF", Kind: plan.ScalarCompare, Op: "EQ",
			Args: []*plan.Scalar{{Kind: plan.ScalarIdentifier, Column: col("Token")}, {Kind: plan.ScalarConst, Value: "0xDEADBEEF"}}},
		Warnings: &plan.Warnings{Converts: []plan.PlanAffectingConvert{{Issue: "Seek Plan", Expression: "CONVERT_IMPLICIT(varbinary(8),0xDEADBEEF,0)"}}},
		RunTime:  &plan.RunTime{ActualRows: 1250000, ActualExecutions: 1},
		Children: []*plan.RelOp{scan},
	}
	top := &plan.RelOp{
		NodeID: 0, PhysicalOp: "Top", LogicalOp: "Top", EstimateRows: 1, SubtreeCost: 403.5,
		Top:      &plan.TopInfo{RowsText: "(31337)"},
		RunTime:  &plan.RunTime{ActualRows: 20, ActualExecutions: 1},
		Children: []*plan.RelOp{filter},
	}
	scan.Parent, filter.Parent = filter, top
	seek := &plan.RelOp{
		NodeID: 0, PhysicalOp: "Clustered Index Seek", LogicalOp: "Clustered Index Seek", EstimateRows: 1, SubtreeCost: 0.0033,
		Access: &plan.Access{Element: "IndexScan", Objects: []plan.ObjectRef{work}, SeekPredicates: []plan.SeekPredicate{{Keys: []plan.SeekKey{
			{Part: "Prefix", ScanType: "EQ", Columns: []plan.ColumnRef{*col("Amount")}, Values: []*plan.Scalar{{Text: "(987654.25)", Kind: plan.ScalarConst, Value: "(987654.25)"}}},
		}}}},
		RunTime: &plan.RunTime{ActualRows: 1, ActualExecutions: 1},
	}
	stmt1 := &plan.Statement{
		Kind: "StmtSimple", Batch: 1, ID: 1, Type: "SELECT", SubtreeCost: 403.5, ParameterizationType: plan.ParamNone,
		Text: "SELECT TOP (31337) WorkId FROM dbo.Work WHERE Status = @Status AND Email = N'alice@example.com' AND Token = 0xDEADBEEF",
		QueryPlan: &plan.QueryPlan{
			Parameters: []plan.Parameter{{Name: "@Status", DataType: "tinyint", CompiledValue: "(77)", RuntimeValue: "(78)", HasCompiled: true, HasRuntime: true}},
			Root:       top, Nodes: []*plan.RelOp{top, filter, scan},
		},
	}
	stmt2 := &plan.Statement{
		Kind: "StmtSimple", Batch: 1, ID: 2, Type: "SELECT", SubtreeCost: 0.0033, ParameterizationType: plan.ParamNone,
		Text:      "/* note 'SECRET-TOKEN' */ SELECT WorkId FROM dbo.Work WHERE Amount = 987654.25",
		QueryPlan: &plan.QueryPlan{Root: seek, Nodes: []*plan.RelOp{seek}},
	}
	return &plan.Document{Version: "1.564", Build: "16.0.4215.2", Batches: []*plan.Batch{{Index: 1, Statements: []*plan.Statement{stmt1, stmt2}}}}
}

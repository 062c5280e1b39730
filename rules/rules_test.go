package rules

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
)

// showplan wraps statement XML in a document and parses it.
func showplan(t *testing.T, statements string) *plan.Document {
	t.Helper()
	x := `<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.564" Build="16.0.4215.2">` +
		`<BatchSequence><Batch><Statements>` + statements + `</Statements></Batch></BatchSequence></ShowPlanXML>`
	d, err := plan.Parse(strings.NewReader(x), plan.Options{})
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, x)
	}
	return d
}

// stmt builds a StmtSimple with a QueryPlan around a RelOp tree.
func stmt(attrs, setOptions, planInner, relop string) string {
	return fmt.Sprintf(`<StmtSimple StatementId="1" StatementType="SELECT" %s>%s<QueryPlan>%s%s</QueryPlan></StmtSimple>`,
		attrs, setOptions, planInner, relop)
}

// op builds a RelOp; inner is the operator element with its children.
func op(id int, physical, logical string, rows, cost float64, extra, inner string) string {
	return fmt.Sprintf(`<RelOp NodeId="%d" PhysicalOp="%s" LogicalOp="%s" EstimateRows="%g" EstimateIO="0" EstimateCPU="0" `+
		`AvgRowSize="10" EstimatedTotalSubtreeCost="%g" Parallel="0" EstimateRebinds="0" EstimateRewinds="0" %s><OutputList/>%s</RelOp>`,
		id, physical, logical, rows, cost, extra, inner)
}

func runtime(rows, execs int64) string {
	return fmt.Sprintf(`<RunTimeInformation><RunTimeCountersPerThread Thread="0" ActualRows="%d" ActualEndOfScans="1" ActualExecutions="%d"/></RunTimeInformation>`, rows, execs)
}

const workObj = `<Object Database="[WorkDb]" Schema="[dbo]" Table="[Work]" Index="[%s]" IndexKind="%s"/>`

func scan(id int, physical, index, kind string, rows, cost float64, extra, body string) string {
	return op(id, physical, physical, rows, cost, extra,
		`<IndexScan Ordered="0" ForcedIndex="0" ForceScan="0" NoExpandHint="0">`+fmt.Sprintf(workObj, index, kind)+body+`</IndexScan>`)
}

func analyze(t *testing.T, d *plan.Document, cat *catalog.Catalog, rule *Rule) []Finding {
	t.Helper()
	var out []Finding
	for _, s := range d.Statements() {
		fs, err := run(rule, d, s, cat, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fs...)
	}
	return out
}

func queueCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, diags, err := catalog.ParseScript("schema.sql", strings.NewReader(`
CREATE TABLE dbo.Work (WorkId bigint NOT NULL CONSTRAINT PK_Work PRIMARY KEY CLUSTERED, Status tinyint NOT NULL,
  CreatedAt datetime2(0) NOT NULL, CustomerId int NOT NULL, ClaimedAt datetime2(0) NULL, Payload nvarchar(max) NULL);
CREATE INDEX IX_Work_Pending ON dbo.Work (CreatedAt, WorkId) INCLUDE (CustomerId) WHERE Status = 0;
CREATE INDEX IX_Work_Status ON dbo.Work (Status);`))
	if err != nil || len(diags) > 0 {
		t.Fatalf("schema: %v %v", err, diags)
	}
	return c
}

func setOpts(nulls, warnings, arith string) string {
	return fmt.Sprintf(`<StatementSetOptions ANSI_NULLS="%s" ANSI_PADDING="true" ANSI_WARNINGS="%s" ARITHABORT="%s" CONCAT_NULL_YIELDS_NULL="true" NUMERIC_ROUNDABORT="false" QUOTED_IDENTIFIER="true"/>`,
		nulls, warnings, arith)
}

func TestSetOptions(t *testing.T) {
	read := op(0, "Clustered Index Scan", "Clustered Index Scan", 10, 1, "", `<IndexScan Ordered="0">`+fmt.Sprintf(workObj, "PK_Work", "Clustered")+`</IndexScan>`)
	insert := op(0, "Clustered Index Insert", "Insert", 1, 1, "", `<Update>`+fmt.Sprintf(workObj, "PK_Work", "Clustered")+`</Update>`)
	cat := queueCatalog(t)
	cases := []struct {
		name     string
		opts     string
		relop    string
		cat      *catalog.Catalog
		want     Severity
		contains string
	}{
		{"driver defaults: ARITHABORT OFF alone is harmless", setOpts("true", "true", "false"), insert, cat, 0, ""},
		{"SSMS defaults", setOpts("true", "true", "true"), read, nil, 0, ""},
		{"ANSI_NULLS OFF on a read", setOpts("false", "true", "true"), read, nil, Info, "ANSI_NULLS OFF"},
		{"read of a table with a filtered index", setOpts("false", "true", "true"), read, cat, Warning, "the optimizer must ignore dbo.Work.IX_Work_Pending"},
		{"ARITHABORT OFF with ANSI_WARNINGS OFF", setOpts("true", "false", "false"), read, nil, Info, "ANSI_WARNINGS OFF and ARITHABORT OFF"},
		{"write whose plan maintains no filtered index", setOpts("true", "false", "false"), insert, nil, Info, "no filtered index, indexed view or computed-column index is in the plan"},
		{"write to a table with filtered indexes", setOpts("true", "false", "false"), insert, cat, Error, "which has filtered or indexed-view index dbo.Work.IX_Work_Pending: the write fails with error 1934"},
		{"no StatementSetOptions", "", read, nil, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := analyze(t, showplan(t, stmt("", c.opts, "", c.relop)), c.cat, SetOptions)
			if c.want == 0 {
				if len(fs) != 0 {
					t.Fatalf("want no finding, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Severity != c.want || !strings.Contains(fs[0].Message, c.contains) {
				t.Fatalf("want one %s containing %q, got %+v", c.want, c.contains, fs)
			}
		})
	}
}

func TestKeyLookupSeverityScalesWithEvidence(t *testing.T) {
	lookupTree := func(execs float64, cost float64, total float64) string {
		lookup := op(2, "Clustered Index Seek", "Clustered Index Seek", 1, cost, fmt.Sprintf(`EstimateRebinds="%g"`, execs-1),
			`<IndexScan Lookup="1" Ordered="1">`+fmt.Sprintf(workObj, "PK_Work", "Clustered")+`</IndexScan>`)
		lookup = strings.Replace(lookup, `EstimateRebinds="0" EstimateRewinds="0" `, "", 1)
		seek := scan(1, "Index Seek", "IX_Work_Status", "NonClustered", execs, 0.01, "", "")
		return op(0, "Nested Loops", "Inner Join", execs, total, "", `<NestedLoops Optimized="0">`+seek+lookup+`</NestedLoops>`)
	}
	cases := []struct {
		execs, cost, total float64
		want               Severity
	}{
		{5, 0.01, 1, Info},
		{5, 0.5, 1, Warning},       // 50% of cost but few executions
		{2000, 0.1, 10, Warning},   // many executions, small share
		{2000, 6, 10, Error},       // many executions and most of the cost
		{2000, 0.06, 0.1, Warning}, // most of a trivial statement's cost
		{200000, 0.1, 100, Error},  // executions alone
		{999, 0.0001, 1000, Info},  // just under the execution threshold
	}
	for _, c := range cases {
		fs := analyze(t, showplan(t, stmt("", "", "", lookupTree(c.execs, c.cost, c.total))), nil, KeyLookup)
		if len(fs) != 1 {
			t.Fatalf("%+v: want one finding, got %d", c, len(fs))
		}
		if fs[0].Severity != c.want {
			t.Errorf("%g executions, cost %g of %g: severity %s, want %s (%s)", c.execs, c.cost, c.total, fs[0].Severity, c.want, fs[0].Message)
		}
		if *fs[0].NodeID != 2 || !strings.Contains(fs[0].Message, "rows from Index Seek IX_Work_Status (node 1)") {
			t.Errorf("finding does not name the lookup and its outer input: %s", fs[0].Message)
		}
	}
}

func TestRowEstimateSkew(t *testing.T) {
	scanOp := func(est float64, act int64, extra string) string {
		return scan(1, "Clustered Index Scan", "PK_Work", "Clustered", est, 10, extra, "")
	}
	withRT := func(relop string, rows, execs int64) string {
		return strings.Replace(relop, "<OutputList/>", "<OutputList/>"+runtime(rows, execs), 1)
	}
	filter := func(child string, est float64, act int64) string {
		return withRT(op(0, "Filter", "Filter", est, 11, "", `<Filter StartupExpression="0">`+child+`</Filter>`), act, 1)
	}
	cases := []struct {
		name  string
		tree  string
		nodes []int // nodes expected to be reported
	}{
		{"10,000× under at the scan", withRT(scanOp(200, 0, ""), 2000000, 1), []int{1}},
		{"tiny counts ignored", withRT(scanOp(1, 0, ""), 12, 1), nil},
		{"below the warning factor", withRT(scanOp(200, 0, ""), 1500, 1), nil},
		{"over-estimate", withRT(scanOp(100000, 0, ""), 50, 1), []int{1}},
		{"error inherited by the parent is reported once, where it starts", filter(withRT(scanOp(200, 0, ""), 2000000, 1), 100, 1000000), []int{1}},
		{"never executed", withRT(scanOp(5000, 0, ""), 0, 0), nil},
		{"row goal: fewer rows is early termination", withRT(scanOp(100000, 0, `EstimateRowsWithoutRowGoal="500000"`), 20, 1), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := analyze(t, showplan(t, stmt("", "", "", c.tree)), nil, RowEstimateSkew)
			var got []int
			for _, f := range fs {
				got = append(got, *f.NodeID)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.nodes) {
				t.Errorf("reported nodes %v, want %v: %+v", got, c.nodes, fs)
			}
		})
	}
	// Per-execution view: estimate right per execution, executions wrong.
	inner := strings.Replace(withRT(scanOp(10, 0, `EstimateRebinds="9"`), 10000, 1000), `EstimateRebinds="0" EstimateRewinds="0" `, "", 1)
	if fs := analyze(t, showplan(t, stmt("", "", "", inner)), nil, RowEstimateSkew); len(fs) != 0 {
		t.Errorf("a wrong execution count belongs to the outer input, not this operator: %+v", fs)
	}
}

func TestUnmatchedIndexes(t *testing.T) {
	unmatched := `<UnmatchedIndexes><Parameterization><Object Database="[WorkDb]" Schema="[dbo]" Table="[Work]" Index="[IX_Work_Pending]"/></Parameterization></UnmatchedIndexes><Warnings UnmatchedIndexes="1"/>`
	ciScan := scan(0, "Clustered Index Scan", "PK_Work", "Clustered", 10, 1, "", "")
	pendingScan := scan(0, "Index Scan", "IX_Work_Pending", "NonClustered", 10, 1, "", "")
	cases := []struct {
		name, inner, relop string
		want               Severity
		contains           string
	}{
		{"names the index", unmatched, ciScan, Warning, "filtered index dbo.Work.IX_Work_Pending"},
		{"used anyway (simple parameterization)", unmatched, pendingScan, Info, "harmless"},
		{"flag without names", `<Warnings UnmatchedIndexes="true"/>`, ciScan, Warning, "does not name the index"},
		{"none", "", ciScan, 0, ""},
	}
	for _, c := range cases {
		fs := analyze(t, showplan(t, stmt("", "", c.inner, c.relop)), nil, UnmatchedIndexes)
		if c.want == 0 {
			if len(fs) != 0 {
				t.Errorf("%s: unexpected %+v", c.name, fs)
			}
			continue
		}
		if len(fs) != 1 || fs[0].Severity != c.want || !strings.Contains(fs[0].Message, c.contains) || fs[0].NodeID != nil {
			t.Errorf("%s: want one statement-level %s containing %q, got %+v", c.name, c.want, c.contains, fs)
		}
	}
}

func TestFilteredIndexHintNeedsAFilteredIndex(t *testing.T) {
	hinted := func(index string, filteredAttr string) string {
		return op(0, "Index Scan", "Index Scan", 10, 1, "", `<IndexScan Ordered="1" ForcedIndex="1">`+
			`<Object Database="[WorkDb]" Schema="[dbo]" Table="[Work]" Index="[`+index+`]" `+filteredAttr+`/></IndexScan>`)
	}
	if fs := analyze(t, showplan(t, stmt("", "", "", hinted("IX_Work_Status", ""))), queueCatalog(t), FilteredIndexHint); len(fs) != 0 {
		t.Errorf("hint on an unfiltered index: %+v", fs)
	}
	if fs := analyze(t, showplan(t, stmt("", "", "", hinted("IX_Work_Pending", ""))), queueCatalog(t), FilteredIndexHint); len(fs) != 1 || fs[0].Severity != Warning {
		t.Errorf("hint on a filtered index (catalog): %+v", fs)
	}
	if fs := analyze(t, showplan(t, stmt("", "", "", hinted("IX_Any", `Filtered="1"`))), nil, FilteredIndexHint); len(fs) != 1 {
		t.Errorf("hint on an index the plan marks Filtered: %+v", fs)
	}
	forced := showplan(t, stmt(`StatementParameterizationType="3"`, "", "", hinted("IX_Work_Pending", "")))
	if fs := analyze(t, forced, queueCatalog(t), FilteredIndexHint); len(fs) != 1 || fs[0].Severity != Error {
		t.Errorf("hint under forced parameterization should be an error: %+v", fs)
	}
}

func TestParameterizedFilterNeedsTheFilterColumn(t *testing.T) {
	pred := func(col, operand string) string {
		return `<Predicate><ScalarOperator><Compare CompareOp="EQ"><ScalarOperator><Identifier><ColumnReference Database="[WorkDb]" Schema="[dbo]" Table="[Work]" Column="` + col +
			`"/></Identifier></ScalarOperator><ScalarOperator>` + operand + `</ScalarOperator></Compare></ScalarOperator></Predicate>`
	}
	param := `<Identifier><ColumnReference Column="@p"/></Identifier>`
	params := `<ParameterList><ColumnReference Column="@p" ParameterDataType="int" ParameterCompiledValue="(0)"/></ParameterList>`
	ciScan := func(p string) string {
		return scan(0, "Clustered Index Scan", "PK_Work", "Clustered", 10, 100, `TableCardinality="5000000"`, p)
	}
	cat := queueCatalog(t)
	// ParameterList sits after the RelOp inside QueryPlan.
	d := showplan(t, strings.Replace(stmt(`StatementParameterizationType="1"`, "", "", ciScan(pred("Status", param))), "</QueryPlan>", params+"</QueryPlan>", 1))
	fs := analyze(t, d, cat, FilteredIndexParameterized)
	if len(fs) != 1 || fs[0].Severity != Error || fs[0].Evidence["parameter"] != "@p" || fs[0].Evidence["compiled_value"] != "(0)" {
		t.Fatalf("Status = @p with compiled 0 on a 5M-row scan: %+v", fs)
	}
	if !strings.HasPrefix(fs[0].Fix, "1) a dedicated query with the literal predicate WHERE Status = 0") || !strings.Contains(fs[0].Fix, "8622") {
		t.Errorf("fix text: %s", fs[0].Fix)
	}
	if strings.Contains(fs[0].Message, "pages") {
		t.Errorf("sizes without catalog sizes: %s", fs[0].Message)
	}
	// With sizes in the catalog, the message weighs the two indexes.
	work := cat.FindTable("", "dbo", "Work")
	work.FindIndex("IX_Work_Pending").Size = &catalog.IndexSize{Rows: 200, UsedPages: 3}
	work.Clustered().Size = &catalog.IndexSize{Rows: 5000000, UsedPages: 384615}
	fs = analyze(t, d, cat, FilteredIndexParameterized)
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "; IX_Work_Pending holds 200 rows in 3 pages against 384,615 pages in PK_Work") ||
		fs[0].Evidence["index_pages"] != int64(3) || fs[0].Evidence["replacement_pages"] != int64(384615) {
		t.Errorf("sizes: %+v", fs)
	}
	work.FindIndex("IX_Work_Pending").Size, work.Clustered().Size = nil, nil
	// A parameter on another column leaves the filtered index matchable.
	d = showplan(t, strings.Replace(stmt(`StatementParameterizationType="1"`, "", "", ciScan(pred("CustomerId", param))), "</QueryPlan>", params+"</QueryPlan>", 1))
	if fs := analyze(t, d, cat, FilteredIndexParameterized); len(fs) != 0 {
		t.Errorf("parameter on a non-filter column: %+v", fs)
	}
	// A compiled value outside the filter, without UnmatchedIndexes, is not this problem.
	d = showplan(t, strings.Replace(stmt(`StatementParameterizationType="1"`, "", "", ciScan(pred("Status", param))), "</QueryPlan>",
		strings.Replace(params, "(0)", "(1)", 1)+"</QueryPlan>", 1))
	if fs := analyze(t, d, cat, FilteredIndexParameterized); len(fs) != 0 {
		t.Errorf("compiled value 1 cannot use a Status = 0 index: %+v", fs)
	}
}

// TestRulesSurviveTheCorpusWithACatalog runs every rule, catalog rules
// included, over every real plan with a catalog invented from the plan's
// own objects (every index filtered on a column the plan compares), so the
// filtered-index rules meet real predicates, lookups and sorts.
func TestRulesSurviveTheCorpusWithACatalog(t *testing.T) {
	files := corpusFiles(t)
	for _, path := range files {
		d, err := plan.ParseFile(path, plan.Options{})
		if err != nil {
			if strings.Contains(path, "odd") {
				continue // not every awkward file is a showplan
			}
			t.Fatalf("%s: %v", path, err)
		}
		if _, err := Analyze(d, syntheticCatalog(d), nil); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

func syntheticCatalog(d *plan.Document) *catalog.Catalog {
	c := &catalog.Catalog{Databases: []*catalog.Database{{Name: "x", ParameterizationForced: true, ReadCommittedSnapshot: true}}}
	tables := map[string]*catalog.Table{}
	for _, s := range d.Statements() {
		for _, q := range s.Plans() {
			for _, cmp := range comparisons(q.QueryPlan) {
				for _, n := range []*plan.RelOp{cmp.Node} {
					o := n.Access.Object()
					if o.Table == "" || o.Index == "" {
						continue
					}
					key := strings.ToLower(o.TableName(true))
					t := tables[key]
					if t == nil {
						t = &catalog.Table{Database: o.Database, Schema: o.Schema, Name: o.Table,
							Columns: []*catalog.Column{{Name: cmp.Column.Column, Type: "nvarchar(max)", MaxLength: -1}}}
						tables[key] = t
						c.Tables = append(c.Tables, t)
					}
					if t.FindIndex(o.Index) != nil {
						continue
					}
					// Sizes and statistics that differ 100-fold exercise the size paths.
					ix := &catalog.Index{Name: o.Index, Type: "NONCLUSTERED", Keys: []catalog.IndexColumn{{Name: "k"}},
						FilterDefinition: "[" + cmp.Column.Column + "] IS NULL",
						Size:             &catalog.IndexSize{Rows: int64(len(o.Index)) * 1000, UsedPages: int64(len(o.Index))},
						Statistics:       &catalog.StatisticsFacts{LastUpdated: "2025-01-01T00:00:00", Rows: int64(len(o.Index)) * 10, ModificationCounter: 5000}}
					if f, err := catalog.ParseFilter(ix.FilterDefinition); err == nil {
						ix.Filter = f
					} else {
						ix.FilterError = err.Error()
					}
					t.Indexes = append(t.Indexes, ix)
				}
			}
		}
	}
	return c
}

func corpusFiles(t *testing.T) []string {
	t.Helper()
	files := sharedtest.Files(t, "corpus/plans")
	odd := sharedtest.Files(t, "corpus/odd")
	return append(files, odd...)
}

// FuzzAnalyze runs every rule over whatever the decoder accepts: no input
// may make a rule fail, with or without catalog facts.
func FuzzAnalyze(f *testing.F) {
	root := sharedtest.Root()
	for _, name := range []string{"param", "param-actual-parallel", "isnull", "status-index", "claim-atomic", "forced", "local-variable"} {
		if b, err := os.ReadFile(filepath.Join(root, "fixtures", "queue", name+".sqlplan")); err == nil {
			f.Add(b)
		}
	}
	// The plans written for the rules' own tests (runtime and access paths).
	runtimeFixtures, _ := filepath.Glob(filepath.Join("testdata", "runtime", "*.sqlplan"))
	own, _ := filepath.Glob(filepath.Join("testdata", "plans", "*.sqlplan"))
	for _, path := range append(runtimeFixtures, own...) {
		if b, err := os.ReadFile(path); err == nil {
			f.Add(b)
		}
	}
	var cat *catalog.Catalog
	if c, err := catalog.Load(filepath.Join(root, "fixtures", "queue", "schema.sql")); err == nil {
		cat = c
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := plan.Parse(bytes.NewReader(b), plan.Options{MaxBytes: 1 << 20, MaxDepth: 256})
		if err != nil {
			return
		}
		for _, c := range []*catalog.Catalog{nil, cat, syntheticCatalog(d)} {
			if _, err := Analyze(d, c, nil); err != nil {
				t.Fatal(err)
			}
		}
	})
}

var update = flag.Bool("update", false, "rewrite docs/rules from the rule definitions")

// TestDocsUpToDate keeps docs/rules/*.md generated from the same source as
// `planlint rules NAME`; run `go test ./rules -update` after editing a rule.
func TestDocsUpToDate(t *testing.T) {
	dir := filepath.Join(sharedtest.Root(), "docs", "rules")
	want := map[string]string{"README.md": Index()}
	for _, r := range All() {
		want[r.Name+".md"] = Markdown(r)
	}
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(dir, "*.md"))
		for _, p := range old {
			os.Remove(p)
		}
		for name, text := range want {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	if len(files) != len(want) {
		t.Errorf("docs/rules has %d pages, want %d (run go test ./rules -update)", len(files), len(want))
	}
	for name, text := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != text {
			t.Errorf("docs/rules/%s is out of date (run go test ./rules -update)", name)
		}
	}
}

func TestRuleMetadata(t *testing.T) {
	codes, names := map[string]bool{}, map[string]bool{}
	kebab := regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)
	for _, r := range All() {
		if codes[r.Code] || names[r.Name] {
			t.Errorf("duplicate code or name: %s %s", r.Code, r.Name)
		}
		codes[r.Code], names[r.Name] = true, true
		if !regexp.MustCompile(`^PL[0-9]{3}$`).MatchString(r.Code) || !kebab.MatchString(r.Name) {
			t.Errorf("%s %s: code must be PLnnn and name kebab-case", r.Code, r.Name)
		}
		d := r.Doc
		if r.Summary == "" || d.Problem == "" || d.Evidence == "" || d.Example == "" || d.Fix == "" || d.FalseAlarms == "" || r.Severity == 0 {
			t.Errorf("%s: every rule needs a summary, problem, evidence, example, fix, false alarms and severity", r.Name)
		}
		if r.Run == nil && r.RunQuery == nil && r != UnusedSuppression {
			t.Errorf("%s: only rules the driver reports may lack a run function", r.Name)
		}
		if Lookup(r.Code) != r || Lookup(strings.ToUpper(r.Name)) != r {
			t.Errorf("%s: Lookup by code and name", r.Name)
		}
	}
}

// TestLookupAdviceKeepsWideColumnsOut: the suggested INCLUDE list never
// pulls a LOB payload into the index; the fix says to fetch it separately.
func TestLookupAdviceKeepsWideColumnsOut(t *testing.T) {
	col := func(name string) string {
		return `<ColumnReference Database="[WorkDb]" Schema="[dbo]" Table="[Work]" Column="` + name + `"/>`
	}
	lookup := strings.Replace(op(2, "Clustered Index Seek", "Clustered Index Seek", 1, 5, `EstimateRebinds="1999"`,
		`<IndexScan Lookup="1" Ordered="1">`+fmt.Sprintf(workObj, "PK_Work", "Clustered")+`</IndexScan>`),
		`EstimateRebinds="0" EstimateRewinds="0" `, "", 1)
	lookup = strings.Replace(lookup, "<OutputList/>", "<OutputList>"+col("CreatedAt")+col("Payload")+"</OutputList>", 1)
	seek := scan(1, "Index Seek", "IX_Work_Status", "NonClustered", 2000, 0.01, "", "")
	tree := op(0, "Nested Loops", "Inner Join", 2000, 5.1, "", `<NestedLoops Optimized="0">`+seek+lookup+`</NestedLoops>`)
	fs := analyze(t, showplan(t, stmt("", "", "", tree)), queueCatalog(t), KeyLookup)
	if len(fs) != 1 {
		t.Fatalf("want one finding, got %+v", fs)
	}
	f := fs[0]
	if !strings.Contains(f.Fix, "INCLUDE (CreatedAt)") || strings.Contains(f.Fix, "INCLUDE (CreatedAt, Payload)") {
		t.Errorf("INCLUDE list: %s", f.Fix)
	}
	if !strings.Contains(f.Fix, "Payload is wide") || !strings.Contains(f.Fix, "second query bounded by the WorkId values") {
		t.Errorf("fix does not send the payload to a second, bounded query: %s", f.Fix)
	}
	if w, _ := f.Evidence["wide_columns"].([]string); len(w) != 1 || w[0] != "Payload" {
		t.Errorf("evidence wide_columns = %v", f.Evidence["wide_columns"])
	}
}

package rules

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/plan"
)

// sortOp builds a Sort over child ordering by the Work columns given.
func sortOp(id int, logical string, rows, cost float64, top int, extra, child string, cols ...string) string {
	var b strings.Builder
	for _, c := range cols {
		table := ` Database="[WorkDb]" Schema="[dbo]" Table="[Work]"`
		if strings.HasPrefix(c, "Expr") {
			table = ""
		}
		fmt.Fprintf(&b, `<OrderByColumn Ascending="1"><ColumnReference%s Column="%s"/></OrderByColumn>`, table, c)
	}
	elem := fmt.Sprintf(`<Sort Distinct="0"><OrderBy>%s</OrderBy>%s</Sort>`, b.String(), child)
	if top > 0 {
		elem = fmt.Sprintf(`<TopSort Distinct="0" Rows="%d"><OrderBy>%s</OrderBy>%s</TopSort>`, top, b.String(), child)
	}
	return op(id, "Sort", logical, rows, cost, extra, elem)
}

func withRunTime(relop string, rows, execs int64, elapsedMs int) string {
	rt := fmt.Sprintf(`<RunTimeInformation><RunTimeCountersPerThread Thread="0" ActualRows="%d" ActualEndOfScans="1" ActualExecutions="%d" ActualElapsedms="%d" ActualCPUms="%d"/></RunTimeInformation>`,
		rows, execs, elapsedMs, elapsedMs)
	return strings.Replace(relop, "<OutputList/>", "<OutputList/>"+rt, 1)
}

func TestResidualSort(t *testing.T) {
	clusteredScan := func(rows, cost float64) string {
		return scan(1, "Clustered Index Scan", "PK_Work", "Clustered", rows, cost, "", "")
	}
	cases := []struct {
		name   string
		relop  string
		want   Severity // 0: no finding
		has    []string // in the message
		fix    string   // in the fix; "" wants no fix
		hasNot string
	}{
		{"big sort from one table", sortOp(0, "Sort", 50000, 10, 0, "", clusteredScan(50000, 2), "CreatedAt"),
			Warning, []string{"50,000 rows (estimated)", "straight from Clustered Index Scan"}, "CREATE INDEX IX_Work_CreatedAt ON dbo.Work (CreatedAt)", ""},
		{"cost share alone on a trivial statement", sortOp(0, "Sort", 50, 0.05, 0, "", clusteredScan(50, 0.01), "CreatedAt"),
			Info, []string{"50 rows"}, "CREATE INDEX", ""},
		{"cost share on a costly statement", sortOp(0, "Sort", 500, 8, 0, "", clusteredScan(500, 2), "CreatedAt"),
			Warning, []string{"75% of the statement cost"}, "CREATE INDEX", ""},
		{"cost share on few rows", sortOp(0, "Sort", 50, 8, 0, "", clusteredScan(50, 2), "CreatedAt"),
			Info, nil, "CREATE INDEX", ""},
		{"computed sort column", sortOp(0, "Sort", 50000, 10, 0, "", clusteredScan(50000, 2), "Expr1004"),
			Info, []string{"it sorts on Expr1004, computed in the plan"}, "", ""},
		{"key too wide", sortOp(0, "Sort", 50000, 10, 0, "", clusteredScan(50000, 2), "A", "B", "C", "D", "E", "F"),
			Info, []string{"would need 6 key columns"}, "", ""},
		{"index build", op(0, "Index Insert", "Insert", 50000, 12, "",
			`<CreateIndex>`+fmt.Sprintf(workObj, "IX_Work_CreatedAt", "NonClustered")+sortOp(1, "Sort", 50000, 10, 0, "", clusteredScan(50000, 2), "CreatedAt")+`</CreateIndex>`),
			Info, []string{"build index dbo.Work.IX_Work_CreatedAt (node 0)"}, "", "CREATE INDEX"},
		{"dynamic seek", op(0, "Merge Interval", "Merge Interval", 2, 0.01, "",
			`<MergeInterval>`+sortOp(1, "TopN Sort", 2, 0.01, 2, "", op(2, "Constant Scan", "Constant Scan", 2, 0, "", `<ConstantScan/>`), "Expr1010")+`</MergeInterval>`),
			0, nil, "", ""},
		{"actual rows through a Compute Scalar without counters",
			withRunTime(sortOp(0, "Sort", 10, 10, 0, "", op(1, "Compute Scalar", "Compute Scalar", 10, 2, "",
				`<ComputeScalar>`+withRunTime(clusteredScan(10, 2), 2000000, 1, 400)+`</ComputeScalar>`), "CreatedAt"), 2000000, 1, 2400),
			Error, []string{"2,000,000 rows (actual)"}, "CREATE INDEX", "estimated"},
		{"quick sort on an actual plan", withRunTime(sortOp(0, "Sort", 50000, 10, 0, "", withRunTime(clusteredScan(50000, 2), 50000, 1, 30), "CreatedAt"), 50000, 1, 60),
			Info, []string{"50,000 rows (actual)"}, "CREATE INDEX", ""},
		{"TopN Sort over a slow scan", withRunTime(sortOp(0, "TopN Sort", 20, 10, 20, "", withRunTime(clusteredScan(50000, 2), 2000000, 1, 900), "CreatedAt"), 20, 1, 950),
			Error, []string{"reads 2,000,000 rows (actual) so the sort can return 20"}, "CREATE INDEX", ""},
		{"sort in a loop", op(0, "Nested Loops", "Inner Join", 100, 10, "", `<NestedLoops Optimized="0">`+
			op(1, "Constant Scan", "Constant Scan", 100, 0, "", `<ConstantScan/>`)+
			withRunTime(sortOp(2, "Sort", 20, 9, 0, "", withRunTime(clusteredScan(20, 2), 2000, 100, 50), "CreatedAt"), 2000, 100, 300)+`</NestedLoops>`),
			Warning, []string{"2,000 rows in 100 executions of about 20 rows each (actual)"}, "CREATE INDEX", ""},
		{"table variable", strings.ReplaceAll(sortOp(0, "Sort", 50000, 10, 0, "", op(1, "Table Scan", "Table Scan", 50000, 2, "",
			`<TableScan Ordered="0"><Object Table="[@Pending]"/></TableScan>`), "CreatedAt"), `Database="[WorkDb]" Schema="[dbo]" Table="[Work]"`, `Table="[@Pending]"`),
			Warning, nil, "declare @Pending with INDEX", "CREATE INDEX IX"},
		{"system table", strings.ReplaceAll(sortOp(0, "Sort", 50000, 10, 0, "", clusteredScan(50000, 2), "name"), `Schema="[dbo]"`, `Schema="[sys]"`),
			Info, []string{"system table sys.Work"}, "", ""},
		{"spill is the spill rule's", sortOp(0, "Sort", 50000, 10, 0, "", `<Warnings><SpillToTempDb SpillLevel="1"/></Warnings>`+clusteredScan(50000, 2), "CreatedAt"),
			Warning, nil, "CREATE INDEX", "spill"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := analyze(t, showplan(t, stmt("", "", "", c.relop)), nil, ResidualSort)
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
			for _, h := range c.has {
				if !strings.Contains(f.Message, h) {
					t.Errorf("message lacks %q: %s", h, f.Message)
				}
			}
			if c.fix == "" && f.Fix != "" || !strings.Contains(f.Fix, c.fix) {
				t.Errorf("fix %q, want one containing %q", f.Fix, c.fix)
			}
			if c.hasNot != "" && (strings.Contains(f.Message, c.hasNot) || strings.Contains(f.Fix, c.hasNot)) {
				t.Errorf("finding mentions %q: %s / %s", c.hasNot, f.Message, f.Fix)
			}
		})
	}
}

// TestSortAndLookupOneFinding: in the status-index fixture one index on
// (Status, CreatedAt, WorkId) removes both the TopN Sort and the Key Lookup;
// the lookup's finding carries it and the sort defers to it.
func TestSortAndLookupOneFinding(t *testing.T) {
	d, err := plan.ParseFile(filepath.Join("..", "fixtures", "queue", "status-index.sqlplan"), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := Analyze(d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sortF, lookupF *Finding
	for i, f := range fs {
		switch f.Rule {
		case "residual-sort":
			sortF = &fs[i]
		case "key-lookup":
			lookupF = &fs[i]
		}
	}
	if sortF == nil || lookupF == nil {
		t.Fatalf("want a sort and a lookup finding, got %+v", fs)
	}
	if lookupF.Severity != Error || !strings.Contains(lookupF.Fix, "one index removes both this lookup and the Sort at node 0") {
		t.Errorf("lookup: %s %s / %s", lookupF.Severity, lookupF.Message, lookupF.Fix)
	}
	if sortF.Severity != Info || sortF.Fix != "" || !strings.Contains(sortF.Message, "the index proposed for the Key Lookup at node 3 removes this sort too") {
		t.Errorf("sort: %s %s / %s", sortF.Severity, sortF.Message, sortF.Fix)
	}
}

package compare

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/rules"
)

func fixture(t *testing.T, name string) Side {
	t.Helper()
	path := filepath.Join("..", "fixtures", "queue", name)
	doc, err := plan.ParseFile(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := rules.Analyze(doc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Side{Name: name, Document: doc, Findings: fs}
}

func kinds(cs []Change) map[string][]string {
	m := map[string][]string{}
	for _, c := range cs {
		m[c.Kind] = append(m[c.Kind], c.Detail)
	}
	return m
}

func ruleNames(fs []rules.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule)
	}
	return out
}

func TestQueueFixturePairs(t *testing.T) {
	tests := []struct {
		a, b       string
		want       map[string]string // change kind -> substring of one detail
		absent     []string          // change kinds that must not appear
		newRules   []string
		goneRules  []string
		worst      rules.Severity
		costRising bool
	}{
		{
			a: "literal.sqlplan", b: "param.sqlplan",
			want: map[string]string{
				"access-path": "dbo.Work: Index Scan IX_Work_Pending → Clustered Index Scan PK_Work",
				"sort-added":  "Sort (TopN Sort): 0 → 1",
			},
			absent:     []string{"sort-removed", "join-type"},
			newRules:   []string{"unmatched-indexes", "residual-sort"},
			worst:      rules.Error,
			costRising: true,
		},
		{
			a: "param.sqlplan", b: "literal.sqlplan",
			want: map[string]string{
				"access-path":  "Clustered Index Scan PK_Work → Index Scan IX_Work_Pending",
				"sort-removed": "Sort (TopN Sort): 1 → 0",
			},
			absent:    []string{"sort-added"},
			goneRules: []string{"unmatched-indexes", "residual-sort"},
		},
		{
			// The status-only index needs a lookup join the filtered one does not.
			a: "status-index.sqlplan", b: "literal.sqlplan",
			want: map[string]string{
				"operator-removed": "joins: 1 → 0",
				"sort-removed":     "Sort (TopN Sort): 1 → 0",
			},
			absent:    []string{"sort-added", "join-type"},
			goneRules: []string{"key-lookup", "residual-sort"},
		},
		{
			a: "param.sqlplan", b: "param-actual.sqlplan",
			absent:   []string{"access-path", "sort-added", "sort-removed", "operator-added", "operator-removed"},
			newRules: []string{"spill", "row-estimate-skew"}, // the actual plan's sort spilled 5,208 pages
			worst:    rules.Error,
		},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			a, b := fixture(t, tt.a), fixture(t, tt.b)
			r := Documents(a, b)
			if len(r.Statements) != 1 || len(r.OnlyInA)+len(r.OnlyInB) != 0 {
				t.Fatalf("want one paired statement, got %d paired, only A %v, only B %v", len(r.Statements), r.OnlyInA, r.OnlyInB)
			}
			got := kinds(r.Statements[0].Changes)
			for kind, sub := range tt.want {
				if !strings.Contains(strings.Join(got[kind], "\n"), sub) {
					t.Errorf("change %s: want a detail containing %q, got %q", kind, sub, got[kind])
				}
			}
			for _, kind := range tt.absent {
				if len(got[kind]) > 0 {
					t.Errorf("unexpected change %s: %q", kind, got[kind])
				}
			}
			if g := ruleNames(r.Findings.New); !sameSet(g, tt.newRules) {
				t.Errorf("new findings %v, want %v", g, tt.newRules)
			}
			if g := ruleNames(r.Findings.Gone); !sameSet(g, tt.goneRules) {
				t.Errorf("gone findings %v, want %v", g, tt.goneRules)
			}
			if kept := len(b.Findings) - len(r.Findings.New); r.Findings.Kept != kept {
				t.Errorf("kept %d, want %d", r.Findings.Kept, kept)
			}
			if r.Worst() != tt.worst {
				t.Errorf("worst new severity %v, want %v", r.Worst(), tt.worst)
			}
			if c := r.Statements[0].Cost; (c.B > c.A) != tt.costRising {
				t.Errorf("cost %v → %v, rising=%v", c.A, c.B, tt.costRising)
			}
		})
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
		if m[s] < 0 {
			return false
		}
	}
	return true
}

func TestSelfComparisonIsQuiet(t *testing.T) {
	for _, name := range []string{"literal.sqlplan", "param.sqlplan", "status-index.sqlplan", "param-actual-parallel.sqlplan"} {
		t.Run(name, func(t *testing.T) {
			s := fixture(t, name)
			r := Documents(s, s)
			for _, d := range r.Statements {
				if len(d.Changes) > 0 {
					t.Errorf("changes against itself: %+v", d.Changes)
				}
				for _, o := range d.Operators {
					if o.NodeA == nil || o.NodeB == nil || *o.NodeA != *o.NodeB {
						t.Errorf("operator %s not paired with itself: %v → %v", o.Operator, o.NodeA, o.NodeB)
					}
				}
			}
			if len(r.Findings.New)+len(r.Findings.Gone) > 0 || r.Findings.Kept != len(s.Findings) {
				t.Errorf("findings diff against itself: %+v", r.Findings)
			}
		})
	}
}

// stmt is one statement of a synthetic plan: a single Table Scan of table.
type stmt struct {
	id          int
	text, hash  string
	table, opts string
	noPlan      bool
	// compiled, when set, is the compiled value of a parameter @P.
	compiled string
}

func synthetic(t *testing.T, stmts ...stmt) *plan.Document {
	t.Helper()
	var b strings.Builder
	b.WriteString(`<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.564" Build="16.0.1000.6"><BatchSequence><Batch><Statements>`)
	for _, s := range stmts {
		hash := ""
		if s.hash != "" {
			hash = fmt.Sprintf(` QueryHash="%s"`, s.hash)
		}
		fmt.Fprintf(&b, `<StmtSimple StatementText="%s" StatementId="%d" StatementType="SELECT" StatementSubTreeCost="1"%s>`, s.text, s.id, hash)
		if s.opts != "" {
			fmt.Fprintf(&b, `<StatementSetOptions %s/>`, s.opts)
		}
		if !s.noPlan {
			fmt.Fprintf(&b, `<QueryPlan><RelOp NodeId="0" PhysicalOp="Table Scan" LogicalOp="Table Scan" EstimateRows="10" EstimatedTotalSubtreeCost="1" EstimateCPU="0.5" EstimateIO="0.5">`+
				`<OutputList/><TableScan Ordered="0"><Object Database="[D]" Schema="[dbo]" Table="[%s]"/></TableScan></RelOp>`, s.table)
			if s.compiled != "" {
				fmt.Fprintf(&b, `<ParameterList><ColumnReference Column="@P" ParameterDataType="varchar(20)" ParameterCompiledValue="%s"/></ParameterList>`, s.compiled)
			}
			b.WriteString(`</QueryPlan>`)
		}
		b.WriteString(`</StmtSimple>`)
	}
	b.WriteString(`</Statements></Batch></BatchSequence></ShowPlanXML>`)
	doc, err := plan.Parse(strings.NewReader(b.String()), plan.Options{})
	if err != nil {
		t.Fatalf("synthetic plan: %v\n%s", err, b.String())
	}
	return doc
}

func TestStatementPairing(t *testing.T) {
	tests := []struct {
		name     string
		a, b     []stmt
		want     []string // "idA→idB by", in A's order
		onlyA    []int
		onlyB    []int
		noChange bool
	}{
		{
			name: "query hash wins over position",
			a:    []stmt{{id: 1, text: "q1", hash: "0x01", table: "T1"}, {id: 2, text: "q2", hash: "0x02", table: "T2"}},
			b:    []stmt{{id: 1, text: "other", hash: "0x02", table: "T2"}, {id: 2, text: "q1 changed", hash: "0x01", table: "T1"}},
			want: []string{"1→2 query_hash", "2→1 query_hash"},
		},
		{
			name:  "text ignores case and spacing",
			a:     []stmt{{id: 1, text: "SELECT  a FROM t", table: "T"}},
			b:     []stmt{{id: 7, text: "x", table: "U"}, {id: 8, text: "select a\nfrom T", table: "T"}},
			want:  []string{"1→8 text"},
			onlyB: []int{7},
		},
		{
			name:  "position pairs the rest, extras stay alone",
			a:     []stmt{{id: 1, text: "a", table: "T"}, {id: 2, text: "b", table: "T"}, {id: 3, text: "c", table: "T"}},
			b:     []stmt{{id: 1, text: "x", table: "T"}, {id: 2, text: "y", table: "T"}},
			want:  []string{"1→1 position", "2→2 position"},
			onlyA: []int{3},
		},
		{
			name: "statements without a plan are not compared",
			a:    []stmt{{id: 1, text: "SET NOCOUNT ON", noPlan: true}, {id: 2, text: "q", table: "T"}},
			b:    []stmt{{id: 1, text: "q", table: "T"}},
			want: []string{"2→1 text"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Documents(Side{Name: "a", Document: synthetic(t, tt.a...)}, Side{Name: "b", Document: synthetic(t, tt.b...)})
			var got []string
			for _, d := range r.Statements {
				got = append(got, fmt.Sprintf("%d→%d %s", d.A.StatementID, d.B.StatementID, d.MatchedBy))
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("pairs %v, want %v", got, tt.want)
			}
			if g := ids(r.OnlyInA); g != fmt.Sprint(tt.onlyA) {
				t.Errorf("only in A %s, want %v", g, tt.onlyA)
			}
			if g := ids(r.OnlyInB); g != fmt.Sprint(tt.onlyB) {
				t.Errorf("only in B %s, want %v", g, tt.onlyB)
			}
		})
	}
}

func ids(refs []StatementRef) string {
	var out []int
	for _, r := range refs {
		out = append(out, r.StatementID)
	}
	return fmt.Sprint(out)
}

func TestSettingAndAccessChanges(t *testing.T) {
	app := `ANSI_NULLS="true" ANSI_PADDING="true" ANSI_WARNINGS="true" ARITHABORT="false" CONCAT_NULL_YIELDS_NULL="true" NUMERIC_ROUNDABORT="false" QUOTED_IDENTIFIER="true"`
	ssms := strings.Replace(app, `ARITHABORT="false"`, `ARITHABORT="true"`, 1)
	a := synthetic(t, stmt{id: 1, text: "q", table: "Work", opts: app})
	b := synthetic(t, stmt{id: 1, text: "q", table: "Archive", opts: ssms})
	r := Documents(Side{Name: "a", Document: a}, Side{Name: "b", Document: b})
	got := kinds(r.Statements[0].Changes)
	if s := strings.Join(got["set-option"], "\n"); !strings.Contains(s, "ARITHABORT OFF → ON") || !strings.Contains(s, "plan-cache entry") {
		t.Errorf("set-option change %q", s)
	}
	want := []string{"dbo.Work is no longer read (was Table Scan)", "dbo.Archive is now read with Table Scan"}
	if g := got["access-path"]; strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("access-path changes %q, want %q", g, want)
	}
	ops := r.Statements[0].Operators
	if len(ops) != 2 || ops[0].NodeB != nil || ops[1].NodeA != nil {
		t.Errorf("scans of different tables must not pair: %+v", ops)
	}
}

func TestDeltaRatio(t *testing.T) {
	for _, tt := range []struct {
		d    Delta
		want float64
	}{
		{Delta{0, 5}, 0},
		{Delta{2, 5}, 2.5},
		{Delta{4, 1}, 0.25},
		{Delta{3, 0}, 0},
	} {
		if got := tt.d.Ratio(); got != tt.want {
			t.Errorf("%+v.Ratio() = %v, want %v", tt.d, got, tt.want)
		}
	}
}

func TestActualTotals(t *testing.T) {
	est, act := fixture(t, "param.sqlplan"), fixture(t, "param-actual.sqlplan")
	if d := Documents(est, est).Statements[0]; d.Actual != nil {
		t.Errorf("two estimated plans have runtime totals: %+v", d.Actual)
	}
	d := Documents(est, act).Statements[0]
	want := RunTotals{ElapsedMs: 4166, CPUMs: 2874, LogicalReads: 384702, RowsRead: 5000000}
	if d.Actual == nil || d.Actual.A != nil || d.Actual.B == nil || *d.Actual.B != want {
		t.Fatalf("actual totals %+v, want A nil and B %+v", d.Actual, want)
	}
	for _, o := range d.Operators {
		if o.Operator == "Clustered Index Scan" && (o.LogicalReadsA != nil || o.LogicalReadsB == nil || *o.LogicalReadsB != 384702) {
			t.Errorf("scan logical reads %v → %v", o.LogicalReadsA, o.LogicalReadsB)
		}
		if o.Operator == "Sort (TopN Sort)" && o.LogicalReadsB != nil {
			t.Errorf("a sort reads no pages of a table: %v", *o.LogicalReadsB)
		}
	}
}

// TestParameterValueChange: a compiled value that differs is a change
// that carries the parameter and both values apart from its detail, so
// shared outputs can mask them.
func TestParameterValueChange(t *testing.T) {
	a := synthetic(t, stmt{id: 1, text: "q", table: "Work", compiled: "&apos;ACCT-1&apos;"})
	b := synthetic(t, stmt{id: 1, text: "q", table: "Work", compiled: "N&apos;ACCT-1&apos;"})
	r := Documents(Side{Name: "a", Document: a}, Side{Name: "b", Document: b})
	var got []Change
	for _, c := range r.Statements[0].Changes {
		if c.Kind == "parameter-value" {
			got = append(got, c)
		}
	}
	want := Change{Kind: "parameter-value", Detail: "@P compiled for 'ACCT-1' → N'ACCT-1'", Parameter: "@P", ValueA: "'ACCT-1'", ValueB: "N'ACCT-1'"}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("parameter-value changes %+v, want [%+v]", got, want)
	}
	if same := Documents(Side{Name: "a", Document: a}, Side{Name: "a", Document: a}); len(same.Statements[0].Changes) != 0 {
		t.Errorf("the same compiled value is a change: %+v", same.Statements[0].Changes)
	}
}

// TestObjectNamesKeepTheirCase: tables are matched without case but shown
// as each plan writes them (dbo.Work, not dbo.work).
func TestObjectNamesKeepTheirCase(t *testing.T) {
	a := synthetic(t, stmt{id: 1, text: "q", table: "Work"})
	b := synthetic(t, stmt{id: 1, text: "q", table: "WORK"})
	r := Documents(Side{Name: "a", Document: a}, Side{Name: "b", Document: b})
	ops := r.Statements[0].Operators
	if len(ops) != 1 || ops[0].NodeA == nil || ops[0].NodeB == nil {
		t.Fatalf("the scans of dbo.Work and dbo.WORK must pair: %+v", ops)
	}
	if ops[0].Object != "dbo.Work" {
		t.Errorf("object %q, want dbo.Work as plan A writes it", ops[0].Object)
	}
	if c := r.Statements[0].Changes; len(c) != 0 {
		t.Errorf("a table named in another case is no access-path change: %+v", c)
	}
	gone := synthetic(t, stmt{id: 1, text: "q", table: "Archive"})
	r = Documents(Side{Name: "a", Document: a}, Side{Name: "b", Document: gone})
	if got := kinds(r.Statements[0].Changes)["access-path"]; len(got) == 0 || !strings.HasPrefix(got[0], "dbo.Work is no longer read") {
		t.Errorf("access-path changes %q, want dbo.Work in the plan's case", got)
	}
}

// TestFindingIndexes: NewAt and GoneAt point at the findings of B and A
// that New and Gone hold, for renderers that locate them.
func TestFindingIndexes(t *testing.T) {
	a, b := fixture(t, "literal.sqlplan"), fixture(t, "param-actual.sqlplan")
	r := Documents(a, b)
	if len(r.Findings.New) == 0 || len(r.Findings.NewAt) != len(r.Findings.New) || len(r.Findings.GoneAt) != len(r.Findings.Gone) {
		t.Fatalf("new %d at %v, gone %d at %v", len(r.Findings.New), r.Findings.NewAt, len(r.Findings.Gone), r.Findings.GoneAt)
	}
	for i, at := range r.Findings.NewAt {
		if fmt.Sprint(b.Findings[at]) != fmt.Sprint(r.Findings.New[i]) {
			t.Errorf("NewAt[%d] = %d: %s, want %s", i, at, b.Findings[at].Rule, r.Findings.New[i].Rule)
		}
	}
	for i, at := range r.Findings.GoneAt {
		if fmt.Sprint(a.Findings[at]) != fmt.Sprint(r.Findings.Gone[i]) {
			t.Errorf("GoneAt[%d] = %d: %s, want %s", i, at, a.Findings[at].Rule, r.Findings.Gone[i].Rule)
		}
	}
}

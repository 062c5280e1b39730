package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/planlint/planlint/rules"
)

func runtimeReport() *Report {
	last := time.Date(2025, 11, 3, 2, 0, 41, 0, time.UTC)
	maxCPU, avgRows, minRows, maxRows, spills, grant := 40.0, 20.0, int64(0), int64(20), int64(8), int64(1024)
	forced := true
	missing := "no plan: sys.query_store_plan.query_plan is NULL"
	node := 0
	return &Report{Tool: "planlint", Version: "test", Files: []*File{
		{Path: "cache:0x5C3B plan 0xA47E", Statements: []*Statement{{Batch: 1, StatementID: 1, Type: "SELECT",
			Text: "SELECT TOP (20) WorkId\n  FROM dbo.Work WHERE Status = @Status",
			Runtime: &Runtime{Source: SourcePlanCache, Database: "WorkDb", Executions: 1204, CPUMs: 3412, AvgCPUMs: 2.834, MaxCPUMs: &maxCPU,
				DurationMs: 5100, AvgDurationMs: 4.236, LogicalReads: 12_345_678, AvgLogicalReads: 10253.9, AvgRows: &avgRows,
				MinRows: &minRows, MaxRows: &maxRows, SpilledPages: &spills, MaxGrantKB: &grant, LastExecution: &last,
				QueryHash: "0x5C3B", QueryPlanHash: "0xA47E", PlanHandle: "0x0600"}}},
			Findings: []*Finding{{Finding: rules.Finding{Rule: "residual-sort", Code: "PL103", Severity: rules.Error, Batch: 1,
				StatementID: 1, NodeID: &node, Message: "Sort sorts everything", Fix: "add an index"}}}},
		{Path: "querystore:query 42 plan 11", Error: &missing, Statements: []*Statement{{Batch: 1, Text: "DELETE dbo.Work WHERE Status = 1",
			Runtime: &Runtime{Source: SourceQueryStore, Database: "WorkDb", Executions: 1, CPUMs: 0.5, AvgCPUMs: 0.5, DurationMs: 0.6,
				AvgDurationMs: 0.6, LogicalReads: 9, AvgLogicalReads: 9, QueryID: 42, PlanID: 11, Forced: &forced,
				PlanType: "Query Variant Plan", ParentQueryID: 40, LastForceFailure: "NO_INDEX", ForceFailureCount: 2}}}},
		{Path: "plain.sqlplan", Statements: []*Statement{{Batch: 1, StatementID: 1, Type: "SELECT"}}},
	}}
}

// TestTextRuntime: a pulled statement gets its name, text and one line of
// figures; one without a plan says why; other files print as before.
func TestTextRuntime(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, runtimeReport(), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `cache:0x5C3B plan 0xA47E [WorkDb] SELECT TOP (20) WorkId FROM dbo.Work WHERE Status = @Status
    1,204 executions · CPU 3,412 ms (avg 2.834, max 40) · duration 5,100 ms (avg 4.236) · reads 12,345,678 (avg 10,254) · rows avg 20 min 0 max 20 · spilled 8 pages · grant max 1,024 KB · last run 2025-11-03 02:00:41Z
cache:0x5C3B plan 0xA47E: stmt 1 node 0: error [PL103 residual-sort] Sort sorts everything
    fix: add an index

querystore:query 42 plan 11 [WorkDb] DELETE dbo.Work WHERE Status = 1
    query 42 plan 11, forced, Query Variant Plan of query 40, forcing failed 2× (last: NO_INDEX) · 1 execution · CPU 0.5 ms (avg 0.5) · duration 0.6 ms (avg 0.6) · reads 9 (avg 9)
    no plan: sys.query_store_plan.query_plan is NULL

1 error, 0 warnings, 0 infos in 2 files; 1 of 3 files could not be analysed
Each rule's documentation: planlint rules NAME
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	plain := runtimeReport()
	for _, f := range plain.Files {
		for _, s := range f.Statements {
			s.Runtime = nil
		}
	}
	b.Reset()
	if err := Text(&b, plain, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "[WorkDb]") || strings.Contains(b.String(), "no plan") {
		t.Errorf("files without runtime figures must print as before:\n%s", b.String())
	}
}

// TestJSONRuntime: JSON carries the figures of pulled statements and
// nothing more for other statements.
func TestJSONRuntime(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, runtimeReport()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Files []struct {
			Statements []struct {
				Runtime map[string]any `json:"runtime"`
			} `json:"statements"`
		} `json:"files"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	cache := got.Files[0].Statements[0].Runtime
	for k, v := range map[string]any{"source": "plan_cache", "executions": 1204.0, "avg_cpu_ms": 2.834, "max_grant_kb": 1024.0,
		"spilled_pages": 8.0, "last_execution": "2025-11-03T02:00:41Z", "plan_handle": "0x0600", "min_rows": 0.0} {
		if cache[k] != v {
			t.Errorf("plan cache runtime %s = %v, want %v", k, cache[k], v)
		}
	}
	if _, ok := cache["is_forced_plan"]; ok {
		t.Error("a plan cache statement has no forcing")
	}
	qs := got.Files[1].Statements[0].Runtime
	for k, v := range map[string]any{"source": "query_store", "query_id": 42.0, "plan_id": 11.0, "is_forced_plan": true,
		"plan_type": "Query Variant Plan", "parent_query_id": 40.0, "last_force_failure_reason": "NO_INDEX"} {
		if qs[k] != v {
			t.Errorf("Query Store runtime %s = %v, want %v", k, qs[k], v)
		}
	}
	if got.Files[2].Statements[0].Runtime != nil {
		t.Error("a plan file's statement has no runtime figures")
	}
}

func TestSnippet(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{"SELECT  1\n\tFROM x", 100, "SELECT 1 FROM x"},
		{"SELECT 工作 FROM dbo.Wörk", 10, "SELECT 工作…"},
		{"abc", 0, "abc"},
	}
	for _, tc := range tests {
		if got := Snippet(tc.in, tc.limit); got != tc.want {
			t.Errorf("Snippet(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
	}
}

// TestSharedFormatsRuntime: the shared formats carry the figures of pulled
// statements too, including one whose plan could not be read.
func TestSharedFormatsRuntime(t *testing.T) {
	var md bytes.Buffer
	if err := Markdown(&md, runtimeReport(), MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"`cache:0x5C3B plan 0xA47E`<br>1,204 executions, avg CPU 2.834 ms, avg duration 4.236 ms, avg reads 10,254 |",
		"no plan: sys.query\\_store\\_plan.query\\_plan is NULL (1 execution, avg CPU 0.5 ms",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}

	var page bytes.Buffer
	if err := HTML(&page, runtimeReport(), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<p class="runtime">[WorkDb] 1,204 executions · CPU 3,412 ms (avg 2.834, max 40)`,
		`<p class="runtime">[WorkDb] query 42 plan 11, forced, Query Variant Plan of query 40`,
		`<pre>DELETE dbo.Work WHERE Status = ?</pre>`, // redacted like every statement text
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
	if n := strings.Count(page.String(), `<p class="runtime">`); n != 2 {
		t.Errorf("%d runtime lines in html, want 2 (the plan file has none)", n)
	}

	var sarif bytes.Buffer
	if err := SARIF(&sarif, runtimeReport(), SARIFOptions{}); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Properties struct {
					Runtime map[string]any `json:"runtime"`
				} `json:"properties"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(sarif.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if rt := log.Runs[0].Results[0].Properties.Runtime; rt["executions"] != 1204.0 || rt["query_hash"] != "0x5C3B" {
		t.Errorf("sarif result runtime %v", rt)
	}
}

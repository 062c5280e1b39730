package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/plan"
)

// variancePlan parses a plan of the variance fixtures, with edits applied
// (old, new pairs) to its text.
func variancePlan(t *testing.T, name string, edits ...string) *plan.Document {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "variance", name+".sqlplan"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("%s has no %q", name, edits[i])
		}
		text = strings.ReplaceAll(text, edits[i], edits[i+1])
	}
	d, err := plan.Parse(strings.NewReader(text), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func f64(v float64) *float64 { return &v }

// TestPlanVariance: several plans of one query are compared by duration
// and reads per execution; one plan by the spread of its executions.
func TestPlanVariance(t *testing.T) {
	seek := variancePlan(t, "status-seek")
	scan := variancePlan(t, "status-scan")
	scanSameValue := variancePlan(t, "status-scan", `ParameterCompiledValue="(1)"`, `ParameterCompiledValue="(0)"`)
	literal, err := plan.ParseFile(filepath.Join("..", "fixtures", "queue", "status-index.sqlplan"), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt := func(exec int64, avgMs, reads float64) PlanRuntime {
		return PlanRuntime{Executions: exec, AvgDurationMs: avgMs, AvgCPUMs: avgMs * 0.9, AvgLogicalReads: reads, AvgRows: f64(20)}
	}
	store := func(plans ...QueryPlanRun) *Query {
		for i := range plans {
			plans[i].QueryID = 7
			plans[i].Name = "querystore:query 7 plan"
		}
		return &Query{Source: SourceQueryStore, QueryID: 7, QueryHash: "0x5C3B9E8D7A6F1402", Database: "WorkDb", Plans: plans}
	}
	cache := func(plans ...QueryPlanRun) *Query {
		return &Query{Source: SourcePlanCache, QueryHash: "0x5C3B9E8D7A6F1402", Database: "WorkDb", Plans: plans}
	}
	good := QueryPlanRun{PlanID: 12, QueryPlanHash: "0x71C0E9B48A2D5F36", Document: seek, Runtime: rt(5000, 1.2, 4510)}
	bad := QueryPlanRun{PlanID: 15, QueryPlanHash: "0x3F8A61D2C94B7E05", Document: scan, Runtime: rt(800, 850, 62000)}
	badForced := bad
	badForced.Forced = true
	badSameValue := bad
	badSameValue.Document = scanSameValue
	fewRuns := bad
	fewRuns.Runtime = rt(3, 850, 62000)
	similar := bad
	similar.Runtime = rt(800, 2.0, 6100)
	moreRows := bad
	moreRows.Runtime = rt(800, 30, 9000)
	moreRows.Runtime.AvgRows = f64(600)
	readsOnly := bad
	readsOnly.Runtime = rt(800, 5, 620000)
	waited := bad
	waited.Runtime = PlanRuntime{Executions: 800, AvgDurationMs: 85, AvgCPUMs: 1.5, AvgLogicalReads: 6000, AvgRows: f64(20)}
	readsNotSlower := bad
	readsNotSlower.Runtime = rt(800, 1.0, 620000)
	minor := bad
	minor.Runtime = rt(20, 85, 62000)
	dispatcher := bad
	dispatcher.PlanType = "Dispatcher Plan"
	noPlan := bad
	noPlan.Document = nil
	withPL201 := bad
	withPL201.Findings = []Finding{{Rule: "filtered-index-parameterized", Code: "PL201",
		Evidence: map[string]any{"index": "IX_Work_Pending", "filter": "Status = 0"}}}
	goodWithAdvice := good
	goodWithAdvice.Findings = []Finding{{Rule: "residual-sort", Severity: Info, Evidence: map[string]any{"suggested_index": "CREATE INDEX IX_Other ON dbo.Work (CreatedAt);"}},
		{Rule: "key-lookup", Severity: Error, Evidence: map[string]any{"suggested_index": "CREATE INDEX IX_Work_Status ON dbo.Work (Status, CreatedAt, WorkId) INCLUDE (CustomerId) WITH (DROP_EXISTING = ON);"}}}
	cacheGood := QueryPlanRun{QueryPlanHash: good.QueryPlanHash, PlanHandle: "0x0601", Document: seek, Runtime: good.Runtime}
	cacheBad := QueryPlanRun{QueryPlanHash: bad.QueryPlanHash, PlanHandle: "0x0602", Document: scan, Runtime: rt(100, 850, 62000)}
	spread := func(doc *plan.Document, maxReads, maxMs float64) QueryPlanRun {
		r := rt(5000, 1.2, 4510)
		r.MaxLogicalReads, r.MaxDurationMs, r.MinLogicalReads, r.StdevReads = f64(maxReads), f64(maxMs), f64(40), f64(90000)
		return QueryPlanRun{PlanID: 12, Document: doc, Runtime: r}
	}

	tests := []struct {
		name    string
		q       *Query
		plan    int // the plan the finding is on
		sev     Severity
		msg     []string
		fix     []string
		fixNot  []string
		silence bool
	}{
		{name: "other values, Query Store", q: store(good, bad), plan: 1, sev: Error,
			msg: []string{"query 7 has 2 plans whose average duration differs 708×", "plan 15 averaged 850 ms and 62,000 reads over 800 executions",
				"plan 12 averaged 1.20 ms and 4,510 reads over 5,000 executions", "plan 15 uses Clustered Index Scan dbo.Work.PK_Work where plan 12 uses Nested Loops (Inner Join), Index Seek dbo.Work.IX_Work_Status, Key Lookup dbo.Work.PK_Work",
				"plan 15 was compiled for @Status = (1) and plan 12 for @Status = (0): parameter sensitivity", "plan 15 took 679 s more elapsed time"},
			fix: []string{"1) as a stopgap, force plan 12 of query 7: EXEC sys.sp_query_store_force_plan @query_id = 7, @plan_id = 12;", "including @Status = (1) that plan 15 was compiled for",
				"2) OPTION (OPTIMIZE FOR (@Status = 0))", "3) OPTION (RECOMPILE) on the statement: a compile took 3 ms of CPU", "4) a dedicated statement"}},
		{name: "same values: forcing suits them", q: store(good, badSameValue), plan: 1, sev: Error,
			msg:    []string{"both were compiled for @Status = (0), so the difference comes from what changed between the compiles"},
			fix:    []string{"1) force plan 12 of query 7: EXEC sys.sp_query_store_force_plan @query_id = 7, @plan_id = 12; (plan 12 had the lowest figures", "2) compare the plans' estimates"},
			fixNot: []string{"OPTIMIZE FOR"}},
		{name: "the worse plan is forced", q: store(good, badForced), plan: 1, sev: Error,
			fix: []string{"EXEC sys.sp_query_store_unforce_plan @query_id = 7, @plan_id = 15; then EXEC sys.sp_query_store_force_plan @query_id = 7, @plan_id = 12;"}},
		{name: "a filtered index finding leads the fix", q: store(good, withPL201), plan: 1, sev: Error,
			fix:    []string{"1) a dedicated statement with the literal predicate WHERE Status = 0 for the values that filtered index IX_Work_Pending serves", "2) as a stopgap, force plan 12 of query 7"},
			fixNot: []string{"a dedicated statement for the values that need their own plan"}},
		{name: "an index another rule suggests", q: store(goodWithAdvice, bad), plan: 1, sev: Error,
			fix: []string{"2) an index that gives every value one cheap plan, as key-lookup on plan 12 suggests: CREATE INDEX IX_Work_Status ON dbo.Work (Status, CreatedAt, WorkId) INCLUDE (CustomerId) WITH (DROP_EXISTING = ON); 3) OPTION (OPTIMIZE FOR"}},
		{name: "PSP variants are forced per variant", q: func() *Query {
			q := store(good, bad)
			q.Plans[0].QueryID, q.Plans[0].PlanType = 8, "Query Variant Plan"
			q.Plans[1].QueryID, q.Plans[1].PlanType = 9, "Query Variant Plan"
			return q
		}(), plan: 1, sev: Error,
			fix:    []string{"1) plan 15 and plan 12 belong to different Parameter Sensitive Plan variants of query 7 (queries 9 and 8)", "DISABLE_PARAMETER_SENSITIVE_PLAN_OPTIMIZATION", "2) OPTION (OPTIMIZE FOR"},
			fixNot: []string{"sp_query_store_force_plan"}},
		{name: "the worse plan listed first", q: store(bad, good), plan: 0, sev: Error, msg: []string{"plan 15 uses Clustered Index Scan"}},
		{name: "plan cache: no forcing, eviction", q: cache(cacheGood, cacheBad), plan: 1, sev: Warning,
			msg: []string{"query_hash 0x5C3B9E8D7A6F1402 has 2 plans", "plan 0x3F8A61D2C94B7E05 averaged 850 ms", "85 s more elapsed time"},
			fix: []string{"OPTIMIZE FOR (@Status = 0)", "DBCC FREEPROCCACHE (0x0602) evicts plan 0x3F8A61D2C94B7E05"}, fixNot: []string{"sp_query_store_force_plan"}},
		{name: "one plan cached twice", q: cache(cacheGood, QueryPlanRun{QueryPlanHash: good.QueryPlanHash, PlanHandle: "0x0603", Document: seek, Runtime: rt(100, 850, 62000)}),
			plan: 1, sev: Warning, msg: []string{"plan 0x71C0E9B48A2D5F36 #2 averaged 850 ms", "plan 0x71C0E9B48A2D5F36 averaged 1.20 ms", "both plans read the same objects the same way",
				"both were compiled for @Status = (0)"},
			fix: []string{"1) UPDATE STATISTICS", "DBCC FREEPROCCACHE (0x0603) evicts plan 0x71C0E9B48A2D5F36 #2"}},
		{name: "little time at stake is info", q: store(good, minor), plan: 1, sev: Info, msg: []string{"plan 15 took 1.7 s more"}},
		{name: "reads differ, durations less", q: store(good, readsOnly), plan: 1, sev: Info,
			msg: []string{"whose average logical reads differ 137×", "plan 15 took 3.0 s more"}},
		{name: "a plan without its text still compares", q: store(good, noPlan), plan: 1, sev: Error,
			msg: []string{"plan 15 averaged 850 ms", "the server no longer has the text of plan 15, so its operators and compiled values are unknown"},
			fix: []string{"1) force plan 12 of query 7: EXEC sys.sp_query_store_force_plan @query_id = 7, @plan_id = 12; (plan 12 had the lowest figures"}, fixNot: []string{"suits them", "lacks"}},
		{name: "a literal and a parameterized plan", q: store(good, QueryPlanRun{PlanID: 15, Document: literal, Runtime: rt(800, 850, 62000)}), plan: 1, sev: Error,
			msg: []string{"the plans do not have the same parameters (plan 15: no parameter values; plan 12: @Status = (0))"},
			fix: []string{"(plan 12 had the lowest figures, 1.20 ms and 4,510 reads per execution over 5,000 executions)", "compare the plans' estimates"}, fixNot: []string{"suits them"}},
		{name: "similar cost", q: store(good, similar), silence: true},
		{name: "same work, longer waits", q: store(good, waited), silence: true},
		{name: "more reads, not slower", q: store(good, readsNotSlower), silence: true},
		{name: "too few executions", q: store(good, fewRuns), silence: true},
		{name: "more rows explain the cost", q: store(good, moreRows), silence: true},
		{name: "dispatcher plans have no runs of their own", q: store(good, dispatcher), silence: true},
		{name: "one plan", q: store(good), silence: true},
		{name: "one plan, executions spread", q: store(spread(seek, 6_000_000, 9000)), plan: 0, sev: Warning,
			msg: []string{"the executions of plan 12 differ 1,330× in logical reads: average 4,510, largest 6,000,000, smallest 40, standard deviation 90,000 over 5,000 executions",
				"the longest took 9.0 s", "compiled for @Status = (0) and compares @Status in Index Seek dbo.Work.IX_Work_Status (node 2)"},
			fix: []string{"1) OPTION (RECOMPILE)", "2) a dedicated statement for the values of @Status", "3) OPTION (OPTIMIZE FOR (@Status = 0))", "4) on SQL Server 2022+"}},
		{name: "one plan, spread but quick", q: store(spread(seek, 6_000_000, 300)), plan: 0, sev: Info},
		{name: "one plan, small spread", q: store(spread(seek, 20_000, 9000)), silence: true},
		{name: "one plan, spread without a parameter", q: store(spread(literal, 6_000_000, 9000)), silence: true},
		{name: "one plan, spread without its text", q: store(spread(nil, 6_000_000, 9000)), silence: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := AnalyzeQuery(tc.q, nil)
			if err != nil {
				t.Fatal(err)
			}
			if testing.Verbose() {
				for _, f := range fs {
					t.Logf("%s\nfix: %s", f.Message, f.Fix)
				}
			}
			if tc.silence {
				if len(fs) != 0 {
					t.Fatalf("want no finding, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 {
				t.Fatalf("want one finding, got %d: %+v", len(fs), fs)
			}
			f := fs[0]
			if f.Plan != tc.plan || f.Severity != tc.sev || f.Code != "PL415" || f.Rule != "plan-variance" {
				t.Errorf("finding on plan %d, %s %s; want plan %d, %s PL415", f.Plan, f.Severity, f.Code, tc.plan, tc.sev)
			}
			if tc.q.Plans[f.Plan].Document != nil && (f.Batch != 1 || f.StatementID != 1 || f.Ordinal != 1 || f.NodeID != nil) {
				t.Errorf("not on the plan's statement: %+v", f.Finding)
			}
			for _, want := range tc.msg {
				if !strings.Contains(f.Message, want) {
					t.Errorf("message lacks %q:\n%s", want, f.Message)
				}
			}
			for _, want := range tc.fix {
				if !strings.Contains(f.Fix, want) {
					t.Errorf("fix lacks %q:\n%s", want, f.Fix)
				}
			}
			for _, not := range tc.fixNot {
				if strings.Contains(f.Fix, not) {
					t.Errorf("fix has %q:\n%s", not, f.Fix)
				}
			}
		})
	}
}

// TestPlanVarianceEvidence: the evidence lists every plan, best first, with
// its figures, compiled values and operators.
func TestPlanVarianceEvidence(t *testing.T) {
	q := &Query{Source: SourceQueryStore, QueryID: 7, Plans: []QueryPlanRun{
		{QueryID: 7, PlanID: 15, Document: variancePlan(t, "status-scan"), Runtime: PlanRuntime{Executions: 800, AvgDurationMs: 850, AvgLogicalReads: 62000, MaxDurationMs: f64(2400)}},
		{QueryID: 7, PlanID: 12, Document: variancePlan(t, "status-seek"), Runtime: PlanRuntime{Executions: 5000, AvgDurationMs: 1.2, AvgLogicalReads: 4510}},
	}}
	fs, err := AnalyzeQuery(q, nil)
	if err != nil || len(fs) != 1 {
		t.Fatalf("%v %+v", err, fs)
	}
	ev := fs[0].Evidence
	if ev["query_id"] != int64(7) || ev["worst_plan"] != "plan 15" || ev["best_plan"] != "plan 12" || ev["measure"] != "avg_duration_ms" ||
		ev["compiled_for_different_values"] != true || ev["factor"] != 708.3 {
		t.Errorf("evidence %v", ev)
	}
	plans, _ := ev["plans"].([]map[string]any)
	if len(plans) != 2 || plans[0]["plan_id"] != int64(12) || plans[1]["max_duration_ms"] != 2400.0 {
		t.Fatalf("plans %v", plans)
	}
	if v, _ := plans[1]["compiled_values"].(map[string]any); v["@Status"] != "(1)" {
		t.Errorf("compiled values %v", plans[1]["compiled_values"])
	}
	if ops, _ := plans[1]["operators"].([]string); strings.Join(ops, "; ") != "Sort (TopN Sort); Clustered Index Scan dbo.Work.PK_Work" {
		t.Errorf("operators %v", ops)
	}
}

// TestPlanVarianceConfig: the thresholds and severity come from the config,
// and the rule can be turned off.
func TestPlanVarianceConfig(t *testing.T) {
	q := func() *Query {
		return &Query{Source: SourceQueryStore, QueryID: 7, Plans: []QueryPlanRun{
			{QueryID: 7, PlanID: 12, Document: variancePlan(t, "status-seek"), Runtime: PlanRuntime{Executions: 5000, AvgDurationMs: 1.2, AvgLogicalReads: 4510}},
			{QueryID: 7, PlanID: 15, Document: variancePlan(t, "status-scan"), Runtime: PlanRuntime{Executions: 800, AvgDurationMs: 850, AvgLogicalReads: 62000}},
		}}
	}
	for _, tc := range []struct {
		name string
		cfg  *Config
		want int
		sev  Severity
	}{
		{"defaults", nil, 1, Error},
		{"off", &Config{Off: map[string]bool{"plan-variance": true}}, 0, 0},
		{"severity by code", &Config{Severity: map[string]Severity{"PL415": Warning}}, 1, Warning},
		{"higher factor", &Config{Params: map[string]map[string]float64{"plan-variance": {"min_factor": 1000}}}, 0, 0},
		{"more executions needed", &Config{Params: map[string]map[string]float64{"plan-variance": {"min_executions": 1000}}}, 0, 0},
		{"higher error threshold", &Config{Params: map[string]map[string]float64{"plan-variance": {"error_ms": 1e9}}}, 1, Warning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			fs, err := AnalyzeQuery(q(), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) != tc.want || (tc.want > 0 && fs[0].Severity != tc.sev) {
				t.Errorf("got %+v, want %d finding(s) at %s", fs, tc.want, tc.sev)
			}
		})
	}
}

// TestStatementRulesIgnoreQueryRules: AnalyzeStatement does not run a query
// rule and AnalyzeQuery runs no statement rule.
func TestStatementRulesIgnoreQueryRules(t *testing.T) {
	d := variancePlan(t, "status-scan")
	fs, err := Analyze(d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Code == "PL415" {
			t.Errorf("a statement pass reported %+v", f)
		}
	}
	qfs, err := AnalyzeQuery(&Query{Source: SourcePlanCache, Plans: []QueryPlanRun{{Document: d, Runtime: PlanRuntime{Executions: 100, AvgDurationMs: 1}}}}, nil)
	if err != nil || len(qfs) != 0 {
		t.Errorf("one quiet plan: %v %+v", err, qfs)
	}
}

// BenchmarkPlanVariance runs the query rules over one query of n plans
// (the two fixture plans alternately, with spread figures) and reports
// the time per plan, which should stay flat as n grows.
func BenchmarkPlanVariance(b *testing.B) {
	docs := []*plan.Document{variancePlanB(b, "status-seek"), variancePlanB(b, "status-scan")}
	for _, n := range []int{2, 20, 200} {
		q := &Query{Source: SourceQueryStore, QueryID: 7}
		for i := range n {
			q.Plans = append(q.Plans, QueryPlanRun{QueryID: 7, PlanID: int64(i + 1), Document: docs[i%2], Runtime: PlanRuntime{
				Executions: int64(100 + i), AvgDurationMs: float64(1 + 100*(i%2)), AvgLogicalReads: float64(4000 + 60000*(i%2)),
				MaxLogicalReads: f64(1e6), MaxDurationMs: f64(5000)}})
		}
		b.Run(fmt.Sprintf("plans=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := AnalyzeQuery(q, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/plan")
		})
	}
}

func variancePlanB(b *testing.B, name string) *plan.Document {
	d, err := plan.ParseFile(filepath.Join("..", "fixtures", "variance", name+".sqlplan"), plan.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/planlint/planlint/capture"
	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/report"
)

// statusCatalog is the catalog of fixtures/queue/schema-status-index.sql,
// the schema of the variance fixtures.
func statusCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat, diags, err := catalog.ParseScript("schema-status-index.sql", strings.NewReader(capturetest.Fixture(t, "queue/schema-status-index.sql")))
	if err != nil || len(diags) > 0 {
		t.Fatalf("schema: %v %v", err, diags)
	}
	return cat
}

// variancePlans are the two plans of the parameterized poll as a server
// keeps them: plan 12 seeks IX_Work_Status (compiled for @Status = 0),
// plan 15 scans PK_Work (compiled for @Status = 1). Figures are totals in
// microseconds and pages.
func variancePlans(t *testing.T) (seek, scan pulledPlan) {
	seekPlan := capturetest.Fixture(t, "variance/status-seek.sqlplan")
	scanPlan := capturetest.Fixture(t, "variance/status-scan.sqlplan")
	poll := "SELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE Status = @Status ORDER BY CreatedAt, WorkId"
	seek = pulledPlan{queryHash: "0x5C3B9E8D7A6F1402", planHash: "0x71C0E9B48A2D5F36", handle: "0x0612", queryID: 7, planID: 12,
		planType: "Compiled Plan", db: "WorkDb", text: poll, exec: 5000, cpu: 5_000_000, dur: 6_000_000, reads: 22_550_000, maxDur: 5_000, plan: &seekPlan}
	scan = pulledPlan{queryHash: "0x5C3B9E8D7A6F1402", planHash: "0x3F8A61D2C94B7E05", handle: "0x0615", queryID: 7, planID: 15,
		planType: "Compiled Plan", db: "WorkDb", text: poll, exec: 800, cpu: 600_000_000, dur: 680_000_000, reads: 49_600_000, maxDur: 2_400_000, plan: &scanPlan}
	return seek, scan
}

// TestPlanVarianceGolden: the incident seen from Query Store and the plan
// cache: two plans of one query, one 700 times slower per execution
// (error, on the slow plan, with the plan to force), and one plan whose
// executions range from a few pages to millions during a backlog
// (warning).
func TestPlanVarianceGolden(t *testing.T) {
	inRoot(t)
	seek, scan := variancePlans(t)
	backlog := seek
	backlog.maxReads, backlog.maxDur, backlog.stdevReads = 6_000_000, 9_000_000, 90_000
	for _, tc := range []struct {
		name  string
		plans []pulledPlan
		args  []string
	}{
		{"querystore-two-plans", []pulledPlan{seek, scan}, []string{"querystore", "--query-id", "7"}},
		{"querystore-spread", []pulledPlan{backlog}, []string{"querystore"}},
		{"cache-two-plans", []pulledPlan{scan, seek}, []string{"cache"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTriage{plans: tc.plans, storeState: "READ_WRITE", catalog: statusCatalog(t)}
			srv := ft.start(t)
			out, errOut, code := runWith(t, dsnVars(srv), "", append(tc.args, "--color", "never")...)
			golden(t, "variance/"+tc.name+".txt", fmt.Sprintf("%s--- stderr\n%s--- exit %d\n", out, errOut, code))
		})
	}
}

// TestPlanVarianceFindings: which plan gets the plan-variance finding, at
// which severity, in JSON, SARIF and Markdown; the quiet cases get none.
func TestPlanVarianceFindings(t *testing.T) {
	inRoot(t)
	seek, scan := variancePlans(t)
	similar := scan
	similar.dur, similar.reads = 1_600_000, 3_700_000 // 2 ms and 4,625 reads per execution
	rare := scan
	rare.exec, rare.dur, rare.reads = 3, 2_550_000, 186_000 // 850 ms, but three executions
	forcedScan := scan
	forcedScan.forced = true
	otherDB := scan
	otherDB.db = "WorkDb_backlog"
	for _, tc := range []struct {
		name  string
		cmd   string
		plans []pulledPlan
		want  string // path of the file with the finding and its severity, "" for none
		fix   string
	}{
		{"query store", "querystore", []pulledPlan{seek, scan}, "querystore:query 7 plan 15 error", "EXEC sys.sp_query_store_force_plan @query_id = 7, @plan_id = 12;"},
		{"forced scan", "querystore", []pulledPlan{forcedScan, seek}, "querystore:query 7 plan 15 error",
			"EXEC sys.sp_query_store_unforce_plan @query_id = 7, @plan_id = 15; then EXEC sys.sp_query_store_force_plan @query_id = 7, @plan_id = 12;"},
		{"plan cache", "cache", []pulledPlan{seek, scan}, "cache:0x5C3B9E8D7A6F1402 plan 0x3F8A61D2C94B7E05 error", "DBCC FREEPROCCACHE (0x0615)"},
		{"plan cache, the cheap plan outside --top", "cache --top 1", []pulledPlan{scan, seek}, "cache:0x5C3B9E8D7A6F1402 plan 0x3F8A61D2C94B7E05 error", "OPTIMIZE FOR (@Status = 0)"},
		{"query store, the cheap plan outside --top", "querystore --top 1", []pulledPlan{scan, seek}, "querystore:query 7 plan 15 error", "@plan_id = 12;"},
		{"similar cost", "querystore", []pulledPlan{seek, similar}, "", ""},
		{"few executions", "querystore", []pulledPlan{seek, rare}, "", ""},
		{"cache: another database is another query", "cache", []pulledPlan{seek, otherDB}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTriage{plans: tc.plans, storeState: "READ_WRITE", catalog: statusCatalog(t)}
			srv := ft.start(t)
			out, errOut, code := runWith(t, dsnVars(srv), "", append(strings.Fields(tc.cmd), "--format", "json", "--fail-on", "none")...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var got []string
			rep := decodeTriage(t, out)
			if len(rep.Files) != len(tc.plans) {
				t.Errorf("%d entries, want %d", len(rep.Files), len(tc.plans))
			}
			if strings.Contains(tc.cmd, "--top 1") {
				if c := rep.Files[1].Statements[0].Capture; c == nil || !strings.Contains(c.Note, "Not among the ranked") {
					t.Errorf("the other plan is not marked: %+v", c)
				}
			}
			for _, f := range rep.Files {
				for _, x := range f.Findings {
					if x.Code != "PL415" {
						continue
					}
					got = append(got, f.Path+" "+x.Severity)
					if tc.fix != "" && !strings.Contains(x.Fix, tc.fix) {
						t.Errorf("fix lacks %q:\n%s", tc.fix, x.Fix)
					}
				}
			}
			if want := strings.Fields(tc.want + " "); (tc.want == "" && len(got) != 0) || (tc.want != "" && (len(got) != 1 || got[0] != tc.want)) {
				t.Errorf("PL415 findings %q, want %q", got, want)
			}
		})
	}
	// The other formats carry the finding through the same path.
	ft := &fakeTriage{plans: []pulledPlan{seek, scan}, storeState: "READ_WRITE", catalog: statusCatalog(t)}
	srv := ft.start(t)
	// The shared formats mask values but keep the server's ids of queries
	// and plans: the fix must stay a statement one can run.
	force := "EXEC sys.sp_query_store_force_plan @query_id = 7, @plan_id = 12;"
	// Markdown escapes _ and breaks @mentions.
	forceMarkdown := `EXEC sys.sp\_query\_store\_force\_plan @&#8203;query\_id = 7, @&#8203;plan\_id = 12;`
	for format, want := range map[string]string{"sarif": force, "markdown": forceMarkdown, "html": force, "github": "PL415"} {
		out, errOut, code := runWith(t, dsnVars(srv), "", "querystore", "--format", format)
		if code != ExitFindings || !strings.Contains(out, want) {
			t.Errorf("%s: exit %d, %q not in output (stderr %s)", format, code, want, errOut)
		}
	}
	ft = &fakeTriage{plans: []pulledPlan{seek, scan}, storeState: "READ_WRITE", catalog: statusCatalog(t)}
	srv = ft.start(t)
	for _, want := range []string{"DBCC FREEPROCCACHE (0x0615)", "plan 0x3F8A61D2C94B7E05 averaged", `query\_hash 0x5C3B9E8D7A6F1402 has 2 plans`} {
		out, errOut, _ := runWith(t, dsnVars(srv), "", "cache", "--format", "markdown")
		if !strings.Contains(out, want) {
			t.Errorf("cache markdown: %q not in output (stderr %s)", want, errOut)
		}
	}
}

// TestQueryGroups: pulled statements become queries by query_hash and
// database (plan cache) or query_id and parent query (Query Store); a
// statement without a usable hash is a query of its own.
func TestQueryGroups(t *testing.T) {
	cache := func(hash, db string) *capture.Pulled {
		return &capture.Pulled{Name: hash + " " + db, Database: db, Cache: &capture.CacheEntry{QueryHash: hash}}
	}
	store := func(query, parent, plan int64) *capture.Pulled {
		return &capture.Pulled{Name: fmt.Sprint(plan), Database: "WorkDb", Store: &capture.StorePlan{QueryID: query, ParentQueryID: parent, PlanID: plan}}
	}
	for _, tc := range []struct {
		name   string
		pulled []*capture.Pulled
		want   string // plan names per query, queries separated by |
	}{
		{"plan cache", []*capture.Pulled{cache("0x01", "A"), cache("0x02", "A"), cache("0x01", "A"), cache("0x01", "B")}, "0x01 A,0x01 A|0x02 A|0x01 B"},
		{"no hash", []*capture.Pulled{cache("", "A"), cache("", "A"), cache("0x0000000000000000", "A"), cache("0x0000000000000000", "A")},
			" A| A|0x0000000000000000 A|0x0000000000000000 A"},
		{"query store", []*capture.Pulled{store(42, 0, 7), store(51, 50, 10), store(42, 0, 8), store(50, 0, 9), store(52, 50, 11)}, "7,8|10,9,11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &triaged{pulled: map[*report.File]*capture.Pulled{}}
			for _, p := range tc.pulled {
				f := &report.File{Path: p.Name}
				tr.files = append(tr.files, f)
				tr.pulled[f] = p
			}
			var got []string
			for _, q := range queryGroups(tr) {
				var names []string
				for _, p := range q.Plans {
					names = append(names, p.Name)
				}
				got = append(got, strings.Join(names, ","))
			}
			if strings.Join(got, "|") != tc.want {
				t.Errorf("queries %q, want %q", strings.Join(got, "|"), tc.want)
			}
		})
	}
}

package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/planlint/planlint/capture/capturetest"
)

// TestQuerystoreGolden: the top plans with figures and forcing, and
// --query-id: every plan of the query side by side, then each compared
// with the most executed one.
func TestQuerystoreGolden(t *testing.T) {
	inRoot(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"top", []string{"--top", "5", "--since", "2h"}},
		{"query-id", []string{"--query-id", "42"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTriage{plans: triagePlans(t), storeState: "READ_WRITE"}
			srv := ft.start(t)
			out, errOut, code := runWith(t, dsnVars(srv), "", append([]string{"querystore", "--color", "never"}, tc.args...)...)
			golden(t, "querystore/"+tc.name+".txt", fmt.Sprintf("%s--- stderr\n%s--- exit %d\n", out, errOut, code))
		})
	}
}

// TestQuerystoreQueryIDJSON: --query-id in JSON is one object: the report,
// the plans side by side and the comparisons with the most executed plan.
func TestQuerystoreQueryIDJSON(t *testing.T) {
	inRoot(t)
	plans := triagePlans(t)
	plans[2].queryID = 42 // a third plan of query 42, without a plan text
	ft := &fakeTriage{plans: plans, storeState: "READ_WRITE"}
	srv := ft.start(t)
	out, errOut, code := runWith(t, dsnVars(srv), "", "querystore", "--query-id", "42", "--format", "json", "--since", "7d")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		SchemaVersion int        `json:"schema_version"`
		Report        triageJSON `json:"report"`
		QueryID       int64      `json:"query_id"`
		Database      string     `json:"database"`
		SinceSeconds  int64      `json:"since_seconds"`
		Plans         []struct {
			PlanID     int64  `json:"plan_id"`
			Forced     bool   `json:"is_forced_plan"`
			Executions int64  `json:"executions"`
			Errors     int    `json:"errors"`
			Problem    string `json:"problem"`
		} `json:"plans"`
		Comparisons []struct {
			A        string `json:"a"`
			B        string `json:"b"`
			Findings struct {
				New  []json.RawMessage `json:"new"`
				Gone []json.RawMessage `json:"gone"`
			} `json:"findings"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	if got.SchemaVersion != 1 || got.QueryID != 42 || got.Database != "WorkDb" || got.SinceSeconds != 7*24*3600 || len(got.Report.Files) != 3 {
		t.Errorf("header: %+v", got)
	}
	if len(got.Plans) != 3 || got.Plans[0].PlanID != 7 || !got.Plans[0].Forced || got.Plans[0].Errors != 1 ||
		got.Plans[2].PlanID != 11 || !strings.Contains(got.Plans[2].Problem, "no plan") {
		t.Errorf("plans: %+v", got.Plans)
	}
	if len(got.Comparisons) != 1 || got.Comparisons[0].A != "querystore:query 42 plan 7" || got.Comparisons[0].B != "querystore:query 42 plan 8" ||
		len(got.Comparisons[0].Findings.Gone) != 4 { // PL201, PL101, PL103 and the plan-variance finding on plan 7
		t.Errorf("comparisons: %+v", got.Comparisons)
	}
	for _, r := range capturetest.Requests(srv, 0) {
		if strings.Contains(r.SQL, storeListMark) {
			if v := rpcParam(&r, "@query_id"); v != int64(42) {
				t.Errorf("@query_id = %v", v)
			}
			if v := rpcParam(&r, "@since_seconds"); v != int64(7*24*3600) {
				t.Errorf("@since_seconds = %v", v)
			}
		}
	}
}

// TestQuerystoreFailures: Query Store off, or a query without plans, exit
// 2 with a message that says what to do.
func TestQuerystoreFailures(t *testing.T) {
	inRoot(t)
	for _, tc := range []struct {
		name  string
		state string
		args  []string
		want  string
	}{
		{"off", "OFF", nil, "Query Store is OFF in database WorkDb"},
		{"unknown query", "READ_WRITE", []string{"--query-id", "999"}, "Query Store of database WorkDb has no plan of query 999"},
		{"old server", "READ_WRITE", nil, "Query Store exists from SQL Server 2016 on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTriage{plans: triagePlans(t), storeState: tc.state}
			if tc.name == "old server" {
				ft.version = "12.0.6024.0"
			}
			srv := ft.start(t)
			out, errOut, code := runWith(t, dsnVars(srv), "", append([]string{"querystore"}, tc.args...)...)
			if code != ExitError || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tc.want)
			}
		})
	}
}

package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
)

// TestCacheGolden: cache prints each statement's name, text and figures
// with its findings; the NULL plan is reported, not dropped, and does not
// fail the run; the other database's tables are noted.
func TestCacheGolden(t *testing.T) {
	inRoot(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"top", []string{"--top", "5"}},
		{"top-tree", []string{"--top", "2", "--tree"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTriage{plans: triagePlans(t)}
			srv := ft.start(t)
			out, errOut, code := runWith(t, dsnVars(srv), "", append([]string{"cache", "--color", "never"}, tc.args...)...)
			golden(t, "cache/"+tc.name+".txt", fmt.Sprintf("%s--- stderr\n%s--- exit %d\n", out, errOut, code))
		})
	}
}

// TestCacheJSON: JSON carries every statement, with its text, runtime
// figures and capture method, the NULL plan as a file with an error.
func TestCacheJSON(t *testing.T) {
	inRoot(t)
	ft := &fakeTriage{plans: triagePlans(t)}
	srv := ft.start(t)
	out, errOut, code := runWith(t, dsnVars(srv), "", "cache", "--format", "json")
	if code != ExitFindings {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	rep := decodeTriage(t, out)
	if len(rep.Files) != 5 {
		t.Fatalf("%d files, want 5", len(rep.Files))
	}
	first := rep.Files[0]
	rt := first.Statements[0].Runtime
	if first.Path != "cache:0x5C3B9E8D7A6F1402 plan 0xA47E21C95D3B8F60" || rt["executions"] != 1204.0 || rt["cpu_ms"] != 3412.0 ||
		rt["plan_handle"] != "0x0601" || rt["source"] != "plan_cache" || rt["last_execution"] != "2025-11-03T02:00:41Z" {
		t.Errorf("first file %s runtime %v", first.Path, rt)
	}
	if c := first.Statements[0].Capture; c == nil || !strings.HasPrefix(c.Method, "plan cache") || c.Database != "WorkDb" {
		t.Errorf("capture %+v", c)
	}
	var codes []string
	for _, f := range first.Findings {
		codes = append(codes, f.Code)
	}
	if strings.Join(codes, " ") != "PL101 PL204 PL103 PL201 PL415" { // PL415: plan 0x0B1C… of the same query reads 2,563 times less
		t.Errorf("findings of the parameterized poll = %v", codes)
	}
	missing := rep.Files[2]
	if missing.Error == nil || !strings.Contains(*missing.Error, "no plan") || len(missing.Statements) != 1 ||
		missing.Statements[0].Text != "UPDATE dbo.Work SET ClaimedAt = SYSUTCDATETIME() WHERE WorkId = @Id" ||
		missing.Statements[0].Runtime["executions"] != 7.0 {
		t.Errorf("NULL plan file: %+v", missing)
	}
	other := rep.Files[4]
	if c := other.Statements[0].Capture; c == nil || !strings.Contains(c.Note, "No catalog facts for OtherDb.dbo.Work") {
		t.Errorf("other database note: %+v", c)
	}
}

// TestCacheExitCodes: a plan the server no longer has, or one over
// --max-file-size, is reported without failing the run; a plan that does
// not parse, a permission error or a bad flag exit 2.
func TestCacheExitCodes(t *testing.T) {
	inRoot(t)
	literal := capturetest.Fixture(t, "queue/literal.sqlplan")
	one := func(plan *string) []pulledPlan {
		p := triagePlans(t)[1]
		p.plan = plan
		return []pulledPlan{p}
	}
	denied := &tdstest.Message{Number: 300, State: 1, Class: 14, Line: 1,
		Text: "VIEW SERVER STATE permission was denied on object 'server', database 'master'."}
	tests := []struct {
		name   string
		ft     *fakeTriage
		args   []string
		code   int
		stderr string
	}{
		{"clean", &fakeTriage{plans: one(&literal)}, nil, ExitOK, ""},
		{"missing plan", &fakeTriage{plans: one(nil)}, nil, ExitOK, "no plan: sys.dm_exec_text_query_plan returned nothing"},
		{"too large", &fakeTriage{plans: one(&literal)}, []string{"--max-file-size", "100"}, ExitOK, "maximum file size 100 bytes exceeded"},
		{"too deep", &fakeTriage{plans: one(&literal)}, []string{"--max-depth", "5"}, ExitOK, "maximum element depth 5 exceeded"},
		{"invalid plan", &fakeTriage{plans: one(strPtr(literal[:300]))}, nil, ExitError, "invalid plan: line"},
		{"missing plan and findings", &fakeTriage{plans: append(one(nil), triagePlans(t)[0])}, nil, ExitFindings, "no plan"},
		{"fail-on none", &fakeTriage{plans: triagePlans(t)}, []string{"--fail-on", "none"}, ExitOK, ""},
		{"permission", &fakeTriage{listError: denied, version: "15.0.4153.1"}, nil, ExitError,
			"ask an administrator to run GRANT VIEW SERVER STATE TO [sa]"},
		{"empty", &fakeTriage{}, []string{"-d", "WorkDb", "--like", "nothing"}, ExitOK,
			`the plan cache holds no statement of database WorkDb whose text is LIKE "%nothing%"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.ft.start(t)
			_, errOut, code := runWith(t, dsnVars(srv), "", append([]string{"cache", "--format", "json"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.code, tc.stderr)
			}
		})
	}
}

// TestCacheDatabaseFilter: -d both connects to the database and keeps its
// statements; a database from SQLCMDDBNAME only picks the connection.
func TestCacheDatabaseFilter(t *testing.T) {
	inRoot(t)
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"flag", nil, []string{"-d", "WorkDb"}, "WorkDb"},
		{"environment", map[string]string{"SQLCMDDBNAME": "WorkDb"}, nil, ""},
		{"none", nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTriage{plans: triagePlans(t)[:1]}
			srv := ft.start(t)
			vars := dsnVars(srv)
			for k, v := range tc.vars {
				vars[k] = v
			}
			_, errOut, code := runWith(t, vars, "", append([]string{"cache", "--format", "json", "--order-by", "reads"}, tc.args...)...)
			if code != ExitFindings {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, r := range capturetest.Requests(srv, 0) {
				if !strings.Contains(r.SQL, cacheListMark) {
					continue
				}
				if db := rpcParam(&r, "@database"); db != tc.want {
					t.Errorf("@database = %q, want %q", db, tc.want)
				}
				if !strings.Contains(r.SQL, "ORDER BY qs.total_logical_reads DESC") {
					t.Error("--order-by reads did not reach the ORDER BY")
				}
			}
		})
	}
}

// TestTriageRefusesBeforeConnecting: bad flags stop cache and querystore
// before anything is sent.
func TestTriageRefusesBeforeConnecting(t *testing.T) {
	inRoot(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"cache", "--top", "0"}, "--top 0: want 1 to 10000"},
		{[]string{"cache", "--order-by", "io"}, `--order-by "io": want one of cpu, duration, reads, executions, grant`},
		{[]string{"cache", "--max-file-size", "0"}, "--max-file-size\" flag: want a positive size"},
		{[]string{"cache", "--format", "yaml"}, "--format must be one of"},
		{[]string{"cache", "extra.sqlplan"}, `cache takes no arguments, not "extra.sqlplan"`},
		{[]string{"querystore", "--since", "yesterday"}, `--since "yesterday": want a duration such as 24h, 90m or 7d`},
		{[]string{"querystore", "--query-id", "-4"}, "--query-id -4: query ids are positive"},
		{[]string{"querystore", "--query-id", "4", "--format", "sarif"}, "--query-id prints more than findings: use --format text or json"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			srv := capturetest.Start(t, capturetest.Config{})
			out, errOut, code := runWith(t, dsnVars(srv), "", tc.args...)
			if code != ExitError || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tc.want)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d messages reached the server", n)
			}
		})
	}
}

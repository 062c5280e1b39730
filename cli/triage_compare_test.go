package cli

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
)

// backlogServer is one server with a normal database (WorkDb, the
// filtered index serves the poll) and a backlog copy (WorkDb_backlog,
// whose plan seeks a status index and looks every row up).
func backlogServer(t *testing.T, databases ...string) *tdstest.Server {
	t.Helper()
	statusCatalog, err := loadSchemas([]string{"fixtures/queue/schema-status-index.sql"})
	if err != nil {
		t.Fatal(err)
	}
	normal := capturetest.Handler(capturetest.Config{Catalog: capturetest.QueueCatalog(t),
		Statement: capturetest.Answer{Estimated: capturetest.Fixture(t, "queue/literal.sqlplan")}.Handler()})
	backlog := capturetest.Handler(capturetest.Config{Catalog: statusCatalog,
		Statement: capturetest.Answer{Estimated: capturetest.Fixture(t, "queue/status-index.sqlplan")}.Handler()})
	return tdstest.Start(t, tdstest.Config{Database: "WorkDb", Databases: databases,
		Handler: func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
			if s.Database == "WorkDb_backlog" {
				return backlog(s, r)
			}
			return normal(s, r)
		}})
}

// statements returns the captured statements (not planlint's own batches)
// of a server's record.
func statements(srv *tdstest.Server) []tdstest.Request {
	var out []tdstest.Request
	for _, r := range capturetest.Requests(srv, 0) {
		if capturetest.Classify(r) == capturetest.KindStatement {
			out = append(out, r)
		}
	}
	return out
}

// TestExplainCompareWithDatabase: B is captured on a second session in the
// backlog database; the output is A's report, then the comparison; B
// gaining an error-level finding makes the run exit 1.
func TestExplainCompareWithDatabase(t *testing.T) {
	inRoot(t)
	srv := backlogServer(t)
	out, errOut, code := runWith(t, dsnVars(srv), "", "explain", "--color", "never", "--min-severity", "info", "--compare-with", "database=WorkDb_backlog",
		"fixtures/queue/literal.sql")
	golden(t, "explain/compare-with-database.txt", fmt.Sprintf("%s--- stderr\n%s--- exit %d\n", out, errOut, code))
	if code != ExitFindings {
		t.Errorf("exit %d: B gained an error, want 1", code)
	}
	stmts := statements(srv)
	if len(stmts) != 2 || stmts[0].Conn == stmts[1].Conn {
		t.Fatalf("captured statements %d, want one on each of two connections", len(stmts))
	}
	if stmts[0].Session.Database != "WorkDb" || stmts[1].Session.Database != "WorkDb_backlog" {
		t.Errorf("captured in %s and %s", stmts[0].Session.Database, stmts[1].Session.Database)
	}
	if !stmts[1].Session.ShowplanXML || stmts[0].SQL != stmts[1].SQL {
		t.Errorf("B must be the same statement, compiled under SHOWPLAN_XML: %q", stmts[1].SQL)
	}
	for _, r := range srv.Requests() {
		if r.Kind == tdstest.KindLogin && r.Conn == stmts[1].Conn && r.Login.Database != "WorkDb_backlog" {
			t.Errorf("B logged in to %q", r.Login.Database)
		}
	}
	// A alone has only an info finding: the exit code is the comparison's.
	if _, _, code := runWith(t, dsnVars(srv), "", "explain", "fixtures/queue/literal.sql"); code != ExitOK {
		t.Errorf("A alone exits %d", code)
	}
}

// TestExplainCompareWithParams: B's parameter values are sent on the same
// session, as typed RPC values.
func TestExplainCompareWithParams(t *testing.T) {
	inRoot(t)
	srv := scenario{cfg: estimated("param", true)}.start(t)
	out, errOut, code := runWith(t, dsnVars(srv), "", "explain", "--color", "never", "--param", "@Status=0",
		"--compare-with", "@Status=1", "fixtures/queue/param.sql")
	if code != ExitFindings || !strings.Contains(out, "B: fixtures/queue/param.sql batch 1 (database WorkDb; @Status=1)") ||
		!strings.Contains(out, "findings: 0 new in B, 0 gone, 4 in both") {
		t.Errorf("exit %d, stderr %s\n%s", code, errOut, out)
	}
	stmts := statements(srv)
	if len(stmts) != 2 || stmts[0].Conn != stmts[1].Conn {
		t.Fatalf("%d statements; both must be on A's session", len(stmts))
	}
	for i, want := range []int64{0, 1} {
		var got any
		for _, p := range stmts[i].Params {
			if p.Name == "@Status" {
				got = p.Value
			}
		}
		if stmts[i].ParamDecl != "@Status tinyint" {
			t.Errorf("capture %d declared %q", i+1, stmts[i].ParamDecl)
		}
		if got != want {
			t.Errorf("capture %d sent @Status = %v, want %d", i+1, got, want)
		}
	}
}

// TestExplainCompareWithConnection: connection=DSN captures B on another
// server; its password never appears.
func TestExplainCompareWithConnection(t *testing.T) {
	inRoot(t)
	a := scenario{cfg: estimated("literal", false)}.start(t)
	b := capturetest.Start(t, capturetest.Config{Catalog: capturetest.QueueCatalog(t), Password: "B-secret-42",
		Statement: capturetest.Answer{Estimated: capturetest.Fixture(t, "queue/literal.sqlplan")}.Handler()})
	dsn := b.DSN(url.Values{"encrypt": {"disable"}})
	out, errOut, code := runWith(t, dsnVars(a), "", "explain", "--format", "json", "--compare-with", "connection="+dsn,
		"fixtures/queue/literal.sql")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out+errOut, "B-secret-42") {
		t.Error("B's password was printed")
	}
	if len(statements(a)) != 1 || len(statements(b)) != 1 {
		t.Errorf("statements: A server %d, B server %d; want 1 each", len(statements(a)), len(statements(b)))
	}
	var got struct {
		Report struct {
			Files []json.RawMessage `json:"files"`
		} `json:"report"`
		B struct {
			Label      string   `json:"label"`
			Database   string   `json:"database"`
			Connection string   `json:"connection"`
			Parameters []string `json:"parameters"`
		} `json:"b"`
		Comparisons []struct {
			A, B     string
			Findings struct {
				Kept int `json:"kept"`
			} `json:"findings"`
		} `json:"comparisons"`
		NotCompared []string `json:"not_compared"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	if len(got.Report.Files) != 1 || got.B.Database != "WorkDb" || !strings.Contains(got.B.Connection, b.Addr()) ||
		len(got.Comparisons) != 1 || got.Comparisons[0].Findings.Kept != 1 || len(got.NotCompared) != 0 || got.B.Parameters == nil {
		t.Errorf("JSON: %+v", got)
	}
}

// TestExplainCompareWithFailures: a bad spec stops the run before
// connecting; a B that cannot be captured still prints A's report and
// exits 2.
func TestExplainCompareWithFailures(t *testing.T) {
	inRoot(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown part", []string{"--compare-with", "server=x"}, "--compare-with server=…: want @Name=value, database=NAME or connection=DSN"},
		{"empty database", []string{"--compare-with", "database="}, "--compare-with database=: the value is empty"},
		{"two databases", []string{"--compare-with", "database=a", "--compare-with", "database=b"}, "database= is given twice"},
		{"param nowhere", []string{"--compare-with", "@Nope=1"}, "--compare-with @Nope=1: no batch"},
		{"param twice", []string{"--compare-with", "@Status=1", "--compare-with", "@status=2"}, "@status is given twice"},
		{"bad value", []string{"--compare-with", "@Status=300"}, "out of range"},
		{"format", []string{"--format", "sarif", "--compare-with", "@Status=1"}, "--compare-with prints a comparison after the report"},
		{"bad connection", []string{"--compare-with", "connection=sqlserver://u:pw%zz@h"}, "--compare-with:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := capturetest.Start(t, capturetest.Config{})
			out, errOut, code := runWith(t, dsnVars(srv), "", append(append([]string{"explain"}, tc.args...), "fixtures/queue/param.sql")...)
			if code != ExitError || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tc.want)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d messages reached the server", n)
			}
		})
	}
	t.Run("B database missing", func(t *testing.T) {
		srv := backlogServer(t, "WorkDb")
		out, errOut, code := runWith(t, dsnVars(srv), "", "explain", "--color", "never", "--min-severity", "info", "--compare-with", "database=WorkDb_backlog",
			"fixtures/queue/literal.sql")
		if code != ExitError || !strings.Contains(out, "fixtures/queue/literal.sql:5:1: stmt 1: info [PL204") ||
			!strings.Contains(errOut, "planlint: B (B): connecting") || !strings.Contains(errOut, "4060") ||
			!strings.Contains(out, "not compared: fixtures/queue/literal.sql batch 1 has no B plan") {
			t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
		}
	})
}

// FuzzCompareSpec: any --compare-with parts parse into a B side or an
// error naming the flag, and a connection string's password never shows
// in the error.
func FuzzCompareSpec(f *testing.F) {
	f.Add("@Status=1", "database=WorkDb_backlog")
	f.Add("connection=sqlserver://sa:Secret1@db", "@x='a,b'")
	f.Add("database", "=")
	f.Add("@=1", "connection=server=db;password=Secret1")
	f.Add("sqlserver://sa:Secret1@db", "Server=db;Password=Secret1")
	f.Fuzz(func(t *testing.T, a, b string) {
		spec, err := parseCompareSpec([]string{a, b})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--compare-with ") {
				t.Fatalf("error %q does not name the flag", err)
			}
			inParam := false
			for _, p := range []string{a, b} {
				inParam = inParam || strings.HasPrefix(strings.TrimSpace(p), "@") && strings.Contains(p, "Secret1")
			}
			if strings.Contains(err.Error(), "Secret1") && !inParam {
				t.Fatalf("error shows a value that may be a password: %v", err)
			}
			return
		}
		if spec == nil {
			t.Fatal("no spec and no error")
		}
		if len(spec.params) != len(spec.paramText) {
			t.Fatal("parameters and their labels differ")
		}
	})
}

package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
)

// writeSQL writes a .sql file in a temporary directory.
func writeSQL(t *testing.T, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExplainRefusesBeforeConnecting: bad flags, script errors and
// statements --actual cannot roll back stop the run with exit 2 before
// anything is sent.
func TestExplainRefusesBeforeConnecting(t *testing.T) {
	inRoot(t)
	syntax := writeSQL(t, "syntax.sql", "SELECT 1;\nSELECT 'unterminated\n")
	backup := writeSQL(t, "backup.sql", "SELECT 1;\nGO\n  BACKUP DATABASE WorkDb TO DISK = 'x.bak';\n")
	unannotated := writeSQL(t, "plain.sql", "SELECT * FROM dbo.Work WHERE Status = @Status;\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"format", []string{"--format", "yaml", "fixtures/queue/literal.sql"}, `--format must be one of text, json, sarif, github, markdown, html, dot, not "yaml"`},
		{"set option", []string{"--set", "FORCEPLAN=ON", "fixtures/queue/literal.sql"}, "unknown option FORCEPLAN"},
		{"preset", []string{"--set-options", "odbc", "fixtures/queue/literal.sql"}, `unknown SET option preset "odbc"`},
		{"parameterization", []string{"--parameterization", "simple", "fixtures/queue/literal.sql"}, "--parameterization must be auto or forced"},
		{"param syntax", []string{"--param", "Status", "fixtures/queue/param.sql"}, "expected @name=value"},
		{"param nowhere", []string{"--param", "@Nope=1", "fixtures/queue/param.sql"}, "--param @Nope: no batch"},
		{"param type", []string{"--param", "@Status=300", "fixtures/queue/param.sql"}, "out of range"},
		{"param not annotated", []string{"--param", "@Status=1", unannotated}, "--param @Status: no batch"},
		{"missing file", []string{"no-such.sql"}, "no-such.sql: no such file"},
		{"script error", []string{syntax}, syntax + ":2:8: unterminated string"},
		{"actual refuses BACKUP", []string{"--actual", backup}, backup + ":3:3: --actual runs each statement inside a transaction that is rolled back, and this one cannot be: BACKUP"},
		{"device code", []string{"--authentication-method", "ActiveDirectoryDeviceCode", "fixtures/queue/literal.sql"}, "prints its prompt on standard output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := capturetest.Start(t, capturetest.Config{})
			out, errOut, code := runWith(t, dsnVars(srv), "", append([]string{"explain"}, tt.args...)...)
			if code != ExitError || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tt.want)
			}
			if out != "" {
				t.Errorf("stdout = %q", out)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d messages reached the server", n)
			}
		})
	}
}

// TestExplainServerErrors: a failing statement fails its file with the
// batch, line, error number and text, exit 2; other files are still
// captured.
func TestExplainServerErrors(t *testing.T) {
	inRoot(t)
	denied := tdstest.ErrShowplanDenied("WorkDb")
	hints := tdstest.ErrNoPlanHints()
	literal := capturetest.Fixture(t, "queue/literal.sqlplan")
	tests := []struct {
		name    string
		answer  capturetest.Answer
		args    []string
		timeout string
		want    string
	}{
		{"permission", capturetest.Answer{Fail: &denied}, nil, "", "fixtures/queue/hint.sql: batch 1 (line 5): compiling the statement: error 262 (severity 14, state 4, line 1): SHOWPLAN permission denied in database 'WorkDb'; ask an administrator to run GRANT SHOWPLAN TO [sa] in that database"},
		{"8622", capturetest.Answer{Fail: &hints}, nil, "", "error 8622 (severity 16, state 1, line 1): Query processor could not produce a query plan"},
		{"8622 actual", capturetest.Answer{Fail: &hints}, []string{"--actual"}, "", "running the statement: error 8622 (severity 16, state 1, line 1): Query processor could not produce a query plan because of the hints defined in this query. Resubmit the query without specifying any hints and without using SET FORCEPLAN; the transaction was rolled back"},
		{"timeout", capturetest.Answer{Estimated: literal, Delay: time.Hour}, nil, "200ms", "compiling the statement: no complete answer within 200ms; the request was cancelled; raise --query-timeout"},
		{"connection closed", capturetest.Answer{Estimated: literal, CloseAfterMetadata: true}, nil, "", "the server closed the connection in the middle of its reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := capturetest.Start(t, capturetest.Config{Catalog: capturetest.QueueCatalog(t), Statement: tt.answer.Handler()})
			args := append([]string{"explain", "--color", "never"}, tt.args...)
			if tt.timeout != "" {
				args = append(args, "--query-timeout", tt.timeout)
			}
			out, errOut, code := runWith(t, dsnVars(srv), "", append(args, "fixtures/queue/hint.sql")...)
			if code != ExitError || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q\nwant exit 2 and %q", code, errOut, tt.want)
			}
			if !strings.Contains(out, "no file could be analysed") {
				t.Errorf("stdout = %q", out)
			}
		})
	}

	t.Run("next file still captured", func(t *testing.T) {
		srv := capturetest.Start(t, capturetest.Config{Catalog: capturetest.QueueCatalog(t),
			Statement: func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
				if strings.Contains(r.SQL, "INDEX(") {
					return capturetest.Answer{Fail: &hints}.Handler()(s, r)
				}
				return capturetest.Answer{Estimated: literal}.Handler()(s, r)
			}})
		out, errOut, code := runWith(t, dsnVars(srv), "", "explain", "--color", "never", "--min-severity", "info", "fixtures/queue/hint.sql", "fixtures/queue/literal.sql")
		if code != ExitError || !strings.Contains(errOut, "hint.sql: batch 1") || !strings.Contains(out, "fixtures/queue/literal.sql:5:1: stmt 1: info [PL204") {
			t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
		}
	})
}

// TestExplainConnectionFailures: no server, refused, login failed: exit 2
// with one line saying what failed.
func TestExplainConnectionFailures(t *testing.T) {
	inRoot(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	host, port, _ := net.SplitHostPort(refused)
	srv := capturetest.Start(t, capturetest.Config{RejectLogin: func(tdstest.Login) bool { return true }})
	tests := []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"no server", nil, nil, "no server given: use -S/--server (or SQLCMDSERVER), or --connection-string (or PLANLINT_CONNECTION)"},
		{"refused", nil, []string{"-S", host + "," + port}, "cannot open a TCP connection: dial tcp " + refused},
		{"login", dsnVars(srv), nil, "error 18456 (severity 14, state 1): Login failed for user 'sa'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runWith(t, tt.vars, "", append(append([]string{"explain"}, tt.args...), "fixtures/queue/literal.sql")...)
			if code != ExitError || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 || out != "" {
				t.Errorf("exit %d\nstdout %q\nstderr %q\nwant one line with %q", code, out, errOut, tt.want)
			}
		})
	}
}

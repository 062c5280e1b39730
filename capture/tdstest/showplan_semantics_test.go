package tdstest

import (
	"bytes"
	"database/sql"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"
)

// readAll reads every result set of a query: column names of each and the
// text of every value.
func readAll(t *testing.T, rows *sql.Rows) (cols [][]string, vals []string) {
	t.Helper()
	defer rows.Close()
	for {
		c, _ := rows.Columns()
		if len(c) > 0 {
			cols = append(cols, c)
		}
		for rows.Next() {
			dst := make([]any, len(c))
			for i := range dst {
				dst[i] = new(sql.NullString)
			}
			if err := rows.Scan(dst...); err != nil {
				t.Fatal(err)
			}
			for _, d := range dst {
				vals = append(vals, d.(*sql.NullString).String)
			}
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return cols, vals
}

// TestShowplanRunsOnlySetAndUse: under SET SHOWPLAN_XML ON, SQL Server runs
// SET and USE but no other statement; the batch returns its plan instead.
func TestShowplanRunsOnlySetAndUse(t *testing.T) {
	s := Start(t, Config{Databases: []string{"master", "Queues"}})
	ctx := testContext(t)
	conn := pinnedConn(t, openDB(t, s, disableEncrypt))
	if _, err := conn.ExecContext(ctx, "SET SHOWPLAN_XML ON"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		batch     string
		wantTypes []string
	}{
		{"SELECT 1", []string{"SELECT WITHOUT QUERY"}},
		{"BEGIN TRAN", []string{"BEGIN TRANSACTION"}},
		{"SET NOCOUNT ON; USE Queues; IF @@TRANCOUNT > 0 ROLLBACK", []string{"SET ON/OFF", "USE DATABASE", "COND"}},
	}
	for _, tt := range tests {
		rows, err := conn.QueryContext(ctx, tt.batch)
		if err != nil {
			t.Fatalf("%s: %v", tt.batch, err)
		}
		cols, vals := readAll(t, rows)
		if len(cols) != 1 || len(cols[0]) != 1 || cols[0][0] != ShowplanColumnName || len(vals) != 1 {
			t.Fatalf("%s: result sets %q, want one showplan document", tt.batch, cols)
		}
		for _, typ := range tt.wantTypes {
			if !strings.Contains(vals[0], `StatementType="`+typ+`"`) {
				t.Errorf("%s: plan lacks StatementType %q: %s", tt.batch, typ, vals[0])
			}
		}
		validatePlan(t, vals[0])
	}
	if _, err := conn.ExecContext(ctx, "SET SHOWPLAN_XML OFF"); err != nil {
		t.Fatal(err)
	}
	reqs := requestsOf(s.Requests(), 0, KindBatch)
	last := reqs[len(reqs)-1]
	if last.Session.TranCount != 0 || !last.Session.NoCount || last.Session.Database != "Queues" || last.After.ShowplanXML {
		t.Errorf("state after the SHOWPLAN batches = %+v; want no transaction, NOCOUNT on, database Queues", last.Session)
	}
}

// validatePlan checks a generated document against the SQL Server 2022
// showplan schema when xmllint and the schemas are at hand.
func validatePlan(t *testing.T, doc string) {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		return
	}
	xsd := filepath.Join(sharedDir(t), "xsd", "showplanxml-1.571-sql2022.xsd")
	cmd := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsd, "-")
	cmd.Stdin = strings.NewReader(doc)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("generated plan does not validate (%v): %s\n%s", err, stderr.String(), doc)
	}
}

// TestShowplanSetMustBeAlone: error 1067 is for a real SET SHOWPLAN
// statement in a batch with others, not for the words in a string or
// comment.
func TestShowplanSetMustBeAlone(t *testing.T) {
	s := Start(t, Config{Handler: func(Session, *Request) *Response {
		return NewResponse().Result(NewResultSet(NVarChar("x", 40)).Row("SET SHOWPLAN_XML ON"))
	}})
	ctx := testContext(t)
	conn := pinnedConn(t, openDB(t, s, disableEncrypt))
	for _, q := range []string{"SET SHOWPLAN_XML ON; SELECT 1", "SELECT 1\nSET SHOWPLAN_XML OFF"} {
		_, err := conn.ExecContext(ctx, q)
		var me mssql.Error
		if !errors.As(err, &me) || me.Number != 1067 {
			t.Errorf("%q: err = %v, want 1067", q, err)
		}
	}
	for _, q := range []string{"SELECT 'SET SHOWPLAN_XML ON' AS x", "SELECT x FROM t -- SET SHOWPLAN_XML ON", "/* SET SHOWPLAN_XML OFF */ SELECT x FROM t"} {
		var v string
		if err := conn.QueryRowContext(ctx, q).Scan(&v); err != nil {
			t.Errorf("%q: %v, want the handler's row", q, err)
		}
	}
}

// TestShowplanAllAndTextRefused: only XML plans are emulated; SHOWPLAN_ALL
// and SHOWPLAN_TEXT are refused with a message saying so, and recorded as
// unhandled so that a test using them fails.
func TestShowplanAllAndTextRefused(t *testing.T) {
	s, err := NewServer(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := testContext(t)
	conn := pinnedConn(t, openDB(t, s, disableEncrypt))
	for _, q := range []string{"SET SHOWPLAN_ALL ON", "SET SHOWPLAN_TEXT ON"} {
		_, err := conn.ExecContext(ctx, q)
		if err == nil || !strings.Contains(err.Error(), "only SET SHOWPLAN_XML returns plans") {
			t.Errorf("%s: err = %v", q, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "SET SHOWPLAN_TEXT OFF"); err != nil {
		t.Errorf("SET SHOWPLAN_TEXT OFF: %v", err)
	}
	if n := len(s.Unhandled()); n != 2 {
		t.Errorf("%d unhandled requests, want the two ON batches", n)
	}
}

// TestSetStateFromMixedBatch: the SET statements of a batch that also
// holds other statements change the recorded session state, so a test
// asserting the options a statement ran under sees the ones really set.
func TestSetStateFromMixedBatch(t *testing.T) {
	s := Start(t, Config{Handler: func(Session, *Request) *Response {
		return NewResponse().Result(NewResultSet(Int("n")).Row(1))
	}})
	ctx := testContext(t)
	conn := pinnedConn(t, openDB(t, s, disableEncrypt))
	var n int
	if err := conn.QueryRowContext(ctx, "-- setup\nSET ARITHABORT ON;\nSET ANSI_WARNINGS, QUOTED_IDENTIFIER OFF;\nSET NOCOUNT ON;\nSELECT n FROM t;").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT n FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	reqs := requestsOf(s.Requests(), 0, KindBatch)
	setup, next := reqs[len(reqs)-2], reqs[len(reqs)-1]
	want := ODBCDefaults
	want.ArithAbort, want.AnsiWarnings, want.QuotedIdentifier = true, false, false
	if setup.After.Options != want || !setup.After.NoCount {
		t.Errorf("after the setup batch: options %+v NOCOUNT %v, want %+v and NOCOUNT on", setup.After.Options, setup.After.NoCount, want)
	}
	if next.Session.Options != want || !next.Session.NoCount {
		t.Errorf("next statement ran under %+v NOCOUNT %v, want %+v", next.Session.Options, next.Session.NoCount, want)
	}
}

package tdstest

import (
	"bytes"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
)

func TestConnectAndPing(t *testing.T) {
	tests := []struct {
		name           string
		params         url.Values
		wantEncryption byte
		wantPacketSize int
	}{
		{"encrypt=disable", url.Values{"encrypt": {"disable"}, "database": {"Queues"}}, EncryptNotSup, 4096},
		{"no encrypt parameter", url.Values{"database": {"Queues"}}, EncryptOff, 4096},
		{"packet size 512", url.Values{"encrypt": {"disable"}, "database": {"Queues"}, "packet size": {"512"}}, EncryptNotSup, 512},
		{"packet size below minimum", url.Values{"encrypt": {"disable"}, "database": {"Queues"}, "packet size": {"100"}}, EncryptNotSup, 512},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Start(t, Config{Password: "Secret#1"})
			params := tt.params
			params.Set("app name", "planlint-test")
			db := openDB(t, s, params)
			if err := db.PingContext(testContext(t)); err != nil {
				t.Fatalf("Ping: %v", err)
			}
			reqs := s.Requests()
			pre := requestsOf(reqs, 0, KindPrelogin)
			logins := requestsOf(reqs, 0, KindLogin)
			if len(pre) != 1 || len(logins) != 1 {
				t.Fatalf("got %d PRELOGIN and %d LOGIN7 records, want 1 each", len(pre), len(logins))
			}
			if got := pre[0].Prelogin.Encryption; got != tt.wantEncryption {
				t.Errorf("PRELOGIN encryption = %d, want %d", got, tt.wantEncryption)
			}
			l := logins[0].Login
			if l.UserName != "sa" || l.Password != "Secret#1" || l.Database != "Queues" ||
				l.AppName != "planlint-test" || l.Library != "go-mssqldb" || !l.ODBC || l.TDSVersion != 0x74000004 {
				t.Errorf("login = %+v", *l)
			}
			if int(l.PacketSize) != tt.wantPacketSize {
				t.Errorf("LOGIN7 packet size = %d, want %d", l.PacketSize, tt.wantPacketSize)
			}
			batches := requestsOf(reqs, 0, KindBatch)
			if len(batches) != 1 || batches[0].SQL != "select 1;" || !batches[0].Reset {
				t.Fatalf("batches = %+v, want one reset-flagged 'select 1;'", batches)
			}
			sess := batches[0].Session
			if sess.Database != "Queues" || sess.PacketSize != tt.wantPacketSize || sess.Options != ODBCDefaults {
				t.Errorf("session = %+v", sess)
			}
		})
	}
}

// TestEncryption: the server negotiates encryption as SQL Server does and
// go-mssqldb connects with each of its encrypt settings.
func TestEncryption(t *testing.T) {
	dir := t.TempDir()
	s0, err := NewServer(Config{})
	if err != nil {
		t.Fatal(err)
	}
	certFile := filepath.Join(dir, "server.pem")
	if err := os.WriteFile(certFile, s0.CertificatePEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	s0.Close()
	tests := []struct {
		name   string
		cfg    Config
		params url.Values
		want   string // Session.Encryption, or the error text
		asked  byte
	}{
		{"encrypt=disable", Config{}, url.Values{"encrypt": {"disable"}}, EncryptionNone, EncryptNotSup},
		{"default (no encrypt parameter)", Config{}, url.Values{}, EncryptionLogin, EncryptOff},
		{"encrypt=false", Config{}, url.Values{"encrypt": {"false"}, "trustservercertificate": {"true"}}, EncryptionLogin, EncryptOff},
		{"encrypt=true, trusted", Config{}, url.Values{"encrypt": {"true"}, "trustservercertificate": {"true"}}, EncryptionFull, EncryptOn},
		{"encrypt=true, certificate file", Config{}, url.Values{"encrypt": {"true"}, "certificate": {certFile}}, EncryptionFull, EncryptOn},
		{"encrypt=strict", Config{}, url.Values{"encrypt": {"strict"}, "serverCertificate": {certFile}}, EncryptionStrict, EncryptStrict},
		{"encrypt=true, untrusted", Config{}, url.Values{"encrypt": {"true"}}, "certificate signed by unknown authority", EncryptOn},
		{"encrypt=true, no TLS on the server", Config{NoTLS: true}, url.Values{"encrypt": {"true"}}, "does not support encryption", EncryptOn},
		{"default, no TLS on the server", Config{NoTLS: true}, url.Values{}, EncryptionNone, EncryptOff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewServer(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			db := openDB(t, s, tt.params)
			db.SetMaxOpenConns(1)
			ctx := testContext(t)
			err = db.PingContext(ctx)
			if strings.Contains(tt.want, " ") { // an error message, not a mode
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Ping: err = %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Ping: %v", err)
			}
			var n int
			if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil || n != 1 {
				t.Fatalf("SELECT 1 = %d, %v", n, err)
			}
			reqs := s.Requests()
			if p := requestsOf(reqs, 0, KindPrelogin); len(p) != 1 || p[0].Prelogin.Encryption != tt.asked {
				t.Errorf("PRELOGIN records %+v, want one asking %d", p, tt.asked)
			}
			b := requestsOf(reqs, 0, KindBatch)
			if got := b[len(b)-1].Session.Encryption; got != tt.want {
				t.Errorf("encryption = %q, want %q", got, tt.want)
			}
			if pe := s.ProtocolErrors(); len(pe) > 0 {
				t.Errorf("protocol errors: %v", pe)
			}
		})
	}
}

func TestLoginFailures(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		params  url.Values
		dsnUser *url.Userinfo
		wantNum int32
		wantMsg string
	}{
		{
			name:    "wrong password",
			cfg:     Config{Password: "right"},
			dsnUser: url.UserPassword("sa", "wrong"),
			wantNum: 18456,
			wantMsg: "login error: Login failed for user 'sa'.",
		},
		{
			name:    "rejected by hook",
			cfg:     Config{RejectLogin: func(l Login) bool { return l.AppName == "blocked" }},
			params:  url.Values{"app name": {"blocked"}},
			wantNum: 18456,
			wantMsg: "login error: Login failed for user 'sa'.",
		},
		{
			name:    "integrated authentication",
			cfg:     Config{},
			dsnUser: url.UserPassword(`CORP\alice`, "pw"),
			wantNum: 18456,
			wantMsg: "SQL authentication only",
		},
		{
			name:    "unknown database",
			cfg:     Config{Databases: []string{"master", "Queues"}},
			params:  url.Values{"database": {"Nope"}},
			wantNum: 4060,
			wantMsg: `Cannot open database "Nope"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewServer(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			params := url.Values{"encrypt": {"disable"}}
			for k, v := range tt.params {
				params[k] = v
			}
			dsn := s.DSN(params)
			if tt.dsnUser != nil {
				u, _ := url.Parse(dsn)
				u.User = tt.dsnUser
				dsn = u.String()
			}
			db, err := sql.Open("sqlserver", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.PingContext(testContext(t))
			var me mssql.Error
			if !errors.As(err, &me) || me.Number != tt.wantNum || !strings.Contains(me.Message, tt.wantMsg) {
				t.Fatalf("Ping: err = %v (%T), want mssql.Error %d containing %q", err, err, tt.wantNum, tt.wantMsg)
			}
			if pe := s.ProtocolErrors(); len(pe) != 0 {
				t.Errorf("protocol errors: %v", pe)
			}
		})
	}
}

// TestShowplanRPCFlow is the estimated-plan capture path: SHOWPLAN_XML ON,
// the statement as sp_executesql with the caller's declaration, OFF.
func TestShowplanRPCFlow(t *testing.T) {
	plan := syntheticPlan(45_000)
	stmt := "SELECT TOP (1) Id FROM dbo.Queue WITH (INDEX(IX_Queue_Pending)) WHERE Status = @Status"
	tests := []struct {
		name   string
		params url.Values
		col    Column
	}{
		{"one chunk, known length", disableEncrypt, ShowplanColumn().Chunked(0)},
		{"1000-byte chunks, unknown length, packet size 512", url.Values{"encrypt": {"disable"}, "packet size": {"512"}}, ShowplanColumn().Chunked(1000).UnknownLength()},
		{"odd 333-byte chunks split surrogates, packet size 512", url.Values{"packet size": {"512"}}, ShowplanColumn().Chunked(333)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Start(t, Config{PlanForRPC: true, Handler: func(sess Session, r *Request) *Response {
				if r.Kind == KindRPC && sess.ShowplanXML && r.SQL == stmt {
					return NewResponse().Result(ShowplanResultSetWith(tt.col, plan))
				}
				return nil
			}})
			ctx := testContext(t)
			conn := pinnedConn(t, openDB(t, s, tt.params))
			if _, err := conn.ExecContext(ctx, "SET SHOWPLAN_XML ON"); err != nil {
				t.Fatalf("SET SHOWPLAN_XML ON: %v", err)
			}
			rows, err := conn.QueryContext(ctx, "sp_executesql",
				sql.Named("stmt", stmt), sql.Named("params", "@Status tinyint"), sql.Named("Status", int64(0)))
			if err != nil {
				t.Fatalf("sp_executesql: %v", err)
			}
			cols, _ := rows.Columns()
			var got string
			for rows.Next() {
				if err := rows.Scan(&got); err != nil {
					t.Fatal(err)
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			if len(cols) != 1 || cols[0] != ShowplanColumnName {
				t.Errorf("columns = %q, want [%q]", cols, ShowplanColumnName)
			}
			if got != plan {
				t.Fatalf("plan differs: got %d chars, want %d", len(got), len(plan))
			}
			if _, err := conn.ExecContext(ctx, "SET SHOWPLAN_XML OFF"); err != nil {
				t.Fatalf("SET SHOWPLAN_XML OFF: %v", err)
			}

			reqs := requestsOf(s.Requests(), 0, KindBatch, KindRPC)
			if len(reqs) != 3 {
				t.Fatalf("got %d batch/RPC requests, want 3: %+v", len(reqs), reqs)
			}
			rpc := reqs[1]
			// Only the statement ran under SHOWPLAN_XML; the SET batches
			// switch it on and off.
			for i, want := range []struct{ ranUnder, after bool }{{false, true}, {true, true}, {true, false}} {
				r := reqs[i]
				if r.Session.ShowplanXML != want.ranUnder || r.After.ShowplanXML != want.after {
					t.Errorf("request %d (%s): ShowplanXML before/after = %v/%v, want %v/%v",
						i+1, r.Describe(), r.Session.ShowplanXML, r.After.ShowplanXML, want.ranUnder, want.after)
				}
			}
			var statements []string
			for _, r := range reqs {
				if r.Session.ShowplanXML && !isSessionBatch(r) {
					statements = append(statements, r.Describe())
				}
			}
			if len(statements) != 1 || statements[0] != rpc.Describe() {
				t.Errorf("statements run under SHOWPLAN_XML = %q, want only the RPC", statements)
			}
			if rpc.Kind != KindRPC || rpc.Proc != "sp_executesql" || rpc.ProcID != 0 {
				t.Fatalf("middle request = %s (id %d), want an RPC by name to sp_executesql", rpc.Describe(), rpc.ProcID)
			}
			if rpc.SQL != stmt || rpc.ParamDecl != "@Status tinyint" {
				t.Errorf("split statement/declaration = %q / %q", rpc.SQL, rpc.ParamDecl)
			}
			wantParams := []Param{
				{Name: "@stmt", TypeID: 0xE7, Type: "nvarchar(" + strconv.Itoa(len(stmt)) + ")", Value: stmt},
				{Name: "@params", TypeID: 0xE7, Type: "nvarchar(15)", Value: "@Status tinyint"},
				{Name: "@Status", TypeID: 0x26, Type: "bigint", Value: int64(0)},
			}
			assertParams(t, rpc.Params, wantParams)
		})
	}
}

func TestShowplanCorpusPlanRoundTrip(t *testing.T) {
	name, plan := corpusPlan(t, 40_000)
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
		if sess.ShowplanXML {
			return EstimatedPlan(plan)
		}
		return nil
	}})
	ctx := testContext(t)
	conn := pinnedConn(t, openDB(t, s, url.Values{"encrypt": {"disable"}, "packet size": {"512"}}))
	if _, err := conn.ExecContext(ctx, "SET SHOWPLAN_XML ON"); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := conn.QueryRowContext(ctx, "SELECT * FROM dbo.Queue").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != plan {
		t.Fatalf("%s: plan differs after the round trip (%d vs %d chars)", name, len(got), len(plan))
	}
}

func TestDriverGeneratedExecuteSQL(t *testing.T) {
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
		if r.Kind == KindRPC {
			return NewResponse().Result(NewResultSet(Int("n")).Row(len(r.Params)))
		}
		return nil
	}})
	var n int
	err := openDB(t, s, disableEncrypt).QueryRowContext(testContext(t),
		"SELECT name FROM sys.indexes WHERE object_id = @p1 AND name = @p2", int64(42), "abc").Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	rpc := requestsOf(s.Requests(), 0, KindRPC)[0]
	if rpc.ProcID != ProcExecuteSQL || rpc.Proc != "sp_executesql" {
		t.Errorf("proc = %q id %d, want sp_executesql by id 10", rpc.Proc, rpc.ProcID)
	}
	if rpc.SQL != "SELECT name FROM sys.indexes WHERE object_id = @p1 AND name = @p2" || rpc.ParamDecl != "@p1 bigint,@p2 nvarchar(3)" {
		t.Errorf("statement/declaration = %q / %q", rpc.SQL, rpc.ParamDecl)
	}
	if n != 4 {
		t.Errorf("handler saw %d parameters, want 4", n)
	}
}

func assertParams(t *testing.T, got, want []Param) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d parameters, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.TypeID != w.TypeID || g.Type != w.Type || g.Output != w.Output || !equalValue(g.Value, w.Value) {
			t.Errorf("parameter %d = %+v, want %+v", i+1, g, w)
		}
	}
}

// equalValue compares decoded parameter values.
func equalValue(a, b any) bool {
	switch x := a.(type) {
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	return a == b
}

// isSessionBatch reports whether a recorded batch only changed session state.
func isSessionBatch(r Request) bool {
	_, ok := parseSessionBatch(r.SQL)
	return r.Kind == KindBatch && ok
}

package tdstest

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-sql/civil"
	mssql "github.com/microsoft/go-mssqldb"
)

var (
	capturedOnce sync.Once
	captured     map[Kind][][]byte
	capturedErr  error
)

// driverMessages runs go-mssqldb against a server once and returns the
// message bodies it sent, by kind: real client bytes to seed the fuzzers.
func driverMessages(tb testing.TB) map[Kind][][]byte {
	tb.Helper()
	capturedOnce.Do(func() { captured, capturedErr = captureDriverMessages() })
	if capturedErr != nil {
		tb.Fatalf("capturing driver messages: %v", capturedErr)
	}
	return captured
}

func captureDriverMessages() (map[Kind][][]byte, error) {
	s, err := NewServer(Config{Password: "pw", PlanForRPC: true, Handler: func(Session, *Request) *Response {
		return NewResponse().Result(NewResultSet(Int("n")).Row(1))
	}})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	db, err := sql.Open("sqlserver", s.DSN(url.Values{"encrypt": {"disable"}, "packet size": {"512"}, "database": {"Queues"}}))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var n int
	steps := []func() error{
		func() error { return conn.PingContext(ctx) },
		func() error {
			_, err := conn.ExecContext(ctx, "SET SHOWPLAN_XML ON")
			return err
		},
		func() error {
			return conn.QueryRowContext(ctx, "sp_executesql", sql.Named("stmt", "SELECT Id FROM dbo.Queue WHERE Status = @Status"),
				sql.Named("params", "@Status tinyint"), sql.Named("Status", int64(0))).Scan(&n)
		},
		func() error {
			return conn.QueryRowContext(ctx, "SELECT @p1, @p2, @p3, @p4, @p5, @p6, @p7, @p8, @p9, @p10, @p11",
				int32(1), true, 2.5, []byte{1, 2}, time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC), nil,
				strings.Repeat("x", 5000), mssql.VarChar("v"), civil.Date{Year: 2024, Month: 1, Day: 2},
				civil.DateTime{Date: civil.Date{Year: 2024, Month: 1, Day: 2}}, mssql.UniqueIdentifier{1, 2, 3}).Scan(&n)
		},
		func() error {
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			return tx.Rollback()
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	out := map[Kind][][]byte{}
	for _, r := range s.Requests() {
		out[r.Kind] = append(out[r.Kind], r.Raw)
	}
	return out, nil
}

func FuzzParseLogin7(f *testing.F) {
	for _, b := range driverMessages(f)[KindLogin] {
		f.Add(b)
	}
	f.Add(login7("sa", "pw", "db", flag2ODBC))
	f.Add(withFeatures(login7("sa", "pw", "db", flag2ODBC), 0x74000004, Feature{ID: FeatureUTF8Support}, Feature{ID: 0x42, Data: []byte{1, 2, 3}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseLogin7(b)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if len(l.UserName)+len(l.Password)+len(l.Database) > 3*len(b) {
			t.Fatalf("decoded fields longer than the input allows")
		}
		n := 0
		for _, f := range l.Features {
			n += 5 + len(f.Data)
		}
		if n > len(b) {
			t.Fatalf("features hold %d bytes of a %d-byte record", n, len(b))
		}
	})
}

func FuzzParsePrelogin(f *testing.F) {
	for _, b := range driverMessages(f)[KindPrelogin] {
		f.Add(b)
	}
	f.Add(preloginReply(EncryptOff))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parsePrelogin(b)
		if err == nil && len(p.Options) > len(b)/5 {
			t.Fatalf("%d options from %d bytes", len(p.Options), len(b))
		}
	})
}

func FuzzParseRPC(f *testing.F) {
	for _, b := range driverMessages(f)[KindRPC] {
		f.Add(b)
	}
	nvMax := cat([]byte{0xE7}, le16(0xFFFF), collation)
	f.Add(rpcByName("p", param("@x", 0, cat(nvMax, le64(1<<30), le32(2), []byte{'a', 0}, le32(0))...)))
	f.Add(rpcByName("p", param("@d", 0, cat([]byte{0x6A, 17, 38, 10, 17, 1}, le64(1<<63), le64(9))...)))
	f.Fuzz(func(t *testing.T, b []byte) {
		call, err := parseRPC(b)
		if err != nil {
			return
		}
		for _, p := range call.params {
			if p.Type == "" {
				t.Fatalf("parameter %s has no type name", p.Name)
			}
			if v, ok := p.Value.([]byte); ok && len(v) > len(b) {
				t.Fatalf("value of %d bytes from a %d-byte message", len(v), len(b))
			}
		}
		isExecuteSQL(call)
		executeSQLText(call.params)
	})
}

func FuzzParseTransMgr(f *testing.F) {
	for _, b := range driverMessages(f)[KindTransaction] {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, _, err := parseTransMgr(b)
		if err == nil && tr.Op == "" {
			t.Fatal("parsed transaction request without an operation")
		}
	})
}

func FuzzReadMessage(f *testing.F) {
	for _, kind := range []Kind{KindPrelogin, KindLogin, KindBatch, KindRPC} {
		for _, b := range driverMessages(f)[kind] {
			f.Add(packetize(packetRPC, b, 512))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := readMessage(strings.NewReader(string(b)))
		if err == nil && len(m.body) > len(b) {
			t.Fatalf("%d-byte body from %d bytes", len(m.body), len(b))
		}
	})
}

func FuzzSessionBatch(f *testing.F) {
	for _, b := range driverMessages(f)[KindBatch] {
		if sql, _, err := parseBatch(b); err == nil {
			f.Add(sql)
		}
	}
	for _, s := range []string{"SET ANSI_NULLS, QUOTED_IDENTIFIER OFF; SET ARITHABORT ON", "IF @@TRANCOUNT > 0 ROLLBACK TRAN",
		"USE [a]]b]", "/* x /* y */ */ BEGIN TRAN", "SET SHOWPLAN_XML ON; SELECT 1", "SET STATISTICS XML OFF\n-- c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		stmts, ok := parseSessionBatch(sql)
		if ok && len(stmts) == 0 {
			t.Fatal("accepted a batch with no statements")
		}
		for _, st := range stmts {
			for _, name := range st.options {
				if !sessionOptionNames[name] {
					t.Fatalf("accepted unknown option %q", name)
				}
			}
		}
		toks, ok := lexBatch(sql)
		if !ok {
			return
		}
		n := len([]rune(sql))
		for _, tk := range toks {
			if tk.pos < 0 || tk.end > n || tk.pos >= tk.end {
				t.Fatalf("token %+v outside the %d-rune batch", tk, n)
			}
		}
		if showplanAlone(toks) {
			if _, found := showplanSet(toks); !found {
				t.Fatal("a lone SET SHOWPLAN was not found")
			}
		}
		embeddedSets(toks)
	})
}

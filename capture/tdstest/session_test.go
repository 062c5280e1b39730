package tdstest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
)

func TestParseSessionBatch(t *testing.T) {
	tests := []struct {
		sql  string
		want []sessionStmt // nil: not a session batch
	}{
		{"SET ANSI_NULLS ON", []sessionStmt{{kind: stmtSet, options: []string{"ANSI_NULLS"}, on: true}}},
		{"set arithabort, concat_null_yields_null off;", []sessionStmt{{kind: stmtSet, options: []string{"ARITHABORT", "CONCAT_NULL_YIELDS_NULL"}, on: false}}},
		{"SET NOCOUNT ON\nSET XACT_ABORT ON", []sessionStmt{{kind: stmtSet, options: []string{"NOCOUNT"}, on: true}, {kind: stmtSet, options: []string{"XACT_ABORT"}, on: true}}},
		{"SET SHOWPLAN_XML ON", []sessionStmt{{kind: stmtShowplan, name: "SHOWPLAN_XML", on: true}}},
		{"SET STATISTICS XML OFF", []sessionStmt{{kind: stmtStatisticsXML}}},
		{"BEGIN TRAN; COMMIT TRANSACTION; ROLLBACK WORK", []sessionStmt{{kind: stmtBegin}, {kind: stmtCommit}, {kind: stmtRollback}}},
		{"IF @@TRANCOUNT > 0 ROLLBACK TRAN", []sessionStmt{{kind: stmtRollbackIfTran}}},
		{"USE [My ]]Db]", []sessionStmt{{kind: stmtUse, name: "My ]Db"}}},
		{"use Queues -- comment", []sessionStmt{{kind: stmtUse, name: "Queues"}}},
		{"/* a /* nested */ comment */ SELECT 1", []sessionStmt{{kind: stmtSelectOne}}},
		{"", nil},
		{";;", nil},
		{"SET ANSI_NULLS ON, QUOTED_IDENTIFIER ON", nil},
		{"SET STATISTICS IO ON", nil},
		{"SET ANSI_DEFAULTS ON", []sessionStmt{{kind: stmtSetOther, on: true}}},
		{"SET TRANSACTION ISOLATION LEVEL SNAPSHOT", []sessionStmt{{kind: stmtSetOther}}},
		{"set textsize 2147483647\nset language us_english\nset transaction isolation level read committed\nset dateformat mdy", []sessionStmt{{kind: stmtSetOther}, {kind: stmtSetOther}, {kind: stmtSetOther}, {kind: stmtSetOther}}},
		{"SET TRANSACTION ISOLATION LEVEL CHAOS", nil},
		{"SET TEXTSIZE", nil},
		{"SELECT 1 AS x", nil},
		{"SELECT 'x'", nil},
		{"BEGIN SELECT 1 END", nil},
		{"USE", nil},
		{"USE 1db", nil},
		{"IF @@TRANCOUNT > 1 ROLLBACK", nil},
		{"SET ANSI_NULLS ON /* unterminated", nil},
		{"SET [ANSI_NULLS] ON", nil},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			got, ok := parseSessionBatch(tt.sql)
			for i := range got {
				got[i].text = ""
			}
			if ok != (tt.want != nil) || (ok && !reflect.DeepEqual(got, tt.want)) {
				t.Errorf("got %+v, %v; want %+v", got, ok, tt.want)
			}
		})
	}
}

func TestShowplanSetDetection(t *testing.T) {
	tests := []struct {
		sql             string
		mentions, alone bool
	}{
		{"SET SHOWPLAN_XML ON", true, true},
		{" set showplan_xml off ; ", true, true},
		{"SET SHOWPLAN_ALL ON", true, true},
		{"SET SHOWPLAN_XML ON; SELECT 1", true, false},
		{"SELECT 1\nSET SHOWPLAN_XML OFF", true, false},
		{"SET SHOWPLAN_XML ON SET NOCOUNT ON", true, false},
		{"SET STATISTICS XML ON", false, false},
		// Words inside strings and comments are not statements.
		{"SELECT 'SET SHOWPLAN_XML ON'", false, false},
		{"SELECT N'it''s SET SHOWPLAN_XML ON'", false, false},
		{"SELECT 1 -- SET SHOWPLAN_XML ON", false, false},
		{"/* SET SHOWPLAN_XML OFF */ SELECT 1", false, false},
		{"UPDATE t SET showplan_xml = 1", false, false},
	}
	for _, tt := range tests {
		toks, ok := lexBatch(tt.sql)
		if !ok {
			t.Fatalf("%q does not lex", tt.sql)
		}
		_, m := showplanSet(toks)
		if a := showplanAlone(toks); m != tt.mentions || a != tt.alone {
			t.Errorf("%q: mentions %v alone %v, want %v %v", tt.sql, m, a, tt.mentions, tt.alone)
		}
	}
}

func TestEmbeddedSets(t *testing.T) {
	tests := []struct {
		sql  string
		want string
	}{
		{"-- setup\nSET ANSI_NULLS ON;\nSET ARITHABORT, QUOTED_IDENTIFIER OFF;\nSELECT DB_NAME();", "ANSI_NULLS on|ARITHABORT,QUOTED_IDENTIFIER off"},
		{"SELECT x FROM t SET NOCOUNT ON", "NOCOUNT on"},
		{"SET STATISTICS XML ON; SELECT 1 FROM t", "STATISTICS XML on"},
		{"UPDATE t SET ansi_nulls = 1", ""},
		{"SELECT 'SET NOCOUNT ON'", ""},
		{"SET LOCK_TIMEOUT 5; SET NOCOUNT OFF", "NOCOUNT off"},
	}
	for _, tt := range tests {
		toks, _ := lexBatch(tt.sql)
		var got []string
		for _, st := range embeddedSets(toks) {
			name := strings.Join(st.options, ",")
			if st.kind == stmtStatisticsXML {
				name = "STATISTICS XML"
			}
			got = append(got, fmt.Sprintf("%s %s", name, map[bool]string{true: "on", false: "off"}[st.on]))
		}
		if strings.Join(got, "|") != tt.want {
			t.Errorf("%q: sets %q, want %q", tt.sql, strings.Join(got, "|"), tt.want)
		}
	}
}

func TestSetOptionsGet(t *testing.T) {
	o := ODBCDefaults
	for name, want := range map[string]bool{"ANSI_NULLS": true, "arithabort": false, "Quoted_Identifier": true, "NUMERIC_ROUNDABORT": false} {
		if got, ok := o.Get(name); !ok || got != want {
			t.Errorf("Get(%q) = %v, %v; want %v, true", name, got, ok, want)
		}
	}
	if _, ok := o.Get("NOCOUNT"); ok {
		t.Error("NOCOUNT is a session flag, not a filtered-index SET option")
	}
}

func TestResetRollsBackOpenTransaction(t *testing.T) {
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response { return NewResponse().RowCount(CmdDelete, 0) }})
	ctx := testContext(t)
	db := openDB(t, s, disableEncrypt)
	db.SetMaxOpenConns(1)
	conn := pinnedConn(t, db)
	if _, err := conn.ExecContext(ctx, "BEGIN TRAN"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if _, err := db.ExecContext(ctx, "DELETE FROM dbo.Queue"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM dbo.Queue"); err != nil {
		t.Fatal(err)
	}
	reqs := requestsOf(s.Requests(), 0, KindBatch)
	begin, checkout, next := reqs[len(reqs)-3], reqs[len(reqs)-2], reqs[len(reqs)-1]
	if begin.After.TranCount != 1 || !checkout.Reset || checkout.Session.TranCount != 0 {
		t.Errorf("checkout: reset %v, TranCount %d; want the reset to roll back the open transaction", checkout.Reset, checkout.Session.TranCount)
	}
	// The driver learns of the rollback from the reset reply's ENVCHANGE, so
	// only the request after it drops the transaction descriptor.
	if checkout.TransactionID == 0 || next.TransactionID != 0 {
		t.Errorf("descriptors at checkout and after = %x, %x; want the old id, then 0", checkout.TransactionID, next.TransactionID)
	}
}

func TestConcurrentConnections(t *testing.T) {
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
		return NewResponse().Result(NewResultSet(Int("conn")).Row(sess.Conn))
	}})
	ctx := testContext(t)
	db := openDB(t, s, disableEncrypt)
	const workers, queries = 4, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	stop := make(chan struct{})
	go func() { // read the record while it grows
		for {
			select {
			case <-stop:
				return
			default:
				_ = s.Requests()
				_, _ = s.Session(1)
			}
		}
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			conn, err := db.Conn(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			for q := 0; q < queries; q++ {
				var got int
				if err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT conn FROM w%d WHERE q = %d", w, q)).Scan(&got); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	reqs := s.Requests()
	perConn := map[int]int{}
	for i, r := range reqs {
		if r.Seq != i+1 {
			t.Fatalf("request %d has Seq %d", i+1, r.Seq)
		}
		if r.Kind == KindBatch && strings.HasPrefix(r.SQL, "SELECT conn") {
			perConn[r.Conn]++
		}
	}
	total := 0
	for _, n := range perConn {
		total += n
	}
	if total != workers*queries {
		t.Errorf("recorded %d queries, want %d", total, workers*queries)
	}
}

func TestHandlerPanicIsRecorded(t *testing.T) {
	s, err := NewServer(Config{Handler: func(Session, *Request) *Response { panic("boom") }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := openDB(t, s, disableEncrypt)
	_, err = db.ExecContext(testContext(t), "DELETE FROM t")
	var me mssql.Error
	if !errors.As(err, &me) || !strings.Contains(me.Message, "handler panicked: boom") {
		t.Fatalf("err = %v, want the panic reported to the client", err)
	}
	if pe := s.ProtocolErrors(); len(pe) != 1 || !strings.Contains(pe[0].Err, "boom") {
		t.Fatalf("protocol errors = %v", pe)
	}
	if err := db.PingContext(testContext(t)); err != nil {
		t.Fatalf("connection unusable after a handler panic: %v", err)
	}
}

func TestCloseInterruptsDelayedReply(t *testing.T) {
	s, err := NewServer(Config{Handler: func(Session, *Request) *Response {
		return NewResponse().Statement(CmdNone).Delay(time.Hour)
	}})
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t, s, disableEncrypt)
	ctx := testContext(t)
	result := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "WAITFOR DELAY '01:00:00'")
		result <- err
	}()
	waitForRequest(t, s, "WAITFOR")
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("Close did not return while a reply was delayed")
	}
	if err := <-result; err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("client err = %v, want a connection error", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestRecordReturnsCopies(t *testing.T) {
	s := Start(t, Config{Handler: func(Session, *Request) *Response { return NewResponse() }})
	if _, err := openDB(t, s, disableEncrypt).ExecContext(testContext(t), "EXEC dbo.p", []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	first := s.Requests()
	rpc := requestsOf(first, 0, KindRPC)[0]
	rpc.Params[2].Value.([]byte)[0] = 99
	rpc.Params[0].Name = "changed"
	rpc.Raw[0] = 0xEE
	again := requestsOf(s.Requests(), 0, KindRPC)[0]
	if again.Params[2].Value.([]byte)[0] != 1 || again.Params[0].Name != "" || again.Raw[0] == 0xEE {
		t.Error("changing a returned request changed the record")
	}
}

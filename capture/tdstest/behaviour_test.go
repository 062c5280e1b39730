package tdstest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
)

func TestResetConnectionOnPoolCheckout(t *testing.T) {
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
		return NewResponse().Result(NewResultSet(Bit("showplan")).Row(sess.ShowplanXML))
	}})
	ctx := testContext(t)
	db := openDB(t, s, disableEncrypt)
	db.SetMaxOpenConns(1)

	first := pinnedConn(t, db)
	for _, q := range []string{"SET SHOWPLAN_XML ON", "SET ARITHABORT ON; SET NOCOUNT ON", "USE Queues"} {
		if _, err := first.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	first.Close()

	second := pinnedConn(t, db)
	for i := 0; i < 2; i++ {
		var on bool
		if err := second.QueryRowContext(ctx, "SELECT 42 AS answer").Scan(&on); err != nil {
			t.Fatal(err)
		}
		if on {
			t.Fatalf("query %d after checkout ran under SHOWPLAN_XML", i+1)
		}
	}
	reqs := requestsOf(s.Requests(), 0, KindBatch)
	if len(reqs) != 5 {
		t.Fatalf("got %d batches, want 5", len(reqs))
	}
	if reqs[0].Conn != reqs[4].Conn {
		t.Fatalf("the pool opened a second connection (%d, %d); the test needs reuse", reqs[0].Conn, reqs[4].Conn)
	}
	wantReset := []bool{true, false, false, true, false}
	for i, r := range reqs {
		if r.Reset != wantReset[i] {
			t.Errorf("batch %d (%s): reset = %v, want %v", i+1, r.Describe(), r.Reset, wantReset[i])
		}
	}
	before := reqs[2].After
	if !before.ShowplanXML || !before.Options.ArithAbort || !before.NoCount || before.Database != "Queues" {
		t.Fatalf("state before checkout = %+v, want SHOWPLAN_XML, ARITHABORT, NOCOUNT on in Queues", before)
	}
	cleared := reqs[3].Session
	if cleared.ShowplanXML || cleared.Options != ODBCDefaults || cleared.NoCount || cleared.Database != "master" {
		t.Errorf("state after RESETCONNECTION = %+v, want login defaults", cleared)
	}
}

func TestStatisticsXML(t *testing.T) {
	plan := syntheticPlan(5_000)
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
		if !sess.StatisticsXML {
			return nil
		}
		switch {
		case strings.HasPrefix(r.SQL, "SELECT"):
			return ActualPlanSelect(NewResultSet(BigInt("Id"), NVarChar("Payload", 50)).Row(7, "a").Row(8, "b"), plan)
		case strings.HasPrefix(r.SQL, "UPDATE"):
			return ActualPlanDML(CmdUpdate, 3, plan)
		}
		return nil
	}})
	ctx := testContext(t)
	conn := pinnedConn(t, openDB(t, s, disableEncrypt))
	if _, err := conn.ExecContext(ctx, "SET STATISTICS XML ON"); err != nil {
		t.Fatal(err)
	}

	t.Run("SELECT gives rows then plan", func(t *testing.T) {
		rows, err := conn.QueryContext(ctx, "SELECT Id, Payload FROM dbo.Queue WHERE Status = @p1", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ids []int64
		for rows.Next() {
			var id int64
			var payload string
			if err := rows.Scan(&id, &payload); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if len(ids) != 2 || ids[0] != 7 || ids[1] != 8 {
			t.Errorf("rows = %v, want [7 8]", ids)
		}
		if !rows.NextResultSet() {
			t.Fatalf("no second result set: %v", rows.Err())
		}
		if got := readPlan(t, rows); got != plan {
			t.Errorf("plan differs (%d vs %d chars)", len(got), len(plan))
		}
		if rows.NextResultSet() {
			t.Error("unexpected third result set")
		}
	})

	t.Run("DML via QueryContext gives the plan first", func(t *testing.T) {
		rows, err := conn.QueryContext(ctx, "UPDATE dbo.Queue SET Status = 1 WHERE Status = @p1", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		if got := readPlan(t, rows); got != plan {
			t.Errorf("plan differs (%d vs %d chars)", len(got), len(plan))
		}
	})
}

// readPlan reads the single showplan row of the current result set.
func readPlan(t *testing.T, rows *sql.Rows) string {
	t.Helper()
	cols, err := rows.Columns()
	if err != nil || len(cols) != 1 || cols[0] != ShowplanColumnName {
		t.Fatalf("columns = %q (%v), want the showplan column", cols, err)
	}
	var plan string
	n := 0
	for rows.Next() {
		if err := rows.Scan(&plan); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("plan result set has %d rows, want 1", n)
	}
	return plan
}

func TestErrorPresetsSurfaceAsMssqlError(t *testing.T) {
	presets := map[string]Message{
		"hints":  ErrNoPlanHints(),
		"denied": ErrShowplanDenied("Queues"),
		"object": ErrInvalidObject("dbo.Missing"),
	}
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
		for key, m := range presets {
			if strings.Contains(r.SQL, key) {
				return ErrorResponse(m)
			}
		}
		return nil
	}})
	db := openDB(t, s, disableEncrypt)
	tests := []struct {
		name string
		key  string
		rpc  bool
		want int32
	}{
		{"8622 batch", "hints", false, 8622},
		{"8622 rpc", "hints", true, 8622},
		{"262 batch", "denied", false, 262},
		{"262 rpc", "denied", true, 262},
		{"208 batch", "object", false, 208},
		{"208 rpc", "object", true, 208},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			query := "SELECT Id FROM dbo.Queue /* " + tt.key + " */"
			var args []any
			if tt.rpc {
				query += " WHERE 1 = @p1"
				args = append(args, 1)
			}
			rows, err := db.QueryContext(testContext(t), query, args...)
			if err == nil {
				rows.Close()
			}
			var me mssql.Error
			if !errors.As(err, &me) || me.Number != tt.want || me.Message != presets[tt.key].Text {
				t.Fatalf("err = %v (%T), want mssql.Error %d", err, err, tt.want)
			}
		})
	}
}

func TestTransactions(t *testing.T) {
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
		return NewResponse().RowCount(CmdUpdate, 1)
	}})
	ctx := testContext(t)
	db := openDB(t, s, disableEncrypt)
	db.SetMaxOpenConns(1)

	for _, finish := range []string{"rollback", "commit"} {
		t.Run("BeginTx and "+finish, func(t *testing.T) {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "UPDATE dbo.Queue SET Status = 1 WHERE Id = @p1", 5); err != nil {
				t.Fatal(err)
			}
			if finish == "rollback" {
				err = tx.Rollback()
			} else {
				err = tx.Commit()
			}
			if err != nil {
				t.Fatalf("%s: %v", finish, err)
			}
			reqs := s.Requests()
			reqs = reqs[len(reqs)-3:]
			wantKinds := []Kind{KindTransaction, KindRPC, KindTransaction}
			wantCounts := [][2]int{{0, 1}, {1, 1}, {1, 0}}
			for i, r := range reqs {
				if r.Kind != wantKinds[i] || r.Session.TranCount != wantCounts[i][0] || r.After.TranCount != wantCounts[i][1] {
					t.Errorf("request %d: %s TranCount %d→%d, want %s %d→%d", i+1, r.Describe(),
						r.Session.TranCount, r.After.TranCount, wantKinds[i], wantCounts[i][0], wantCounts[i][1])
				}
			}
			if reqs[0].Transaction.Op != "begin" || reqs[2].Transaction.Op != finish {
				t.Errorf("transaction ops = %s, %s", reqs[0].Transaction.Op, reqs[2].Transaction.Op)
			}
			if reqs[0].TransactionID != 0 || reqs[1].TransactionID == 0 || reqs[2].TransactionID != reqs[1].TransactionID {
				t.Errorf("transaction descriptors = %x, %x, %x: want 0, then the id the server handed out",
					reqs[0].TransactionID, reqs[1].TransactionID, reqs[2].TransactionID)
			}
		})
	}

	t.Run("batch BEGIN TRAN and IF @@TRANCOUNT > 0 ROLLBACK", func(t *testing.T) {
		conn := pinnedConn(t, db)
		for _, q := range []string{"BEGIN TRAN", "UPDATE dbo.Queue SET Status = 1", "IF @@TRANCOUNT > 0 ROLLBACK", "IF @@TRANCOUNT > 0 ROLLBACK"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		reqs := requestsOf(s.Requests(), 0, KindBatch)
		reqs = reqs[len(reqs)-4:]
		want := [][2]int{{0, 1}, {1, 1}, {1, 0}, {0, 0}}
		for i, r := range reqs {
			if r.Session.TranCount != want[i][0] || r.After.TranCount != want[i][1] {
				t.Errorf("%s: TranCount %d→%d, want %d→%d", r.Describe(), r.Session.TranCount, r.After.TranCount, want[i][0], want[i][1])
			}
		}
		if reqs[1].TransactionID == 0 {
			t.Error("the driver did not send the batch transaction's id: ENVCHANGE 8 was not understood")
		}
		_, err := conn.ExecContext(ctx, "COMMIT")
		var me mssql.Error
		if !errors.As(err, &me) || me.Number != 3902 {
			t.Errorf("COMMIT without a transaction: err = %v, want error 3902", err)
		}
	})
}

func TestAttention(t *testing.T) {
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
		if strings.HasPrefix(r.SQL, "WAITFOR") {
			return NewResponse().Statement(CmdNone).Delay(time.Hour)
		}
		return nil
	}})
	db := openDB(t, s, disableEncrypt)

	t.Run("cancel keeps the connection", func(t *testing.T) {
		conn := pinnedConn(t, db)
		ctx, cancel := context.WithCancel(testContext(t))
		result := make(chan error, 1)
		go func() {
			_, err := conn.ExecContext(ctx, "WAITFOR DELAY '01:00:00'")
			result <- err
		}()
		waitForRequest(t, s, "WAITFOR")
		cancel()
		if err := <-result; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled statement: err = %v, want context.Canceled", err)
		}
		if err := conn.PingContext(testContext(t)); err != nil {
			t.Fatalf("connection unusable after cancel: %v", err)
		}
		assertAttentionAfter(t, s, "WAITFOR")
	})

	t.Run("deadline is reported", func(t *testing.T) {
		conn := pinnedConn(t, db)
		ctx, cancel := context.WithTimeout(testContext(t), 50*time.Millisecond)
		defer cancel()
		_, err := conn.ExecContext(ctx, "WAITFOR DELAY '02:00:00'")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("timed-out statement: err = %v, want context.DeadlineExceeded", err)
		}
		assertAttentionAfter(t, s, "WAITFOR DELAY '02")
		// go-mssqldb marks the connection bad after a deadline even though
		// the server confirmed the attention; capture code must reconnect.
		if err := conn.PingContext(testContext(t)); !errors.Is(err, driver.ErrBadConn) {
			t.Errorf("ping after deadline: err = %v, want driver.ErrBadConn", err)
		}
	})
}

// waitForRequest polls the record until a batch starting with prefix arrived.
func waitForRequest(t *testing.T, s *Server, prefix string) {
	t.Helper()
	ctx := testContext(t)
	for {
		for _, r := range s.Requests() {
			if strings.HasPrefix(r.SQL, prefix) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no request starting with %q arrived", prefix)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func assertAttentionAfter(t *testing.T, s *Server, prefix string) {
	t.Helper()
	reqs := s.Requests()
	for i, r := range reqs {
		if strings.HasPrefix(r.SQL, prefix) {
			for _, later := range reqs[i+1:] {
				if later.Conn == r.Conn {
					if later.Kind != KindAttention {
						t.Errorf("after %s came %s, want an attention", r.Describe(), later.Describe())
					}
					return
				}
			}
		}
	}
	t.Errorf("no attention recorded after %q", prefix)
}

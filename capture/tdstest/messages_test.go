package tdstest

import (
	"database/sql"
	"strconv"
	"strings"
	"testing"

	"github.com/golang-sql/sqlexp"
	mssql "github.com/microsoft/go-mssqldb"
)

// TestNoPlanForRPCUnderShowplan: by default the server answers an
// sp_executesql RPC under SHOWPLAN_XML as SQL Server does, with no plan and
// without asking the handler.
func TestNoPlanForRPCUnderShowplan(t *testing.T) {
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
		t.Errorf("handler asked for %s", r.Describe())
		return nil
	}})
	ctx := testContext(t)
	conn := pinnedConn(t, openDB(t, s, disableEncrypt))
	if _, err := conn.ExecContext(ctx, "SET SHOWPLAN_XML ON"); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, "SELECT Id FROM dbo.Queue WHERE Status = @p1", 0)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	if rows.Next() || len(cols) != 0 {
		t.Errorf("columns %q and a row from a reply without a result set", cols)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if err := conn.PingContext(ctx); err != nil {
		t.Fatalf("connection unusable after the no-plan reply: %v", err)
	}
}

func TestRowCountsAndReturnStatus(t *testing.T) {
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
		switch {
		case r.Kind == KindBatch:
			return NewResponse().RowCount(CmdUpdate, 3).RowCount(CmdDelete, 2)
		case r.Proc == "dbo.Enqueue":
			return NewResponse().RowCount(CmdInsert, 1).ReturnStatus(-6)
		}
		return nil
	}})
	ctx := testContext(t)
	db := openDB(t, s, disableEncrypt)
	res, err := db.ExecContext(ctx, "UPDATE dbo.Queue SET Status = 1; DELETE FROM dbo.Queue WHERE Status = 2")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 5 {
		t.Errorf("RowsAffected = %d, want 5", n)
	}
	var status mssql.ReturnStatus
	if _, err := db.ExecContext(ctx, "dbo.Enqueue", sql.Named("payload", "x"), &status); err != nil {
		t.Fatal(err)
	}
	if status != -6 {
		t.Errorf("return status = %d, want -6", status)
	}
}

// TestMessageQueueWalk reads a STATISTICS XML reply the way the driver's
// message-queue mode reports it: every INFO, row count and result set in
// order. It relies on the DONE bits and CurCmd values the server sends.
func TestMessageQueueWalk(t *testing.T) {
	plan := syntheticPlan(1_000)
	info := Message{Number: 50001, State: 1, Class: 0, Text: "queue is warm"}
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
		return NewResponse().Info(info).RowCount(CmdUpdate, 4).Result(ShowplanResultSet(plan))
	}})
	ctx := testContext(t)
	db := openDB(t, s, disableEncrypt)
	msgs := &sqlexp.ReturnMessage{}
	rows, err := db.QueryContext(ctx, "UPDATE dbo.Queue SET Status = 1", msgs)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var events []string
	var gotPlan string
	for active := true; active; {
		switch m := msgs.Message(ctx).(type) {
		case sqlexp.MsgNotice:
			events = append(events, "notice:"+m.Message.String())
		case sqlexp.MsgRowsAffected:
			events = append(events, "rows:"+strconv.FormatInt(m.Count, 10))
		case sqlexp.MsgNext:
			events = append(events, "resultset")
			for rows.Next() {
				if err := rows.Scan(&gotPlan); err != nil {
					t.Fatal(err)
				}
			}
		case sqlexp.MsgNextResultSet:
			active = rows.NextResultSet()
		case sqlexp.MsgError:
			t.Fatalf("error message: %v", m.Error)
		}
	}
	got := strings.Join(events, ",")
	// The plan result set's own DONE counts its one row.
	if got != "notice:queue is warm,rows:4,resultset,rows:1" {
		t.Errorf("events = %s", got)
	}
	if gotPlan != plan {
		t.Error("plan differs")
	}
}

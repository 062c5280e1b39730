package capture

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
)

// assertRolledBack checks that the statement ran inside the transaction
// and that the transaction was rolled back afterwards on the same
// connection.
func assertRolledBack(t *testing.T, srv *tdstest.Server) {
	t.Helper()
	reqs := capturetest.Requests(srv, 0)
	var stmt, rollback *tdstest.Request
	for i := range reqs {
		switch capturetest.Classify(reqs[i]) {
		case capturetest.KindStatement:
			stmt = &reqs[i]
		case capturetest.KindRollback:
			rollback = &reqs[i]
		}
	}
	if stmt == nil || rollback == nil {
		t.Fatalf("statement %v, rollback %v: both must be recorded (%q)", stmt != nil, rollback != nil, kinds(srv))
	}
	if stmt.Session.TranCount != 1 || !stmt.Session.StatisticsXML {
		t.Errorf("statement ran with @@TRANCOUNT %d, STATISTICS XML %v; want 1 and on", stmt.Session.TranCount, stmt.Session.StatisticsXML)
	}
	if rollback.Seq < stmt.Seq || rollback.Conn != stmt.Conn {
		t.Errorf("rollback (request %d, conn %d) must follow the statement (request %d, conn %d)", rollback.Seq, rollback.Conn, stmt.Seq, stmt.Conn)
	}
	if rollback.After.TranCount != 0 || rollback.After.StatisticsXML {
		t.Errorf("after the rollback batch: @@TRANCOUNT %d, STATISTICS XML %v", rollback.After.TranCount, rollback.After.StatisticsXML)
	}
}

func paramActualRows() *tdstest.ResultSet {
	return tdstest.NewResultSet(tdstest.BigInt("WorkId"), tdstest.DateTime2("CreatedAt", 0), tdstest.Int("CustomerId")).
		Row(int64(1), time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), 42)
}

// TestActual: the statement runs under STATISTICS XML inside a transaction
// that is rolled back, in five round trips, and the rows are discarded.
func TestActual(t *testing.T) {
	actual := capturetest.Fixture(t, "queue/param-actual.sqlplan")
	srv := queueServer(t, capturetest.Config{Statement: capturetest.Answer{Actual: actual, Rows: paramActualRows()}.Handler()})
	s := openSession(t, srv, SessionOptions{})
	res, err := s.Explain(testContext(t), fixtureRequest(t, "param-actual"), CaptureOptions{Mode: Actual})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{capturetest.KindSetup, capturetest.KindBegin, capturetest.KindStatement, capturetest.KindRollback, capturetest.KindCatalog}
	if got := kinds(srv); !sameStrings(got, want) {
		t.Fatalf("round trips = %q, want %q", got, want)
	}
	assertRolledBack(t, srv)
	if res.Method != MethodStatisticsRPC || len(res.Plans) != 1 || !res.Plans[0].Doc.IsActual() {
		t.Errorf("method %q, %d plans", res.Method, len(res.Plans))
	}
	if !strings.Contains(res.Note(), "rolled back") {
		t.Errorf("note = %q", res.Note())
	}
}

// TestActualDMLPlanFirst: a DML statement's plan is the first result set.
func TestActualDMLPlanFirst(t *testing.T) {
	actual := capturetest.Fixture(t, "queue/claim-atomic.sqlplan")
	srv := queueServer(t, capturetest.Config{Statement: capturetest.Answer{Actual: actual}.Handler()})
	s := openSession(t, srv, SessionOptions{})
	res, err := s.Explain(testContext(t), fixtureRequest(t, "claim-atomic"), CaptureOptions{Mode: Actual})
	if err != nil {
		t.Fatal(err)
	}
	if res.Method != MethodStatisticsBatch || len(res.Plans) != 1 {
		t.Errorf("method %q, %d plans", res.Method, len(res.Plans))
	}
	assertRolledBack(t, srv)
}

// TestActualRollsBack: the transaction is rolled back when the statement
// fails, times out or is cancelled, and the error says what happened.
func TestActualRollsBack(t *testing.T) {
	hints := tdstest.ErrNoPlanHints()
	tests := []struct {
		name    string
		answer  capturetest.Answer
		timeout time.Duration
		cancel  bool
		kind    ErrorKind
		number  int32
	}{
		{"error 8622", capturetest.Answer{Fail: &hints}, 0, false, ErrServer, 8622},
		{"query timeout", capturetest.Answer{Delay: time.Hour}, 150 * time.Millisecond, false, ErrTimeout, 0},
		{"cancel", capturetest.Answer{Delay: time.Hour}, 0, true, ErrCanceled, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := queueServer(t, capturetest.Config{Statement: tt.answer.Handler()})
			s := openSession(t, srv, SessionOptions{QueryTimeout: tt.timeout})
			ctx, cancel := context.WithCancel(testContext(t))
			defer cancel()
			if tt.cancel {
				go func() {
					waitFor(t, srv, capturetest.KindStatement)
					cancel()
				}()
			}
			_, err := s.Explain(ctx, fixtureRequest(t, "param-actual"), CaptureOptions{Mode: Actual})
			var e *Error
			if !errors.As(err, &e) || e.Kind != tt.kind || e.Number != tt.number {
				t.Fatalf("err = %v (%T), want kind %v number %d", err, err, tt.kind, tt.number)
			}
			if !strings.Contains(e.Error(), "the transaction was rolled back") {
				t.Errorf("error does not say the transaction was rolled back: %v", e)
			}
			assertRolledBack(t, srv)
			if tt.timeout > 0 || tt.cancel {
				var attention bool
				for _, r := range srv.Requests() {
					attention = attention || r.Kind == tdstest.KindAttention
				}
				if !attention {
					t.Error("the pending statement was not cancelled with an attention")
				}
			}
		})
	}
}

// TestTimeoutKeepsConnection: after an estimated capture times out,
// SHOWPLAN_XML is switched off on the same connection and the session
// captures the next statement normally.
func TestTimeoutKeepsConnection(t *testing.T) {
	plan := capturetest.Fixture(t, "queue/literal.sqlplan")
	var slow atomic.Bool
	slow.Store(true)
	srv := queueServer(t, capturetest.Config{Statement: func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
		a := capturetest.Answer{Estimated: plan}
		if slow.Load() {
			a.Delay = time.Hour
		}
		return a.Handler()(s, r)
	}})
	s := openSession(t, srv, SessionOptions{QueryTimeout: 150 * time.Millisecond})
	_, err := s.Explain(testContext(t), fixtureRequest(t, "literal"), CaptureOptions{})
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrTimeout || !strings.Contains(e.Error(), "--query-timeout") {
		t.Fatalf("err = %v", err)
	}
	offs := requestsOf(srv, capturetest.KindShowplan)
	if len(offs) != 2 || offs[1].After.ShowplanXML {
		t.Fatalf("SHOWPLAN_XML not switched off after the timeout: %q", kinds(srv))
	}
	slow.Store(false)
	if _, err := s.Explain(testContext(t), fixtureRequest(t, "literal"), CaptureOptions{}); err != nil {
		t.Fatalf("capture after a timeout: %v", err)
	}
	conns := map[int]bool{}
	for _, r := range capturetest.Requests(srv, 0) {
		conns[r.Conn] = true
	}
	if len(conns) != 1 {
		t.Errorf("requests used %d connections, want 1", len(conns))
	}
}

// TestActualConnectionLost: when the server drops the connection during
// the statement, the ROLLBACK cannot be sent; the error says so and that
// closing the session makes the server roll back, and the session refuses
// further captures.
func TestActualConnectionLost(t *testing.T) {
	actual := capturetest.Fixture(t, "queue/param-actual.sqlplan")
	srv := queueServer(t, capturetest.Config{Statement: capturetest.Answer{Actual: actual, Rows: paramActualRows(), CloseAfterMetadata: true}.Handler()})
	s := openSession(t, srv, SessionOptions{})
	_, err := s.Explain(testContext(t), fixtureRequest(t, "param-actual"), CaptureOptions{Mode: Actual})
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrConnectionLost || !strings.Contains(e.Error(), "the ROLLBACK failed") ||
		!strings.Contains(e.Error(), "makes SQL Server roll the transaction back") {
		t.Fatalf("err = %v", err)
	}
	_, err = s.Explain(testContext(t), fixtureRequest(t, "param-actual"), CaptureOptions{Mode: Actual})
	if !errors.As(err, &e) || !strings.Contains(e.Error(), "closed after a failed rollback") {
		t.Errorf("second capture: err = %v", err)
	}
}

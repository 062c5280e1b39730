//go:build unix

package cli

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
)

// TestExplainInterruptRollsBack sends the process a real SIGINT while
// --actual waits for the statement: planlint cancels the statement with an
// attention (not a deadline, so the connection stays usable), rolls the
// transaction back on the same connection and exits 2.
func TestExplainInterruptRollsBack(t *testing.T) {
	inRoot(t)
	srv := capturetest.Start(t, capturetest.Config{Catalog: capturetest.QueueCatalog(t),
		Statement: capturetest.Answer{Delay: time.Hour}.Handler()})
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := runWith(t, dsnVars(srv), "", "explain", "--actual", "fixtures/queue/param-actual.sql")
		done <- result{out, errOut, code}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for len(requestsOfKind(srv, capturetest.KindStatement)) == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the statement never reached the server")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("explain did not stop after SIGINT")
	}
	if r.code != ExitError || !strings.Contains(r.errOut, "running the statement: interrupted; the request was cancelled; the transaction was rolled back") {
		t.Errorf("exit %d, stderr %q", r.code, r.errOut)
	}

	reqs := capturetest.Requests(srv, 0)
	var stmt, attention, rollback int
	for _, q := range srv.Requests() {
		switch {
		case capturetest.Classify(q) == capturetest.KindStatement:
			stmt = q.Seq
			if q.Session.TranCount != 1 || !q.Session.StatisticsXML {
				t.Errorf("statement ran outside the transaction: %+v", q.Session)
			}
		case q.Kind == tdstest.KindAttention:
			attention = q.Seq
		case capturetest.Classify(q) == capturetest.KindRollback:
			rollback = q.Seq
			if q.After.TranCount != 0 || q.Conn != reqs[0].Conn {
				t.Errorf("rollback left @@TRANCOUNT %d on connection %d", q.After.TranCount, q.Conn)
			}
		}
	}
	if !(stmt > 0 && attention > stmt && rollback > attention) {
		t.Errorf("want statement, attention, rollback in that order; got requests %d, %d, %d (%q)", stmt, attention, rollback, kindsOf(reqs))
	}
}

func kindsOf(reqs []tdstest.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, capturetest.Classify(r))
	}
	return out
}

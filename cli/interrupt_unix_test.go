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

// interruptBound is a hang guard, not a performance figure: Ctrl-C must end
// a run within about a second (capture.CancelGrace) whatever the server
// does; a run that waits for the query timeout (a minute here) fails.
const interruptBound = 5 * time.Second

// TestInterruptEndsEveryPhase sends the process a real SIGINT or SIGTERM
// while the server ignores the cancel (streaming rows forever or answering
// nothing) in each phase of explain, cache and querystore: the run ends
// within interruptBound, says that planlint closed the connection (and,
// for --actual, that SQL Server rolls the transaction back), sends no
// further request, and the connection is closed. With second set, a second
// signal once the cleanup has reached the server ends the wait at once.
func TestInterruptEndsEveryPhase(t *testing.T) {
	inRoot(t)
	endless := func(tdstest.Session, *tdstest.Request) *tdstest.Response {
		return tdstest.NewResponse().Misbehave(tdstest.Endless(tdstest.NewResultSet(tdstest.Int("n")).Row(1)))
	}
	hang := func(tdstest.Session, *tdstest.Request) *tdstest.Response {
		return tdstest.NewResponse().Misbehave(tdstest.Hang())
	}
	acked := func(tdstest.Session, *tdstest.Request) *tdstest.Response {
		return tdstest.NewResponse().Delay(time.Hour) // an attention ends it
	}
	// on answers requests of one kind with h, the rest as the queue
	// fixtures' server does.
	on := func(kind string, h tdstest.Handler, rest tdstest.Handler) tdstest.Handler {
		return func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
			if capturetest.Classify(*r) == kind {
				return h(s, r)
			}
			return rest(s, r)
		}
	}
	// marked answers requests containing mark with h, the rest as ft does.
	marked := func(mark string, h tdstest.Handler) tdstest.Handler {
		ft := &fakeTriage{plans: triagePlans(t), storeState: "READ_WRITE"}
		return func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
			if strings.Contains(r.SQL, mark) {
				return h(s, r)
			}
			return ft.handler(s, r)
		}
	}
	hangOn := func(match func(tdstest.Request) bool) func(tdstest.Request) *tdstest.Misbehaviour {
		return func(r tdstest.Request) *tdstest.Misbehaviour {
			if match(r) {
				m := tdstest.Hang()
				return &m
			}
			return nil
		}
	}
	param := capturetest.Fixture(t, "queue/param.sqlplan")
	endlessPlans := func(tdstest.Session, *tdstest.Request) *tdstest.Response {
		rs := tdstest.NewResultSet(tdstest.NVarCharMax("query_plan"), tdstest.BigInt("plan_chars")).Row(param, int64(len([]rune(param))))
		return tdstest.NewResponse().Misbehave(tdstest.Endless(rs))
	}
	statement := func(r tdstest.Request) bool { return capturetest.Classify(r) == capturetest.KindStatement }
	rollback := func(r tdstest.Request) bool { return capturetest.Classify(r) == capturetest.KindRollback }
	showplanOff := func(r tdstest.Request) bool { return strings.HasPrefix(r.SQL, "SET SHOWPLAN_XML OFF") }
	sqlHas := func(mark string) func(tdstest.Request) bool {
		return func(r tdstest.Request) bool { return strings.Contains(r.SQL, mark) }
	}
	answer := capturetest.Answer{}.Handler()
	for _, c := range []struct {
		name      string
		args      []string
		handler   tdstest.Handler
		misbehave func(tdstest.Request) *tdstest.Misbehaviour
		signal    syscall.Signal
		at        func(tdstest.Request) bool // signal once this request arrived
		second    func(tdstest.Request) bool // and again once this one arrived
		last      func(tdstest.Request) bool // the last request the connection carried
		want      []string
	}{
		{
			name: "actual: statement streams on", args: []string{"explain", "--actual", "fixtures/queue/param-actual.sql"},
			handler: on(capturetest.KindStatement, endless, answer), signal: syscall.SIGINT, at: statement, last: statement,
			want: []string{"running the statement: interrupted", "planlint closed the connection because the server did not acknowledge the cancel within 1s",
				"SQL Server rolls back the transaction when the connection closes"},
		},
		{
			name: "actual: rollback hangs", args: []string{"explain", "--actual", "fixtures/queue/param-actual.sql"},
			handler: on(capturetest.KindStatement, acked, answer), misbehave: hangOn(rollback), signal: syscall.SIGINT,
			at: statement, last: rollback,
			want: []string{"running the statement: interrupted; the request was cancelled; planlint closed the connection during the ROLLBACK because the cleanup after the interrupt did not finish within 1s; SQL Server rolls back the transaction when the connection closes"},
		},
		{
			name: "actual: rollback hangs, second signal", args: []string{"explain", "--actual", "fixtures/queue/param-actual.sql"},
			handler: on(capturetest.KindStatement, acked, answer), misbehave: hangOn(rollback), signal: syscall.SIGINT,
			at: statement, second: rollback, last: rollback,
			want: []string{"running the statement: interrupted; the request was cancelled; planlint closed the connection during the ROLLBACK because of a second interrupt; SQL Server rolls back the transaction when the connection closes"},
		},
		{
			name: "estimated: SHOWPLAN_XML OFF hangs", args: []string{"explain", "fixtures/queue/literal.sql"},
			handler: on(capturetest.KindStatement, acked, answer), misbehave: hangOn(showplanOff), signal: syscall.SIGTERM,
			at: statement, last: showplanOff,
			want: []string{"compiling the statement: interrupted; the request was cancelled; planlint closed the connection during SET SHOWPLAN_XML OFF because the cleanup after the interrupt did not finish within 1s"},
		},
		{
			name: "cache: rows stream on", args: []string{"cache"},
			handler: marked(cachePlanMark, endlessPlans), signal: syscall.SIGTERM, at: sqlHas(cachePlanMark), last: sqlHas(cachePlanMark),
			want: []string{"interrupted", "planlint closed the connection because the server did not acknowledge the cancel within 1s"},
		},
		{
			name: "querystore: no answer", args: []string{"querystore"},
			handler: marked(storeListMark, hang), signal: syscall.SIGINT, at: sqlHas(storeListMark), last: sqlHas(storeListMark),
			want: []string{"interrupted", "planlint closed the connection because the server did not acknowledge the cancel within 1s"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := capturetest.Start(t, capturetest.Config{Catalog: capturetest.QueueCatalog(t), Statement: c.handler, Misbehave: c.misbehave})
			type result struct {
				errOut string
				code   int
			}
			done := make(chan result, 1)
			go func() {
				_, errOut, code := runWith(t, dsnVars(srv), "", append(c.args, "--query-timeout", "1m")...)
				done <- result{errOut, code}
			}()
			guard, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			arrived := func(match func(tdstest.Request) bool) tdstest.Request {
				for {
					for _, r := range srv.Requests() {
						if match(r) {
							return r
						}
					}
					select {
					case r := <-done:
						t.Fatalf("planlint ended before the request arrived: exit %d, %s", r.code, r.errOut)
					case <-guard.Done():
						t.Fatal("the request never reached the server")
					case <-time.After(5 * time.Millisecond):
					}
				}
			}
			first := arrived(c.at)
			start := time.Now()
			if err := syscall.Kill(syscall.Getpid(), c.signal); err != nil {
				t.Fatal(err)
			}
			if c.second != nil {
				arrived(c.second)
				if err := syscall.Kill(syscall.Getpid(), c.signal); err != nil {
					t.Fatal(err)
				}
			}
			var r result
			select {
			case r = <-done:
			case <-guard.Done():
				t.Fatalf("planlint did not end within %s of the signal", 30*time.Second)
			}
			took := time.Since(start)
			t.Logf("signal to exit: %s", took.Round(time.Millisecond))
			if took > interruptBound {
				t.Errorf("signal to exit took %s, want at most %s", took.Round(time.Millisecond), interruptBound)
			}
			if r.code != ExitError {
				t.Errorf("exit %d, want %d", r.code, ExitError)
			}
			for _, w := range c.want {
				if !strings.Contains(r.errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.errOut)
				}
			}
			var last tdstest.Request
			for _, q := range srv.Requests() {
				if q.Conn == first.Conn && q.Kind != tdstest.KindAttention {
					last = q
				}
			}
			if !c.last(last) {
				t.Errorf("the last request on the connection was %s", last.Describe())
			}
			for _, q := range srv.Requests() {
				if q.Conn != first.Conn && q.Kind != tdstest.KindPrelogin && q.Kind != tdstest.KindLogin && q.Seq > first.Seq {
					t.Errorf("request on another connection after the signal: %s", q.Describe())
				}
			}
			for {
				if _, open := srv.Session(first.Conn); !open {
					break
				}
				select {
				case <-guard.Done():
					t.Fatal("the connection is still open")
				case <-time.After(5 * time.Millisecond):
				}
			}
		})
	}
}

package capture

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
)

// silentServer accepts TCP connections and never answers.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	return host + "," + port
}

// within fails the test when fn takes longer than d.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	start := time.Now()
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(d + 20*time.Second):
		t.Fatalf("%s: still waiting after %s", what, d+20*time.Second)
	}
	// What this guards against is a wait without end; a loaded machine
	// (the race detector, packages tested in parallel) stretches the
	// expected time, so only a wait well beyond it fails.
	took := time.Since(start)
	if limit := 2*d + 2*time.Second; took > limit {
		t.Errorf("%s took %s, want about %s (at most %s)", what, took.Round(time.Millisecond), d, limit)
	} else if took > d {
		t.Logf("%s took %s, expected about %s (a loaded machine)", what, took.Round(time.Millisecond), d)
	}
}

// TestSilentServerLogin: a server that accepts TCP and never answers the
// PRELOGIN fails the login at --connect-timeout, and an interrupt ends the
// wait within a second.
func TestSilentServerLogin(t *testing.T) {
	server := silentServer(t)
	var err error
	within(t, 3*time.Second, "connect timeout 1s", func() {
		_, err = Open(context.Background(), Options{Server: server, ConnectTimeout: time.Second}, SessionOptions{})
	})
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != ErrTimeout {
		t.Errorf("timeout: got %v, want an ErrTimeout", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	within(t, 1200*time.Millisecond, "interrupted login", func() {
		_, err = Open(ctx, Options{Server: server, ConnectTimeout: time.Minute}, SessionOptions{})
	})
	if !errors.As(err, &ce) || ce.Kind != ErrCanceled {
		t.Errorf("interrupt: got %v, want an ErrCanceled", err)
	}
}

// endlessServer answers the captured statement with a reply that never
// ends and ignores the cancel.
func endlessServer(t *testing.T, m tdstest.Misbehaviour) *tdstest.Server {
	return queueServer(t, capturetest.Config{Statement: func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
		return tdstest.NewResponse().Misbehave(m)
	}})
}

// TestEndlessReplyActual: with --actual, a server that streams rows
// forever and ignores the cancel makes planlint close the connection a
// grace period after the query timeout (so SQL Server rolls the
// transaction back) and say so, instead of spinning in the cleanup.
func TestEndlessReplyActual(t *testing.T) {
	rows := tdstest.NewResultSet(tdstest.Int("n")).Row(1).Row(2)
	srv := endlessServer(t, tdstest.Endless(rows))
	s := openSession(t, srv, SessionOptions{QueryTimeout: time.Second})
	var err error
	within(t, time.Second+CancelGrace+2*time.Second, "endless rows under --actual", func() {
		_, err = s.Explain(context.Background(), fixtureRequest(t, "param-actual"), CaptureOptions{Mode: Actual})
	})
	if err == nil || !strings.Contains(err.Error(), "planlint closed the connection because the server did not acknowledge the cancel") ||
		!strings.Contains(err.Error(), "roll") {
		t.Errorf("error %v", err)
	}
	if !s.broken {
		t.Error("session not marked broken")
	}
}

// TestEndlessReplyInterrupted: an interrupt during a reply that never ends
// returns within a second and a half, whatever the query timeout.
func TestEndlessReplyInterrupted(t *testing.T) {
	rows := tdstest.NewResultSet(tdstest.Int("n")).Row(1)
	srv := endlessServer(t, tdstest.Endless(rows))
	s := openSession(t, srv, SessionOptions{QueryTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	var err error
	within(t, 300*time.Millisecond+CancelGrace+500*time.Millisecond, "interrupted endless reply", func() {
		_, err = s.Explain(ctx, fixtureRequest(t, "param-actual"), CaptureOptions{Mode: Actual})
	})
	if err == nil || !strings.Contains(err.Error(), "closed the connection") {
		t.Errorf("error %v", err)
	}
}

// TestEndlessPlanCapped: a plan value that never ends is cut at the
// session's reply limit, long before the query timeout and without
// buffering it.
func TestEndlessPlanCapped(t *testing.T) {
	srv := endlessServer(t, tdstest.EndlessPlan())
	s := openSession(t, srv, SessionOptions{QueryTimeout: time.Minute, MaxReplyBytes: 4 << 20})
	var err error
	within(t, 5*time.Second, "endless plan", func() {
		_, err = s.Explain(context.Background(), fixtureRequest(t, "literal"), CaptureOptions{})
	})
	if err == nil || !strings.Contains(err.Error(), "the reply grew past 4194304 bytes") {
		t.Errorf("error %v", err)
	}
}

// TestInterruptBoundsCleanup: after an interrupt whose cancel the server
// acknowledged, the cleanup (the ROLLBACK of --actual, SET SHOWPLAN_XML OFF)
// gets CancelGrace from the interrupt, not the query timeout: a server that
// never answers it has the connection closed, so that SQL Server rolls the
// transaction back, and the error says so. A second interrupt (WithAbort)
// closes it at once; nothing is sent after the hung request.
func TestInterruptBoundsCleanup(t *testing.T) {
	for _, c := range []struct {
		name  string
		mode  Mode
		fix   string
		hung  func(tdstest.Request) bool
		abort bool
		want  string
	}{
		{"rollback", Actual, "param-actual", isKind(capturetest.KindRollback), false,
			"running the statement: interrupted; the request was cancelled; planlint closed the connection during the ROLLBACK because the cleanup after the interrupt did not finish within 1s; SQL Server rolls back the transaction when the connection closes"},
		{"rollback, second interrupt", Actual, "param-actual", isKind(capturetest.KindRollback), true,
			"planlint closed the connection during the ROLLBACK because of a second interrupt; SQL Server rolls back the transaction when the connection closes"},
		{"showplan off", Estimated, "literal", func(r tdstest.Request) bool { return strings.HasPrefix(r.SQL, "SET SHOWPLAN_XML OFF") }, false,
			"compiling the statement: interrupted; the request was cancelled; planlint closed the connection during SET SHOWPLAN_XML OFF because the cleanup after the interrupt did not finish within 1s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := queueServer(t, capturetest.Config{
				Statement: func(tdstest.Session, *tdstest.Request) *tdstest.Response {
					return tdstest.NewResponse().Delay(time.Hour) // the attention ends it
				},
				Misbehave: func(r tdstest.Request) *tdstest.Misbehaviour {
					if c.hung(r) {
						m := tdstest.Hang()
						return &m
					}
					return nil
				}})
			s := openSession(t, srv, SessionOptions{QueryTimeout: time.Minute})
			run, interrupt := context.WithCancel(context.Background())
			abort, second := context.WithCancel(context.Background())
			defer second()
			stop := make(chan struct{})
			t.Cleanup(func() { close(stop) })
			arrived := func(match func(tdstest.Request) bool) bool {
				for !hasRequest(srv, match) {
					select {
					case <-stop:
						return false
					case <-time.After(5 * time.Millisecond):
					}
				}
				return true
			}
			go func() {
				if !arrived(isKind(capturetest.KindStatement)) {
					return
				}
				interrupt()
				if c.abort && arrived(c.hung) {
					second()
				}
			}()
			var err error
			within(t, CancelGrace+2*time.Second, c.name, func() {
				_, err = s.Explain(WithAbort(run, abort), fixtureRequest(t, c.fix), CaptureOptions{Mode: c.mode})
			})
			var e *Error
			if !errors.As(err, &e) || e.Kind != ErrCanceled || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want an ErrCanceled with %q", err, c.want)
			}
			if !s.broken {
				t.Error("session not marked broken")
			}
			reqs := srv.Requests()
			for i, r := range reqs {
				if c.hung(r) {
					for _, later := range reqs[i+1:] {
						if later.Conn == r.Conn && later.Kind != tdstest.KindAttention {
							t.Errorf("sent after the hung request: %s", later.Describe())
						}
					}
				}
			}
		})
	}
}

func isKind(kind string) func(tdstest.Request) bool {
	return func(r tdstest.Request) bool { return capturetest.Classify(r) == kind }
}

func hasRequest(srv *tdstest.Server, match func(tdstest.Request) bool) bool {
	for _, r := range srv.Requests() {
		if match(r) {
			return true
		}
	}
	return false
}

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
	if took := time.Since(start); took > d {
		t.Errorf("%s took %s, want at most %s", what, took.Round(time.Millisecond), d)
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

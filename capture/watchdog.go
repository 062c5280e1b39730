package capture

import (
	"context"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// CancelGrace is how long a cancelled request (query timeout, Ctrl-C) may
// wait for the server to acknowledge the cancel before planlint closes the
// connection. A server that streams on regardless would otherwise hold the
// run, and an open --actual transaction, forever; SQL Server rolls back the
// transaction of a connection that closes.
const CancelGrace = time.Second

// watchedDialer dials the session's TCP connection and keeps it, so the
// session can close the socket under the driver, which does not watch its
// context while it reads PRELOGIN or waits for a cancel acknowledgement.
type watchedDialer struct {
	d    net.Dialer
	mu   sync.Mutex
	conn *watchedConn
}

func (w *watchedDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := w.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	wc := &watchedConn{Conn: c}
	w.mu.Lock()
	w.conn = wc
	w.mu.Unlock()
	return wc, nil
}

func (w *watchedDialer) current() *watchedConn {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.conn
}

// cut closes the connection, recording why.
func (w *watchedDialer) cut(why string) {
	if c := w.current(); c != nil {
		c.cut(why)
	}
}

// watchedConn counts the bytes of each reply, so that a reply past the
// session's limit (a plan that never ends) is cut off rather than buffered.
type watchedConn struct {
	net.Conn
	read   atomic.Int64
	limit  atomic.Int64 // 0: none
	once   sync.Once
	reason atomic.Pointer[string]
	// byInterrupt: the run's interrupt, not the query timeout or a
	// reply limit, made planlint close the connection.
	byInterrupt atomic.Bool
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if lim := c.limit.Load(); lim > 0 && c.read.Add(int64(n)) > lim {
		c.cut(fmt.Sprintf("the reply grew past %d bytes", lim))
		return n, errReplyTooLarge
	}
	return n, err
}

// startReply resets the byte count for the next request's reply.
func (c *watchedConn) startReply(limit int64) {
	c.read.Store(0)
	c.limit.Store(limit)
}

func (c *watchedConn) cut(why string) { c.cutFor(why, false) }

// cutFor closes the connection, recording why and whether an interrupt of
// the run (not the query timeout or a reply limit) is the reason.
func (c *watchedConn) cutFor(why string, interrupt bool) {
	c.once.Do(func() {
		c.reason.Store(&why)
		c.byInterrupt.Store(interrupt)
		c.Conn.Close()
	})
}

// cutByInterrupt reports whether planlint closed the connection because
// the run was interrupted.
func (c *watchedConn) cutByInterrupt() bool { return c != nil && c.byInterrupt.Load() }

// cutReason says why planlint closed the connection, or "".
func (c *watchedConn) cutReason() string {
	if c == nil {
		return ""
	}
	if r := c.reason.Load(); r != nil {
		return *r
	}
	return ""
}

var errReplyTooLarge = fmt.Errorf("reply too large")

// guard arms the watchdog of one request on ctx, whose cancellation (the
// query timeout or an interrupt) makes the driver send a cancel:
// when the server has not acknowledged it CancelGrace later, the
// connection is closed. parent is the context the request was sent
// under: its cancellation is an interrupt of the run, which bounds the
// cleanup requests that follow (sent under cleanupContext, which no
// interrupt cancels) to CancelGrace after it; a second interrupt
// (WithAbort) closes the connection at once. stop disarms it.
func (s *Session) guard(ctx, parent context.Context) (stop func()) {
	conn := s.dialer.current()
	if conn == nil {
		return func() {}
	}
	conn.startReply(s.maxReply)
	var mu sync.Mutex
	var timers []*time.Timer
	stopped := false
	after := func(d time.Duration, why string, interrupt func() bool) {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			timers = append(timers, time.AfterFunc(max(d, 0), func() { conn.cutFor(why, interrupt()) }))
		}
	}
	yes := func() bool { return true }
	stops := []func() bool{context.AfterFunc(ctx, func() {
		after(CancelGrace, fmt.Sprintf("the server did not acknowledge the cancel within %s", CancelGrace),
			func() bool { return parent.Err() != nil })
	})}
	if run, ok := parent.Value(runKey{}).(context.Context); ok {
		stops = append(stops, context.AfterFunc(run, func() {
			after(time.Until(s.interrupted().Add(CancelGrace)),
				fmt.Sprintf("the cleanup after the interrupt did not finish within %s", CancelGrace), yes)
		}))
	} else {
		stops = append(stops, context.AfterFunc(parent, func() { s.interruptAt.Store(time.Now().UnixNano()) }))
	}
	if abort, ok := parent.Value(abortKey{}).(context.Context); ok {
		stops = append(stops, context.AfterFunc(abort, func() { after(0, "of a second interrupt", yes) }))
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
		mu.Lock()
		stopped = true
		for _, t := range timers {
			t.Stop()
		}
		mu.Unlock()
		conn.startReply(0)
	}
}

// interrupted returns when a request was last seen interrupted, noting now
// if none was (the interrupt came between requests).
func (s *Session) interrupted() time.Time {
	now := time.Now().UnixNano()
	s.interruptAt.CompareAndSwap(0, now)
	return time.Unix(0, s.interruptAt.Load())
}

type (
	runKey   struct{}
	abortKey struct{}
)

// cleanupContext is for requests that must be sent even after the capture
// was interrupted: SHOWPLAN_XML OFF, ROLLBACK, DROP PROCEDURE. No interrupt
// cancels it, but one ends the cleanup CancelGrace after it (the guard
// closes the connection then, so that SQL Server rolls back).
func cleanupContext(ctx context.Context) context.Context {
	if _, ok := ctx.Value(runKey{}).(context.Context); ok {
		return ctx
	}
	return context.WithValue(context.WithoutCancel(ctx), runKey{}, ctx)
}

// WithAbort returns a copy of ctx for a capture run: when abort is done (a
// second Ctrl-C), a request that ctx's cancellation interrupted, or the
// cleanup after it, stops waiting and the connection is closed at once
// rather than CancelGrace after the interrupt.
func WithAbort(ctx, abort context.Context) context.Context {
	return context.WithValue(ctx, abortKey{}, abort)
}

// ReplyLimit is the reply bound for plans of at most maxPlanBytes bytes of
// text, plans of them in one reply: they travel as UTF-16, and the rest
// of a reply (other columns, tokens) gets a MiB of room.
func ReplyLimit(maxPlanBytes int64, plans int) int64 {
	const slack = 1 << 20
	if maxPlanBytes <= 0 || plans <= 0 {
		return 0
	}
	n := int64(plans)
	if maxPlanBytes > (math.MaxInt64-slack)/(2*n) {
		return 0
	}
	return 2*maxPlanBytes*n + slack
}

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

func (c *watchedConn) cut(why string) {
	c.once.Do(func() {
		c.reason.Store(&why)
		c.Conn.Close()
	})
}

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
// connection is closed. stop disarms it.
func (s *Session) guard(ctx context.Context) (stop func()) {
	conn := s.dialer.current()
	if conn == nil {
		return func() {}
	}
	conn.startReply(s.maxReply)
	var mu sync.Mutex
	var grace *time.Timer
	stopped := false
	arm := func() {
		mu.Lock()
		defer mu.Unlock()
		if grace == nil && !stopped {
			grace = time.AfterFunc(CancelGrace, func() {
				conn.cut(fmt.Sprintf("the server did not acknowledge the cancel within %s", CancelGrace))
			})
		}
	}
	stopCtx := context.AfterFunc(ctx, arm)
	return func() {
		stopCtx()
		mu.Lock()
		stopped = true
		if grace != nil {
			grace.Stop()
		}
		mu.Unlock()
		conn.startReply(0)
	}
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

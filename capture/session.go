package capture

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/azuread"

	"github.com/planlint/planlint/capture/trace"
	"github.com/planlint/planlint/catalog"
)

// SessionOptions configure a capture session.
type SessionOptions struct {
	// SetOptions are set explicitly at session start; nil means
	// DriverSetOptions.
	SetOptions SetOptions
	// QueryTimeout bounds each request after login; 0 means
	// DefaultQueryTimeout. It cancels the request explicitly rather than
	// through a context deadline, so the connection stays usable for the
	// cleanup that follows (SHOWPLAN_XML OFF, ROLLBACK).
	QueryTimeout time.Duration
	// MaxReplyBytes bounds the bytes of one reply (a plan arrives as
	// UTF-16, twice its size as text); a longer reply closes the
	// connection. 0 means no bound.
	MaxReplyBytes int64
	// Trace, when set, records every request and the shape of its
	// response (see package trace).
	Trace *trace.Recorder
}

// ServerInfo is what the session learnt about the server and the current
// database at setup.
type ServerInfo struct {
	Database               string
	ProductVersion         string // e.g. "16.0.4215.2"
	MajorVersion           int
	Edition                string
	EngineEdition          int
	CompatibilityLevel     int
	ParameterizationForced bool
	ReadCommittedSnapshot  bool
	SnapshotIsolation      string // ON, OFF, IN_TRANSITION_TO_ON, ...
}

// Session is one pinned connection to the server: every request of a
// capture runs on it, so SET options and SHOWPLAN_XML cannot be lost to a
// pool checkout (which resets the session). A Session is not safe for
// concurrent use.
type Session struct {
	db        *sql.DB
	conn      *sql.Conn
	c         *Connection
	set       SetOptions
	limit     time.Duration
	Info      ServerInfo
	cat       *catalog.Catalog
	known     map[string]bool // lower-case schema.table already read
	rpcNoPlan bool            // an RPC under SHOWPLAN_XML returned no plan
	broken    bool            // closed after a failed rollback
	closed    bool
	dialer    *watchedDialer
	maxReply  int64
	// interruptAt is when a request was last seen interrupted (Unix
	// nanoseconds, 0: never): the cleanup has CancelGrace from then.
	interruptAt atomic.Int64
}

// setupMarker starts the session setup batch so that it is recognisable
// in traces.
const setupMarker = "-- planlint: session setup"

// Open connects, pins one connection and runs the session setup batch:
// the seven SET options and a SELECT of the database and server facts
// (one round trip after login).
func Open(ctx context.Context, o Options, so SessionOptions) (*Session, error) {
	c, err := o.Resolve()
	if err != nil {
		return nil, &Error{Kind: ErrStatement, Step: "connection options", Message: err.Error(), Err: err}
	}
	set := so.SetOptions
	if set == nil {
		set = DriverSetOptions()
	}
	if err := set.Validate(); err != nil {
		return nil, &Error{Kind: ErrStatement, Step: "SET options", Message: err.Error(), Err: err}
	}
	var connector driver.Connector
	switch c.Driver {
	case DriverAzureSQL:
		connector, err = azuread.NewConnector(c.DSN)
	default:
		connector, err = mssql.NewConnector(c.DSN)
	}
	if err != nil {
		return nil, &Error{Kind: ErrStatement, Step: "connection options",
			Message: c.scrub.scrub("connection string " + c.Redacted + ": " + err.Error()), Err: err}
	}
	dialer := &watchedDialer{}
	if mc, ok := connector.(*mssql.Connector); ok {
		mc.Dialer = dialer
	}
	if so.Trace != nil {
		connector = tracingConnector{Connector: connector, rec: so.Trace}
	}
	db := sql.OpenDB(connector)
	timeout := o.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	// The whole login is bounded: the driver's context covers the dial, but
	// not a server that accepts TCP and never answers PRELOGIN, so the
	// socket is closed when the timeout or an interrupt ends the wait.
	cctx, cancel := context.WithTimeout(ctx, timeout)
	stopCut := context.AfterFunc(cctx, func() { dialer.cut("the login did not complete") })
	conn, err := db.Conn(cctx)
	if cut := !stopCut(); cut {
		// The timeout or the interrupt closed the socket: say which.
		if err == nil {
			conn.Close()
		}
		err = context.DeadlineExceeded
		if ctx.Err() != nil {
			err = context.Canceled
		}
	}
	cancel()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() { // the driver's own login deadline
		err = context.DeadlineExceeded
	}
	if err != nil {
		db.Close()
		return nil, classify(err, "connecting with "+c.Redacted, false, timeout, c)
	}
	limit := so.QueryTimeout
	if limit <= 0 {
		limit = DefaultQueryTimeout
	}
	s := &Session{db: db, conn: conn, c: c, set: set.Clone(), limit: limit, known: map[string]bool{},
		dialer: dialer, maxReply: so.MaxReplyBytes}
	if err := s.setup(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the connection.
func (s *Session) Close() error {
	if s == nil || s.closed {
		return nil
	}
	s.closed = true
	err := s.conn.Close()
	if e := s.db.Close(); err == nil {
		err = e
	}
	return err
}

// SetOptions returns the options the session set.
func (s *Session) SetOptions() SetOptions { return s.set.Clone() }

// Connection returns the resolved connection (its DSN holds secrets; print
// Redacted).
func (s *Session) Connection() *Connection { return s.c }

func setupSQL(set SetOptions) string {
	return setupMarker + "\n" + set.SQL() + `SELECT DB_NAME() AS database_name,
    CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)) AS product_version,
    CAST(SERVERPROPERTY('Edition') AS nvarchar(128)) AS edition,
    CAST(SERVERPROPERTY('EngineEdition') AS int) AS engine_edition,
    CAST(d.compatibility_level AS int) AS compatibility_level,
    d.is_parameterization_forced,
    d.is_read_committed_snapshot_on,
    d.snapshot_isolation_state_desc
FROM (SELECT DB_ID() AS database_id) AS cur
LEFT JOIN sys.databases AS d ON d.database_id = cur.database_id;`
}

func (s *Session) setup(ctx context.Context) error {
	const step = "session setup"
	qctx, done := s.timed(ctx)
	rows, err := s.conn.QueryContext(qctx, setupSQL(s.set))
	if err != nil {
		return s.fail(err, step, done())
	}
	defer rows.Close()
	var (
		dbName, version, edition, snapshot sql.NullString
		engine, compat                     sql.NullInt64
		forced, rcsi                       sql.NullBool
	)
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return s.fail(err, step, done())
		}
		done()
		return &Error{Kind: ErrServer, Step: step, Message: "the server returned no row for the database and version query"}
	}
	if err := rows.Scan(&dbName, &version, &edition, &engine, &compat, &forced, &rcsi, &snapshot); err != nil {
		done()
		return &Error{Kind: ErrServer, Step: step, Message: "unexpected answer to the database and version query: " + err.Error(), Err: err}
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		return s.fail(err, step, done())
	}
	done()
	s.Info = ServerInfo{
		Database:               dbName.String,
		ProductVersion:         version.String,
		MajorVersion:           majorVersion(version.String),
		Edition:                edition.String,
		EngineEdition:          int(engine.Int64),
		CompatibilityLevel:     int(compat.Int64),
		ParameterizationForced: forced.Bool,
		ReadCommittedSnapshot:  rcsi.Bool,
		SnapshotIsolation:      snapshot.String,
	}
	s.cat = &catalog.Catalog{
		Server: &catalog.Server{ProductVersion: s.Info.ProductVersion, MajorVersion: s.Info.MajorVersion,
			Edition: s.Info.Edition, EngineEdition: s.Info.EngineEdition},
		Databases: []*catalog.Database{{Name: s.Info.Database, CompatibilityLevel: s.Info.CompatibilityLevel,
			ParameterizationForced: s.Info.ParameterizationForced, ReadCommittedSnapshot: s.Info.ReadCommittedSnapshot,
			SnapshotIsolation: s.Info.SnapshotIsolation}},
		Tables: []*catalog.Table{},
		Source: "server",
	}
	return nil
}

func majorVersion(v string) int {
	n, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	return n
}

// timed derives a context that the query timeout cancels explicitly (a
// deadline would make go-mssqldb discard the connection). done stops the
// timer and reports whether it fired.
func (s *Session) timed(parent context.Context) (ctx context.Context, done func() bool) {
	ctx, cancel := context.WithCancel(parent)
	var fired atomic.Bool
	t := time.AfterFunc(s.limit, func() {
		fired.Store(true)
		cancel()
	})
	unguard := s.guard(ctx, parent)
	return ctx, func() bool {
		t.Stop()
		unguard()
		cancel()
		return fired.Load()
	}
}

func (s *Session) fail(err error, step string, timedOut bool) *Error {
	e := classify(err, step, timedOut, s.limit, s.c)
	conn := s.dialer.current()
	if why := conn.cutReason(); why != "" {
		s.broken = true
		switch {
		case conn.cutByInterrupt() && !timedOut:
			e.Kind, e.Message = ErrCanceled, "interrupted"
		case e.Kind == ErrConnectionLost && !strings.Contains(e.Message, why):
			e.Message = "the connection was closed by planlint"
		}
		e.Hint = joinHints(e.Hint, "planlint closed the connection because "+why)
	}
	return e
}

// exec sends a batch that returns no rows, such as SET SHOWPLAN_XML ON.
func (s *Session) exec(ctx context.Context, step, batch string) error {
	qctx, done := s.timed(ctx)
	_, err := s.conn.ExecContext(qctx, batch)
	timedOut := done()
	if err != nil {
		return s.fail(err, step, timedOut)
	}
	return nil
}

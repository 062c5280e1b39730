package capture

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
	"unicode"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/planlint/planlint/capture/trace"
)

// tracingConnector records every request sent through its connections.
// The login is not traced, so no password or connection string is.
type tracingConnector struct {
	driver.Connector
	rec *trace.Recorder
}

func (c tracingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &tracingConn{Conn: conn, rec: c.rec, id: c.rec.NewConn()}, nil
}

type tracingConn struct {
	driver.Conn
	rec *trace.Recorder
	id  int
	// outs are the OUTPUT destinations of the request being prepared: the
	// driver replaces sql.Out's pointer with the value it points to.
	outs map[string]any
}

func (c *tracingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	var st driver.Stmt
	var err error
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = c.Conn.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return &tracingStmt{Stmt: st, conn: c, query: query}, nil
}

func (c *tracingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *tracingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return nil, errors.New("capture: driver connection cannot begin a transaction with options")
}

func (c *tracingConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *tracingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *tracingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *tracingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if out, ok := nv.Value.(sql.Out); ok {
		if c.outs == nil {
			c.outs = map[string]any{}
		}
		c.outs[nv.Name] = out.Dest
	}
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

type tracingStmt struct {
	driver.Stmt
	conn  *tracingConn
	query string
}

// request describes what the statement sends: a batch, or an RPC to a
// procedure (sp_executesql when the text is a statement with arguments).
func (s *tracingStmt) request(args []driver.NamedValue) trace.Request {
	q := trace.Request{Conn: s.conn.id, Kind: "batch", Text: s.query}
	if len(args) == 0 && !looksLikeProc(s.query) {
		return q
	}
	q.Kind, q.Text, q.Proc = "rpc", "", s.query
	if !looksLikeProc(s.query) {
		q.Proc, q.Text = "sp_executesql", s.query
	}
	for _, a := range args {
		p := trace.Param{Name: a.Name, Value: jsonValue(a.Value)}
		if _, ok := a.Value.(sql.Out); ok {
			p.Output, p.Value = true, nil
		}
		if p.Name != "" {
			p.Name = "@" + p.Name
		}
		if strings.EqualFold(q.Proc, "sp_executesql") && (p.Name == "@stmt" || p.Name == "@statement") {
			q.Text, _ = a.Value.(string)
		}
		q.Params = append(q.Params, p)
	}
	return q
}

func (s *tracingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	started := time.Now()
	q := s.request(args)
	q.Exec = true
	ex, ok := s.Stmt.(driver.StmtExecContext)
	if !ok {
		return nil, errors.New("capture: driver statement cannot execute with a context")
	}
	res, err := ex.ExecContext(ctx, args)
	if err != nil {
		q.Error = traceError(err)
	} else if n, err := res.RowsAffected(); err == nil {
		q.RowsAffected = &n
	}
	for _, a := range args {
		if _, ok := a.Value.(sql.Out); ok {
			if v := reflect.ValueOf(s.conn.outs[a.Name]); v.Kind() == reflect.Pointer && !v.IsNil() {
				q.Outputs = append(q.Outputs, trace.Param{Name: "@" + a.Name, Output: true, Value: jsonValue(v.Elem().Interface())})
			}
		}
	}
	s.conn.outs = nil
	s.conn.rec.Add(q, started)
	return res, err
}

func (s *tracingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	started := time.Now()
	q := s.request(args)
	qc, ok := s.Stmt.(driver.StmtQueryContext)
	if !ok {
		return nil, errors.New("capture: driver statement cannot query with a context")
	}
	rows, err := qc.QueryContext(ctx, args)
	if err != nil {
		q.Error = traceError(err)
		s.conn.rec.Add(q, started)
		return nil, err
	}
	t := &tracingRows{Rows: rows, stmt: s, req: q, started: started}
	t.startSet()
	return t, nil
}

func (s *tracingStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *tracingStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s *tracingStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return s.conn.CheckNamedValue(nv)
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

// tracingRows records the shape of every result set it reads.
type tracingRows struct {
	driver.Rows
	stmt    *tracingStmt
	req     trace.Request
	started time.Time
	done    bool
}

func (r *tracingRows) startSet() {
	cols := r.Rows.Columns()
	if len(cols) == 0 {
		return
	}
	rs := trace.ResultSet{Columns: make([]trace.Column, len(cols))}
	for i, c := range cols {
		rs.Columns[i] = trace.Column{Name: c, Type: r.ColumnTypeDatabaseTypeName(i)}
	}
	r.req.ResultSets = append(r.req.ResultSets, rs)
}

func (r *tracingRows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	switch {
	case err == nil && len(r.req.ResultSets) > 0:
		rs := &r.req.ResultSets[len(r.req.ResultSets)-1]
		rs.Rows++
		if r.stmt.conn.rec.Data() {
			row := make([]any, len(dest))
			for i, v := range dest {
				row[i] = jsonValue(v)
			}
			rs.Values = append(rs.Values, row)
		}
	case err != nil && err != io.EOF && r.req.Error == nil:
		r.req.Error = traceError(err)
	}
	return err
}

func (r *tracingRows) HasNextResultSet() bool {
	if n, ok := r.Rows.(driver.RowsNextResultSet); ok {
		return n.HasNextResultSet()
	}
	return false
}

func (r *tracingRows) NextResultSet() error {
	n, ok := r.Rows.(driver.RowsNextResultSet)
	if !ok {
		return io.EOF
	}
	err := n.NextResultSet()
	if err == nil {
		r.startSet()
	} else if err != io.EOF && r.req.Error == nil {
		r.req.Error = traceError(err)
	}
	return err
}

func (r *tracingRows) Close() error {
	err := r.Rows.Close()
	if !r.done {
		r.done = true
		r.stmt.conn.rec.Add(r.req, r.started)
	}
	return err
}

func (r *tracingRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *tracingRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeOf(new(any)).Elem()
}

func (r *tracingRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *tracingRows) ColumnTypeNullable(i int) (bool, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *tracingRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

// looksLikeProc mirrors the driver's rule: a text without spaces, line
// breaks, quotes or semicolons is sent as a procedure name.
func looksLikeProc(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || r == '\'' || r == ';' || r == '(' {
			return false
		}
	}
	return true
}

func traceError(err error) *trace.Error {
	var me mssql.Error
	if errors.As(err, &me) {
		return &trace.Error{Number: me.Number, State: me.State, Class: me.Class, Line: me.LineNo, Proc: me.ProcName, Message: me.Message}
	}
	return &trace.Error{Message: err.Error()}
}

// jsonValue turns a driver value into one JSON keeps as is.
func jsonValue(v any) any {
	switch x := v.(type) {
	case nil, string, bool, int64, float64, int, int32:
		return x
	case []byte:
		return "base64:" + base64.StdEncoding.EncodeToString(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case sql.Out:
		return nil
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

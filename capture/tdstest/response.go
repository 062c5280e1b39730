package tdstest

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Message is the content of an ERROR or INFO token.
type Message struct {
	Number int32
	State  byte
	Class  byte // severity; 11 and above is an error
	Text   string
	Proc   string // procedure name, empty for ad hoc batches
	Line   int32
}

// ResultSet is one result set: column metadata and rows.
type ResultSet struct {
	columns []Column
	rows    [][]any
	plain   bool
	curCmd  uint16
	noCount bool
	errs    []error
}

// NewResultSet starts a result set with the given columns.
func NewResultSet(cols ...Column) *ResultSet {
	rs := &ResultSet{columns: cols, curCmd: CmdSelect}
	if len(cols) == 0 {
		rs.errs = append(rs.errs, errors.New("result set has no columns"))
	}
	for _, c := range cols {
		if err := c.check(); err != nil {
			rs.errs = append(rs.errs, err)
		}
	}
	return rs
}

// Row appends a row. Values must match the columns; nil is NULL. A mismatch
// is reported when the response is sent, as a recorded protocol error and an
// error token to the client.
func (rs *ResultSet) Row(vals ...any) *ResultSet {
	if len(vals) != len(rs.columns) {
		rs.errs = append(rs.errs, fmt.Errorf("row %d has %d values for %d columns", len(rs.rows)+1, len(vals), len(rs.columns)))
		return rs
	}
	rs.rows = append(rs.rows, vals)
	return rs
}

// PlainRows sends every row as ROW, with NULLs inline, even when NBCROW
// would be used because a row holds a NULL.
func (rs *ResultSet) PlainRows() *ResultSet {
	rs.plain = true
	return rs
}

// CurCmd sets the CurCmd of the DONE or DONEINPROC that closes the result set
// (CmdSelect by default).
func (rs *ResultSet) CurCmd(cmd uint16) *ResultSet {
	rs.curCmd = cmd
	return rs
}

// NoCount clears DONE_COUNT on the closing DONE, as under SET NOCOUNT ON.
func (rs *ResultSet) NoCount() *ResultSet {
	rs.noCount = true
	return rs
}

// Columns returns a copy of the result set's columns.
func (rs *ResultSet) Columns() []Column { return append([]Column(nil), rs.columns...) }

func (rs *ResultSet) writeMetadata(w *writer) {
	w.u8(tokenColMetadata)
	w.u16(uint16(len(rs.columns)))
	for _, c := range rs.columns {
		c.writeMeta(w)
	}
}

func (rs *ResultSet) writeRows(w *writer) error {
	for i, row := range rs.rows {
		hasNull := false
		for _, v := range row {
			hasNull = hasNull || v == nil
		}
		if hasNull && !rs.plain {
			w.u8(tokenNBCRow)
			bitmap := make([]byte, (len(row)+7)/8)
			for j, v := range row {
				if v == nil {
					if rs.columns[j].notNull {
						return fmt.Errorf("row %d: column %q is NOT NULL (%s) but the value is nil", i+1, rs.columns[j].Name, rs.columns[j].TypeName())
					}
					bitmap[j/8] |= 1 << (j % 8)
				}
			}
			w.raw(bitmap)
		} else {
			w.u8(tokenRow)
		}
		for j, v := range row {
			c := rs.columns[j]
			var err error
			switch {
			case v == nil && hasNull && !rs.plain:
				continue
			case v == nil:
				err = c.writeNull(w)
			default:
				err = c.writeValue(w, v)
			}
			if err != nil {
				return fmt.Errorf("row %d: %w", i+1, err)
			}
		}
	}
	return nil
}

type partKind int

const (
	partResult partKind = iota
	partCount
	partStatement
	partError
	partInfo
)

type part struct {
	kind partKind
	rs   *ResultSet
	cmd  uint16
	rows uint64
	msgs []Message
}

// Response is what the server sends back for one request. Build it with
// NewResponse and the chained methods; the server frames it for the request
// kind: each statement closes with DONE in a batch and with DONEINPROC in an
// RPC, and an RPC reply ends with RETURNSTATUS and DONEPROC.
type Response struct {
	parts              []part
	returnValues       []returnValue
	returnStatus       int32
	statusSet          bool
	delay              time.Duration
	closeAfterBytes    int
	closeAfterMetadata bool
	errs               []error
	misbehave          *Misbehaviour // misbehave.go: a reply that never ends
}

// NewResponse starts an empty response. Sent as is, it is a bare DONE for a
// batch and RETURNSTATUS(0) + DONEPROC for an RPC.
func NewResponse() *Response { return &Response{closeAfterBytes: -1} }

// Result appends a statement that returns a result set.
func (r *Response) Result(rs *ResultSet) *Response {
	if rs == nil {
		r.errs = append(r.errs, errors.New("Result: nil result set"))
		return r
	}
	r.parts = append(r.parts, part{kind: partResult, rs: rs})
	return r
}

// RowCount appends a statement without a result set that affected n rows,
// such as an UPDATE (cmd CmdUpdate).
func (r *Response) RowCount(cmd uint16, n int64) *Response {
	if n < 0 {
		r.errs = append(r.errs, fmt.Errorf("RowCount: negative count %d", n))
		return r
	}
	r.parts = append(r.parts, part{kind: partCount, cmd: cmd, rows: uint64(n)})
	return r
}

// Statement appends a statement that returns nothing and counts no rows.
func (r *Response) Statement(cmd uint16) *Response {
	r.parts = append(r.parts, part{kind: partStatement, cmd: cmd})
	return r
}

// Error appends a failed statement: its ERROR tokens, then (in a batch) a DONE
// with DONE_ERROR. In an RPC the error is carried by the final DONEPROC.
func (r *Response) Error(msgs ...Message) *Response {
	if len(msgs) == 0 {
		r.errs = append(r.errs, errors.New("Error: no messages"))
		return r
	}
	r.parts = append(r.parts, part{kind: partError, msgs: msgs})
	return r
}

// Info appends INFO tokens; they belong to the statement that follows.
func (r *Response) Info(msgs ...Message) *Response {
	r.parts = append(r.parts, part{kind: partInfo, msgs: msgs})
	return r
}

// returnValue is an OUTPUT parameter value sent back in an RPC reply.
type returnValue struct {
	name  string
	col   Column
	value any
}

// ReturnValue sends an OUTPUT parameter's value in an RPC reply (a
// RETURNVALUE token after RETURNSTATUS), e.g. for sp_get_query_template's
// @templatetext. name includes the @; col gives the type (its name is
// ignored); nil sends NULL. Batches ignore it.
func (r *Response) ReturnValue(name string, col Column, value any) *Response {
	if !strings.HasPrefix(name, "@") {
		r.errs = append(r.errs, fmt.Errorf("ReturnValue: parameter name %q must start with @", name))
		return r
	}
	if err := col.check(); err != nil {
		r.errs = append(r.errs, fmt.Errorf("ReturnValue %s: %w", name, err))
		return r
	}
	r.returnValues = append(r.returnValues, returnValue{name: name, col: col, value: value})
	return r
}

// ReturnStatus sets the RPC return status. By default it is 0, or after
// an error the number of the last error message (SQL Server's
// sp_executesql returns 8180 after 208 and 8180). Batches ignore it.
func (r *Response) ReturnStatus(v int32) *Response {
	r.returnStatus, r.statusSet = v, true
	return r
}

// Delay waits d before answering. An ATTENTION from the client cuts the wait
// short and the reply becomes a bare DONE with DONE_ATTN.
func (r *Response) Delay(d time.Duration) *Response {
	r.delay = d
	return r
}

// CloseAfterBytes sends only the first n bytes of the reply (packet headers
// included) and then closes the connection.
func (r *Response) CloseAfterBytes(n int) *Response {
	if n < 0 {
		r.errs = append(r.errs, fmt.Errorf("CloseAfterBytes: negative count %d", n))
		return r
	}
	r.closeAfterBytes = n
	return r
}

// CloseAfterMetadata sends the reply up to and including the first
// COLMETADATA token and then closes the connection.
func (r *Response) CloseAfterMetadata() *Response {
	r.closeAfterMetadata = true
	return r
}

// Err reports problems found while building the response (bad column
// types, rows that do not match their columns, …).
func (r *Response) Err() error {
	errs := append([]error(nil), r.errs...)
	for _, p := range r.parts {
		if p.kind == partResult {
			errs = append(errs, p.rs.errs...)
		}
	}
	return errors.Join(errs...)
}

// encodeContext is what framing a response depends on.
type encodeContext struct {
	rpc     bool   // an RPC: DONEINPROC per statement, RETURNSTATUS, DONEPROC
	inXact  bool   // DONE_INXACT on the DONE tokens
	noCount bool   // SET NOCOUNT ON: DONE_COUNT is cleared
	server  string // names the server in ERROR and INFO
	params  []Param
}

// encode renders the response for a request. metaEnd is the offset just
// after the first COLMETADATA, -1 if none.
func (r *Response) encode(w *writer, ec encodeContext) (metaEnd int, err error) {
	rpc, inXact, server, params := ec.rpc, ec.inXact, ec.server, ec.params
	countBit := doneCount
	if ec.noCount {
		countBit = 0
	}
	if err := r.Err(); err != nil {
		return -1, err
	}
	metaEnd = -1
	xact := uint16(0)
	if inXact {
		xact = doneInXact
	}
	stmtToken := tokenDone
	if rpc {
		stmtToken = tokenDoneInProc
	}
	// last is the index of the last part that closes a statement; in a batch
	// its DONE is the final one and carries no DONE_MORE.
	last := -1
	for i, p := range r.parts {
		if p.kind != partInfo && !(rpc && p.kind == partError) {
			last = i
		}
	}
	trailing := last < 0 || last < len(r.parts)-1 // INFO after the last statement, or no statement
	more := func(i int) uint16 {
		if rpc || i != last || trailing {
			return doneMore
		}
		return 0
	}
	failed := false
	var lastErr int32
	for i, p := range r.parts {
		switch p.kind {
		case partInfo:
			for _, m := range p.msgs {
				w.message(tokenInfo, m, server)
			}
		case partError:
			failed = true
			for _, m := range p.msgs {
				w.message(tokenError, m, server)
				lastErr = m.Number
			}
			if !rpc {
				w.done(tokenDone, doneError|more(i)|xact, CmdSelect, 0)
			}
		case partStatement:
			w.done(stmtToken, more(i)|xact, p.cmd, 0)
		case partCount:
			w.done(stmtToken, countBit|more(i)|xact, p.cmd, p.rows)
		case partResult:
			p.rs.writeMetadata(w)
			if metaEnd < 0 {
				metaEnd = len(w.buf)
			}
			if err := p.rs.writeRows(w); err != nil {
				return -1, err
			}
			status := countBit
			if p.rs.noCount {
				status = 0
			}
			w.done(stmtToken, status|more(i)|xact, p.rs.curCmd, uint64(len(p.rs.rows)))
		}
	}
	if rpc {
		status := r.returnStatus
		if !r.statusSet && failed {
			status = lastErr
		}
		w.returnStatus(status)
		for _, rv := range r.returnValues {
			ordinal := 0
			for i, p := range params {
				if strings.EqualFold(p.Name, rv.name) {
					ordinal = i
				}
			}
			if err := w.returnValue(ordinal, rv); err != nil {
				return -1, fmt.Errorf("ReturnValue %s: %w", rv.name, err)
			}
		}
		done := xact
		if failed {
			done |= doneError
		}
		w.done(tokenDoneProc, done, CmdExecute, 0)
	} else if trailing {
		w.done(tokenDone, xact, CmdNone, 0)
	}
	return metaEnd, nil
}

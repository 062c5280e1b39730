// Package trace records what planlint sends to SQL Server and the shape of
// every answer, as JSON a user can attach to a bug report: each request's
// text or procedure and parameters; each response's result sets (column
// names and types, row counts), rows affected, OUTPUT values and errors with
// their numbers. Plan XML and row values are kept only with Data set.
// Connection strings, passwords and the login are never recorded: the
// trace starts after login.
package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Version is the format version written in every trace.
const Version = 1

// Trace is a whole recording.
type Trace struct {
	Version  int       `json:"version"`
	Command  string    `json:"command,omitempty"` // e.g. "doctor"
	Data     bool      `json:"data"`              // row values and plans are included
	Requests []Request `json:"requests"`
}

// Request is one request and the shape of its response.
type Request struct {
	Seq  int    `json:"seq"`
	Conn int    `json:"conn"`           // connection number, from 1
	Kind string `json:"kind"`           // "batch" or "rpc"
	Text string `json:"text,omitempty"` // batch text, or sp_executesql's statement
	Proc string `json:"proc,omitempty"` // procedure of an RPC
	// Params are the RPC's arguments in order (sp_executesql's statement
	// and declaration included).
	Params []Param `json:"params,omitempty"`
	// Exec is true for requests sent for their row count only.
	Exec         bool        `json:"exec,omitempty"`
	ResultSets   []ResultSet `json:"result_sets,omitempty"`
	RowsAffected *int64      `json:"rows_affected,omitempty"`
	Outputs      []Param     `json:"outputs,omitempty"`
	Error        *Error      `json:"error,omitempty"`
	Millis       int64       `json:"ms"`
}

// Param is a named value.
type Param struct {
	Name   string `json:"name,omitempty"`
	Output bool   `json:"output,omitempty"`
	Value  any    `json:"value"`
}

// ResultSet is one result set's shape.
type ResultSet struct {
	Columns []Column `json:"columns"`
	Rows    int      `json:"rows"`
	// Values are the rows, with Data only.
	Values [][]any `json:"values,omitempty"`
}

// Column is a result-set column.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"` // the driver's database type name, e.g. NVARCHAR, INT
}

// Error is an error the server (or the driver) returned.
type Error struct {
	Number  int32  `json:"number,omitempty"`
	State   uint8  `json:"state,omitempty"`
	Class   uint8  `json:"class,omitempty"`
	Line    int32  `json:"line,omitempty"`
	Proc    string `json:"proc,omitempty"`
	Message string `json:"message"`
}

// Recorder collects a trace; it is safe for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	trace Trace
	conns int
}

// NewRecorder starts a recording for a command; data keeps row values and
// plans.
func NewRecorder(command string, data bool) *Recorder {
	return &Recorder{trace: Trace{Version: Version, Command: command, Data: data, Requests: []Request{}}}
}

// Data reports whether row values are kept.
func (r *Recorder) Data() bool { return r.trace.Data }

// NewConn numbers a new connection.
func (r *Recorder) NewConn() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conns++
	return r.conns
}

// Add appends a finished request.
func (r *Recorder) Add(q Request, started time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q.Seq = len(r.trace.Requests) + 1
	q.Millis = time.Since(started).Milliseconds()
	r.trace.Requests = append(r.trace.Requests, q)
}

// Trace returns a copy of what was recorded.
func (r *Recorder) Trace() Trace {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.trace
	t.Requests = append([]Request(nil), r.trace.Requests...)
	return t
}

// Write writes the trace as indented JSON.
func (r *Recorder) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.Trace())
}

// Read parses a trace, checking its version and request kinds.
func Read(rd io.Reader) (*Trace, error) {
	var t Trace
	dec := json.NewDecoder(rd)
	dec.UseNumber()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if t.Version != Version {
		return nil, fmt.Errorf("trace: format version %d, this planlint reads version %d", t.Version, Version)
	}
	for i, q := range t.Requests {
		if q.Kind != "batch" && q.Kind != "rpc" {
			return nil, fmt.Errorf("trace: request %d has kind %q, want batch or rpc", i+1, q.Kind)
		}
	}
	return &t, nil
}

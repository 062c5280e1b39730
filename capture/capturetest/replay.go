package capturetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/planlint/planlint/capture/tdstest"
	"github.com/planlint/planlint/capture/trace"
)

// Replay turns a trace (planlint --trace) into a test-server scenario: each
// batch or RPC that reaches the handler is answered with the response the
// trace recorded for the first unused request with the same text (or
// procedure). Session statements (SET, BEGIN TRAN, ...) are answered by the
// server itself. Rows come back with their values when the trace was taken
// with --trace-data, else as NULLs. Start the server with PlanForRPC set,
// so that an RPC under SHOWPLAN_XML gets what the real server sent. A
// request the trace does not hold is left unhandled.
func Replay(tr *trace.Trace) tdstest.Handler {
	var mu sync.Mutex
	used := make([]bool, len(tr.Requests))
	return func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
		mu.Lock()
		defer mu.Unlock()
		for i, q := range tr.Requests {
			if used[i] || !sameRequest(q, r) {
				continue
			}
			used[i] = true
			return replayResponse(q)
		}
		return nil
	}
}

func sameRequest(q trace.Request, r *tdstest.Request) bool {
	switch {
	case r.Kind == tdstest.KindBatch:
		return q.Kind == "batch" && q.Text == r.SQL
	case r.Kind == tdstest.KindRPC:
		proc := strings.TrimPrefix(strings.ToLower(r.Proc), "sys.")
		if q.Kind != "rpc" || !strings.EqualFold(strings.TrimPrefix(strings.ToLower(q.Proc), "sys."), proc) {
			return false
		}
		return proc != "sp_executesql" || q.Text == r.SQL
	}
	return false
}

func replayResponse(q trace.Request) *tdstest.Response {
	resp := tdstest.NewResponse()
	for _, rs := range q.ResultSets {
		resp.Result(replaySet(rs))
	}
	if q.RowsAffected != nil && len(q.ResultSets) == 0 && *q.RowsAffected > 0 {
		resp.RowCount(tdstest.CmdUpdate, *q.RowsAffected)
	}
	for _, o := range q.Outputs {
		v := replayValue(o.Value)
		col := tdstest.NVarCharMax("")
		switch v.(type) {
		case int64:
			col = tdstest.BigInt("")
		case float64:
			col = tdstest.Float("")
		case bool:
			col = tdstest.Bit("")
		}
		resp.ReturnValue(o.Name, col, v)
	}
	if q.Error != nil {
		resp.Error(tdstest.Message{Number: q.Error.Number, State: q.Error.State, Class: max(q.Error.Class, 11), Line: q.Error.Line,
			Proc: q.Error.Proc, Text: q.Error.Message})
	}
	return resp
}

func replaySet(rs trace.ResultSet) *tdstest.ResultSet {
	cols := make([]tdstest.Column, len(rs.Columns))
	for i, c := range rs.Columns {
		cols[i] = replayColumn(c)
	}
	set := tdstest.NewResultSet(cols...)
	for i := 0; i < rs.Rows; i++ {
		row := make([]any, len(cols))
		if i < len(rs.Values) && len(rs.Values[i]) == len(cols) {
			for j, v := range rs.Values[i] {
				row[j] = columnValue(rs.Columns[j], replayValue(v))
			}
		}
		set.Row(row...)
	}
	return set
}

// replayColumn maps the driver's type name back to a column type.
func replayColumn(c trace.Column) tdstest.Column {
	if c.Name == tdstest.ShowplanColumnName {
		return tdstest.ShowplanColumn()
	}
	switch c.Type {
	case "INT":
		return tdstest.Int(c.Name)
	case "BIGINT":
		return tdstest.BigInt(c.Name)
	case "SMALLINT":
		return tdstest.SmallInt(c.Name)
	case "TINYINT":
		return tdstest.TinyInt(c.Name)
	case "BIT":
		return tdstest.Bit(c.Name)
	case "FLOAT", "REAL":
		return tdstest.Float(c.Name)
	case "DATETIME2", "DATETIME", "SMALLDATETIME", "DATE":
		return tdstest.DateTime2(c.Name, 7)
	case "XML":
		return tdstest.XML(c.Name)
	case "NTEXT":
		return tdstest.NText(c.Name)
	case "SQL_VARIANT":
		return tdstest.SQLVariant(c.Name)
	}
	return tdstest.NVarCharMax(c.Name)
}

// replayValue turns a JSON value of the trace back into a Go value.
func replayValue(v any) any {
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i
		}
		f, _ := n.Float64()
		return f
	}
	return v
}

// columnValue converts a value for its column (times travel as text).
func columnValue(c trace.Column, v any) any {
	if v == nil {
		return nil
	}
	switch c.Type {
	case "DATETIME2", "DATETIME", "SMALLDATETIME", "DATE":
		if s, ok := v.(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t
			}
		}
	case "INT", "BIGINT", "SMALLINT", "TINYINT", "BIT", "FLOAT", "REAL", "SQL_VARIANT":
		return v
	}
	if _, ok := v.(string); !ok {
		return fmt.Sprint(v)
	}
	return v
}

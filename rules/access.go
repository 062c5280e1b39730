package rules

import (
	"strings"

	"github.com/planlint/planlint/plan"
)

// Helpers shared by the access-path rules (implicit-conversion,
// non-sargable-predicate, residual-predicate-scan, missing-index).

// readVolume is what one seek or scan read and returned over all its
// executions.
type readVolume struct {
	Read, Returned float64
	Kind           string // "actual" or "estimated"
	// Source names the figure Read comes from: ActualRowsRead,
	// EstimatedRowsRead or TableCardinality (a full scan without either).
	Source string
}

// share is the fraction of the rows read that the operator returned.
func (v readVolume) share() float64 {
	if v.Read <= 0 {
		return 1
	}
	return v.Returned / v.Read
}

// evidence records the volume under rows_read, rows_returned, rows_kind.
func (v readVolume) evidence(ev map[string]any) {
	ev["rows_read"] = round(v.Read, 1)
	ev["rows_returned"] = round(v.Returned, 1)
	ev["rows_kind"] = v.Kind
	ev["rows_read_source"] = v.Source
}

// accessVolume measures rows read against rows returned for a seek or
// scan: actual counters when the plan has them, else estimates. A full scan
// without a rows-read figure (older plans) is taken to read the table's
// cardinality once per execution. ok is false when nothing says how many
// rows were read.
func accessVolume(n *plan.RelOp) (readVolume, bool) {
	if n == nil || n.Access == nil {
		return readVolume{}, false
	}
	if rt := n.RunTime; rt != nil {
		v := readVolume{Returned: float64(rt.ActualRows), Kind: "actual"}
		switch {
		case rt.HasRowsRead:
			v.Read, v.Source = float64(rt.ActualRowsRead), "ActualRowsRead"
		case isFullScan(n) && n.TableCardinality > 0:
			// A parallel scan counts one execution per thread for one pass.
			passes := float64(rt.ActualExecutions)
			if threads := threadsThatRan(rt); threads > 1 {
				passes /= float64(threads)
			}
			if passes < 1 {
				passes = 1
			}
			v.Read, v.Source = n.TableCardinality*passes, "TableCardinality"
		default:
			return v, false
		}
		return v, true
	}
	v := readVolume{Returned: n.EstimatedRowsAllExecutions(), Kind: "estimated"}
	switch {
	case n.EstimatedRowsRead != nil:
		v.Read, v.Source = *n.EstimatedRowsRead*n.EstimatedExecutions(), "EstimatedRowsRead"
	case isFullScan(n) && n.TableCardinality > 0:
		v.Read, v.Source = n.TableCardinality*n.EstimatedExecutions(), "TableCardinality"
	default:
		return v, false
	}
	return v, true
}

func threadsThatRan(rt *plan.RunTime) int {
	k := 0
	for _, t := range rt.Threads {
		if t.ActualExecutions > 0 {
			k++
		}
	}
	return k
}

// isFullScan reports a table or index scan (no seek predicate, no lookup).
func isFullScan(n *plan.RelOp) bool {
	a := n.Access
	if a == nil || a.Lookup || len(a.SeekPredicates) > 0 {
		return false
	}
	return (a.Element == "IndexScan" || a.Element == "TableScan") && strings.Contains(n.PhysicalOp, "Scan")
}

// isSeekOrScan reports a read of a table or index that is not a lookup.
func isSeekOrScan(n *plan.RelOp) bool {
	a := n.Access
	return a != nil && !n.IsLookup() && (a.Element == "IndexScan" || a.Element == "TableScan")
}

// isColumnstore reports a read of a columnstore index.
func isColumnstore(n *plan.RelOp) bool {
	if n.Access == nil {
		return false
	}
	o := n.Access.Object()
	return strings.EqualFold(n.Access.Storage, "ColumnStore") || strings.EqualFold(o.Storage, "ColumnStore") ||
		strings.Contains(strings.ToLower(n.PhysicalOp), "columnstore") || strings.Contains(strings.ToLower(o.IndexKind), "columnstore")
}

// tableColumn reports whether s is a column of a table (not a parameter,
// variable or computed Expr/Union value of the plan).
func tableColumn(s *plan.Scalar) (*plan.ColumnRef, bool) {
	if s == nil || s.Kind != plan.ScalarIdentifier || s.Column == nil {
		return nil, false
	}
	c := s.Column
	return c, c.Table != "" && !c.IsParameter()
}

// columnLabel is "schema.table.column" (or the alias form) for messages.
func columnLabel(c plan.ColumnRef) string {
	o := plan.ObjectRef{Schema: c.Schema, Table: c.Table}
	if name := o.TableName(false); name != "" {
		return name + "." + c.Column
	}
	return c.Column
}

// parameterType returns the declared type of a parameter of the plan.
func parameterType(q *plan.QueryPlan, name string) string {
	for _, p := range q.Parameters {
		if strings.EqualFold(p.Name, name) {
			return p.DataType
		}
	}
	return ""
}

// catalogColumnType returns the column's declared type from the catalog.
func catalogColumnType(p *Pass, c plan.ColumnRef) string {
	t := findTable(p.Catalog, plan.ObjectRef{Database: c.Database, Schema: c.Schema, Table: c.Table})
	if t == nil {
		return ""
	}
	if col := t.FindColumn(c.Column); col != nil {
		return col.Type
	}
	return ""
}

// priorOnNode reports whether any of the named rules reported on node id.
func priorOnNode(p *Pass, id int, rules ...string) *Finding {
	for _, r := range rules {
		for _, f := range p.Prior(r) {
			if f.NodeID != nil && *f.NodeID == id {
				f := f
				return &f
			}
		}
	}
	return nil
}

// systemObject reports catalog views and system tables (schema sys,
// databases master, msdb and the resource database): their queries are
// not the user's to rewrite or index.
func systemObject(database, schema string) bool {
	if strings.EqualFold(schema, "sys") {
		return true
	}
	switch strings.ToLower(database) {
	case "master", "msdb", "mssqlsystemresource":
		return true
	}
	return false
}

// sqlText renders an expression as T-SQL with bare, bracketed-as-needed
// column names (no database, schema or alias parts), for rewrites and DDL.
func sqlText(s *plan.Scalar) string {
	if s == nil {
		return ""
	}
	args := func(sep string) string {
		parts := make([]string, len(s.Args))
		for i, a := range s.Args {
			parts[i] = sqlText(a)
		}
		return strings.Join(parts, sep)
	}
	switch s.Kind {
	case plan.ScalarIdentifier:
		if s.Column != nil {
			if s.Column.IsParameter() {
				return s.Column.Column
			}
			return quoteIdent(s.Column.Column)
		}
	case plan.ScalarConst:
		return s.Value
	case plan.ScalarConvert:
		if len(s.Args) == 1 {
			to := s.DataType
			if to == "" {
				to = s.Op
			}
			return "CONVERT(" + to + ", " + sqlText(s.Args[0]) + ")"
		}
	case plan.ScalarArithmetic:
		if op, ok := arithmeticSymbol[strings.ToUpper(s.Op)]; ok {
			if len(s.Args) == 1 {
				return op + sqlText(s.Args[0])
			}
			return "(" + args(" "+op+" ") + ")"
		}
	case plan.ScalarCompare:
		if len(s.Args) == 2 {
			return sqlText(s.Args[0]) + " " + plan.CompareSymbol(s.Op) + " " + sqlText(s.Args[1])
		}
		if len(s.Args) == 1 && (s.Op == "IS" || s.Op == "IS NOT") {
			return sqlText(s.Args[0]) + " " + s.Op + " NULL"
		}
	case plan.ScalarLogical:
		op := strings.ToUpper(s.Op)
		if op == "NOT" && len(s.Args) == 1 {
			return "NOT (" + sqlText(s.Args[0]) + ")"
		}
		if op == "AND" || op == "OR" {
			return "(" + args(" "+op+" ") + ")"
		}
	case plan.ScalarIntrinsic:
		if strings.EqualFold(s.Op, "like") && len(s.Args) >= 2 {
			return sqlText(s.Args[0]) + " LIKE " + sqlText(s.Args[1])
		}
		if unit, ok := datepartUnits[firstConst(s)]; ok && isDateFunction(s.Op) {
			parts := []string{unit}
			for _, a := range s.Args[1:] {
				parts = append(parts, sqlText(a))
			}
			return strings.ToUpper(s.Op) + "(" + strings.Join(parts, ", ") + ")"
		}
		for _, a := range s.Args {
			if sqlText(a) == "" {
				return s.String()
			}
		}
		return strings.ToUpper(s.Op) + "(" + args(", ") + ")"
	}
	return s.String()
}

var arithmeticSymbol = map[string]string{"ADD": "+", "SUB": "-", "MULT": "*", "DIV": "/", "MOD": "%", "BITAND": "&", "BITOR": "|", "BITXOR": "^", "MINUS": "-"}

// datepartUnits maps the datepart codes showplan writes as the first
// argument of datepart, datediff and dateadd to their names (only codes
// confirmed in real plans).
var datepartUnits = map[string]string{"(0)": "year", "(6)": "hour", "(7)": "minute", "(8)": "second"}

func isDateFunction(name string) bool {
	switch strings.ToLower(name) {
	case "datepart", "datediff", "dateadd", "datename", "datediff_big":
		return true
	}
	return false
}

func firstConst(s *plan.Scalar) string {
	if len(s.Args) > 0 && s.Args[0].Kind == plan.ScalarConst {
		return s.Args[0].Value
	}
	return ""
}

// renderable reports whether sqlText renders every node of s as T-SQL
// (rather than falling back to the plan's text).
func renderable(s *plan.Scalar) bool {
	if s == nil {
		return false
	}
	switch s.Kind {
	case plan.ScalarIdentifier:
		return s.Column != nil
	case plan.ScalarConst:
		return s.Value != ""
	case plan.ScalarConvert, plan.ScalarCompare, plan.ScalarIntrinsic:
	case plan.ScalarLogical:
		switch strings.ToUpper(s.Op) {
		case "AND", "OR", "NOT":
		default:
			return false
		}
	case plan.ScalarArithmetic:
		if _, ok := arithmeticSymbol[strings.ToUpper(s.Op)]; !ok {
			return false
		}
	default:
		return false
	}
	if s.Kind == plan.ScalarIntrinsic && isDateFunction(s.Op) {
		if _, ok := datepartUnits[firstConst(s)]; !ok {
			return false
		}
	}
	for _, a := range s.Args {
		if !renderable(a) {
			return false
		}
	}
	return true
}

// quickStatement reports an actual plan whose statement took less than ms
// milliseconds of both elapsed and CPU time (QueryTimeStats; a parallel
// plan hides its work in CPU time): whatever it read did not cost time
// worth a warning. Plans without timings are never quick.
func quickStatement(q *plan.QueryPlan, ms float64) (float64, bool) {
	if q == nil || q.QueryTime == nil {
		return 0, false
	}
	t := maxf(q.QueryTime.ElapsedTimeMs, q.QueryTime.CPUTimeMs)
	return t, t < ms
}

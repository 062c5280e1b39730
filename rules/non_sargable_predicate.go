package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// NonSargablePredicate reports a function or expression applied to a
// column in a scan's or seek's residual predicate, which keeps SQL Server
// from seeking on that column.
var NonSargablePredicate = &Rule{
	Code:     "PL302",
	Name:     "non-sargable-predicate",
	Severity: Error,
	Summary:  "A function or expression on a column forces a scan or a residual test of every row",
	Params: []Param{
		{"min_elapsed_ms", 100, "an actual plan whose statement took less than this (ms, elapsed and CPU) is info"},
		{"warn_rows_read", 10000, "an operator that read at least this many rows is a warning"},
		{"error_rows_read", 1000000, "an operator that read at least this many rows and returned at most error_share of them is an error"},
		{"warn_share", 0.5, "the operator must return at most this share of the rows it read to be a warning"},
		{"error_share", 0.1, "an error returns at most this share of the rows read"},
	},
	Doc: Doc{
		Problem: "An index is sorted by the column's value, not by `YEAR(column)`, `ISNULL(column, '')`, `UPPER(column)` or " +
			"`column + 1`. Wrapping the column in a function or expression (or searching with a leading wildcard, " +
			"`LIKE '%abc'`) means SQL Server cannot seek: it reads every row of the index or table and evaluates the " +
			"expression on each one, and the estimate is a guess.",
		Evidence: "A residual `Predicate` of an `Index Scan`, `Clustered Index Scan`, `Table Scan` or seek (or a `Filter` " +
			"directly over one) containing a comparison whose column side is an `Intrinsic` function, `Arithmetic`, an " +
			"explicit `Convert`, or an `IF` (CASE, IIF, COALESCE) over exactly one column of the scanned table, or a `like` " +
			"whose pattern is a literal starting with `%` or `_`. The finding gives the rows read against the rows returned " +
			"(actual `ActualRowsRead`, else `EstimatedRowsRead`, else the table cardinality of a full scan). Implicit " +
			"conversions are `implicit-conversion`'s.",
		Example: "```sql\nSELECT COUNT(*) FROM dbo.Posts WHERE YEAR(CreationDate) = 2013;\n```\n" +
			"Clustered Index Scan with `Predicate` `datepart(year,[CreationDate])=(2013)`: 17,142,169 rows read.",
		Fix: "Rewrite the test on the bare column: `CreationDate >= '20130101' AND CreationDate < '20140101'` for a year; " +
			"`(Name = @x OR Name IS NULL)` for `ISNULL(Name, '') = @x` when @x can be the replacement value, else just " +
			"`Name = @x`; drop `UPPER`/`LOWER`/`LTRIM`/`RTRIM` under a case-insensitive collation (`=` ignores trailing " +
			"spaces); move arithmetic to the other side. When no rewrite exists (a leading wildcard, a real computation) " +
			"add a persisted computed column for the expression and index it; planlint prints that DDL.",
		FalseAlarms: "When the predicate keeps most rows, a seek would read nearly as much: such findings stay info " +
			"(`warn_share`). System catalog queries (schema sys, master, msdb) are not reported. An actual plan whose statement took under `min_elapsed_ms` (elapsed and CPU time) is info.",
	},
	Run: runNonSargable,
}

// nonSargable is one comparison with a wrapped column.
type nonSargable struct {
	Node    *plan.RelOp // the scan or seek whose rows are tested
	Test    *plan.RelOp // the operator holding the predicate (the scan or a Filter)
	Column  plan.ColumnRef
	Kind    string // function name, "arithmetic", "CASE", "CONVERT" or "leading wildcard"
	Compare *plan.Scalar
	Wrapped *plan.Scalar // the column side
	Other   *plan.Scalar // the other side (nil for LIKE)
}

func runNonSargable(p *Pass) {
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			var src *plan.RelOp
			var pred *plan.Scalar
			switch {
			case isSeekOrScan(n) && n.Access.Predicate != nil:
				src, pred = n, n.Access.Predicate
			case n.PhysicalOp == "Filter" && n.Predicate != nil:
				if s := singleTableSource(n); s != nil && isSeekOrScan(s) {
					src, pred = s, n.Predicate
				}
			}
			if src == nil || isColumnstore(src) {
				continue
			}
			o := src.Access.Object()
			if systemObject(o.Database, o.Schema) {
				continue
			}
			var found []nonSargable
			for _, c := range pred.Conjuncts() {
				if ns, ok := wrappedColumn(c, o); ok {
					ns.Node, ns.Test = src, n
					found = append(found, ns)
				}
			}
			if len(found) > 0 {
				reportNonSargable(p, q, found)
			}
		}
	}
}

// wrappedColumn recognises "f(column) op value" and "column LIKE '%…'".
func wrappedColumn(c *plan.Scalar, table plan.ObjectRef) (nonSargable, bool) {
	if c.Kind == plan.ScalarIntrinsic && strings.EqualFold(c.Op, "like") && len(c.Args) >= 2 {
		inner, _ := c.Args[0].StripConvert()
		col, ok := tableColumn(inner)
		pat, _ := c.Args[1].StripConvert()
		if ok && col.BelongsTo(table) && pat.Kind == plan.ScalarConst && leadingWildcard(pat.Value) {
			return nonSargable{Column: *col, Kind: "leading wildcard", Compare: c, Wrapped: c.Args[0], Other: pat}, true
		}
		return nonSargable{}, false
	}
	if c.Kind != plan.ScalarCompare || len(c.Args) != 2 {
		return nonSargable{}, false
	}
	for i := 0; i < 2; i++ {
		side, other := c.Args[i], c.Args[1-i]
		kind := wrapperKind(side)
		if kind == "" {
			continue
		}
		cols := tableColumns(side)
		if len(cols) != 1 || !cols[0].BelongsTo(table) {
			continue
		}
		if oc := tableColumns(other); len(oc) > 0 && oc[0].BelongsTo(table) {
			continue // both sides on the table: no seek either way
		}
		cmp := c
		if i == 1 { // orient: wrapped column on the left
			op, ok := flipped[c.Op]
			if !ok {
				continue
			}
			cmp = &plan.Scalar{Kind: plan.ScalarCompare, Op: op, Args: []*plan.Scalar{side, other}, Text: c.Text}
		}
		return nonSargable{Column: cols[0], Kind: kind, Compare: cmp, Wrapped: side, Other: other}, true
	}
	return nonSargable{}, false
}

// wrapperKind names what wraps the column, or "" for a bare column or an
// implicit conversion alone (implicit-conversion's case).
func wrapperKind(s *plan.Scalar) string {
	switch s.Kind {
	case plan.ScalarIntrinsic:
		return strings.ToLower(s.Op)
	case plan.ScalarArithmetic:
		return "arithmetic"
	case plan.ScalarIf:
		return "CASE"
	case plan.ScalarConvert:
		if s.Implicit {
			if len(s.Args) == 1 {
				return wrapperKind(s.Args[0])
			}
			return ""
		}
		return "CONVERT"
	}
	return ""
}

// tableColumns lists the distinct table columns an expression reads.
func tableColumns(s *plan.Scalar) []plan.ColumnRef {
	var out []plan.ColumnRef
	for _, c := range s.Columns() {
		if c.Table == "" || c.IsParameter() {
			continue
		}
		dup := false
		for _, o := range out {
			if strings.EqualFold(o.Column, c.Column) && strings.EqualFold(o.Table, c.Table) {
				dup = true
			}
		}
		if !dup {
			out = append(out, c)
		}
	}
	return out
}

func leadingWildcard(lit string) bool {
	v := strings.TrimPrefix(lit, "N")
	return strings.HasPrefix(v, "'%") || strings.HasPrefix(v, "'_")
}

func reportNonSargable(p *Pass, q plan.LabeledPlan, found []nonSargable) {
	src := found[0].Node
	o := src.Access.Object()
	ev := map[string]any{"object": objectEvidence(o)}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	var tests, fixes []string
	var preds []map[string]any
	var ddl *indexDDL
	for _, ns := range found {
		rewrite, computed := sargableRewrite(ns)
		text := sqlText(ns.Compare)
		preds = append(preds, map[string]any{"column": ns.Column.Column, "kind": ns.Kind, "predicate": text, "rewrite": rewrite})
		tests = append(tests, fmt.Sprintf("%s (%s on %s)", text, ns.Kind, ns.Column.Column))
		switch {
		case rewrite != "":
			fixes = append(fixes, "write "+text+" as "+rewrite)
		case computed != "" && ddl == nil:
			expr, query, _ := strings.Cut(computed, "|")
			name := ns.Column.Column + "_" + strings.ReplaceAll(ns.Kind, " ", "_")
			use := "compare " + quoteIdent(name) + " instead of the expression"
			if ns.Kind == "leading wildcard" {
				name = ns.Column.Column + "_reversed"
				use = fmt.Sprintf("search with %s LIKE N'%s'", quoteIdent(name), query)
			}
			x := indexDDL{Schema: o.Schema, Table: o.Table, Keys: []string{name}}
			ddl = &x
			fixes = append(fixes, fmt.Sprintf("ALTER TABLE %s.%s ADD %s AS %s PERSISTED; %s then %s",
				quoteIdent(schemaOr(o.Schema)), quoteIdent(o.Table), quoteIdent(name), expr, x.String(), use))
		case ns.Kind == "leading wildcard":
			fixes = append(fixes, "a contains search ("+sqlText(ns.Other)+") cannot use a B-tree index: use a full-text index and CONTAINS, or narrow the rows first with a SARGable predicate")
		default:
			fixes = append(fixes, "rewrite "+text+" as a test on the bare column "+ns.Column.Column)
		}
	}
	ev["predicates"] = preds
	if ddl != nil {
		ddl.addEvidence(ev)
	}
	var b strings.Builder
	where := "residual predicate of " + src.DisplayName()
	if found[0].Test != src {
		where = fmt.Sprintf("Filter (node %d) over %s", found[0].Test.NodeID, src.DisplayName())
	}
	fmt.Fprintf(&b, "%s on %s cannot seek on %s: the %s tests %s", src.DisplayName(), objectName(o), quoteList(columnsOf(found)), where, strings.Join(tests, " and "))
	sev := Info
	if vol, ok := accessVolume(src); ok {
		vol.evidence(ev)
		fmt.Fprintf(&b, "; it read %s rows (%s) to return %s", units.Count(vol.Read), vol.Kind, units.Count(vol.Returned))
		share := vol.share()
		switch {
		case vol.Read >= p.Param("error_rows_read") && share <= p.Param("error_share"):
			sev = Error
		case vol.Read >= p.Param("warn_rows_read") && share <= p.Param("warn_share"):
			sev = Warning
		}
	}
	if ms, quick := quickStatement(q.QueryPlan, p.Param("min_elapsed_ms")); quick && sev > Info {
		sev = Info
		ev["statement_time_ms"] = ms
		fmt.Fprintf(&b, "; the statement took %s ms", trimFloat(ms))
	}
	p.Report(Finding{Severity: sev, NodeID: Node(src.NodeID), Message: b.String(), Fix: strings.Join(fixes, "; "), Evidence: ev})
}

func columnsOf(found []nonSargable) []string {
	var out []string
	for _, f := range found {
		out = append(out, f.Column.Column)
	}
	return uniqueFold(out)
}

// sargableRewrite returns the predicate rewritten on the bare column, and
// when there is none, the expression for a persisted computed column.
func sargableRewrite(ns nonSargable) (rewrite, computed string) {
	col := quoteIdent(ns.Column.Column)
	w := ns.Wrapped
	for w.Kind == plan.ScalarConvert && w.Implicit && len(w.Args) == 1 {
		w = w.Args[0]
	}
	other := sqlText(ns.Other)
	op := plan.CompareSymbol(ns.Compare.Op)
	bare := func(s *plan.Scalar) bool { _, ok := tableColumn(stripImplicit(s)); return ok }
	switch ns.Kind {
	case "leading wildcard":
		// No seek serves a leading wildcard. A suffix search ('%abc') can
		// seek on the reversed value; a contains search cannot use a B-tree.
		if suffix, ok := suffixPattern(ns.Other.Value); ok {
			return "", "REVERSE(" + col + ")|" + reverseString(suffix) + "%"
		}
		return "", ""
	case "datepart":
		if len(w.Args) == 2 && datepartUnits[w.Args[0].Value] == "year" && bare(w.Args[1]) && ns.Other.Kind == plan.ScalarConst {
			if y, err := strconv.Atoi(strings.Trim(ns.Other.Value, "()")); err == nil {
				from := func(y int) string { return fmt.Sprintf("'%04d0101'", y) }
				switch ns.Compare.Op {
				case "EQ":
					return fmt.Sprintf("%s >= %s AND %s < %s", col, from(y), col, from(y+1)), ""
				case "GT":
					return fmt.Sprintf("%s >= %s", col, from(y+1)), ""
				case "GE":
					return fmt.Sprintf("%s >= %s", col, from(y)), ""
				case "LT":
					return fmt.Sprintf("%s < %s", col, from(y)), ""
				case "LE":
					return fmt.Sprintf("%s < %s", col, from(y+1)), ""
				}
			}
		}
	case "isnull":
		if len(w.Args) == 2 && bare(w.Args[0]) && ns.Compare.Op == "EQ" {
			repl := sqlText(w.Args[1])
			if w.Args[1].Kind == plan.ScalarConst && ns.Other.Kind == plan.ScalarConst && repl != other {
				return fmt.Sprintf("%s = %s", col, other), ""
			}
			return fmt.Sprintf("(%s = %s OR %s IS NULL)", col, other, col), ""
		}
	case "upper", "lower", "ltrim", "rtrim", "trim":
		if len(w.Args) >= 1 && bare(w.Args[0]) {
			return fmt.Sprintf("%s %s %s (under a case-insensitive collation; = ignores trailing spaces)", col, op, other), ""
		}
	case "left", "substring":
		if ns.Compare.Op == "EQ" && ns.Other.Kind == plan.ScalarConst && strings.HasSuffix(ns.Other.Value, "'") && len(w.Args) >= 2 && bare(w.Args[0]) &&
			(ns.Kind == "left" || w.Args[1].Value == "(1)") {
			return fmt.Sprintf("%s LIKE %s%%'", col, strings.TrimSuffix(ns.Other.Value, "'")), ""
		}
	case "arithmetic":
		if len(w.Args) == 2 && bare(w.Args[0]) && w.Args[1].Kind == plan.ScalarConst {
			inverse := map[string]string{"ADD": "-", "SUB": "+"}[strings.ToUpper(w.Op)]
			if inverse != "" {
				return fmt.Sprintf("%s %s %s %s %s", col, op, other, inverse, sqlText(w.Args[1])), ""
			}
		}
	}
	if !renderable(ns.Wrapped) {
		return "", ""
	}
	return "", sqlText(ns.Wrapped)
}

// suffixPattern returns the literal text of a LIKE pattern that is one
// leading % followed by plain characters ('%abc').
func suffixPattern(lit string) (string, bool) {
	v := strings.TrimPrefix(lit, "N")
	if !strings.HasPrefix(v, "'%") || !strings.HasSuffix(v, "'") || len(v) < 4 {
		return "", false
	}
	rest := v[2 : len(v)-1]
	if strings.ContainsAny(rest, "%_[") {
		return "", false
	}
	return rest, true
}

func reverseString(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

func stripImplicit(s *plan.Scalar) *plan.Scalar {
	for s != nil && s.Kind == plan.ScalarConvert && s.Implicit && len(s.Args) == 1 {
		s = s.Args[0]
	}
	return s
}

func init() { register(NonSargablePredicate) }

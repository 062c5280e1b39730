package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// RowCountSpoolNotIn reports NOT IN (subquery) over a nullable column: a
// Left Anti Semi Join that, for every outer row, asks a Row Count Spool
// whether the subquery returned a NULL.
var RowCountSpoolNotIn = &Rule{
	Code:     "PL310",
	Name:     "row-count-spool-not-in",
	Severity: Error,
	Summary:  "NOT IN over a nullable column checks the subquery for NULLs once per outer row",
	Params: []Param{
		{"warn_ms", 1000, "actual plans: the NULL checks taking at least this many milliseconds are a warning"},
		{"error_ms", 10000, "actual plans: the NULL checks taking at least this many milliseconds are an error"},
		{"warn_executions", 10000, "without timings: at least this many executions of the NULL check are a warning"},
		{"error_executions", 1000000, "actual plans without timings: at least this many executions are an error"},
	},
	Doc: Doc{
		Problem: "`x NOT IN (SELECT y FROM t)` is false or unknown for every row as soon as one `y` is NULL, so when `y` " +
			"is nullable SQL Server must also check, for every outer row, whether the subquery holds a NULL (and, when `x` " +
			"is nullable, whether it holds any row at all). Those checks run as extra anti semi joins on the inner side of " +
			"Nested Loops, executed once per outer row: millions of executions for a query that needed one hash join.",
		Evidence: "A `Nested Loops` with `LogicalOp=\"Left Anti Semi Join\"` whose inner input is a `Row Count Spool` over a " +
			"predicate `y IS NULL` on the subquery's column (often next to a second anti semi join whose predicate is " +
			"`x IS NULL`, over a `Top` of the subquery's table). planlint names both columns, the executions of these " +
			"checks and, in actual plans, their elapsed time against the statement's. A Row Count Spool under a semi join, " +
			"or under an anti semi join without the `IS NULL` test (a plain `NOT EXISTS`), is not this.",
		Example: "```sql\nSELECT COUNT(*) FROM #NewUsers AS nu\nWHERE nu.UserId NOT IN (SELECT ou.UserId FROM #OldUsers AS ou);\n```\n" +
			"Row Count Spool executed 24,198,656 times and a Top over a Table Scan of #OldUsers executed 24,534,730 times: " +
			"1,564 s of the statement's 1,570 s.",
		Fix: "Write `NOT EXISTS (SELECT 1 FROM #OldUsers AS ou WHERE ou.UserId = nu.UserId)`. It differs from `NOT IN` only " +
			"when the subquery returns a NULL (then `NOT IN` returns no row at all, which is rarely what was meant). If the " +
			"column never holds NULLs, declaring it `NOT NULL` (or adding `WHERE ou.UserId IS NOT NULL` to the subquery) " +
			"also removes the checks.",
		FalseAlarms: "On small outer inputs the checks are cheap (info). `NOT IN` over a list of literals or over a NOT NULL " +
			"column produces no Row Count Spool and is not reported.",
	},
	Run: runRowCountSpoolNotIn,
}

// notIn is one NOT IN null-check structure of a plan.
type notIn struct {
	join     *plan.RelOp // the anti semi join whose inner side is the Row Count Spool
	spool    *plan.RelOp
	inner    plan.ColumnRef  // the subquery column tested IS NULL below the spool
	outer    *plan.ColumnRef // the outer column, when the plan shows it
	outerNL  *plan.RelOp     // the anti semi join testing the outer column IS NULL, if any
	checkers []*plan.RelOp   // the inner sides executed per outer row
}

// isNullColumn returns the column an "IS NULL" test in s is about.
func isNullColumn(s *plan.Scalar) *plan.ColumnRef {
	for _, c := range s.Conjuncts() {
		if c.Kind == plan.ScalarCompare && c.Op == "IS" && len(c.Args) == 2 {
			l, _ := c.Args[0].StripConvert()
			r, _ := c.Args[1].StripConvert()
			if l != nil && l.Kind == plan.ScalarIdentifier && l.Column != nil && r != nil && r.Kind == plan.ScalarConst && strings.EqualFold(strings.Trim(r.Value, "()"), "NULL") {
				return l.Column
			}
		}
	}
	return nil
}

// findNotIn recognises the NOT IN null check at an anti semi join.
func findNotIn(nl *plan.RelOp) (notIn, bool) {
	if nl.PhysicalOp != "Nested Loops" || nl.LogicalOp != "Left Anti Semi Join" || len(nl.Children) != 2 {
		return notIn{}, false
	}
	spool := belowPassThrough(nl.Children[1])
	if spool.PhysicalOp != "Row Count Spool" {
		return notIn{}, false
	}
	var inner *plan.ColumnRef
	spool.Walk(func(x *plan.RelOp) bool {
		if inner != nil {
			return false
		}
		if c := isNullColumn(x.Predicate); c != nil {
			inner = c
		} else if c := isNullColumn(x.Access.Residual()); c != nil {
			inner = c
		}
		return inner == nil
	})
	if inner == nil {
		return notIn{}, false
	}
	m := notIn{join: nl, spool: spool, inner: *inner, checkers: []*plan.RelOp{nl.Children[1]}}
	// The outer column's own NULL check: an anti semi join below (or above)
	// whose join predicate is "outer IS NULL" and whose inner side reads the
	// subquery's table.
	check := func(x *plan.RelOp) bool {
		if x == nl || x.PhysicalOp != "Nested Loops" || x.LogicalOp != "Left Anti Semi Join" || len(x.Children) != 2 {
			return false
		}
		c := isNullColumn(x.Predicate)
		if c == nil || strings.EqualFold(c.Table, inner.Table) {
			return false
		}
		m.outer, m.outerNL = c, x
		m.checkers = append(m.checkers, x.Children[1])
		return true
	}
	for x := belowPassThrough(nl.Children[0]); ; {
		if check(x) || x.PhysicalOp != "Nested Loops" && !passThrough(x) || len(x.Children) == 0 {
			break
		}
		x = belowPassThrough(x.Children[0])
	}
	if m.outer == nil && nl.Parent != nil {
		check(belowPassThroughUp(nl))
	}
	return m, true
}

// belowPassThroughUp returns the first ancestor of n that is not a
// pass-through operator.
func belowPassThroughUp(n *plan.RelOp) *plan.RelOp {
	p := n.Parent
	for p != nil && passThrough(p) && p.Parent != nil {
		p = p.Parent
	}
	if p == nil {
		return n
	}
	return p
}

func runRowCountSpoolNotIn(p *Pass) {
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			m, ok := findNotIn(n)
			if !ok {
				continue
			}
			reportNotIn(p, q, m)
		}
	}
}

// tableAlias renders "schema.table AS alias" for the rewrite.
func tableAlias(c plan.ColumnRef) string {
	name := tableOf(c).TableName(false)
	if strings.HasPrefix(c.Table, "#") {
		name = c.Table
	}
	if c.Alias != "" && !strings.EqualFold(c.Alias, c.Table) {
		name += " AS " + c.Alias
	}
	return name
}

func reportNotIn(p *Pass, q plan.LabeledPlan, m notIn) {
	var execs, ms float64
	timed := true
	kind := "actual"
	var ids []int
	var perChecker []string
	for _, c := range m.checkers {
		e, k := executions(c)
		execs += e
		perChecker = append(perChecker, fmt.Sprintf("%s (node %d)", units.Count(e), c.NodeID))
		if k != "actual" {
			kind = k
		}
		t, ok := elapsedMs(c)
		timed = timed && ok
		ms += t
		ids = append(ids, c.NodeID)
	}
	outerName := "the outer column"
	if m.outer != nil {
		outerName = m.outer.Name()
	}
	ev := map[string]any{
		"subquery_column": m.inner.Name(),
		"executions":      round(execs, 1),
		"executions_kind": kind,
		"check_node_ids":  ids,
		"anti_join_node":  m.join.NodeID,
	}
	se, _ := executions(m.spool)
	ev["spool_executions"] = round(se, 1)
	if m.outer != nil {
		ev["outer_column"] = m.outer.Name()
	}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	var b strings.Builder
	fmt.Fprintf(&b, "NOT IN over the nullable column %s: %s (node %d) checks the subquery for NULLs", m.inner.Name(), m.spool.DisplayName(), m.spool.NodeID)
	if m.outerNL != nil {
		fmt.Fprintf(&b, " and %s (node %d) checks %s IS NULL", m.outerNL.DisplayName(), m.outerNL.NodeID, outerName)
	}
	fmt.Fprintf(&b, " once per outer row: %s executions (%s)", strings.Join(perChecker, " and "), kind)
	sev := Info
	if timed {
		b.WriteString(" taking ")
		sev = gradeTime(p, q.QueryPlan, ms, true, ev, &b)
	} else {
		switch {
		case kind == "actual" && execs >= p.Param("error_executions"):
			sev = Error
		case execs >= p.Param("warn_executions"):
			sev = Warning
		}
	}
	if m.spool.RunTime != nil && m.spool.RunTime.ActualRows == 0 {
		b.WriteString("; the subquery returned no NULL")
	}
	outerCol := outerName
	if m.outer != nil {
		outerCol = m.outer.Name()
	}
	fix := fmt.Sprintf("rewrite %s NOT IN (SELECT %s FROM %s) as NOT EXISTS (SELECT 1 FROM %s WHERE %s = %s); "+
		"the two differ only when the subquery returns a NULL (NOT IN then returns no row). "+
		"If %s never holds NULLs, declaring it NOT NULL or adding WHERE %s IS NOT NULL to the subquery removes the checks too",
		outerCol, m.inner.Name(), tableAlias(m.inner), tableAlias(m.inner), m.inner.Name(), outerCol, m.inner.Column, m.inner.Name())
	ev["rewrite"] = fmt.Sprintf("NOT EXISTS (SELECT 1 FROM %s WHERE %s = %s)", tableAlias(m.inner), m.inner.Name(), outerCol)
	p.Report(Finding{Severity: sev, NodeID: Node(m.spool.NodeID), Message: b.String(), Fix: fix, Evidence: ev})
}

func init() { register(RowCountSpoolNotIn) }

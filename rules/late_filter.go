package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// LateFilter reports a Filter operator that discards most of what joins or
// aggregates below it produced, and says where its predicate could run
// earlier, or why it cannot.
var LateFilter = &Rule{
	Code:     "PL309",
	Name:     "late-filter",
	Severity: Error,
	Summary:  "A Filter discards most rows after the joins or aggregates that produced them",
	Params: []Param{
		{"min_input_rows", 10000, "ignore filters whose input has fewer rows (actual, else estimated)"},
		{"max_kept", 0.1, "report only filters that keep at most this share of their input"},
		{"warn_ms", 1000, "actual plans: time spent producing the discarded rows that makes a warning"},
		{"error_ms", 10000, "actual plans: time spent producing the discarded rows that makes an error"},
		{"warn_rows", 1000000, "without timings: discarded rows that make a warning"},
	},
	Doc: Doc{
		Problem: "A `Filter` above joins or aggregates means every row it throws away was first read, joined, sorted or " +
			"grouped. When the predicate only needs one table's columns it could have been tested at that table's seek or " +
			"scan, before the join; the optimizer pushes predicates down whenever it can, so a late Filter usually says " +
			"why it could not: the predicate tests the inner side of an outer join (`LEFT JOIN … WHERE b.Id IS NULL`), an " +
			"aggregate (`HAVING`), a windowed function, or an expression the optimizer cannot move.",
		Evidence: "A `Filter` (not a startup filter: `StartupExpression=\"1\"` tests a parameter once to skip a branch) whose " +
			"input holds at least `min_input_rows` rows and which keeps at most `max_kept` of them, with a join, aggregate, " +
			"window or concatenation below it. planlint traces each column of the predicate to the operator that produces " +
			"it (through Compute Scalar definitions) and names the table access where it could be applied, or the reason it " +
			"cannot. Severity follows the time (actual plans: the input's elapsed time times the discarded share) or rows " +
			"discarded, and only where the predicate can move: a windowed or aggregate predicate is info.",
		Example: "```sql\nSELECT o.OrderId FROM dbo.Orders AS o LEFT JOIN dbo.Shipments AS s ON s.OrderId = o.OrderId\n" +
			"WHERE s.OrderId IS NULL;\n```\nFilter `s.OrderId IS NULL` over a Left Outer Join keeps 1% of the orders.",
		Fix: "Apply the predicate where its table is read: move it into the `WHERE` or `ON` of that table (or a derived " +
			"table), rewrite `LEFT JOIN … IS NULL` as `NOT EXISTS (SELECT 1 FROM … WHERE …)`, and for `HAVING MAX(x) >= c` " +
			"filter `x >= c` in the `WHERE` clause, which keeps the same groups. A filter on a windowed function needs the " +
			"window first: filter the rows the window reads instead when the query allows it.",
		FalseAlarms: "Startup filters and filters over small inputs are not reported. A predicate on a windowed function " +
			"(`ROW_NUMBER() … = 1`) cannot run earlier: info.",
	},
	Run: runLateFilter,
}

func runLateFilter(p *Pass) {
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			if n.PhysicalOp == "Filter" && !n.StartupExpression && n.Predicate != nil && len(n.Children) == 1 {
				checkLateFilter(p, q, n)
			}
		}
	}
}

// isAggregate reports grouping operators.
func isAggregate(n *plan.RelOp) bool {
	return n.PhysicalOp == "Stream Aggregate" || n.PhysicalOp == "Hash Match" && strings.Contains(n.LogicalOp, "Aggregate")
}

// isWindow reports the operators that compute windowed functions.
func isWindow(n *plan.RelOp) bool {
	switch n.PhysicalOp {
	case "Sequence Project", "Window Aggregate", "Window Spool", "Segment":
		return true
	}
	return false
}

// producer finds the operator below n that creates column c: the deepest
// operator whose output has it while none of its inputs do, or the Compute
// Scalar that defines it.
func producer(n *plan.RelOp, c plan.ColumnRef) *plan.RelOp {
	var found *plan.RelOp
	n.Walk(func(x *plan.RelOp) bool {
		if found != nil {
			return false
		}
		for _, dv := range x.DefinedValues {
			if containsColumn(dv.Columns, c) {
				found = x
				return false
			}
		}
		if containsColumn(x.OutputList, c) {
			inChild := false
			for _, ch := range x.Children {
				inChild = inChild || containsColumn(ch.OutputList, c)
			}
			if !inChild {
				found = x
				return false
			}
		}
		return true
	})
	return found
}

// predicateSources traces the predicate's columns to table columns and
// to the operators (aggregates, windows, ...) that compute the others.
func predicateSources(below *plan.RelOp, s *plan.Scalar) (tables []plan.ColumnRef, computed []*plan.RelOp) {
	seen := map[string]bool{}
	var trace func(c plan.ColumnRef, depth int)
	trace = func(c plan.ColumnRef, depth int) {
		key := strings.ToLower(c.Name() + "|" + c.Table)
		if seen[key] || depth > 8 || c.IsParameter() {
			return
		}
		seen[key] = true
		if c.Table != "" {
			tables = append(tables, c)
			return
		}
		src := producer(below, c)
		if src == nil {
			return
		}
		for _, dv := range src.DefinedValues {
			if containsColumn(dv.Columns, c) && dv.Value != nil {
				for _, x := range dv.Value.Columns() {
					trace(x, depth+1)
				}
				return
			}
		}
		computed = append(computed, src)
	}
	for _, c := range s.Columns() {
		trace(c, 0)
	}
	return tables, computed
}

// accessFor finds the table access below n that reads the column's table
// instance.
func accessFor(n *plan.RelOp, c plan.ColumnRef) *plan.RelOp {
	var found *plan.RelOp
	n.Walk(func(x *plan.RelOp) bool {
		if found != nil {
			return false
		}
		if x.Access != nil && !isWrite(x) {
			o := x.Access.Object()
			if c.BelongsTo(o) && (c.Alias == "" || o.Alias == "" || strings.EqualFold(unbracketed(o.Alias), c.Alias)) {
				found = x
				return false
			}
		}
		return true
	})
	return found
}

// outerJoinInner finds a Left Outer Join below n whose inner (right) input
// holds the access, so that a NULL test on its columns is an anti join.
func outerJoinInner(n, acc *plan.RelOp) *plan.RelOp {
	var found *plan.RelOp
	n.Walk(func(x *plan.RelOp) bool {
		if found == nil && isJoin(x) && len(x.Children) == 2 && (x.LogicalOp == "Left Outer Join" && subtreeContains(x.Children[1], acc) || x.LogicalOp == "Right Outer Join" && subtreeContains(x.Children[0], acc)) {
			found = x
		}
		return found == nil
	})
	return found
}

func checkLateFilter(p *Pass, q plan.LabeledPlan, f *plan.RelOp) {
	input := f.Children[0]
	below := input
	for (below.PhysicalOp == "Compute Scalar" || below.PhysicalOp == "Parallelism" || below.PhysicalOp == "Bitmap") && len(below.Children) == 1 {
		below = below.Children[0]
	}
	if !(isJoin(below) || isAggregate(below) || isWindow(below) || below.PhysicalOp == "Concatenation" || below.PhysicalOp == "Sort") {
		return
	}
	if below.PhysicalOp == "Sort" && len(below.Children) == 1 && !isJoin(belowPassThrough(below.Children[0])) && !isAggregate(belowPassThrough(below.Children[0])) {
		return
	}
	inRows, kind := rowsOut(input)
	outRows, _ := rowsOut(f)
	if inRows < p.Param("min_input_rows") || inRows <= 0 || outRows/inRows > p.Param("max_kept") {
		return
	}
	kept := outRows / inRows
	discarded := inRows - outRows
	pred := compactScalar(f.Predicate)
	tables, computed := predicateSources(below, f.Predicate)

	ev := map[string]any{
		"predicate":      pred,
		"input_rows":     round(inRows, 1),
		"output_rows":    round(outRows, 1),
		"rows_kind":      kind,
		"kept_share":     round(kept, 4),
		"below_node_id":  below.NodeID,
		"below_operator": below.DisplayName(),
	}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Filter %s keeps %s of %s rows (%s, %s) produced by %s (node %d)", pred, units.Count(outRows), units.Count(inRows), kind, percent(kept), below.DisplayName(), below.NodeID)

	movable := false
	var fix string
	var window, agg *plan.RelOp
	for _, c := range computed {
		switch {
		case isWindow(c):
			window = c
		case isAggregate(c):
			agg = c
		}
	}
	tableSet := map[string]plan.ColumnRef{}
	for _, c := range tables {
		tableSet[strings.ToLower(c.Table+"|"+c.Alias)] = c
	}
	switch {
	case window != nil:
		ev["reason"] = "window"
		fmt.Fprintf(&b, "; it tests a windowed function computed by %s (node %d), so it cannot run before the window", window.DisplayName(), window.NodeID)
		fix = "a predicate on a windowed function needs the window first; if the query allows, filter the rows the window reads instead"
	case agg != nil:
		ev["reason"] = "aggregate"
		fmt.Fprintf(&b, "; it tests an aggregate computed by %s (node %d), a HAVING condition, so it cannot run before the grouping", agg.DisplayName(), agg.NodeID)
		fix = "for HAVING MAX(x) >= c (or MIN(x) <= c) filter x >= c (x <= c) in the WHERE clause instead: it keeps the same groups and removes the rows before the joins and the grouping"
	case len(tableSet) == 1 && len(computed) == 0:
		col := tables[0]
		acc := accessFor(below, col)
		if acc == nil {
			break
		}
		ev["table_node_id"] = acc.NodeID
		table := tableAlias(col)
		if oj := outerJoinInner(below, acc); oj != nil && isNullColumn(f.Predicate) != nil {
			ev["reason"] = "outer-join-null-test"
			ev["join_node_id"] = oj.NodeID
			movable = true
			fmt.Fprintf(&b, "; it tests %s, the inner side of %s (node %d): a LEFT JOIN … IS NULL anti join written as an outer join", pred, oj.DisplayName(), oj.NodeID)
			fix = fmt.Sprintf("rewrite the LEFT JOIN to %s and the IS NULL test as WHERE NOT EXISTS (SELECT 1 FROM %s WHERE <the join condition>): the optimizer can then run an anti semi join that stops at the first match", table, table)
			break
		}
		ev["reason"] = "single-table"
		movable = true
		fmt.Fprintf(&b, "; it only needs columns of %s, read by %s (node %d), where it could discard them before the join", table, acc.DisplayName(), acc.NodeID)
		fix = fmt.Sprintf("apply %s where %s is read: move it into that table's WHERE or ON clause, or into a derived table, so the rows are discarded before they are joined", pred, table)
	case len(tableSet) > 1:
		var names []string
		for _, c := range tableSet {
			names = append(names, tableAlias(c))
		}
		sort.Strings(names)
		ev["reason"] = "multi-table"
		fmt.Fprintf(&b, "; it compares columns of %s, so it can only run once they are joined", quoteList(names))
		fix = "if the predicate is an OR of conditions on different tables, a UNION of one query per condition lets each run at its table"
	}
	if ev["reason"] == nil {
		ev["reason"] = "unknown"
		fix = "look for a predicate on an expression the optimizer cannot push down (a scalar function, a conversion) and express it on the base columns"
	}

	sev := Info
	if movable {
		if ms, ok := elapsedMs(input); ok {
			wasted := ms * (1 - kept)
			ev["wasted_ms"] = round(wasted, 0)
			fmt.Fprintf(&b, "; about %s of the input's %s went into discarded rows", units.Ms(wasted), units.Ms(ms))
			sev = timeSeverity(p, wasted)
		} else if discarded >= p.Param("warn_rows") {
			sev = Warning
		}
	}
	p.Report(Finding{Severity: sev, NodeID: Node(f.NodeID), Message: b.String(), Fix: fix, Evidence: ev})
}

// compactScalar renders comparisons, logic, columns and constants with
// alias-qualified names ("s.OrderId IS NULL") instead of the plan's fully
// qualified ScalarString; other expressions keep the plan's text.
func compactScalar(s *plan.Scalar) string {
	if t, ok := compact(s); ok {
		return t
	}
	return s.String()
}

func compact(s *plan.Scalar) (string, bool) {
	if s == nil {
		return "", false
	}
	switch s.Kind {
	case plan.ScalarIdentifier:
		if s.Column != nil {
			return s.Column.Name(), true
		}
	case plan.ScalarConst:
		return s.Value, true
	case plan.ScalarCompare:
		if len(s.Args) == 2 {
			l, ok1 := compact(s.Args[0])
			r, ok2 := compact(s.Args[1])
			return l + " " + plan.CompareSymbol(s.Op) + " " + r, ok1 && ok2
		}
	case plan.ScalarLogical:
		if len(s.Args) > 1 {
			parts := make([]string, len(s.Args))
			for i, a := range s.Args {
				t, ok := compact(a)
				if !ok {
					return "", false
				}
				parts[i] = t
			}
			return strings.Join(parts, " "+s.Op+" "), true
		}
	}
	return "", false
}

func init() { register(LateFilter) }

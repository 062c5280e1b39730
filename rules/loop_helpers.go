package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// isJoin reports the physical join operators.
func isJoin(n *plan.RelOp) bool {
	switch n.PhysicalOp {
	case "Nested Loops", "Merge Join", "Adaptive Join":
		return true
	case "Hash Match":
		return strings.Contains(n.LogicalOp, "Join") || strings.Contains(n.LogicalOp, "Union") || strings.Contains(n.LogicalOp, "Intersect") || strings.Contains(n.LogicalOp, "Except")
	}
	return false
}

// isScan reports the operators that read a whole table or index.
func isScan(n *plan.RelOp) bool {
	switch n.PhysicalOp {
	case "Table Scan", "Clustered Index Scan", "Index Scan":
		return n.Access != nil
	}
	return false
}

// isSeek reports the index seeks that are not lookups.
func isSeek(n *plan.RelOp) bool {
	return (n.PhysicalOp == "Index Seek" || n.PhysicalOp == "Clustered Index Seek") && !n.IsLookup()
}

// rowsReadTotal is the number of rows the access read over all executions
// (actual when known, else the estimate: EstimatedRowsRead, or the table
// cardinality for a scan), and which one it is.
func rowsReadTotal(n *plan.RelOp) (float64, string) {
	if rt := n.RunTime; rt != nil && rt.HasRowsRead {
		return float64(rt.ActualRowsRead), "actual"
	}
	if rt := n.RunTime; rt != nil {
		return float64(rt.ActualRows), "actual"
	}
	per := n.EstimateRows
	switch {
	case n.EstimatedRowsRead != nil:
		per = *n.EstimatedRowsRead
	case isScan(n) && n.TableCardinality > 0:
		per = n.TableCardinality
	}
	return per * n.EstimatedExecutions(), "estimated"
}

// tableOf returns the table a column reference names, for index DDL.
func tableOf(c plan.ColumnRef) plan.ObjectRef {
	return plan.ObjectRef{Database: c.Database, Schema: c.Schema, Table: c.Table}
}

// sameColumn reports whether two references name the same column of the
// same table instance (alias included when both carry one).
func sameColumn(a, b plan.ColumnRef) bool {
	if !strings.EqualFold(a.Column, b.Column) || !strings.EqualFold(a.Table, b.Table) {
		return false
	}
	return a.Alias == "" || b.Alias == "" || strings.EqualFold(a.Alias, b.Alias)
}

// containsColumn reports whether cols holds c.
func containsColumn(cols []plan.ColumnRef, c plan.ColumnRef) bool {
	for _, x := range cols {
		if sameColumn(x, c) {
			return true
		}
	}
	return false
}

// baseColumns keeps the table columns of cols (not expressions such as
// Expr1004, not parameters) that belong to table, without duplicates.
func baseColumns(cols []plan.ColumnRef, table plan.ObjectRef) []string {
	var out []string
	for _, c := range cols {
		if c.IsParameter() || c.Table == "" || !c.BelongsTo(table) {
			continue
		}
		out = append(out, c.Column)
	}
	return uniqueFold(out)
}

// without removes the names in drop from names (case-insensitive).
func without(names, drop []string) []string {
	var out []string
	for _, n := range names {
		if !containsFold(drop, n) {
			out = append(out, n)
		}
	}
	return out
}

// subtreeContains reports whether target is n or below it.
func subtreeContains(n, target *plan.RelOp) bool {
	found := false
	n.Walk(func(x *plan.RelOp) bool {
		if x == target {
			found = true
		}
		return !found
	})
	return found
}

// priorOnSubtree returns the first prior finding of rule whose node lies
// in the subtree below n (n included).
func priorOnSubtree(p *Pass, q plan.LabeledPlan, rule string, n *plan.RelOp, keep func(Finding) bool) *Finding {
	for _, f := range p.Prior(rule) {
		if f.NodeID == nil || f.CursorOperation() != q.Label {
			continue
		}
		if x := q.Node(*f.NodeID); x != nil && subtreeContains(n, x) && (keep == nil || keep(f)) {
			f := f
			return &f
		}
	}
	return nil
}

// gradeByTime reports an operator's measured time in the message and
// evidence ("; <what> took 1.2 s of the statement's 3.4 s") and grades it
// by the rule's error_ms and warn_ms; withTotal adds the statement's time.
func gradeByTime(p *Pass, q *plan.QueryPlan, ms float64, what string, withTotal bool, ev map[string]any, b *strings.Builder) Severity {
	fmt.Fprintf(b, "; %s took ", what)
	return gradeTime(p, q, ms, withTotal, ev, b)
}

// gradeTime writes a measured time ("1.2 s", with withTotal "1.2 s of the
// statement's 3.4 s"), keeps it in the evidence (elapsed_ms,
// statement_elapsed_ms) and grades it with timeSeverity.
func gradeTime(p *Pass, q *plan.QueryPlan, ms float64, withTotal bool, ev map[string]any, b *strings.Builder) Severity {
	ev["elapsed_ms"] = ms
	b.WriteString(units.Ms(ms))
	if withTotal {
		if total, ok := planElapsedMs(q); ok && total > 0 {
			ev["statement_elapsed_ms"] = total
			fmt.Fprintf(b, " of the statement's %s", units.Ms(total))
		}
	}
	return timeSeverity(p, ms)
}

// timeSeverity grades a measured time by the rule's error_ms and warn_ms
// parameters: error, warning, else info.
func timeSeverity(p *Pass, ms float64) Severity {
	switch {
	case ms >= p.Param("error_ms"):
		return Error
	case ms >= p.Param("warn_ms"):
		return Warning
	}
	return Info
}

// noteSubtreeShare is the fallback of the rules that grade by time when
// the plan has none: it records n's subtree share of the statement cost in
// the evidence and the message, and returns it for the cost grading.
func noteSubtreeShare(q *plan.QueryPlan, n *plan.RelOp, ev map[string]any, b *strings.Builder) float64 {
	share := subtreeShare(q, n)
	ev["cost_share"] = round(share, 3)
	fmt.Fprintf(b, "; %s of the statement cost", percent(share))
	return share
}

package rules

import (
	"fmt"
	"math"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// actualPerExecution compares an operator's estimate with what it returned,
// both per execution and counted the way the estimate counts (see
// plan.RelOp.EstimateSkew): ok is false without runtime counters, when the
// operator never ran or when it does not report its rows.
func actualPerExecution(n *plan.RelOp) (est, act float64, ok bool) {
	s, ok := n.EstimateSkew()
	if !ok {
		return 0, 0, false
	}
	return s.EstimatedPerExec, s.ActualPerExec, true
}

// underestimate is how many times more rows came than were estimated (≥ 1
// means under), with estimates below one row counted as one.
func underestimate(est, act float64) float64 {
	return act / math.Max(est, 1)
}

// drivenWork finds the heaviest Nested Loops inner side that n's rows
// drive: it climbs from n through single-input operators and the outer
// input of Nested Loops joins, as long as each operator on the way is itself
// underestimated at least minRatio times (the misestimate carries on), and
// returns the join whose inner side returned the most rows in total, with
// that side's rows and executions. join is nil when n drives no loop.
func drivenWork(n *plan.RelOp, minRatio float64) (join, inner *plan.RelOp, rows, execs float64) {
	child := n
	for p := n.Parent; p != nil; child, p = p, p.Parent {
		switch {
		case p.PhysicalOp == "Nested Loops" && len(p.Children) == 2 && p.Children[0] == child:
			r, _ := rowsOut(p.Children[1])
			if join == nil || r > rows {
				join, inner, rows = p, p.Children[1], r
				execs, _ = executions(p.Children[1])
			}
		case len(p.Children) == 1:
		default:
			return join, inner, rows, execs
		}
		if est, act, ok := actualPerExecution(p); ok && underestimate(est, act) < minRatio {
			return join, inner, rows, execs
		}
	}
	return join, inner, rows, execs
}

// isTableVariable reports whether the object is a table variable or
// table-valued parameter (its name starts with @).
func isTableVariable(o plan.ObjectRef) bool {
	return len(o.Table) > 0 && o.Table[0] == '@'
}

// readsTable reports whether the operator reads (rather than writes) its
// object: scans, seeks and lookups.
func readsTable(n *plan.RelOp) bool {
	if n.Access == nil {
		return false
	}
	switch n.Access.Element {
	case "IndexScan", "TableScan", "RIDLookup":
		return true
	}
	return false
}

// misestimate is how far an operator's estimate was off per execution, in
// either direction (≥ 1), and whether it was an underestimate.
func misestimate(n *plan.RelOp) (factor float64, under, ok bool) {
	s, ok := n.EstimateSkew()
	return s.Factor, s.Under, ok
}

// rowsProcessed is what an operator handled over all executions: rows read
// when the plan says (a scan or seek with a residual), else rows returned.
func rowsProcessed(n *plan.RelOp) float64 {
	rows, _ := rowsOut(n)
	if n.RunTime != nil && n.RunTime.HasRowsRead && float64(n.RunTime.ActualRowsRead) > rows {
		return float64(n.RunTime.ActualRowsRead)
	}
	return rows
}

// variableUses maps each parameter or variable name (lower case) compared
// in the plan's predicates to the operators that compare it, in plan order.
func variableUses(q *plan.QueryPlan) (names []string, uses map[string][]*plan.RelOp) {
	uses = map[string][]*plan.RelOp{}
	for _, c := range comparisons(q) {
		name := c.parameter()
		if name == "" {
			continue
		}
		key := strings.ToLower(name)
		if uses[key] == nil {
			names = append(names, name)
		}
		if list := uses[key]; len(list) == 0 || list[len(list)-1] != c.Node {
			uses[key] = append(list, c.Node)
		}
	}
	return names, uses
}

// worstMisestimate picks, among operators, the one whose estimate was
// furthest off (weighted by the rows it processed), on actual plans.
func worstMisestimate(nodes []*plan.RelOp, minFactor float64) (worst *plan.RelOp, factor float64, under bool) {
	var best float64
	for _, n := range nodes {
		f, u, ok := misestimate(n)
		if !ok || f < minFactor {
			continue
		}
		if score := f * math.Max(rowsProcessed(n), 1); worst == nil || score > best {
			worst, factor, under, best = n, f, u, score
		}
	}
	return worst, factor, under
}

// misestimateText describes an operator's estimate against its actual rows.
func misestimateText(n *plan.RelOp, factor float64, under bool) string {
	est, act, _ := actualPerExecution(n)
	dir := "over"
	if under {
		dir = "under"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (node %d) was estimated at %s", n.DisplayName(), n.NodeID, rowsWord(est))
	if o := n.Access.Object(); o.Table != "" {
		b.Reset()
		fmt.Fprintf(&b, "%s on %s (node %d) was estimated at %s", n.DisplayName(), objectName(o), n.NodeID, rowsWord(est))
	}
	execs, _ := executions(n)
	if execs > 1 {
		fmt.Fprintf(&b, " per execution and returned %s per execution over %s executions", units.Count(act), units.Count(execs))
	} else {
		fmt.Fprintf(&b, " and returned %s", units.Count(act))
	}
	fmt.Fprintf(&b, " (%s× %s)", factorText(factor), dir)
	if rp := rowsProcessed(n); n.RunTime.HasRowsRead && rp > act*math.Max(execs, 1) {
		fmt.Fprintf(&b, ", reading %s rows", units.Count(rp))
	}
	return b.String()
}

// gradeByImpact grades a misestimate that a parameter or variable caused:
// info, a warning from warn_rows rows processed or warn_ms of statement
// time (noted in the message and evidence), and an error when the rule has
// error_ms and error_factor and both are reached.
func gradeByImpact(p *Pass, q *plan.QueryPlan, rows, factor float64, ev map[string]any, msg *strings.Builder) Severity {
	sev := Info
	if rows >= p.Param("warn_rows") {
		sev = Warning
	}
	t := q.QueryTime
	if t == nil || t.ElapsedTimeMs <= 0 {
		return sev
	}
	ev["statement_elapsed_ms"] = t.ElapsedTimeMs
	fmt.Fprintf(msg, "; the statement took %s ms", units.Count(t.ElapsedTimeMs))
	if t.ElapsedTimeMs >= p.Param("warn_ms") {
		sev = Warning
	}
	if p.Rule.hasParam("error_ms") && t.ElapsedTimeMs >= p.Param("error_ms") && factor >= p.Param("error_factor") {
		sev = Error
	}
	return sev
}

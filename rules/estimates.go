package rules

import (
	"fmt"
	"math"
	"strings"

	"github.com/planlint/planlint/plan"
)

// actualPerExecution compares an operator's estimate with what it returned,
// both per execution, on actual plans: ok is false without runtime counters
// or when the operator never ran.
func actualPerExecution(n *plan.RelOp) (est, act float64, ok bool) {
	if n.RunTime == nil {
		return 0, 0, false
	}
	execs, _ := executions(n)
	if execs <= 0 {
		return 0, 0, false
	}
	rows, _ := rowsOut(n)
	return n.EstimateRows, rows / execs, true
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
	est, act, ok := actualPerExecution(n)
	if !ok {
		return 0, false, false
	}
	e, a := math.Max(est, 1), math.Max(act, 1)
	if a >= e {
		return a / e, true, true
	}
	return e / a, false, true
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
		fmt.Fprintf(&b, " per execution and returned %s per execution over %s executions", count(act), count(execs))
	} else {
		fmt.Fprintf(&b, " and returned %s", count(act))
	}
	fmt.Fprintf(&b, " (%s× %s)", factorText(factor), dir)
	if rp := rowsProcessed(n); n.RunTime.HasRowsRead && rp > act*math.Max(execs, 1) {
		fmt.Fprintf(&b, ", reading %s rows", count(rp))
	}
	return b.String()
}

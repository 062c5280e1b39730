package rules

import (
	"math"

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

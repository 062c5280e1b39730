package rules

import (
	"fmt"
	"math"
	"strings"

	"github.com/planlint/planlint/plan"
)

// RowEstimateSkew compares estimated and actual rows per operator in actual
// plans and reports where a misestimate starts.
var RowEstimateSkew = &Rule{
	Code:     "PL104",
	Name:     "row-estimate-skew",
	Severity: Error,
	Summary:  "Estimated rows differ from actual rows by a large factor",
	Params: []Param{
		{"warn_factor", 10, "estimate off by at least this factor (either direction) is a warning"},
		{"error_factor", 100, "estimate off by at least this factor is an error (given error_min_rows)"},
		{"min_rows", 100, "ignore operators where both estimated and actual totals are below this"},
		{"error_min_rows", 10000, "an error needs at least this many rows on the larger side"},
	},
	Doc: Doc{
		Problem: "The optimizer picks join types, memory grants and access paths from row estimates. A queue that holds 200 " +
			"pending rows when statistics were built but 2,000,000 during a backlog keeps the small-queue plan: nested loops, " +
			"tiny grants that spill, scans that were cheap. Filtered statistics in particular go stale, because the " +
			"auto-update threshold counts modifications to the whole table.",
		Evidence: "Actual plans only. For each operator planlint compares the estimate for all executions, `EstimateRows × " +
			"(EstimateRebinds + EstimateRewinds + 1)`, with `ActualRows` summed over every `RunTimeCountersPerThread`, and " +
			"the per-execution view (`EstimateRows` against actual rows ÷ actual executions). It reports the factor and " +
			"direction, ignores tiny counts, skips operators whose error is inherited from a child or from a wrong number " +
			"of executions (the outer input's error), skips lookups under the pre-2022 cardinality estimator (a known bug " +
			"misplaces their estimate) and low actuals below a Top or row goal (early termination is not a misestimate).",
		Example: "Clustered Index Scan with `EstimateRows=\"200\"` and `ActualRows=\"2000000\"`: underestimated 10,000×.",
		Fix: "Update the statistics (for a filtered index: `UPDATE STATISTICS dbo.Work IX_Work_Pending WITH FULLSCAN` on a " +
			"schedule that follows the queue's churn), check for parameter sniffing (compiled vs runtime values), and " +
			"compare the plan captured at normal queue depth with one captured during a backlog (`planlint compare`).",
		FalseAlarms: "Operators that stop early (below Top, semi joins, EXISTS) legitimately return fewer rows than estimated. " +
			"Tiny tables produce large factors on small numbers; `min_rows` filters them.",
	},
	Run: runRowEstimateSkew,
}

type skew struct {
	factor  float64 // ≥ 1
	under   bool    // actual > estimated
	estPer  float64
	actPer  float64
	estAll  float64
	actAll  float64
	execEst float64
	execAct float64
}

func measureSkew(n *plan.RelOp) (skew, bool) {
	rt := n.RunTime
	if rt == nil || rt.ActualExecutions == 0 {
		return skew{}, false
	}
	s := skew{
		estPer:  n.EstimateRows,
		estAll:  n.EstimatedRowsAllExecutions(),
		actAll:  float64(rt.ActualRows),
		execEst: n.EstimatedExecutions(),
		execAct: float64(rt.ActualExecutions),
	}
	s.actPer = s.actAll / s.execAct
	e, a := math.Max(s.estPer, 1), math.Max(s.actPer, 1)
	s.under = a > e
	s.factor = math.Max(a, e) / math.Min(a, e)
	return s, true
}

// earlyTermination reports an operator whose low actual count can come
// from a parent that stopped asking for rows.
func earlyTermination(n *plan.RelOp) bool {
	if n.EstimateRowsWithoutRowGoal != nil {
		return true
	}
	for p := n.Parent; p != nil; p = p.Parent {
		if p.PhysicalOp == "Top" || strings.Contains(p.LogicalOp, "Semi Join") || p.PhysicalOp == "Sort" && p.Sort != nil && p.Sort.TopRows > 0 {
			return true
		}
	}
	return false
}

func runRowEstimateSkew(p *Pass) {
	warn, errF := p.Param("warn_factor"), p.Param("error_factor")
	minRows, errRows := p.Param("min_rows"), p.Param("error_min_rows")
	legacyCE := p.Statement.CEModelVersion > 0 && p.Statement.CEModelVersion < 160
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			s, ok := measureSkew(n)
			if !ok || s.factor < warn || math.Max(s.estAll, s.actAll) < minRows {
				continue
			}
			if n.IsLookup() && (legacyCE || p.Statement.CEModelVersion == 0) {
				continue
			}
			if !s.under && earlyTermination(n) {
				continue
			}
			if inherited(n, s) {
				continue
			}
			dir := "underestimated"
			if !s.under {
				dir = "overestimated"
			}
			ev := map[string]any{
				"operator":                     n.DisplayName(),
				"factor":                       round(s.factor, 1),
				"direction":                    map[bool]string{true: "under", false: "over"}[s.under],
				"estimated_rows":               round(s.estAll, 1),
				"actual_rows":                  int64(s.actAll),
				"estimated_rows_per_execution": round(s.estPer, 2),
				"actual_rows_per_execution":    round(s.actPer, 2),
				"estimated_executions":         round(s.execEst, 1),
				"actual_executions":            int64(s.execAct),
			}
			if q.Label != "" {
				ev["cursor_operation"] = q.Label
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s", n.DisplayName())
			if o := n.Access.Object(); o.Table != "" {
				fmt.Fprintf(&b, " on %s", objectName(o))
			}
			fmt.Fprintf(&b, " %s rows %s×: estimated %s, actual %s", dir, count(s.factor), count(s.estAll), count(s.actAll))
			if s.execAct > 1 || s.execEst > 1 {
				fmt.Fprintf(&b, " over %s executions (%s per execution estimated, %s actual)", count(s.execAct), count(s.estPer), count(s.actPer))
			}
			if h := harm(n); h != "" {
				ev["consequence"] = h
				fmt.Fprintf(&b, "; %s", h)
			}
			sev := Warning
			if s.factor >= errF && math.Max(s.estAll, s.actAll) >= errRows {
				sev = Error
			}
			p.Report(Finding{Severity: sev, NodeID: Node(n.NodeID), Message: b.String(), Evidence: ev,
				Fix: "update statistics on the objects this operator reads (filtered statistics need their own schedule) and check the compiled parameter values"})
		}
	}
}

// inherited reports whether the operator's error comes from below: a child
// already misestimated in the same direction by a comparable factor.
func inherited(n *plan.RelOp, s skew) bool {
	for _, c := range n.Children {
		cs, ok := measureSkew(c)
		if ok && cs.under == s.under && cs.factor >= s.factor/2 && cs.factor >= 2 {
			return true
		}
	}
	return false
}

// harm names a visible consequence of the misestimate near the operator.
func harm(n *plan.RelOp) string {
	for cur := n; cur != nil; cur = cur.Parent {
		if w := cur.Warnings; w != nil && (len(w.SpillToTempDb) > 0 || len(w.SortSpills) > 0 || len(w.HashSpills) > 0 || w.SpillOccurred) {
			return fmt.Sprintf("%s (node %d) spilled to tempdb", cur.DisplayName(), cur.NodeID)
		}
		if cur != n && cur.PhysicalOp == "Nested Loops" && len(cur.Children) > 1 {
			return fmt.Sprintf("it drives %s (node %d)", cur.DisplayName(), cur.NodeID)
		}
		if cur != n && !passThrough(cur) {
			break
		}
	}
	return ""
}

func init() { register(RowEstimateSkew) }

package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// RowGoal reports an operator planned under a row goal (the optimizer
// expected to stop early) that had to process far more rows.
var RowGoal = &Rule{
	Code:     "PL414",
	Name:     "row-goal",
	Severity: Warning,
	Summary:  "A row goal planned an operator for a few rows and it processed many",
	Params: []Param{
		{"min_goal_ratio", 10, "EstimateRowsWithoutRowGoal at least this many times EstimateRows: a row goal that changed the estimate"},
		{"min_ratio", 10, "rows processed per execution at least this many times the row-goal estimate"},
		{"min_rows", 10000, "rows processed over all executions below which a failed row goal is not reported"},
		{"warn_ms", 1000, "the operator's elapsed time (with its inputs) from which it is a warning"},
		{"warn_rows", 1000000, "rows processed from which it is a warning when the plan has no timings"},
	},
	Doc: Doc{
		Problem: "TOP, EXISTS, IN, NOT EXISTS, NOT IN, FAST n and some joins tell the optimizer that only a few rows are " +
			"needed. It then scales estimates down (a row goal) and prefers plans that produce the first rows quickly: " +
			"scans that it expects to stop early, Nested Loops, no blocking operators. When the rows it hopes to find early " +
			"are rare, late or absent, the scan reads everything and the cheap-looking plan is the slowest one.",
		Evidence: "The operator carries `EstimateRowsWithoutRowGoal` much larger than `EstimateRows` (SQL Server 2017+, " +
			"2016 SP2, 2014 SP3 plans). On an actual plan, the rows it processed per execution (`ActualRowsRead` for a scan " +
			"or seek with a residual predicate, else `ActualRows`) far exceed `EstimateRows`. planlint reports the top-most " +
			"such operator of a subtree (never a Sort or eager spool, which read their whole input whatever the goal), names the operator that set the goal (Top, a semi or anti semi join), and grades by " +
			"the operator's elapsed time or, without timings, by rows.",
		Example: "```sql\nSELECT TOP (1) p.Id FROM dbo.Posts AS p\nWHERE NOT EXISTS (SELECT 1 FROM dbo.Votes AS v WHERE v.PostId = p.Id)\n" +
			"ORDER BY p.Id DESC;\n-- Clustered Index Scan of Votes under the anti semi join: EstimateRows 1 (without row goal 49),\n" +
			"-- ActualRowsRead 52,928,720: the newest post has no votes, so the scan never stopped early.\n```",
		Fix: "Give the probe an index so it seeks instead of scanning in hope (planlint names the columns the scan's " +
			"predicate compares), or plan without the row goal: `OPTION (USE HINT ('DISABLE_OPTIMIZER_ROWGOAL'))` (SQL " +
			"Server 2016 SP1+; trace flag 4138 before that). Rewriting TOP … ORDER BY over a join so the sort column is " +
			"indexed, or removing an unneeded TOP or FAST hint, has the same effect.",
		FalseAlarms: "A row goal that held (the operator stopped after about the rows it expected) is the plan working as " +
			"designed and is never reported; neither is a failed goal that cost little (below `min_rows`).",
		References: []string{
			"https://learn.microsoft.com/en-us/sql/t-sql/queries/hints-transact-sql-query#use_hint",
			"https://learn.microsoft.com/en-us/troubleshoot/sql/database-engine/performance/troubleshoot-slow-queries-with-row-goal",
		},
	},
	Run: runRowGoal,
}

func init() { register(RowGoal) }

func runRowGoal(p *Pass) {
	for _, q := range p.Plans() {
		failed := map[*plan.RelOp]bool{}
		for _, n := range q.Nodes {
			if rowGoalFailed(p, n) {
				failed[n] = true
			}
		}
		for _, n := range q.Nodes {
			if !failed[n] || failedAncestor(n, failed) {
				continue
			}
			reportRowGoal(p, q.QueryPlan, n)
		}
	}
}

func rowGoalFailed(p *Pass, n *plan.RelOp) bool {
	if n.EstimateRowsWithoutRowGoal == nil || n.RunTime == nil || consumesAllInput(n) {
		return false
	}
	if *n.EstimateRowsWithoutRowGoal < p.Param("min_goal_ratio")*maxf(n.EstimateRows, 1) {
		return false
	}
	execs, _ := executions(n)
	if execs <= 0 {
		return false
	}
	work := rowsProcessed(n)
	return work >= p.Param("min_rows") && work/execs >= p.Param("min_ratio")*maxf(n.EstimateRows, 1)
}

// consumesAllInput reports blocking operators (a Sort, an eager spool):
// they read their whole input whatever the goal, so a goal that scaled
// down their output did not make the optimizer expect less work from them.
func consumesAllInput(n *plan.RelOp) bool {
	return n.PhysicalOp == "Sort" || strings.HasSuffix(n.PhysicalOp, "Spool") && n.LogicalOp == "Eager Spool"
}

func failedAncestor(n *plan.RelOp, failed map[*plan.RelOp]bool) bool {
	for a := n.Parent; a != nil; a = a.Parent {
		if failed[a] {
			return true
		}
	}
	return false
}

// goalSetter finds the operator above n that sets the row goal: a Top, a
// TopN Sort or a semi or anti semi join.
func goalSetter(n *plan.RelOp) *plan.RelOp {
	for a := n.Parent; a != nil; a = a.Parent {
		switch {
		case a.PhysicalOp == "Top", a.Sort != nil && a.Sort.TopRows > 0, strings.Contains(a.LogicalOp, "Semi Join"):
			return a
		}
	}
	return nil
}

func reportRowGoal(p *Pass, q *plan.QueryPlan, n *plan.RelOp) {
	execs, _ := executions(n)
	work := rowsProcessed(n)
	rows, _ := rowsOut(n)
	readsMore := n.RunTime.HasRowsRead && float64(n.RunTime.ActualRowsRead) > rows
	ev := map[string]any{
		"estimated_rows":                 round(n.EstimateRows, 2),
		"estimated_rows_without_rowgoal": round(*n.EstimateRowsWithoutRowGoal, 2),
		"rows_processed":                 work,
		"actual_rows":                    rows,
		"executions":                     execs,
	}
	if o := n.Access.Object(); o.Table != "" {
		for k, v := range objectEvidence(o) {
			ev[k] = v
		}
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "%s was planned under a row goal for %s per execution (%s without the goal) but ", n.DisplayName(), rowsWord(n.EstimateRows), units.Count(*n.EstimateRowsWithoutRowGoal))
	if readsMore {
		fmt.Fprintf(&msg, "read %s rows to return %s", units.Count(work), units.Count(rows))
	} else {
		fmt.Fprintf(&msg, "returned %s rows", units.Count(work))
	}
	if execs > 1 {
		fmt.Fprintf(&msg, " over %s executions", units.Count(execs))
	}
	sev := Info
	if n.RunTime.HasTiming {
		ev["elapsed_ms"] = n.RunTime.ElapsedMs
		fmt.Fprintf(&msg, " in %s ms", units.Count(float64(n.RunTime.ElapsedMs)))
		if float64(n.RunTime.ElapsedMs) >= p.Param("warn_ms") {
			sev = Warning
		}
	} else if work >= p.Param("warn_rows") {
		sev = Warning
	}
	if g := goalSetter(n); g != nil {
		ev["goal_node"] = g.NodeID
		fmt.Fprintf(&msg, "; the goal comes from %s (node %d)", g.DisplayName(), g.NodeID)
	}
	fix := "plan without the row goal: add OPTION (USE HINT ('DISABLE_OPTIMIZER_ROWGOAL')) to the statement (SQL Server 2016 SP1+; trace flag 4138 before)"
	if x, ok := probeIndex(n); ok {
		x.addEvidence(ev)
		fix = fmt.Sprintf("give the probe an index so it seeks instead of scanning in the hope of an early match (%s), or %s", strings.TrimSuffix(x.String(), ";"), fix)
	}
	p.Report(Finding{Severity: sev, NodeID: Node(n.NodeID), Message: msg.String(), Fix: fix, Evidence: ev})
}

// probeIndex proposes an index for a scan whose residual predicate tests
// its columns for equality with something from outside the table (an outer
// reference, a parameter or a literal): those columns as keys.
func probeIndex(n *plan.RelOp) (indexDDL, bool) {
	if n.Access == nil || len(n.Access.SeekPredicates) > 0 || n.Access.Predicate == nil {
		return indexDDL{}, false
	}
	o := n.Access.Object()
	if o.Table == "" || isTableVariable(o) {
		return indexDDL{}, false
	}
	var keys []string
	for _, c := range appendScalarComparisons(nil, n, n.Access.Predicate, false) {
		if c.Op != "EQ" || c.InOr || c.ColumnConverted || c.Operand == nil {
			continue
		}
		if !c.Column.BelongsTo(o) && c.Column.Table != "" {
			continue
		}
		if c.Operand.Kind == plan.ScalarIdentifier && c.Operand.Column != nil && c.Operand.Column.BelongsTo(o) {
			continue // a comparison of two columns of the same table
		}
		keys = append(keys, c.Column.Column)
	}
	keys = uniqueFold(keys)
	if len(keys) == 0 {
		return indexDDL{}, false
	}
	return indexDDL{Schema: o.Schema, Table: o.Table, Keys: keys}, true
}

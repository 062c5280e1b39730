package rules

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// skewCauseRules are the rules that explain a misestimate by its cause
// (parameter values, local variable, table variable, table-valued
// function, row goal, a conversion or expression on the column).
// row-estimate-skew runs after them and leaves a node to them once one of
// them reported there.
var skewCauseRules = []string{"parameter-sensitivity", "local-variable", "optimize-for-unknown", "table-variable",
	"table-valued-function", "row-goal", "implicit-conversion", "non-sargable-predicate"}

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
		{"min_elapsed_ms", 100, "on plans with QueryTimeStats, a statement faster than this gets info only"},
	},
	After: skewCauseRules,
	Doc: Doc{
		Problem: "The optimizer picks join types, memory grants and access paths from row estimates. A queue that holds 200 " +
			"pending rows when statistics were built but 2,000,000 during a backlog keeps the small-queue plan: nested loops, " +
			"tiny grants that spill, scans that were cheap. Filtered statistics in particular go stale, because the " +
			"auto-update threshold counts modifications to the whole table.",
		Evidence: "Actual plans only. For each operator planlint compares `EstimateRows` (per execution) with the actual rows " +
			"per execution, both counted the way the estimate counts them: in a parallel zone a branch that every thread " +
			"runs once is one execution whose estimate covers all threads (so `ActualExecutions` summed over threads is not " +
			"the execution count), the inner side of a parallel Nested Loops runs once per outer row, a Broadcast exchange " +
			"gives every thread the same rows (one copy counts), and a Top or TopN Sort in a parallel zone limits each thread. " +
			"It skips operators whose actual rows go unreported (Insert/Update/Delete without OUTPUT, Batch Hash Table Build, " +
			"the fill step of a table-valued function), operators that stopped early (`ActualEndOfScans` below executions, " +
			"e.g. a Merge Join input, a Top or semi join above), bitmap probes (`PROBE(...)`) and row goals " +
			"(`EstimateRowsWithoutRowGoal`), which reduce rows on purpose, and lookups under the pre-2022 cardinality " +
			"estimator. A misestimate is reported once, where it starts: an operator whose input (looking through operators " +
			"without counters such as Compute Scalar, and from a secondary spool reader to its primary spool) is already off " +
			"in the same direction inherits it, and reads of one table variable or table-valued function are one finding. " +
			"The factor is the one `--tree` shows.",
		Example: "Clustered Index Scan with `EstimateRows=\"200\"` and `ActualRows=\"2000000\"`: underestimated 10,000×.",
		Fix: "The fix follows the cause the plan shows: a table variable (fixed estimate: use a temp table, `OPTION (RECOMPILE)` " +
			"or compatibility level 150), a multi-statement table-valued function (rewrite inline, or interleaved execution " +
			"on 2017+), compiled versus runtime parameter values (`OPTION (RECOMPILE)`, `OPTIMIZE FOR`, a query per value), " +
			"a local variable (density guess: `OPTION (RECOMPILE)` or a parameter), a predicate the optimizer cannot estimate " +
			"(a function or conversion on the column), values beyond the histogram (ascending key) or statistics modified " +
			"since their last update (`UPDATE STATISTICS ... WITH FULLSCAN`; filtered statistics on their own schedule).",
		FalseAlarms: "Tiny tables produce large factors on small numbers; `min_rows` filters them. A statement that ran in a " +
			"few milliseconds gets info, not a warning, and so does an overestimate of fewer than `error_min_rows` rows with " +
			"no visible consequence (a spill, a loop it drives).",
	},
	Run: runRowEstimateSkew,
}

type skewCandidate struct {
	n     *plan.RelOp
	s     plan.RowSkew
	cause skewCause
	label string
}

func runRowEstimateSkew(p *Pass) {
	warn, errF := p.Param("warn_factor"), p.Param("error_factor")
	minRows, errRows := p.Param("min_rows"), p.Param("error_min_rows")
	legacyCE := p.Statement.CEModelVersion < 160
	explained := map[int]bool{}
	for _, name := range skewCauseRules {
		for _, f := range p.Prior(name) {
			if f.NodeID != nil {
				explained[*f.NodeID] = true
			}
		}
	}
	var cands []skewCandidate
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			s, ok := n.EstimateSkew()
			if !ok || s.Factor < warn || math.Max(s.EstimatedAll, s.ActualAll) < minRows {
				continue
			}
			if explained[n.NodeID] || n.IsLookup() && legacyCE || notAMisestimate(n, s, warn) || inherited(q.QueryPlan, n, s) {
				continue
			}
			cands = append(cands, skewCandidate{n: n, s: s, cause: skewCauseOf(q.QueryPlan, n, s), label: q.Label})
		}
	}
	elapsed := -1.0
	if qp := p.Statement.QueryPlan; qp != nil && qp.QueryTime != nil {
		elapsed = qp.QueryTime.ElapsedTimeMs
	}
	for _, g := range mergeByRoot(cands) {
		c := g[0]
		sev := Warning
		// Too many rows hurt (spills, loops run far more often); too few cost
		// memory and a plan built for more, never more than a warning.
		if c.s.Factor >= errF && math.Max(c.s.EstimatedAll, c.s.ActualAll) >= errRows && c.s.Under {
			sev = Error
		}
		if elapsed >= 0 && elapsed < p.Param("min_elapsed_ms") {
			sev = Info
		}
		// A few hundred rows fewer than expected, with no visible consequence,
		// is context.
		if !c.s.Under && harm(c.n) == "" && math.Max(c.s.EstimatedAll, c.s.ActualAll) < errRows {
			sev = Info
		}
		reportSkew(p, g, sev)
	}
}

// notAMisestimate reports rows that differ from the estimate on purpose.
func notAMisestimate(n *plan.RelOp, s plan.RowSkew, warn float64) bool {
	if s.Under {
		// A row goal that was missed is the row-goal rule's finding unless the
		// estimate without the goal is off as well.
		if g := n.EstimateRowsWithoutRowGoal; g != nil {
			return math.Max(s.ActualPerExec, 1)/math.Max(*g, 1) < warn
		}
		return false
	}
	return n.EstimateRowsWithoutRowGoal != nil || n.StoppedEarly() || earlyTermination(n) || probesBitmap(n)
}

// earlyTermination reports an operator whose low actual count can come
// from a parent that stopped asking for rows.
func earlyTermination(n *plan.RelOp) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.PhysicalOp == "Top" || strings.Contains(p.LogicalOp, "Semi Join") || p.Sort != nil && p.Sort.TopRows > 0 || p.StoppedEarly() {
			return true
		}
	}
	return false
}

// probesBitmap reports an operator that drops rows through a bitmap built
// by a hash join (PROBE([Bitmap...]) in its predicate).
func probesBitmap(n *plan.RelOp) bool {
	if n.IsExchange() && n.Predicate != nil {
		return true // an exchange filters only through a bitmap probe
	}
	for _, x := range []*plan.Scalar{n.Predicate, n.Access.Residual()} {
		if x != nil && strings.Contains(strings.ToUpper(x.String()), "PROBE(") {
			return true
		}
	}
	return false
}

// skewInputs are the operators whose rows feed n, looking through
// operators without counters (Compute Scalar) and from a secondary spool
// reader to the spool it replays.
func skewInputs(q *plan.QueryPlan, n *plan.RelOp) []*plan.RelOp {
	var out []*plan.RelOp
	var add func(c *plan.RelOp, depth int)
	add = func(c *plan.RelOp, depth int) {
		if depth > 64 {
			return
		}
		if c.RunTime == nil {
			for _, g := range c.Children {
				add(g, depth+1)
			}
			return
		}
		out = append(out, c)
	}
	if id := n.SpoolPrimaryID(); id != 0 && len(n.Children) == 0 {
		if prim := q.Node(id); prim != nil && prim != n {
			add(prim, 0)
		}
	}
	for _, c := range n.Children {
		add(c, 0)
	}
	return out
}

// inherited reports whether the operator's error comes from below: an
// input already misestimated in the same direction by a comparable factor.
func inherited(q *plan.QueryPlan, n *plan.RelOp, s plan.RowSkew) bool {
	for _, c := range skewInputs(q, n) {
		cs, ok := c.EstimateSkew()
		if ok && cs.Under == s.Under && cs.Factor >= s.Factor/2 && cs.Factor >= 2 {
			return true
		}
	}
	return false
}

// mergeByRoot groups candidates that share one root cause on one object
// (several reads of the same table variable or function), first node first.
func mergeByRoot(cands []skewCandidate) [][]skewCandidate {
	var groups [][]skewCandidate
	index := map[string]int{}
	for _, c := range cands {
		key := c.cause.mergeKey
		if key != "" {
			key = c.label + "\x00" + key
			if i, ok := index[key]; ok {
				groups[i] = append(groups[i], c)
				continue
			}
			index[key] = len(groups)
		}
		groups = append(groups, []skewCandidate{c})
	}
	return groups
}

func reportSkew(p *Pass, g []skewCandidate, sev Severity) {
	c := g[0]
	n, s := c.n, c.s
	dir := "underestimated"
	if !s.Under {
		dir = "overestimated"
	}
	ev := map[string]any{
		"operator":                     n.DisplayName(),
		"factor":                       round(s.Factor, 1),
		"direction":                    map[bool]string{true: "under", false: "over"}[s.Under],
		"estimated_rows":               round(s.EstimatedAll, 1),
		"actual_rows":                  int64(s.ActualAll),
		"estimated_rows_per_execution": round(s.EstimatedPerExec, 2),
		"actual_rows_per_execution":    round(s.ActualPerExec, 2),
		"estimated_executions":         round(s.EstimatedExecs, 1),
		"actual_executions":            int64(s.ActualExecs),
		"cause":                        c.cause.kind,
	}
	if n.RunTime.ActiveThreads() > 1 {
		ev["threads"] = n.RunTime.ActiveThreads()
	}
	if c.label != "" {
		ev["cursor_operation"] = c.label
	}
	var b strings.Builder
	b.WriteString(n.DisplayName())
	if o := n.Access.Object(); o.Table != "" {
		fmt.Fprintf(&b, " on %s", objectName(o))
	}
	fmt.Fprintf(&b, " %s rows %s×: estimated %s, actual %s", dir, units.Count(s.Factor), units.Count(s.EstimatedAll), units.Count(s.ActualAll))
	if s.ActualExecs > 1 || s.EstimatedExecs > 1 {
		fmt.Fprintf(&b, " over %s executions (%s per execution estimated, %s actual)", units.Count(s.ActualExecs), units.Count(s.EstimatedPerExec), units.Count(s.ActualPerExec))
	}
	if s.PerThreadLimitRows {
		b.WriteString(" on its busiest thread")
	}
	if len(g) > 1 {
		var ids []int
		for _, o := range g[1:] {
			ids = append(ids, o.n.NodeID)
		}
		sort.Ints(ids)
		ev["also_nodes"] = ids
		fmt.Fprintf(&b, "; the same %s is read at %s %s", c.cause.subject, plural(len(ids), "node"), joinInts(ids))
	}
	if c.cause.detail != "" {
		fmt.Fprintf(&b, "; %s", c.cause.detail)
	}
	if h := harm(n); h != "" {
		ev["consequence"] = h
		fmt.Fprintf(&b, "; %s", h)
	}
	p.Report(Finding{Severity: sev, NodeID: Node(n.NodeID), Message: b.String(), Evidence: ev, Fix: c.cause.fix})
}

func joinInts(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return quoteList(s)
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

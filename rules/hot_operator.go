package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// HotOperator reports where a slow statement's time went when no other
// rule explains it.
var HotOperator = &Rule{
	Code:     "PL401",
	Name:     "hot-operator",
	Severity: Warning,
	Summary:  "One operator took a large share of a slow statement's elapsed time",
	Params: []Param{
		{"min_share", 0.2, "the operator's own elapsed time as a share of the statement's, from which it is reported"},
		{"warn_share", 0.5, "share from which the finding is a warning (below it, info)"},
		{"min_elapsed_ms", 1000, "statements faster than this are not examined"},
	},
	After: []string{"*"},
	Doc: Doc{
		Problem: "When a statement is slow, the first question is which operator the time went into. Cost percentages are " +
			"estimates and often point elsewhere; an actual plan records each operator's elapsed time.",
		Evidence: "Actual plans with per-operator timings (SQL Server 2014 SP2 / 2016 and later). An operator's own time is " +
			"its `ActualElapsedms` minus its children's in row mode (per thread, then the slowest thread; children across an " +
			"exchange count with their slowest thread) and `ActualElapsedms` itself in batch mode. planlint reports an " +
			"operator whose own time is at least `min_share` of the statement's elapsed time (`QueryTimeStats`, else the " +
			"longest operator time) on statements of at least `min_elapsed_ms`, unless another finding on that operator " +
			"already explains it. Exchanges are skipped: their time is waiting for other threads.",
		Example: "A Table Scan on the inner side of a Nested Loops join, executed 24,534,678 times, took 1,562,674 ms of the " +
			"statement's 1,570,273 ms (99.5%).",
		Fix: "Depends on the operator: a scan or seek executed once per outer row needs an index on the inner table's join " +
			"columns (the finding names them) or a join that reads the table once; a scan that reads far more rows than it " +
			"returns needs an index on its predicate columns; a sort needs an index in its order or fewer rows.",
		FalseAlarms: "A statement that has to read a large table once will spend its time in that scan; the finding is info " +
			"below `warn_share`.",
	},
	Run: runHotOperator,
}

func runHotOperator(p *Pass) {
	elapsed := statementElapsedMs(p.Statement)
	if elapsed < p.Param("min_elapsed_ms") {
		return
	}
	prior := p.Prior("")
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			t := n.Time
			if t == nil || t.Waiting {
				continue
			}
			share := float64(t.SelfElapsedMs) / elapsed
			if share < p.Param("min_share") || findingAt(prior, n.NodeID) != nil {
				continue
			}
			reportHot(p, q.QueryPlan, n, share, elapsed)
		}
	}
}

func reportHot(p *Pass, q *plan.QueryPlan, n *plan.RelOp, share, elapsed float64) {
	t, rt := n.Time, n.RunTime
	rows, _ := n.ActualRowCount()
	execs, _ := n.ActualExecutionCount()
	ev := map[string]any{
		"operator": n.DisplayName(), "self_elapsed_ms": t.SelfElapsedMs, "self_cpu_ms": t.SelfCPUMs,
		"statement_elapsed_ms": elapsed, "time_share": round(share, 3), "actual_rows": int64(rows),
		"actual_executions": int64(execs), "logical_reads": rt.LogicalReads,
	}
	var b strings.Builder
	b.WriteString(n.DisplayName())
	if o := n.Access.Object(); o.Table != "" {
		fmt.Fprintf(&b, " on %s", objectName(o))
	}
	fmt.Fprintf(&b, " took %s ms of its own, %s of the statement's %s ms", units.Count(float64(t.SelfElapsedMs)), percent(share), units.Count(elapsed))
	if rt.ActiveThreads() > 1 {
		fmt.Fprintf(&b, " (slowest of %d threads; %s ms CPU in all)", rt.ActiveThreads(), units.Count(float64(t.SelfCPUMs)))
	}
	fmt.Fprintf(&b, ": %s rows", units.Count(rows))
	if execs > 1 {
		fmt.Fprintf(&b, " over %s executions", units.Count(execs))
	}
	if rt.HasRowsRead && rt.ActualRowsRead > int64(rows) {
		ev["actual_rows_read"] = rt.ActualRowsRead
		fmt.Fprintf(&b, ", %s rows read", units.Count(float64(rt.ActualRowsRead)))
	}
	if rt.LogicalReads > 0 {
		fmt.Fprintf(&b, ", %s logical reads", units.Count(float64(rt.LogicalReads)))
	}
	f := Finding{Severity: Info, NodeID: Node(n.NodeID), Evidence: ev}
	fix, concrete := hotFix(n, execs, rows, &b, f.Evidence)
	if concrete && share >= p.Param("warn_share") {
		f.Severity = Warning // a warning needs a fix that can be applied as it stands
	}
	f.Fix, f.Message = fix, b.String()
	p.Report(f)
}

// hotFix proposes what removes the operator's work, adding what it found
// to the message and evidence; concrete reports whether the fix is one a
// DBA can apply as it stands (DDL or a hint).
func hotFix(n *plan.RelOp, execs, rows float64, b *strings.Builder, ev map[string]any) (fix string, concrete bool) {
	o := n.Access.Object()
	scan := n.Access != nil && !n.IsLookup() && len(n.Access.SeekPredicates) == 0
	inner := execs > 1 && n.RebindsInZone()
	switch {
	case n.Access != nil && inner && o.Table != "" && !strings.HasPrefix(o.Table, "@"):
		fmt.Fprintf(b, "; it runs once per outer row of the Nested Loops join above it")
		if !scan {
			return fmt.Sprintf("the %s executions come from the join's outer input: check its estimate, and test a hash join "+
				"(OPTION (HASH JOIN)), which reads %s once", units.Count(execs), objectName(o)), true
		}
		if cols := predicateColumns(o, n, loopAbove(n)); len(cols) > 0 {
			x := indexDDL{Schema: o.Schema, Table: o.Table, Keys: cols}
			x.addEvidence(ev)
			return fmt.Sprintf("give the inner side an index on the columns it is searched by, so each execution seeks: %s "+
				"Or let the table be read once: test a hash join (OPTION (HASH JOIN))", x.String()), true
		}
		return "test a hash join (OPTION (HASH JOIN)) so the table is read once instead of once per outer row", true
	case scan && n.RunTime.HasRowsRead && float64(n.RunTime.ActualRowsRead) > 10*rows && o.Table != "":
		if cols := predicateColumns(o, n); len(cols) > 0 {
			x := indexDDL{Schema: o.Schema, Table: o.Table, Keys: cols}
			x.addEvidence(ev)
			rewrite := ""
			if w := expressionOnColumn(n.Access.Residual()); w != "" {
				rewrite = fmt.Sprintf("first rewrite %s so the column stands alone (no function or conversion around it), then ", clip(w))
			}
			return fmt.Sprintf("the operator reads %s rows to return %s: %san index on its predicate columns lets it seek: %s",
				units.Count(float64(n.RunTime.ActualRowsRead)), units.Count(rows), rewrite, x.String()), true
		}
	}
	return "look at what this operator does per row (its predicate, the columns it computes) and whether fewer rows can reach it", false
}

// loopAbove is the Nested Loops join whose inner side holds n.
func loopAbove(n *plan.RelOp) *plan.RelOp {
	child := n
	for p := n.Parent; p != nil; child, p = p, p.Parent {
		if p.PhysicalOp == "Nested Loops" && len(p.Children) > 1 && p.Children[0] != child {
			return p
		}
	}
	return nil
}

// predicateColumns lists the columns of o that the operators' predicates
// test (bitmap probes left out), in order of appearance.
func predicateColumns(o plan.ObjectRef, ns ...*plan.RelOp) []string {
	var out []string
	for _, n := range ns {
		if n == nil {
			continue
		}
		for _, x := range []*plan.Scalar{n.Access.Residual(), n.Predicate} {
			for _, c := range x.Conjuncts() {
				if strings.Contains(strings.ToUpper(c.String()), "PROBE(") {
					continue
				}
				for _, col := range c.Columns() {
					if col.IsParameter() || col.Computed || col.Table == "" || !col.BelongsTo(o) {
						continue
					}
					out = append(out, col.Column)
				}
			}
		}
	}
	return uniqueFold(out)
}

func init() { register(HotOperator) }

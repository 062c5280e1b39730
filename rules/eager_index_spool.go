package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// EagerIndexSpool reports an Index Spool with Eager Spool semantics: the
// optimizer builds a temporary index in tempdb at every execution because
// no permanent index serves the seek.
var EagerIndexSpool = &Rule{
	Code:     "PL305",
	Name:     "eager-index-spool",
	Severity: Error,
	Summary:  "An eager Index Spool builds a temporary index in tempdb at every execution",
	Params: []Param{
		{"warn_ms", 1000, "actual plans: a spool subtree taking at least this many milliseconds is a warning"},
		{"error_ms", 10000, "actual plans: a spool subtree taking at least this many milliseconds is an error"},
		{"warn_rows", 100000, "a spool that copies at least this many rows (actual, or estimated without timings) is a warning"},
		{"error_rows", 5000000, "estimated plans: a spool copying at least this many rows with error_cost_share is an error"},
		{"error_cost_share", 0.25, "estimated plans: the spool subtree's share of the statement cost that makes a large spool an error"},
	},
	Doc: Doc{
		Problem: "An eager Index Spool reads its whole input into a worktable in tempdb and builds an index on it before " +
			"the first seek, at every execution of the query. The optimizer does this when the inner side of a Nested Loops " +
			"join needs a seek that no permanent index offers; it never tells you, it just pays for it (and the spool build " +
			"runs single-threaded, even in a parallel plan).",
		Evidence: "`RelOp PhysicalOp=\"Index Spool\" LogicalOp=\"Eager Spool\"`; the `Spool` element's `SeekPredicateNew` " +
			"`RangeColumns` are the temporary index's keys and the spool's `OutputList` is what it stores. planlint reports " +
			"the rows copied into the spool (its input's rows), the seeks served (the spool's executions) and, in actual " +
			"plans, the elapsed time of the spool subtree against the statement's.",
		Example: "```sql\nSELECT p.Id, b.Id FROM dbo.Posts AS p\nCROSS APPLY (SELECT TOP (1) b.Id FROM dbo.Badges AS b\n" +
			"             WHERE b.UserId = p.OwnerUserId ORDER BY b.Date DESC) AS b;\n```\n" +
			"Index Spool (Eager Spool) seeked on `Badges.UserId`, output `Id, Date`, fed by a Clustered Index Scan of " +
			"8,042,005 rows: 22.7 s of the statement's 44.1 s.",
		Fix: "Create the index the spool builds, permanently: keys = the spool's seek columns (equality columns first), " +
			"INCLUDE = the other columns it outputs. planlint prints the `CREATE INDEX`, e.g. " +
			"`CREATE INDEX IX_Badges_UserId ON dbo.Badges (UserId) INCLUDE (Id, Date);`. Where the query can express it, " +
			"adding `Date DESC` to the key serves the `TOP (1) … ORDER BY` directly.",
		FalseAlarms: "A lazy Index Spool (a cache of inner results, `LogicalOp=\"Lazy Spool\"`) and an eager Table Spool " +
			"(Halloween protection, no index) are not this. A spool over a few hundred rows costs little: it is info. When " +
			"the spool's output is an expression (`Expr1025`), the INCLUDE list cannot name it: index its base columns.",
	},
	Run: runEagerIndexSpool,
}

func runEagerIndexSpool(p *Pass) {
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			if n.PhysicalOp == "Index Spool" && n.LogicalOp == "Eager Spool" && n.Spool != nil && len(n.Children) == 1 {
				reportEagerIndexSpool(p, q, n)
			}
		}
	}
}

// spoolSource finds the access that feeds a spool: the first seek or scan
// below it on the table of its seek columns.
func spoolSource(n *plan.RelOp, table plan.ObjectRef) *plan.RelOp {
	var src *plan.RelOp
	n.Children[0].Walk(func(x *plan.RelOp) bool {
		if src != nil {
			return false
		}
		if x.Access != nil && (table.Table == "" || x.Access.Object().SameTable(table)) {
			src = x
			return false
		}
		return true
	})
	return src
}

func reportEagerIndexSpool(p *Pass, q plan.LabeledPlan, n *plan.RelOp) {
	seekCols := n.Spool.SeekColumns()
	var table plan.ObjectRef
	for _, c := range seekCols {
		if c.Table != "" {
			table = tableOf(c)
			break
		}
	}
	src := spoolSource(n, table)
	if table.Table == "" && src != nil {
		table = src.Access.Object()
	}
	if src != nil {
		if o := src.Access.Object(); o.SameTable(table) {
			table = o // carries database and schema
		}
	}
	keys := baseColumns(seekCols, table)
	include := without(baseColumns(n.OutputList, table), keys)
	var exprs []string
	for _, c := range n.OutputList {
		if c.Table == "" && !c.IsParameter() {
			exprs = append(exprs, c.Column)
		}
	}

	spooled, kind := rowsOut(n.Children[0])
	seeks, _ := executions(n)
	ev := map[string]any{
		"object":        objectEvidence(table),
		"seek_columns":  columnNames(seekCols),
		"rows_spooled":  round(spooled, 1),
		"rows_kind":     kind,
		"seeks":         round(seeks, 1),
		"spool_outputs": columnNames(n.OutputList),
	}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Index Spool (Eager Spool) builds a temporary index on %s (%s) from %s rows (%s)", table.TableName(false), strings.Join(keys, ", "), units.Count(spooled), kind)
	if src != nil {
		ev["source_node_id"] = src.NodeID
		fmt.Fprintf(&b, " read by %s (node %d)", src.DisplayName(), src.NodeID)
	}
	fmt.Fprintf(&b, " and seeks it %s times", units.Count(seeks))

	sev := Info
	ms, timed := elapsedMs(n)
	if timed {
		sev = gradeByTime(p, q.QueryPlan, ms, "the spool subtree", true, ev, &b)
	} else {
		share := noteSubtreeShare(q.QueryPlan, n, ev, &b)
		switch {
		case kind == "estimated" && spooled >= p.Param("error_rows") && share >= p.Param("error_cost_share"):
			sev = Error
		case spooled >= p.Param("warn_rows"):
			sev = Warning
		}
	}

	f := Finding{Severity: sev, NodeID: Node(n.NodeID), Message: b.String(), Evidence: ev}
	if len(keys) > 0 && table.Table != "" {
		x, covered := indexForKeys(p, table, keys, include)
		if covered {
			f.Fix = fmt.Sprintf("index %s already has keys %s and the spooled columns, yet the optimizer built a spool: recompile, and check that the seek columns' types match the outer columns", x.Name, strings.Join(keys, ", "))
		} else {
			x.addEvidence(ev)
			f.Fix = "create the index the spool builds at every execution: " + x.String()
		}
		if len(exprs) > 0 {
			f.Fix += fmt.Sprintf(" (the spool also outputs %s, computed from that table's columns: include those columns too)", quoteList(exprs))
		}
	} else {
		f.Fix = "create a permanent index keyed on the spool's seek columns " + quoteList(columnNames(seekCols)) + " on the table the spool reads"
	}
	p.Report(f)
}

func init() { register(EagerIndexSpool) }

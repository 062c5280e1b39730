package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// ManyToManyMerge reports a Merge Join that could not prove either input
// unique on the join columns and so keeps duplicates in a tempdb worktable.
var ManyToManyMerge = &Rule{
	Code:     "PL311",
	Name:     "many-to-many-merge",
	Severity: Error,
	Summary:  "A many-to-many Merge Join replays duplicate rows through a worktable in tempdb",
	Params: []Param{
		{"warn_ms", 1000, "actual plans: the join's own elapsed time (without its inputs) that makes a warning"},
		{"error_ms", 10000, "actual plans: the join's own elapsed time that makes an error"},
		{"warn_cost_share", 0.25, "estimated plans: the join's own share of the statement cost that makes a warning"},
		{"min_statement_cost", 1, "estimated plans: statements cheaper than this are trivial (info)"},
	},
	Doc: Doc{
		Problem: "A one-to-many Merge Join reads both sorted inputs once. When the optimizer cannot prove that either input " +
			"is unique on the join columns it uses the many-to-many variant: every run of duplicate keys from the inner " +
			"input is stored in a worktable in tempdb and replayed for each matching outer row. With many duplicates on " +
			"both sides this is slow and invisible in the plan except for one attribute.",
		Evidence: "`Merge ManyToMany=\"true\"`; `OuterSideJoinColumns` and `InnerSideJoinColumns` name the join columns. " +
			"planlint names both sides (table and columns), and grades by the join's own work: in actual plans its elapsed " +
			"time minus its inputs' (row mode), in estimated plans its own share of the statement cost. The worktable's " +
			"reads are not in the plan (SET STATISTICS IO shows them as `Worktable`).",
		Example: "```sql\nSELECT TOP (100) p.Id, v.Id FROM dbo.Posts AS p INNER MERGE JOIN dbo.Votes AS v ON p.PostTypeId = v.VoteTypeId;\n```\n" +
			"Neither PostTypeId nor VoteTypeId is unique: the merge replays every Votes row with the same type for every post.",
		Fix: "If one side's join columns are unique in fact, say so with a unique index or constraint (planlint prints the " +
			"`CREATE UNIQUE INDEX` for the smaller side): the optimizer then uses a one-to-many merge without a worktable. " +
			"If both sides really hold duplicates, remove a `MERGE JOIN` hint and let the optimizer choose a hash join, or " +
			"aggregate one side to one row per key before joining.",
		FalseAlarms: "A many-to-many merge over few duplicates costs little: planlint reports it as info unless the join's " +
			"own time or cost share is large.",
	},
	Run: runManyToManyMerge,
}

func runManyToManyMerge(p *Pass) {
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			if n.Merge != nil && n.Merge.ManyToMany && len(n.Children) == 2 {
				reportManyToManyMerge(p, q, n)
			}
		}
	}
}

// joinSide describes one input of a join by the table its join columns
// come from.
func joinSide(cols []plan.ColumnRef, input *plan.RelOp) (plan.ObjectRef, string) {
	var table plan.ObjectRef
	for _, c := range cols {
		if c.Table != "" {
			table = tableOf(c)
			break
		}
	}
	if table.Table == "" {
		return table, fmt.Sprintf("node %d (%s)", input.NodeID, quoteList(columnNames(cols)))
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.Column)
	}
	return table, fmt.Sprintf("%s (%s)", table.TableName(false), strings.Join(names, ", "))
}

func reportManyToManyMerge(p *Pass, q plan.LabeledPlan, n *plan.RelOp) {
	outer, inner := n.Children[0], n.Children[1]
	ot, oDesc := joinSide(n.Merge.OuterColumns, outer)
	it, iDesc := joinSide(n.Merge.InnerColumns, inner)
	oRows, kind := rowsOut(outer)
	iRows, _ := rowsOut(inner)
	out, _ := rowsOut(n)
	ev := map[string]any{
		"outer_columns": columnNames(n.Merge.OuterColumns),
		"inner_columns": columnNames(n.Merge.InnerColumns),
		"outer_rows":    round(oRows, 1),
		"inner_rows":    round(iRows, 1),
		"rows":          round(out, 1),
		"rows_kind":     kind,
	}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is many-to-many: neither %s nor %s is known to be unique on the join columns, so duplicates go through a worktable in tempdb; %s outer rows and %s inner rows produced %s rows (%s)",
		n.DisplayName(), oDesc, iDesc, units.Count(oRows), units.Count(iRows), units.Count(out), kind)

	sev := Info
	if total, ok := elapsedMs(n); ok {
		own := total
		for _, c := range n.Children {
			if ms, ok := elapsedMs(c); ok {
				own -= ms
			}
		}
		if own < 0 {
			own = 0
		}
		ev["own_elapsed_ms"] = own
		fmt.Fprintf(&b, "; the join itself took %s", units.Ms(own))
		sev = timeSeverity(p, own)
	} else {
		share := costShare(q.QueryPlan, n)
		ev["cost_share"] = round(share, 3)
		fmt.Fprintf(&b, "; the join itself is %s of the statement cost", percent(share))
		if share >= p.Param("warn_cost_share") && q.Cost() >= p.Param("min_statement_cost") {
			sev = Warning
		}
	}

	f := Finding{Severity: sev, NodeID: Node(n.NodeID), Message: b.String(), Evidence: ev}
	// The smaller side is the likelier to be unique in fact.
	table, cols := it, n.Merge.InnerColumns
	if oRows <= iRows && ot.Table != "" {
		table, cols = ot, n.Merge.OuterColumns
	}
	if table.Table == "" {
		table, cols = ot, n.Merge.OuterColumns
	}
	hint := ""
	if strings.Contains(strings.ToUpper(p.Statement.Text), "MERGE JOIN") {
		hint = "remove the MERGE JOIN hint so the optimizer can hash, "
	}
	remote := false
	n.Walk(func(x *plan.RelOp) bool {
		remote = remote || strings.HasPrefix(x.PhysicalOp, "Remote")
		return !remote
	})
	keys := baseColumns(cols, table)
	switch {
	case remote:
		f.Fix = "the inputs come from a remote source, where planlint cannot suggest an index: " + hintOr(hint, "let the optimizer choose a hash join ") + "or aggregate one side to one row per key before the join"
	case strings.HasPrefix(table.Table, "@") && len(keys) > 0:
		f.Fix = fmt.Sprintf("if %s is unique in %s, declare it PRIMARY KEY or UNIQUE in the table variable's DECLARE (the join becomes one-to-many, without the worktable); otherwise %sor aggregate one side to one row per key before the join",
			strings.Join(keys, ", "), table.Table, hintOr(hint, "let the optimizer choose a hash join "))
	case table.Table != "" && len(keys) > 0:
		x := indexDDL{Schema: table.Schema, Table: table.Table, Keys: keys, Unique: true, Name: "UX_" + strings.Join(append([]string{table.Table}, keys...), "_")}
		ddl := x.String()
		x.addEvidence(ev)
		f.Fix = fmt.Sprintf("if %s is unique in %s, declare it: %s (the join becomes one-to-many, without the worktable); otherwise %sor aggregate one side to one row per key before the join",
			strings.Join(keys, ", "), table.TableName(false), ddl, hintOr(hint, "let the optimizer choose a hash join "))
	default:
		f.Fix = "declare the join columns unique on one side if they are, else " + hintOr(hint, "let the optimizer choose a hash join ") + "or aggregate one side before the join"
	}
	p.Report(f)
}

func hintOr(hint, otherwise string) string {
	if hint != "" {
		return hint
	}
	return otherwise
}

func init() { register(ManyToManyMerge) }

package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/plan"
)

// KeyLookup reports every Key Lookup and RID Lookup, graded by executions
// and cost share.
var KeyLookup = &Rule{
	Code:     "PL102",
	Name:     "key-lookup",
	Severity: Error,
	Summary:  "A Key or RID Lookup fetches columns the index it follows does not hold",
	Params: []Param{
		{"warn_executions", 1000, "lookups executed at least this often are a warning"},
		{"error_executions", 100000, "lookups executed at least this often are an error"},
		{"warn_cost_share", 0.25, "lookups costing at least this share of the statement are a warning"},
		{"error_cost_share", 0.5, "with at least warn_executions executions, this cost share makes an error"},
	},
	Doc: Doc{
		Problem: "A nonclustered index seek or scan found rows, but the index lacks columns the query needs, so for every " +
			"row SQL Server goes back to the clustered index (Key Lookup) or heap (RID Lookup). Each execution is a random " +
			"read; with a small pending set this is cheap, during a backlog it multiplies by the number of rows.",
		Evidence: "A Key Lookup is `RelOp PhysicalOp=\"Clustered Index Seek\"` with `IndexScan Lookup=\"1\"` on the inner side " +
			"of a Nested Loops join; a RID Lookup is `PhysicalOp=\"RID Lookup\"`. The lookup's `OutputList` names the " +
			"fetched columns and its `Predicate` any residual test. planlint reports estimated executions " +
			"(`EstimateRebinds + EstimateRewinds + 1`) or actual ones (summed over threads), and the lookup's share of the " +
			"statement cost. Severity grows with executions and cost share; a handful of lookups is info.",
		Example: "```sql\nCREATE INDEX IX_Work_Status ON dbo.Work (Status);\n" +
			"SELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE Status = 0 ORDER BY CreatedAt;\n```\n" +
			"Index Seek on IX_Work_Status → Key Lookup on PK_Work fetching CreatedAt, CustomerId for every pending row.",
		Fix: "Cover the query: put the fetched columns in the index that feeds the lookup (`INCLUDE (...)`), ordering " +
			"columns in the key. With catalog facts planlint prints the exact index. Keep wide columns (a JSON payload, " +
			"nvarchar(max)) out of the index: fetch them in a second query bounded by the few keys you selected.",
		FalseAlarms: "A few lookups on a selective seek are often the best plan; they are reported at info level. " +
			"Lookups that only re-test a filtered index's filter column are explained by `filtered-index-missing-filter-column`.",
	},
	Run: runKeyLookup,
}

func runKeyLookup(p *Pass) {
	for _, q := range p.Plans() {
		var sorts []*plan.RelOp // listed once: a plan may hold thousands of lookups
		for _, n := range q.Nodes {
			if n.Sort != nil {
				sorts = append(sorts, n)
			}
		}
		for _, n := range q.Nodes {
			if !n.IsLookup() {
				continue
			}
			reportLookup(p, q, n, sorts)
		}
	}
}

func reportLookup(p *Pass, q plan.LabeledPlan, n *plan.RelOp, sorts []*plan.RelOp) {
	kind := "Key Lookup"
	if n.PhysicalOp == "RID Lookup" || strings.EqualFold(n.Access.Object().IndexKind, "Heap") {
		kind = "RID Lookup"
	}
	obj := n.Access.Object()
	execs, execKind := executions(n)
	share := subtreeShare(q.QueryPlan, n)
	fetched := uniqueFold(columnNames(n.OutputList))
	ev := map[string]any{
		"operator":        kind,
		"object":          objectEvidence(obj),
		"columns":         fetched,
		"executions":      round(execs, 1),
		"executions_kind": execKind,
		"cost_share":      round(share, 3),
	}
	if n.RunTime != nil {
		ev["actual_rows"] = n.RunTime.ActualRows
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s", kind, objectName(obj))
	if len(fetched) > 0 {
		fmt.Fprintf(&b, " fetches %s", quoteList(fetched))
	} else {
		b.WriteString(" fetches no columns")
	}
	if pred := n.Access.Residual(); pred != nil {
		ev["residual_predicate"] = pred.String()
		fmt.Fprintf(&b, " and re-tests %s", pred.String())
	}
	outer := lookupOuterAccess(n)
	if outer != nil {
		oo := outer.Access.Object()
		ev["outer_node_id"] = outer.NodeID
		ev["outer_index"] = oo.Index
		fmt.Fprintf(&b, " for rows from %s %s (node %d)", outer.DisplayName(), oo.Index, outer.NodeID)
	}
	fmt.Fprintf(&b, "; %s executions (%s), %s of the statement cost", count(execs), execKind, percent(share))

	sev := Info
	warnExec, errExec := p.Param("warn_executions"), p.Param("error_executions")
	switch {
	case execs >= errExec || (execs >= warnExec && share >= p.Param("error_cost_share")):
		sev = Error
	case execs >= warnExec || share >= p.Param("warn_cost_share"):
		sev = Warning
	}
	f := Finding{Severity: sev, NodeID: Node(n.NodeID), Message: b.String(), Evidence: ev}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	for _, s := range sorts {
		if outer == nil || singleTableSource(s) != outer {
			continue
		}
		sortEv := map[string]any{}
		if fix := sortFix(p, q.QueryPlan, s, outer, sortEv); fix != "" {
			f.Fix = fmt.Sprintf("one index removes both this lookup and the Sort at node %d: %s", s.NodeID, fix)
			if ddl, ok := sortEv["suggested_index"]; ok {
				ev["suggested_index"] = ddl
			}
		}
	}
	if outer != nil && f.Fix == "" {
		needed := fetched
		if n.Access.Residual() != nil {
			needed = uniqueFold(append(append([]string{}, fetched...), columnNames(n.Access.Residual().Columns())...))
		}
		f.Fix = lookupFix(p, outer, needed, ev)
	}
	if f.Fix == "" && len(fetched) > 0 {
		f.Fix = fmt.Sprintf("add %s to the INCLUDE list of the index the lookup follows", quoteList(fetched))
	}
	p.Report(f)
}

// lookupFix suggests the INCLUDE change that removes the lookup when the
// catalog knows the outer index.
func lookupFix(p *Pass, outer *plan.RelOp, needed []string, ev map[string]any) string {
	oo := outer.Access.Object()
	t := findTable(p.Catalog, oo)
	if t == nil {
		return ""
	}
	ix := t.FindIndex(oo.Index)
	if ix == nil {
		return ""
	}
	var missing []string
	for _, c := range needed {
		if !t.IndexContains(ix, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	adv := advise(t, ix, nil, missing)
	ev["suggested_index"] = adv.DDL
	if len(adv.Wide) > 0 {
		ev["wide_columns"] = adv.Wide
	}
	return adv.Text
}

func init() { register(KeyLookup) }

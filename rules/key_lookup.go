package rules

import (
	"fmt"
	"math"
	"strings"

	"github.com/planlint/planlint/internal/units"
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
		{"error_cost_share", 0.5, "this share of the statement makes an error: on estimated plans with warn_executions on a statement costing min_statement_cost, on actual plans with error_actual_executions"},
		{"error_actual_executions", 10000, "on actual plans, lookups measured at least this often and costing error_cost_share are an error"},
		{"min_statement_cost", 1, "cost share counts towards a warning or error only on statements with at least this estimated cost"},
		{"max_include_columns", 10, "a lookup fetching more columns than this gets no INCLUDE fix (it would copy the table) and is info"},
		{"warn_elapsed_ms", 100, "on actual plans with timings, lookups that took less elapsed and CPU time than this are info"},
	},
	Doc: Doc{
		Problem: "A nonclustered index seek or scan found rows, but the index lacks columns the query needs, so for every " +
			"row SQL Server goes back to the clustered index (Key Lookup) or heap (RID Lookup). Each execution is a random " +
			"read; with a small pending set this is cheap, during a backlog it multiplies by the number of rows.",
		Evidence: "A Key Lookup is `RelOp PhysicalOp=\"Clustered Index Seek\"` with `IndexScan Lookup=\"1\"` on the inner side " +
			"of a Nested Loops join; a RID Lookup is `PhysicalOp=\"RID Lookup\"`. The lookup's `OutputList` names the " +
			"fetched columns and its `Predicate` the residual test it re-applies to every row. planlint reports estimated " +
			"executions (`EstimateRebinds + EstimateRewinds + 1`) or actual ones, and the lookup's share of the statement: " +
			"on actual plans its CPU time over the statement's (`QueryTimeStats`), or its estimated cost scaled to the " +
			"actual executions; on estimated plans its cost share. Severity grows with executions and share; cost share " +
			"alone warns only on statements costing at least `min_statement_cost`, and on actual plans lookups that took " +
			"less than `warn_elapsed_ms` of elapsed and CPU time are info. A lookup whose outer access is forced " +
			"(`ForcedIndex`, `ForceSeek`) says so. Lookups into system tables (`sys.*`) are not reported.",
		Example: "```sql\nCREATE INDEX IX_Work_Status ON dbo.Work (Status);\n" +
			"SELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE Status = 0 ORDER BY CreatedAt;\n```\n" +
			"Index Seek on IX_Work_Status → Key Lookup on PK_Work fetching CreatedAt, CustomerId for every pending row.",
		Fix: "Cover the query: rebuild the index that feeds the lookup with the fetched columns and the columns the lookup " +
			"re-tests in its INCLUDE list (`CREATE INDEX ... ON ... (keys) INCLUDE (...) WITH (DROP_EXISTING = ON)`). " +
			"With catalog facts planlint prints the complete statement, keeping the index's keys, includes, filter and " +
			"uniqueness, and leaves wide columns (a JSON payload, nvarchar(max)) out: fetch them in a second query bounded " +
			"by the few keys you selected. Without catalog facts the plan shows the index's name and the key columns its " +
			"seek uses; planlint prints those and says that the remaining keys and current includes must be copied from " +
			"the index definition. When a Sort over the same access could go too, one index removes both.",
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
			if !n.IsLookup() || strings.EqualFold(n.Access.Object().Schema, "sys") {
				continue // system tables: nobody can add an index to them
			}
			reportLookup(p, q, n, sorts)
		}
	}
}

// lookupShare is the lookup's share of the statement: on actual plans with
// timings its CPU time over the statement's, else its estimated cost
// scaled from estimated to actual executions, else its estimated cost.
// total is the statement's cost with the lookup's scaled the same way.
func lookupShare(q *plan.QueryPlan, n *plan.RelOp) (share float64, kind string, total float64) {
	total = q.Cost()
	rt := n.RunTime
	if rt == nil || total <= 0 {
		return subtreeShare(q, n), "estimated cost", total
	}
	execs, _ := executions(n)
	scaled := n.SubtreeCost * execs / n.EstimatedExecutions()
	rest := math.Max(0, total-n.SubtreeCost)
	total = scaled + rest
	if qt := q.QueryTime; qt != nil && rt.HasTiming && qt.CPUTimeMs > 0 {
		return math.Min(1, float64(rt.CPUMs)/qt.CPUTimeMs), "CPU time", total
	}
	if total <= 0 {
		return 0, "estimated cost", total
	}
	return scaled / total, "estimated cost scaled to actual executions", total
}

func reportLookup(p *Pass, q plan.LabeledPlan, n *plan.RelOp, sorts []*plan.RelOp) {
	kind := "Key Lookup"
	if n.PhysicalOp == "RID Lookup" || strings.EqualFold(n.Access.Object().IndexKind, "Heap") {
		kind = "RID Lookup"
	}
	obj := n.Access.Object()
	execs, execKind := executions(n)
	share, shareKind, stmtCost := lookupShare(q.QueryPlan, n)
	fetched := uniqueFold(columnNames(n.OutputList))
	needed := fetched
	var retested []string
	if pred := n.Access.Residual(); pred != nil {
		for _, c := range pred.Columns() {
			if !c.IsParameter() && (c.Table == "" || c.BelongsTo(obj)) {
				retested = append(retested, c.Column)
			}
		}
		retested = uniqueFold(retested)
		needed = uniqueFold(append(append([]string{}, fetched...), retested...))
	}
	ev := map[string]any{
		"operator":        kind,
		"object":          objectEvidence(obj),
		"columns":         fetched,
		"executions":      round(execs, 1),
		"executions_kind": execKind,
		"cost_share":      round(share, 3),
		"cost_share_kind": shareKind,
	}
	if len(retested) > 0 {
		ev["retested_columns"] = retested
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
	fmt.Fprintf(&b, "; %s executions (%s), %s of the statement (%s)", units.Count(execs), execKind, percent(share), shareKind)
	if outer != nil && (outer.Access.ForcedIndex || outer.Access.ForceSeek) {
		var hints []string
		if outer.Access.ForcedIndex {
			hints = append(hints, "an index hint")
		}
		if outer.Access.ForceSeek {
			hints = append(hints, "FORCESEEK")
		}
		ev["forced"] = hints
		fmt.Fprintf(&b, "; the query forces node %d with %s, so the optimizer could not choose a plan without the lookup", outer.NodeID, quoteList(hints))
	}

	sev := Info
	warnExec, errExec := p.Param("warn_executions"), p.Param("error_executions")
	elapsed, cpu, timed := lookupTime(n)
	if timed {
		ev["elapsed_ms"], ev["cpu_ms"] = elapsed, cpu
	}
	tooWide := len(needed) > int(p.Param("max_include_columns"))
	switch {
	case tooWide:
		// covering would copy the table; the fix is a narrower select list
	case timed && float64(max(elapsed, cpu)) < p.Param("warn_elapsed_ms"):
		// measured: all the lookups together took little time
	case execs >= errExec,
		n.RunTime != nil && execs >= p.Param("error_actual_executions") && share >= p.Param("error_cost_share"),
		n.RunTime == nil && execs >= warnExec && share >= p.Param("error_cost_share") && stmtCost >= p.Param("min_statement_cost"):
		sev = Error
	case execs >= warnExec || share >= p.Param("warn_cost_share") && stmtCost >= p.Param("min_statement_cost"):
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
		if fix, _ := sortFix(p, q.QueryPlan, s, outer, defaultMaxKeyColumns, sortEv); fix != "" {
			f.Fix = fmt.Sprintf("one index removes both this lookup and the Sort at node %d: %s", s.NodeID, fix)
			ev["removes_sort_node"] = s.NodeID
			for k, v := range sortEv {
				if _, ok := ev[k]; !ok {
					ev[k] = v
				}
			}
		}
	}
	if tooWide && f.Fix == "" {
		f.Fix = fmt.Sprintf("the lookup fetches %d columns; an index covering them all would be a second copy of %s, so none is proposed: "+
			"select only the columns the caller uses (no SELECT *), then cover those", len(needed), obj.TableName(false))
	}
	if outer != nil && f.Fix == "" {
		f.Fix = lookupFix(p, outer, needed, ev)
	}
	if f.Fix == "" && len(needed) > 0 {
		f.Fix = fmt.Sprintf("add %s to the INCLUDE list of the index the lookup follows", quoteList(needed))
	}
	if hints, ok := ev["forced"].([]string); ok && f.Fix != "" {
		f.Fix += fmt.Sprintf("; or drop %s if it no longer picks the best index", quoteList(hints))
	}
	p.Report(f)
}

// lookupTime is the lookup's measured elapsed and CPU time on an actual
// plan with timings (a lookup has no children, so the time is its own).
func lookupTime(n *plan.RelOp) (elapsed, cpu int64, ok bool) {
	if rt := n.RunTime; rt != nil && rt.HasTiming {
		return rt.ElapsedMs, rt.CPUMs, true
	}
	return 0, 0, false
}

// seekKeyColumns lists the outer index's columns its seek predicates use,
// in key order: the part of the index key the plan shows.
func seekKeyColumns(outer *plan.RelOp) []string {
	var cols []string
	for _, sp := range outer.Access.SeekPredicates {
		for _, k := range sp.Keys {
			cols = append(cols, columnNames(k.Columns)...)
		}
	}
	return uniqueFold(cols)
}

// lookupFix builds the rebuilt outer index that covers the lookup: from
// the catalog when it knows the index, else from the plan, saying which
// parts the plan cannot show.
func lookupFix(p *Pass, outer *plan.RelOp, needed []string, ev map[string]any) string {
	oo := outer.Access.Object()
	if len(needed) == 0 {
		return ""
	}
	if t := findTable(p.Catalog, oo); t != nil {
		if ix := t.FindIndex(oo.Index); ix != nil {
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
			adv.Index.addEvidence(ev)
			ev["suggested_index"] = adv.DDL
			if len(adv.Wide) > 0 {
				ev["wide_columns"] = adv.Wide
			}
			return adv.Text
		}
	}
	if oo.Index == "" || oo.Table == "" || tableVariable(oo) {
		return ""
	}
	keys := seekKeyColumns(outer)
	var include []string
	for _, c := range needed {
		if !containsFold(keys, c) {
			include = append(include, c)
		}
	}
	if len(keys) == 0 {
		ev["index_keys_known"] = false
		return fmt.Sprintf("add %s to the INCLUDE list of %s: CREATE INDEX %s ON %s.%s (<its key columns>) INCLUDE (<its included columns>, %s) WITH (DROP_EXISTING = ON); "+
			"node %d scans the index, so the plan does not show its keys: copy them and its INCLUDE list from its definition",
			quoteList(include), objectName(oo), quoteIdent(oo.Index), quoteIdent(schemaOr(oo.Schema)), quoteIdent(oo.Table),
			strings.Join(quoteAll(include), ", "), outer.NodeID)
	}
	x := indexDDL{Schema: oo.Schema, Table: oo.Table, Name: oo.Index, Keys: keys, Include: include, DropExisting: true}
	x.addEvidence(ev)
	ev["index_keys_known"] = "seek keys only"
	parts := "remaining key columns and its current INCLUDE columns"
	if oo.Filtered {
		parts = "remaining key columns, its current INCLUDE columns and its WHERE filter (the plan marks it filtered)"
	}
	return fmt.Sprintf("%s — the keys shown are those node %d seeks on (%s); before running it, add %s's %s from its definition "+
		"(the plan does not show them; with catalog facts planlint does), since DROP_EXISTING replaces the index",
		x.String(), outer.NodeID, strings.Join(keys, ", "), oo.Index, parts)
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quoteIdent(n)
	}
	return out
}

func init() { register(KeyLookup) }

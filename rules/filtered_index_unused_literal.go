package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
)

// FilteredIndexUnusedLiteral reports filtered indexes that the statement's
// literal predicate qualifies for, yet the plan reads something else.
var FilteredIndexUnusedLiteral = &Rule{
	Code:     "PL203",
	Name:     "filtered-index-unused-literal",
	Severity: Warning,
	Summary:  "The literal predicate matches a filtered index, but the plan reads another index or the table",
	Catalog:  true,
	Doc: Doc{
		Problem: "`WHERE Status = 0` against an index filtered on `Status = 0` should be the easy case, yet the plan reads the " +
			"clustered index or another index. Something in the statement or the session stops the match, or the " +
			"optimizer costed the filtered index out.",
		Evidence: "For every filtered index of a table the plan reads but not through that index, planlint builds the " +
			"statement's literal comparisons on that table from the plan's predicates and checks that they imply the " +
			"filter. It then names the likely cause from the plan: SET options that disable filtered indexes " +
			"(StatementSetOptions), forced parameterization (ParameterizedText), a conversion on the column " +
			"(`CONVERT_IMPLICIT(int, [Status])`, from comparing with a value of another type), or an OR around the " +
			"predicate; otherwise a cost-based choice, with the columns the index lacks.",
		Example: "`SELECT TOP (20) ... WHERE Status = 0 ORDER BY CreatedAt` compiled with ANSI_NULLS OFF: Clustered Index Scan " +
			"with predicate `[Status]=(0)` and a TopN Sort, although IX_Work_Pending has exactly that filter.",
		Fix: "Remove the cause: correct SET options on the connection, a literal of the column's type " +
			"(`Status = CAST(0 AS tinyint)` is not needed for integers but is for mismatched strings), separate statements " +
			"instead of OR, or an index that covers the query when the optimizer chose against lookups.",
		FalseAlarms: "When the filtered index does not cover the query and few rows qualify, the optimizer may rightly " +
			"prefer another index.",
	},
	Run: runFilteredIndexUnusedLiteral,
}

func runFilteredIndexUnusedLiteral(p *Pass) {
	unusedFilteredIndexes(p, func(ta tableAccess) bool { return mainAccess(ta) != nil }, checkUnusedLiteral)
}

func checkUnusedLiteral(p *Pass, q plan.LabeledPlan, ta tableAccess, t *catalog.Table, ix *catalog.Index, tc []comparison) {
	// Literal comparisons as written, with conversions and ORs allowed, so
	// the cause can be named.
	var loose []catalog.Conjunct
	var converted, inOr []comparison
	for _, c := range tc {
		lc := c
		lc.InOr, lc.ColumnConverted = false, false
		cj, ok := lc.conjunct()
		if !ok {
			continue
		}
		if !containsFold(filterColumns(ix), c.Column.Column) {
			continue
		}
		loose = append(loose, cj)
		if c.ColumnConverted {
			converted = append(converted, c)
		}
		if c.InOr {
			inOr = append(inOr, c)
		}
	}
	if len(loose) == 0 {
		return
	}
	if ok, _ := ix.Filter.ImpliedBy(loose); !ok {
		return
	}
	var causes []string
	ev := map[string]any{"index": ix.Name, "table": t.Schema + "." + t.Name, "filter": ix.FilterDefinition}
	if bad := badSetOptions(p.Statement.SetOptions); len(bad) > 0 {
		causes = append(causes, "the statement was compiled with "+quoteList(bad)+", under which filtered indexes are never used")
		ev["set_options"] = bad
	}
	if p.Statement.ParameterizedText != "" || p.Statement.ParameterizationType == plan.ParamForced {
		causes = append(causes, "the statement was auto-parameterized (ParameterizedText), so the literal became a parameter")
	}
	for _, c := range converted {
		causes = append(causes, fmt.Sprintf("the column is converted in %s (a comparison with a value of another type), so the filter cannot be matched", c.Operand.String()))
		ev["conversion"] = c.text()
		break
	}
	if len(inOr) > 0 {
		causes = append(causes, "the predicate sits inside an OR, so it does not restrict every row")
		ev["or"] = true
	}
	alt := mainAccess(ta)
	if len(causes) == 0 {
		var missing []string
		for _, c := range columnsFromTable(q.QueryPlan, ta.Object) {
			if !t.IndexContains(ix, c) && !containsFold(filterColumns(ix), c) {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			causes = append(causes, fmt.Sprintf("a cost-based choice: the index lacks %s, which would need a lookup per row", quoteList(missing)))
			ev["missing_columns"] = missing
		} else {
			causes = append(causes, "a cost-based choice; check that the filtered index's statistics are current (they go stale with the queue's churn)")
		}
	}
	ev["causes"] = causes
	ev["replacement_node_id"] = alt.NodeID
	msg := fmt.Sprintf("the predicate implies the filter of %s (WHERE %s) but the plan reads %s with %s (node %d); likely cause: %s",
		ix.Name, ix.FilterDefinition, objectName(alt.Access.Object()), alt.DisplayName(), alt.NodeID, strings.Join(causes, "; "))
	p.Report(Finding{NodeID: Node(alt.NodeID), Message: msg, Evidence: ev,
		Fix: "remove the cause named above so the optimizer can match " + ix.Name})
}

// columnsFromTable lists the table's columns the plan needs: outputs and
// predicate columns of the operators that read it.
func columnsFromTable(q *plan.QueryPlan, table plan.ObjectRef) []string {
	var cols []string
	for _, n := range q.Nodes {
		if n.Access == nil || !n.Access.Object().SameTable(table) {
			continue
		}
		all := append([]plan.ColumnRef{}, n.OutputList...)
		if n.Access.Residual() != nil {
			all = append(all, n.Access.Residual().Columns()...)
		}
		for _, c := range all {
			if !c.IsParameter() && (c.Table == "" || c.BelongsTo(table)) {
				cols = append(cols, c.Column)
			}
		}
	}
	return uniqueFold(cols)
}

func init() { register(FilteredIndexUnusedLiteral) }

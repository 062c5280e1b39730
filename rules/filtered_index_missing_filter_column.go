package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// FilteredIndexMissingFilterColumn reports filtered indexes whose filter
// columns are not in the index, which leaves lookups that re-test them.
var FilteredIndexMissingFilterColumn = &Rule{
	Code:     "PL202",
	Name:     "filtered-index-missing-filter-column",
	Severity: Error,
	Summary:  "A filtered index lacks its own filter column, so the plan looks up every row to re-test it",
	Catalog:  true,
	Params: []Param{
		{"error_executions", 100000, "lookups executed at least this often make it an error"},
	},
	Doc: Doc{
		Problem: "A filtered index keyed on `CreatedAt` with `WHERE ClaimedAt IS NULL` looks like it covers `SELECT ... WHERE " +
			"ClaimedAt IS NULL ORDER BY CreatedAt`, yet SQL Server often adds a Key Lookup per row that only re-tests " +
			"`ClaimedAt IS NULL` — a documented optimizer limitation, most common with IS NULL / IS NOT NULL filters. The " +
			"filtered index then costs a random read per pending row.",
		Evidence: "A Key or RID Lookup on the inner side of a Nested Loops join whose outer input reads the filtered index, " +
			"where every column the lookup fetches or tests (`OutputList`, residual `Predicate`) is a filter column that is " +
			"neither a key nor an included column of the index (`sys.index_columns`). When the plan reads the index without " +
			"such a lookup, the missing column is reported at info level from the catalog alone.",
		Example: "```sql\nCREATE INDEX IX_Work_Unclaimed ON dbo.Work (CreatedAt) INCLUDE (CustomerId) WHERE ClaimedAt IS NULL;\n" +
			"SELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE ClaimedAt IS NULL ORDER BY CreatedAt;\n```\n" +
			"Index Scan IX_Work_Unclaimed → Key Lookup PK_Work with predicate `[ClaimedAt] IS NULL` and no output columns.",
		Fix: "Add the filter columns to the index's INCLUDE list (planlint prints the `CREATE INDEX ... WITH (DROP_EXISTING = " +
			"ON)` statement); the lookup disappears and the plan becomes a plain ordered scan of the filtered index.",
		FalseAlarms: "None known for the plan-based form; the catalog-only form is advice.",
		References:  []string{"https://sqlperformance.com/2013/04/t-sql-queries/optimizer-limitations-with-filtered-indexes"},
	},
	Run: runFilteredIndexMissingFilterColumn,
}

func filterColumns(ix *catalog.Index) []string {
	var cols []string
	for _, c := range ix.Filter.Conjuncts {
		cols = append(cols, c.Column)
	}
	return uniqueFold(cols)
}

func missingFilterColumns(t *catalog.Table, ix *catalog.Index) []string {
	var missing []string
	for _, c := range filterColumns(ix) {
		if !t.IndexContains(ix, c) {
			missing = append(missing, c)
		}
	}
	return missing
}

func runFilteredIndexMissingFilterColumn(p *Pass) {
	for _, q := range p.Plans() {
		reported := map[*catalog.Index]bool{}
		for _, n := range q.Nodes {
			if !n.IsLookup() {
				continue
			}
			outer := lookupOuterAccess(n)
			if outer == nil {
				continue
			}
			oo := outer.Access.Object()
			t := findTable(p.Catalog, oo)
			if t == nil {
				continue
			}
			ix := t.FindIndex(oo.Index)
			if ix == nil || ix.Filter == nil {
				continue
			}
			missing := missingFilterColumns(t, ix)
			if len(missing) == 0 {
				continue
			}
			used := columnNames(n.OutputList)
			if n.Access.Residual() != nil {
				used = append(used, columnNames(n.Access.Residual().Columns())...)
			}
			used = uniqueFold(used)
			onlyFilter := true
			for _, c := range used {
				if !containsFold(missing, c) {
					onlyFilter = false
				}
			}
			if !onlyFilter {
				continue // the lookup fetches other columns too: key-lookup covers it
			}
			reported[ix] = true
			execs, kind := executions(n)
			adv := advise(t, ix, nil, missing)
			ev := map[string]any{
				"index":           ix.Name,
				"filter":          ix.FilterDefinition,
				"missing_columns": missing,
				"lookup_node_id":  n.NodeID,
				"outer_node_id":   outer.NodeID,
				"executions":      round(execs, 1),
				"executions_kind": kind,
				"suggested_index": adv.DDL,
			}
			what := "only re-tests " + quoteList(missing)
			if pred := n.Access.Residual(); pred != nil {
				what = "only re-tests " + pred.String()
			}
			msg := fmt.Sprintf("%s on %s %s for rows from filtered index %s (WHERE %s), because %s %s not in the index; %s executions (%s)",
				n.DisplayName(), objectName(n.Access.Object()), what, ix.Name, ix.FilterDefinition,
				quoteList(missing), isAre(len(missing)), units.Count(execs), kind)
			sev := Warning
			if execs >= p.Param("error_executions") {
				sev = Error
			}
			p.Report(Finding{Severity: sev, NodeID: Node(n.NodeID), Message: msg, Evidence: ev, Fix: adv.Text})
		}
		reportCatalogOnly(p, q.QueryPlan, reported)
	}
}

// riskyMissingColumns returns the filter columns missing from the index
// that are known to cause lookups: those of IS [NOT] NULL filters, and those
// the statement compares otherwise than the filter does or returns. An
// equality filter the query repeats exactly needs no column in the index.
func riskyMissingColumns(q *plan.QueryPlan, table plan.ObjectRef, t *catalog.Table, ix *catalog.Index) []string {
	comps := onTable(comparisons(q), table)
	needed := columnsFromTable(q, table)
	var out []string
	for _, cj := range ix.Filter.Conjuncts {
		if t.IndexContains(ix, cj.Column) || containsFold(out, cj.Column) {
			continue
		}
		risky := cj.Op == "IS NULL" || cj.Op == "IS NOT NULL" || containsFold(needed, cj.Column)
		for _, c := range onColumn(comps, cj.Column) {
			if qc, ok := c.conjunct(); !ok || qc.String() != cj.String() {
				risky = true
			}
		}
		if risky {
			out = append(out, cj.Column)
		}
	}
	return out
}

// reportCatalogOnly notes filtered indexes the plan reads whose filter
// columns are missing in a way known to cause lookups, when no lookup in
// the plan showed the cost.
func reportCatalogOnly(p *Pass, q *plan.QueryPlan, reported map[*catalog.Index]bool) {
	for _, ta := range accessedTables(q) {
		t := findTable(p.Catalog, ta.Object)
		if t == nil {
			continue
		}
		for _, ix := range t.FilteredIndexes() {
			if ix.Filter == nil || reported[ix] {
				continue
			}
			var reader *plan.RelOp
			for _, n := range ta.Nodes {
				if !isWrite(n) && strings.EqualFold(n.Access.Object().Index, ix.Name) {
					reader = n
					break
				}
			}
			if reader == nil {
				continue
			}
			missing := riskyMissingColumns(q, ta.Object, t, ix)
			if len(missing) == 0 {
				continue
			}
			node := Node(reader.NodeID)
			adv := advise(t, ix, nil, missing)
			p.Report(Finding{Severity: Info, NodeID: node,
				Message: fmt.Sprintf("filtered index %s (WHERE %s) does not contain its filter %s %s; queries that test or return %s need a lookup",
					ix.Name, ix.FilterDefinition, plural(len(missing), "column"), quoteList(missing), itThem(len(missing))),
				Evidence: map[string]any{"index": ix.Name, "filter": ix.FilterDefinition, "missing_columns": missing, "suggested_index": adv.DDL, "source": "catalog"},
				Fix:      adv.Text})
		}
	}
}

func init() { register(FilteredIndexMissingFilterColumn) }

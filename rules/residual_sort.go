package rules

import (
	"fmt"
	"math"
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
)

// ResidualSort reports Sort, Top N Sort and Distinct Sort operators.
var ResidualSort = &Rule{
	Code:     "PL103",
	Name:     "residual-sort",
	Severity: Error,
	Summary:  "A Sort orders rows that an index could deliver already ordered",
	Params: []Param{
		{"warn_rows", 10000, "sorting at least this many input rows is a warning"},
		{"error_rows", 1000000, "sorting at least this many input rows is an error"},
		{"warn_cost_share", 0.25, "a sort costing at least this share of the statement is a warning"},
	},
	Doc: Doc{
		Problem: "A Sort is blocking: it must read its whole input before returning the first row, needs a memory grant, and " +
			"spills to tempdb when the grant is too small. A queue poll (`SELECT TOP (20) ... ORDER BY CreatedAt`) that sorts " +
			"reads every pending row to return twenty; during a backlog that is millions of rows per poll.",
		Evidence: "`RelOp PhysicalOp=\"Sort\"` with `LogicalOp` Sort, TopN Sort or Distinct Sort, and a `Sort` or `TopSort` " +
			"element listing `OrderByColumn`s. planlint reports the sort columns, the input rows (estimated or actual), the " +
			"sort's own share of the statement cost, spill warnings (`SpillToTempDb`, `SortSpillDetails`), and whether the " +
			"input comes straight from one seek or scan of one table — the case an index keyed on the sort columns removes.",
		Example: "```sql\nSELECT TOP (20) WorkId, CreatedAt FROM dbo.Work WHERE Status = @Status ORDER BY CreatedAt, WorkId;\n```\n" +
			"Top → Sort (TopN Sort, CreatedAt ASC, WorkId ASC) → Clustered Index Scan PK_Work.",
		Fix: "Give the query an index whose key is the equality columns followed by the ORDER BY columns (or a filtered index " +
			"whose filter fixes the equality columns, keyed on the ORDER BY columns), including the selected columns. With " +
			"catalog facts planlint prints that index.",
		FalseAlarms: "Small sorts are cheap and reported at info level; sorts over joins or aggregates cannot be removed by one " +
			"index (the evidence says whether the input is a single table access).",
	},
	Run: runResidualSort,
}

func runResidualSort(p *Pass) {
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			if n.PhysicalOp != "Sort" && n.Sort == nil {
				continue
			}
			reportSort(p, q, n)
		}
	}
}

func reportSort(p *Pass, q plan.LabeledPlan, n *plan.RelOp) {
	var cols []string
	var order []map[string]any
	if n.Sort != nil {
		for _, c := range n.Sort.Columns {
			dir := "ASC"
			if !c.Ascending {
				dir = "DESC"
			}
			cols = append(cols, c.Column.Column+" "+dir)
			order = append(order, map[string]any{"column": c.Column.Name(), "ascending": c.Ascending})
		}
	}
	input, inputKind := 0.0, "estimated"
	if len(n.Children) > 0 {
		input, inputKind = rowsOut(n.Children[0])
	}
	share := costShare(q.QueryPlan, n)
	name := n.DisplayName()
	ev := map[string]any{
		"operator":        name,
		"sort_columns":    order,
		"input_rows":      round(input, 1),
		"input_rows_kind": inputKind,
		"cost_share":      round(share, 3),
	}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s sorts %s input rows (%s), %s of the statement cost",
		name, strings.Join(cols, ", "), count(input), inputKind, percent(share))

	spilled := false
	if w := n.Warnings; w != nil && (len(w.SpillToTempDb) > 0 || len(w.SortSpills) > 0 || w.SpillOccurred) {
		spilled = true
		var writes float64
		level := 0
		for _, s := range w.SortSpills {
			writes += s.WritesToTempDb
		}
		for _, s := range w.SpillToTempDb {
			if s.Level > level {
				level = s.Level
			}
		}
		ev["spill"] = map[string]any{"level": level, "pages_written": writes}
		fmt.Fprintf(&b, "; it spilled to tempdb")
		if writes > 0 {
			fmt.Fprintf(&b, " (%s pages written)", count(writes))
		}
	}

	// weight is what the sort costs the statement: its input rows, or for a
	// TopN Sort over a single table every row read below it, since an index
	// in sort order would let the plan stop after the first rows.
	weight := input
	src := singleTableSource(n)
	ev["single_table_input"] = src != nil
	if src != nil {
		o := src.Access.Object()
		ev["input_node_id"] = src.NodeID
		ev["input_object"] = objectEvidence(o)
		fmt.Fprintf(&b, "; its input comes straight from %s on %s (node %d)", src.DisplayName(), objectName(o), src.NodeID)
		if n.Sort != nil && n.Sort.TopRows > 0 {
			read, readKind := rowsRead(src)
			sub := subtreeShare(q.QueryPlan, n)
			ev["rows_read_below"] = round(read, 1)
			ev["rows_read_kind"] = readKind
			ev["subtree_cost_share"] = round(sub, 3)
			fmt.Fprintf(&b, ", which reads %s rows (%s) so the sort can return %s; with its input it is %s of the statement cost",
				count(read), readKind, count(float64(n.Sort.TopRows)), percent(sub))
			weight = math.Max(weight, read)
			share = math.Max(share, sub)
		}
		b.WriteString(", so an index in this order would remove it")
	}

	sev := Info
	switch {
	case weight >= p.Param("error_rows"):
		sev = Error
	case spilled || weight >= p.Param("warn_rows") || share >= p.Param("warn_cost_share"):
		sev = Warning
	}
	f := Finding{Severity: sev, NodeID: Node(n.NodeID), Message: b.String(), Evidence: ev}
	if src != nil {
		f.Fix = sortFix(p, q.QueryPlan, n, src, ev)
	}
	p.Report(f)
}

// rowsRead is what an access operator reads over all its executions:
// actual rows read, else the estimate of rows read, else rows returned.
func rowsRead(n *plan.RelOp) (float64, string) {
	if rt := n.RunTime; rt != nil {
		if rt.HasRowsRead {
			return float64(rt.ActualRowsRead), "actual"
		}
		return float64(rt.ActualRows), "actual"
	}
	if n.EstimatedRowsRead != nil {
		return *n.EstimatedRowsRead * n.EstimatedExecutions(), "estimated"
	}
	if n.EstimateRowsWithoutRowGoal != nil {
		return *n.EstimateRowsWithoutRowGoal * n.EstimatedExecutions(), "estimated"
	}
	return n.EstimatedRowsAllExecutions(), "estimated"
}

// sortFix proposes the index that returns rows in the sort's order: the
// equality columns of the input access first, then the sort columns.
func sortFix(p *Pass, q *plan.QueryPlan, sortOp, src *plan.RelOp, ev map[string]any) string {
	o := src.Access.Object()
	if sortOp.Sort == nil {
		return ""
	}
	var orderCols []catalog.IndexColumn
	for _, c := range sortOp.Sort.Columns {
		if c.Column.Table != "" && !c.Column.BelongsTo(o) {
			return "" // sorts on computed values or other tables
		}
		orderCols = append(orderCols, catalog.IndexColumn{Name: c.Column.Column, Descending: !c.Ascending})
	}
	var eq []string
	for _, c := range onTable(comparisons(q), o) {
		if c.Node == src && c.Op == "EQ" && !c.InOr && (c.operandKind() == "literal" || c.operandKind() == "parameter") {
			eq = append(eq, c.Column.Column)
		}
	}
	eq = uniqueFold(eq)
	var keys []catalog.IndexColumn
	for _, c := range eq {
		keys = append(keys, catalog.IndexColumn{Name: c})
	}
	for _, c := range orderCols {
		if !containsFold(eq, c.Name) {
			keys = append(keys, c)
		}
	}
	outputs := columnNames(sortOp.OutputList)
	generic := fmt.Sprintf("an index keyed on (%s) including the selected columns returns rows already in order", keyList(keys))
	t := findTable(p.Catalog, o)
	if t == nil {
		return generic
	}
	// An existing index that already has this order (possibly filtered on
	// the equality columns) means the plan chose not to use it.
	for _, ix := range t.Indexes {
		if hasOrder(ix, eq, orderCols) && !strings.EqualFold(ix.Name, o.Index) {
			ev["existing_index"] = ix.Name
			return fmt.Sprintf("index %s already returns rows in this order but the plan does not read it; see the other findings on this statement for why", ix.Name)
		}
	}
	var base *catalog.Index
	if o.Index != "" {
		if ix := t.FindIndex(o.Index); ix != nil && !strings.EqualFold(ix.Type, "CLUSTERED") && ix != t.Clustered() {
			base = ix
		}
	}
	adv := advise(t, base, keys, outputs)
	ev["suggested_index"] = adv.DDL
	if len(adv.Wide) > 0 {
		ev["wide_columns"] = adv.Wide
	}
	text := adv.Text
	if filter, ok := literalEqualities(q, src, eq); ok {
		alt := advise(t, nil, orderCols, outputs)
		alt.DDL = strings.TrimSuffix(alt.DDL, ";") + " WHERE " + filter + ";"
		ev["suggested_filtered_index"] = alt.DDL
		text += " Or, when the query always asks for the same value, a filtered index keyed on the ORDER BY columns: " + alt.DDL
	}
	return text
}

// literalEqualities renders the access's equality predicates as a filter
// when every one of them compares with a literal.
func literalEqualities(q *plan.QueryPlan, src *plan.RelOp, eq []string) (string, bool) {
	if len(eq) == 0 {
		return "", false
	}
	var parts []string
	for _, col := range eq {
		found := ""
		for _, c := range onColumn(comparisons(q), col) {
			if c.Node != src || c.Op != "EQ" {
				continue
			}
			if c.operandKind() != "literal" {
				return "", false
			}
			found = col + " = " + strings.TrimSuffix(strings.TrimPrefix(c.Operand.Value, "("), ")")
		}
		if found == "" {
			return "", false
		}
		parts = append(parts, found)
	}
	return strings.Join(parts, " AND "), true
}

// hasOrder reports whether the index key starts with the equality columns
// (in any order, or fixed by its filter) followed by the order columns.
func hasOrder(ix *catalog.Index, eq []string, order []catalog.IndexColumn) bool {
	keys := ix.Keys
	fixed := func(c string) bool {
		if ix.Filter == nil {
			return false
		}
		for _, cj := range ix.Filter.Conjuncts {
			if strings.EqualFold(cj.Column, c) && (cj.Op == "=" || cj.Op == "IS NULL" || (cj.Op == "IN" && len(cj.Values) == 1)) {
				return true
			}
		}
		return false
	}
	i := 0
	for i < len(keys) && containsFold(eq, keys[i].Name) {
		i++
	}
	for _, c := range eq {
		found := false
		for _, k := range keys[:i] {
			if strings.EqualFold(k.Name, c) {
				found = true
			}
		}
		if !found && !fixed(c) {
			return false
		}
	}
	for _, c := range order {
		if i >= len(keys) || !strings.EqualFold(keys[i].Name, c.Name) || keys[i].Descending != c.Descending {
			return false
		}
		i++
	}
	return true
}

func keyList(keys []catalog.IndexColumn) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.Name
		if k.Descending {
			parts[i] += " DESC"
		}
	}
	return strings.Join(parts, ", ")
}

func init() { register(ResidualSort) }

package rules

import (
	"fmt"
	"math"
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// ResidualSort reports Sort, Top N Sort and Distinct Sort operators that an
// index could remove, with that index.
var ResidualSort = &Rule{
	Code:     "PL103",
	Name:     "residual-sort",
	Severity: Error,
	Summary:  "A Sort orders rows that an index could deliver already ordered",
	Params: []Param{
		{"warn_rows", 10000, "sorting at least this many rows (all executions) that an index could deliver in order is a warning"},
		{"error_rows", 1000000, "sorting at least this many rows that an index could deliver in order is an error"},
		{"warn_cost_share", 0.25, "a removable sort costing at least this share of the statement is a warning, on statements that are not trivial"},
		{"min_statement_cost", 1, "cost share alone makes a warning only on statements with at least this estimated cost"},
		{"min_rows", 100, "cost share alone makes a warning only for sorts of at least this many rows"},
		{"min_cost_share", 0.05, "without measured time, a sort costing less than this share of the statement (with its input, for a TopN Sort) is info"},
		{"max_key_columns", defaultMaxKeyColumns, "no index is proposed when it would need more key columns than this"},
		{"max_include_columns", 10, "a proposed index includes at most this many selected columns"},
		{"warn_elapsed_ms", 100, "on actual plans with timings, a sort that took less time than this itself is info"},
	},
	Doc: Doc{
		Problem: "A Sort is blocking: it must read its whole input before returning the first row and needs a memory grant. " +
			"A queue poll (`SELECT TOP (20) ... ORDER BY CreatedAt`) that sorts reads every pending row to return twenty; " +
			"during a backlog that is millions of rows per poll. When the rows come from one table, an index keyed on the " +
			"equality columns followed by the ORDER BY columns returns them already in order and the Sort disappears.",
		Evidence: "`RelOp PhysicalOp=\"Sort\"` with `LogicalOp` Sort, TopN Sort or Distinct Sort, and a `Sort` or `TopSort` " +
			"element listing `OrderByColumn`s. planlint reports the sort columns, the rows sorted (on actual plans the " +
			"actual rows, looking through operators without counters such as Compute Scalar; a sort on the inner side of a " +
			"loop as \"N executions of about k rows\"), the sort's share of the statement cost, and whether the input comes " +
			"straight from one seek or scan of one table — the case an index keyed on the sort columns removes. Severity " +
			"follows the rows sorted (or, for a TopN Sort, the rows read below it): on actual plans with timings a sort that " +
			"took less than `warn_elapsed_ms` itself is info, without timings one below `min_cost_share` of the statement " +
			"is info; cost share alone makes a warning only " +
			"on a statement costing at least `min_statement_cost` and a sort of at least `min_rows` rows. Spills are " +
			"reported by the spill rule, not here.",
		Example: "```sql\nSELECT TOP (20) WorkId, CreatedAt FROM dbo.Work WHERE Status = @Status ORDER BY CreatedAt, WorkId;\n```\n" +
			"Top → Sort (TopN Sort, CreatedAt ASC, WorkId ASC) → Clustered Index Scan PK_Work.",
		Fix: "Give the query an index whose key is the equality columns followed by the ORDER BY columns (or a filtered index " +
			"whose filter fixes the equality columns, keyed on the ORDER BY columns), including the selected columns. " +
			"planlint prints that CREATE INDEX from the plan; with catalog facts it leaves out wide columns and the " +
			"clustered key, and points to an existing index that already has the order.",
		FalseAlarms: "Sorts no index removes are info at most, and say why: sorts over joins or aggregates, sorts on computed " +
			"values (`Expr1004`, `Union1007`), sorts that order rows for a write (Split/Sort/Collapse, index maintenance " +
			"before an Index Insert, building an index), and sorts that would need a key wider than `max_key_columns`. " +
			"The constant-row sort of a dynamic seek (Constant Scan → Sort → Merge Interval) is not reported. When the " +
			"index that removes a Key Lookup below the sort removes the sort too, the `key-lookup` finding carries it and " +
			"this one is info.",
	},
	// A Key Lookup finding whose index also removes this sort carries the fix.
	After: []string{"key-lookup", "filtered-index-parameterized", "filtered-index-missing-filter-column", "filtered-index-unused-literal", "filtered-index-hint"},
	Run:   runResidualSort,
}

// maxIncludeColumns is residual-sort's max_include_columns, also when
// key-lookup builds the index that removes a sort.
func maxIncludeColumns(p *Pass) int {
	if p.Rule.Name == "residual-sort" {
		return int(p.Param("max_include_columns"))
	}
	return 10
}

// defaultMaxKeyColumns caps the key of a proposed index.
const defaultMaxKeyColumns = 5

func runResidualSort(p *Pass) {
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			if n.PhysicalOp != "Sort" && n.Sort == nil {
				continue
			}
			if n.Parent != nil && n.Parent.PhysicalOp == "Merge Interval" {
				continue // dynamic seek: orders a handful of constant ranges
			}
			reportSort(p, q, n)
		}
	}
}

// sortedRows is how many rows the sort takes in over all its executions:
// on actual plans the counted rows of its input (through operators without
// counters), else its own actual rows when nothing below was counted.
func sortedRows(n *plan.RelOp) (rows, execs float64, kind string) {
	execs, _ = executions(n)
	if n.RunTime != nil {
		if in := countedInput(n); in != nil {
			rows, _ = rowsOut(in)
			return rows, execs, "actual"
		}
		rows, _ = rowsOut(n)
		if n.Sort != nil && (n.Sort.TopRows > 0 || n.Sort.Distinct) || n.LogicalOp == "Distinct Sort" {
			return rows, execs, "actual rows returned; its input has no counters"
		}
		return rows, execs, "actual"
	}
	if len(n.Children) > 0 {
		rows, _ = rowsOut(n.Children[0])
	}
	return rows, execs, "estimated"
}

// countedInput is the operator below the sort that carries runtime
// counters, looking through single-input operators without them.
func countedInput(n *plan.RelOp) *plan.RelOp {
	if len(n.Children) == 0 {
		return nil
	}
	c := n.Children[0]
	for c.RunTime == nil && len(c.Children) == 1 {
		c = c.Children[0]
	}
	if c.RunTime == nil {
		return nil
	}
	return c
}

// sortFeedsWrite returns the write operator the sort orders rows for
// (through Compute Scalar, Collapse, Split, spools and other single-input
// operators), or nil.
func sortFeedsWrite(n *plan.RelOp) *plan.RelOp {
	if len(n.Children) == 1 && belowPassThrough(n.Children[0]).PhysicalOp == "Split" {
		for p := n.Parent; p != nil; p = p.Parent {
			if isWrite(p) {
				return p
			}
		}
	}
	for p := n.Parent; p != nil; p = p.Parent {
		if isWrite(p) {
			return p
		}
		switch {
		case passThrough(p), p.PhysicalOp == "Collapse", p.PhysicalOp == "Split", p.PhysicalOp == "Assert",
			p.PhysicalOp == "Table Spool" && p.LogicalOp == "Eager Spool":
			continue
		}
		return nil
	}
	return nil
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
	rows, execs, kind := sortedRows(n)
	share := costShare(q.QueryPlan, n)
	name := n.DisplayName()
	ev := map[string]any{
		"operator":        name,
		"sort_columns":    order,
		"input_rows":      round(rows, 1),
		"input_rows_kind": kind,
		"executions":      round(execs, 1),
		"cost_share":      round(share, 3),
	}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s sorts ", name, strings.Join(cols, ", "))
	if execs > 1 {
		fmt.Fprintf(&b, "%s rows in %s executions of about %s rows each (%s)", units.Count(rows), units.Count(execs), units.Count(rows/execs), kind)
	} else {
		fmt.Fprintf(&b, "%s rows (%s)", units.Count(rows), kind)
	}
	fmt.Fprintf(&b, ", %s of the statement cost", percent(share))

	// weight is what the sort costs the statement: its input rows, or for a
	// TopN Sort over a single table every row read below it, since an index
	// in sort order would let the plan stop after the first rows.
	weight := rows
	src := singleTableSource(n)
	ev["single_table_input"] = src != nil
	noIndex := ""
	if w := sortFeedsWrite(n); w != nil {
		o := w.Access.Object()
		target := objectName(o)
		if o.Table == "" {
			target = o.Index // a cursor's worktable
		}
		ev["write_node_id"] = w.NodeID
		if w.Access.Element == "CreateIndex" {
			noIndex = fmt.Sprintf("it orders the rows that build index %s (node %d); no other index removes it", target, w.NodeID)
		} else {
			noIndex = fmt.Sprintf("it orders rows for the %s into %s (node %d), in the order the write needs; no index removes it",
				w.DisplayName(), target, w.NodeID)
		}
	} else if src != nil {
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
				units.Count(read), readKind, units.Count(float64(n.Sort.TopRows)), percent(sub))
			weight = math.Max(weight, read)
			share = math.Max(share, sub)
		}
	} else {
		noIndex = "its input is a join, an aggregate or other computed rows, not one table access, so no single index removes it"
	}
	var fix string
	if noIndex == "" {
		fix, noIndex = sortFix(p, q.QueryPlan, n, src, int(p.Param("max_key_columns")), ev)
	}
	if noIndex != "" {
		ev["no_index"] = noIndex
		b.WriteString("; " + noIndex)
	} else {
		b.WriteString(", so an index in this order would remove it")
	}

	elapsed, timed := sortOwnElapsed(n)
	if timed {
		ev["own_elapsed_ms"] = elapsed
		if src != nil && n.Sort != nil && n.Sort.TopRows > 0 {
			// the index removes the scan below a TopN Sort too: count its time
			elapsed = n.RunTime.ElapsedMs
			ev["elapsed_ms_with_input"] = elapsed
		}
	}
	sev := Info
	costly := q.Cost() >= p.Param("min_statement_cost") && weight >= p.Param("min_rows") && share >= p.Param("warn_cost_share")
	switch {
	case noIndex != "":
	case timed && float64(elapsed) < p.Param("warn_elapsed_ms"):
		// measured: the sort itself took little time
	case !timed && share < p.Param("min_cost_share"):
		// estimated: a small part of the statement
	case weight >= p.Param("error_rows"):
		sev = Error
	case weight >= p.Param("warn_rows") || costly:
		sev = Warning
	}
	if lk := lookupRemovingSort(p, q.Label, n); lk != nil && lk.Severity >= sev && fix != "" {
		// one root cause: the lookup's finding proposes the index that removes both
		ev["fixed_by_node"] = *lk.NodeID
		b.WriteString(fmt.Sprintf("; the index proposed for the Key Lookup at node %d removes this sort too (see that finding)", *lk.NodeID))
		sev, fix = Info, ""
	}
	if existing, ok := ev["existing_index"].(string); ok {
		if why := unusedIndexFinding(p, existing); why != nil && why.Severity >= sev {
			// one root cause: the index that has this order was not used, and
			// that finding says why and how to fix it
			ev["explained_by"] = why.Rule
			b.WriteString(fmt.Sprintf("; %s explains why %s was not used", why.Rule, existing))
			sev = Info
		}
	}
	p.Report(Finding{Severity: sev, NodeID: Node(n.NodeID), Message: b.String(), Fix: fix, Evidence: ev})
}

// unusedIndexFinding returns a filtered-index finding on this statement that
// names index, or nil.
func unusedIndexFinding(p *Pass, index string) *Finding {
	for _, r := range []string{"filtered-index-parameterized", "filtered-index-missing-filter-column", "filtered-index-unused-literal", "filtered-index-hint"} {
		for _, f := range p.Prior(r) {
			if name, _ := f.Evidence["index"].(string); strings.EqualFold(name, index) {
				return &f
			}
		}
	}
	return nil
}

// sortOwnElapsed is the sort's own elapsed time on an actual plan with
// timings: in row mode its elapsed time minus that of its counted input
// (row-mode times include the operators below), in batch mode its own.
func sortOwnElapsed(n *plan.RelOp) (int64, bool) {
	rt := n.RunTime
	if rt == nil || !rt.HasTiming {
		return 0, false
	}
	if strings.EqualFold(rt.ExecutionMode, "Batch") {
		return rt.ElapsedMs, true
	}
	own := rt.ElapsedMs
	if in := countedInput(n); in != nil && in.RunTime.HasTiming {
		own -= in.RunTime.ElapsedMs
	}
	return max(own, 0), true
}

// lookupRemovingSort returns the key-lookup finding on this statement whose
// proposed index also removes the sort n, or nil.
func lookupRemovingSort(p *Pass, label string, n *plan.RelOp) *Finding {
	for _, f := range p.Prior("key-lookup") {
		if node, ok := f.Evidence["removes_sort_node"].(int); ok && node == n.NodeID && f.CursorOperation() == label && f.NodeID != nil {
			return &f
		}
	}
	return nil
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

// sortIndexKeys is the key of the index that returns rows in the sort's
// order: the access's equality columns (compared with a literal or a
// parameter), then the sort columns. noIndex says why there is none.
func sortIndexKeys(q *plan.QueryPlan, sortOp, src *plan.RelOp) (eq []string, order, keys []catalog.IndexColumn, noIndex string) {
	o := src.Access.Object()
	if sortOp.Sort == nil || len(sortOp.Sort.Columns) == 0 {
		return nil, nil, nil, "the plan does not list the sort columns"
	}
	var computed []string
	for _, c := range sortOp.Sort.Columns {
		if c.Column.Table == "" || !c.Column.BelongsTo(o) {
			computed = append(computed, c.Column.Column)
			continue
		}
		order = append(order, catalog.IndexColumn{Name: c.Column.Column, Descending: !c.Ascending})
	}
	if len(computed) > 0 {
		return nil, nil, nil, fmt.Sprintf("it sorts on %s, computed in the plan rather than stored in %s, so no index delivers this order",
			quoteList(computed), o.TableName(false))
	}
	for _, c := range onTable(comparisons(q), o) {
		if c.Node == src && c.Op == "EQ" && !c.InOr && (c.operandKind() == "literal" || c.operandKind() == "parameter") {
			eq = append(eq, c.Column.Column)
		}
	}
	eq = uniqueFold(eq)
	for _, c := range eq {
		keys = append(keys, catalog.IndexColumn{Name: c})
	}
	for _, c := range order {
		if !containsFold(eq, c.Name) {
			keys = append(keys, c)
		}
	}
	return eq, order, keys, ""
}

// sortFix proposes the index that returns rows in the sort's order, or
// says why no index does.
func sortFix(p *Pass, q *plan.QueryPlan, sortOp, src *plan.RelOp, maxKeys int, ev map[string]any) (fix, noIndex string) {
	o := src.Access.Object()
	if strings.EqualFold(o.Schema, "sys") {
		return "", fmt.Sprintf("its rows come from the system table %s, which takes no user index", o.TableName(false))
	}
	eq, orderCols, keys, noIndex := sortIndexKeys(q, sortOp, src)
	if noIndex != "" {
		return "", noIndex
	}
	if len(keys) > maxKeys {
		return "", fmt.Sprintf("an index in this order would need %d key columns (%s), more than %d, so none is proposed",
			len(keys), keyList(keys), maxKeys)
	}
	var outputs []string
	for _, c := range sortOp.OutputList {
		if c.BelongsTo(o) {
			outputs = append(outputs, c.Column)
		}
	}
	outputs = uniqueFold(outputs)
	topN := sortOp.Sort.TopRows > 0
	if len(outputs) > maxIncludeColumns(p)+len(keys) {
		if !topN {
			return "", fmt.Sprintf("it returns %d columns of %s; an index that delivers this order would have to cover them all, "+
				"a second copy of the table, so none is proposed", len(outputs), o.TableName(false))
		}
		outputs = nil // a TopN Sort: the key alone lets the plan look up only the first rows
		ev["include_left_out"] = true
	}
	if tableVariable(o) {
		fix := fmt.Sprintf("declare %s with INDEX IX_%s (%s) in its table type or DECLARE (a table variable takes no CREATE INDEX)",
			o.Table, strings.Join(strings.Fields(strings.ReplaceAll(keyList(keys), ",", "")), "_"), keyList(keys))
		return fix, ""
	}
	t := findTable(p.Catalog, o)
	if t == nil {
		x := indexDDL{Schema: o.Schema, Table: o.Table, Desc: map[string]bool{}}
		for _, k := range keys {
			x.Keys = append(x.Keys, k.Name)
			x.Desc[strings.ToLower(k.Name)] = k.Descending
		}
		for _, c := range outputs {
			if !containsFold(x.Keys, c) {
				x.Include = append(x.Include, c)
			}
		}
		x.addEvidence(ev)
		ev["suggested_index"] = x.String()
		return x.String() + " (from the plan; with catalog facts planlint leaves out the clustered key and wide columns, and checks for an index that already has this order)", ""
	}
	// An existing index that already has this order (possibly filtered on
	// the equality columns) means the plan chose not to use it.
	for _, ix := range t.Indexes {
		if hasOrder(ix, eq, orderCols) && !strings.EqualFold(ix.Name, o.Index) {
			ev["existing_index"] = ix.Name
			return fmt.Sprintf("index %s already returns rows in this order but the plan does not read it; see the other findings on this statement for why", ix.Name), ""
		}
	}
	var base *catalog.Index
	if o.Index != "" {
		if ix := t.FindIndex(o.Index); ix != nil && !strings.EqualFold(ix.Type, "CLUSTERED") && ix != t.Clustered() {
			base = ix
		}
	}
	adv := advise(t, base, keys, outputs)
	adv.Index.addEvidence(ev)
	ev["suggested_index"] = adv.DDL
	if len(adv.Wide) > 0 {
		ev["wide_columns"] = adv.Wide
	}
	text := adv.Text
	if filter, ok := literalEqualities(q, src, eq); ok {
		alt := advise(t, nil, orderCols, outputs)
		alt.Index.Where = filter
		alt.Index.Name = ""
		ev["suggested_filtered_index"] = alt.Index.String()
		text += " Or, when the query always asks for the same value, a filtered index keyed on the ORDER BY columns: " + alt.Index.String()
	}
	return text, ""
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

package rules

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// ResidualPredicateScan reports a rowstore scan, or a seek over a broad
// range, whose residual predicate throws away most of the rows it reads.
var ResidualPredicateScan = &Rule{
	Code:     "PL303",
	Name:     "residual-predicate-scan",
	Severity: Error,
	Summary:  "A scan or broad seek reads many rows that its residual predicate then discards",
	// Catalog facts are optional: they trim the INCLUDE list and find an
	// index that already has the keys.
	After: []string{"implicit-conversion", "non-sargable-predicate", "residual-sort", "filtered-index-parameterized", "filtered-index-unused-literal"},
	Params: []Param{
		{"min_elapsed_ms", 100, "an actual plan whose statement took less than this (ms, elapsed and CPU) is info"},
		{"min_rows_read", 10000, "operators that read fewer rows are not reported"},
		{"max_share", 0.1, "report when the operator returns at most this share of the rows it read"},
		{"warn_rows_read", 100000, "reading at least this many rows is a warning"},
		{"error_rows_read", 10000000, "reading at least this many rows and returning at most error_share of them is an error"},
		{"error_share", 0.01, "share of the rows read an error returns at most"},
		{"wide_include", 8, "with more output columns than this the index is proposed with its keys only"},
		{"filtered_min_table_rows", 100000, "a filtered index is suggested for a literal on a status-like column of a table with at least this many rows"},
	},
	Doc: Doc{
		Problem: "Without an index that matches the predicate, SQL Server reads a whole index (or a wide range of one) and " +
			"tests each row: a query that returns 20 pending rows out of 5 million reads all 5 million, every time it runs. " +
			"The cost grows with the table, not with the answer.",
		Evidence: "A `Table Scan`, `Clustered Index Scan`, `Index Scan` or seek with a residual `Predicate`, where the rows " +
			"read are far more than the rows returned: actual `ActualRowsRead` against `ActualRows`, else `EstimatedRowsRead` " +
			"against `EstimateRows` (times the executions), else the table cardinality of a full scan. Gated by `min_rows_read` " +
			"and `max_share`; severity from the rows read. A predicate with a bitmap `PROBE` is left alone: the bitmap, built " +
			"by a hash join, drops rows too, so the rows the residual itself discards are unknown. Columnstore scans " +
			"are left alone (they read segments, not rows, and skip segments by their metadata). Scans repeated on the inner " +
			"side of a Nested Loops join are `nested-loops-repetition`'s. When the residual wraps a column in a function or " +
			"an implicit conversion, that rule's finding is the root cause and this rule stays silent; likewise when " +
			"`residual-sort` already proposes the index for the same input, or a filtered index exists but was not used " +
			"(`filtered-index-parameterized`, `filtered-index-unused-literal`). An actual plan whose optimizer expected the " +
			"predicate to keep many rows (a misestimate, often parameter sniffing) gets an info pointing at the estimate " +
			"instead of an index. A scan on the inner side of an anti semi join (NOT IN) belongs to that rewrite.",
		Example: "```sql\nSELECT WorkId, CreatedAt FROM dbo.Work WHERE Status = 0;\n```\n" +
			"Clustered Index Scan of PK_Work with `Predicate` `[Status]=(0)`: 5,000,000 rows read, 200 returned. planlint proposes " +
			"`CREATE INDEX IX_Work_Status_Filtered ON dbo.Work (Status) INCLUDE (WorkId, CreatedAt) WHERE Status = (0);` (with an " +
			"ORDER BY the filtered index is keyed on the ORDER BY columns; when `residual-sort` reports that Sort, its finding covers the scan).",
		Fix: "Create the index that seeks: the equality columns of the predicate first, then one range column, with the " +
			"operator's output columns in INCLUDE; when SQL Server's missing-index request names the same keys its INCLUDE " +
			"list is merged in. When the predicate is a literal on a status-like column (few distinct values) of a large " +
			"table, the filtered index `… WHERE Status = 0` keeps only the active rows: a queue's pending work stays cheap to " +
			"find however much history the table holds. With catalog facts an index that already has the keys is extended " +
			"(`DROP_EXISTING`) rather than duplicated, and one that already covers the scan is named as unused, without DDL.",
		FalseAlarms: "A scan of a small table, or one that returns a large share of what it reads, is not reported. A " +
			"report query that must read everything once is better served by a columnstore index than by a seek. An actual plan whose statement took under `min_elapsed_ms` (elapsed and CPU time) is info.",
		References: []string{"https://learn.microsoft.com/sql/relational-databases/indexes/create-filtered-indexes"},
	},
	Run: runResidualPredicateScan,
}

// residualKeys are the index columns a residual predicate can seek on.
type residualKeys struct {
	Eq      []string            // equality columns: the seek's, then the residual's
	Range   string              // one range column, "" for none
	Literal map[string]string   // equality column → literal, for a filter
	Preds   map[string][]string // column → predicate texts, for messages
}

func runResidualPredicateScan(p *Pass) {
	run := &residualRun{byDDL: map[string]*Finding{}}
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			if !isSeekOrScan(n) || n.Access.Predicate == nil || isColumnstore(n) {
				continue
			}
			o := n.Access.Object()
			if systemObject(o.Database, o.Schema) {
				continue
			}
			residual := withoutProbes(n.Access.Predicate)
			if len(residual) == 0 || len(residual) < len(n.Access.Predicate.Conjuncts()) {
				// A bitmap PROBE also drops rows: what the residual itself
				// discards cannot be told apart from the join's reduction.
				continue
			}
			if repeatedAccess(n) || underAntiSemiJoin(n) {
				continue // nested-loops-repetition's and row-count-spool-not-in's
			}
			vol, ok := accessVolume(n)
			if !ok || vol.Read < p.Param("min_rows_read") || vol.share() > p.Param("max_share") {
				continue
			}
			if priorOnNode(p, n.NodeID, "implicit-conversion", "non-sargable-predicate", "filtered-index-parameterized", "filtered-index-unused-literal") != nil || sortCovers(p, n) {
				continue
			}
			run.scan(p, q, n, residual, vol)
		}
	}
	for _, f := range run.list {
		if ids, ok := f.Evidence["same_index_nodes"].([]int); ok {
			var s []string
			for _, id := range ids {
				s = append(s, fmt.Sprint(id))
			}
			f.Message += fmt.Sprintf("; the same index serves the scan at %s %s too", plural(len(ids), "node"), quoteList(s))
		}
		p.Report(*f)
	}
}

// residualRun collects one statement's findings so that scans served by the
// same index give one finding.
type residualRun struct {
	byDDL map[string]*Finding
	list  []*Finding
}

func (r *residualRun) report(f Finding) { r.list = append(r.list, &f) }

// repeatedAccess reports an operator executed more than once per thread
// (the inner side of a Nested Loops join).
func repeatedAccess(n *plan.RelOp) bool {
	if rt := n.RunTime; rt != nil {
		threads := threadsThatRan(rt)
		if threads < 1 {
			threads = 1
		}
		return rt.ActualExecutions > int64(threads)
	}
	return n.EstimatedExecutions() > 1
}

// withoutProbes drops the bitmap PROBE conjuncts of a predicate.
func withoutProbes(s *plan.Scalar) []*plan.Scalar {
	var out []*plan.Scalar
	for _, c := range s.Conjuncts() {
		if c.Kind == plan.ScalarIntrinsic && strings.EqualFold(c.Op, "PROBE") {
			continue
		}
		out = append(out, c)
	}
	return out
}

// sortCovers reports a residual-sort finding that already proposes an
// index for this operator's rows.
func sortCovers(p *Pass, n *plan.RelOp) bool {
	for _, f := range p.Prior("residual-sort") {
		if id, ok := f.Evidence["input_node_id"].(int); ok && id == n.NodeID && f.Fix != "" {
			return true
		}
	}
	return false
}

func (r *residualRun) scan(p *Pass, q plan.LabeledPlan, n *plan.RelOp, residual []*plan.Scalar, vol readVolume) {
	o := n.Access.Object()
	keys := seekableKeys(n, residual)
	ev := map[string]any{"object": objectEvidence(o)}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	vol.evidence(ev)
	texts := make([]string, len(residual))
	for i, c := range residual {
		texts[i] = sqlTextOr(c)
	}
	ev["residual_predicate"] = strings.Join(texts, " AND ")

	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s read %s rows (%s) to return %s (%s): the residual predicate %s discards the rest",
		n.DisplayName(), objectName(o), units.Count(vol.Read), vol.Kind, units.Count(vol.Returned), percent(vol.share()), strings.Join(texts, " AND "))

	sev := Info
	switch {
	case vol.Read >= p.Param("error_rows_read") && vol.share() <= p.Param("error_share"):
		sev = Error
	case vol.Read >= p.Param("warn_rows_read"):
		sev = Warning
	}
	cols := append(append([]string{}, keys.Eq...), keys.Range)
	if keys.Range == "" {
		cols = cols[:len(cols)-1]
	}
	mi, impact, requested := matchingMissingIndex(q.QueryPlan, o, cols)
	if ms, quick := quickStatement(q.QueryPlan, p.Param("min_elapsed_ms")); quick && sev > Info {
		sev = Info
		ev["statement_time_ms"] = ms
		fmt.Fprintf(&b, "; the statement took %s ms", trimFloat(ms))
	}
	if vol.Kind == "actual" && !requested {
		// The optimizer expected the predicate to keep many rows, so the
		// scan was its choice: the misestimate is the problem, not a
		// missing index (one may well exist; SQL Server did not ask for one).
		if est, ok := estimatedVolume(n); ok && est.share() > p.Param("max_share") && est.Returned >= 10*maxf(vol.Returned, 1) {
			ev["estimated_rows_returned"] = round(est.Returned, 1)
			fmt.Fprintf(&b, "; but the optimizer expected %s rows (%s of those read), so scanning was its choice: the estimate, not the index, is the problem", units.Count(est.Returned), percent(est.share()))
			r.report(Finding{Severity: Info, NodeID: Node(n.NodeID), Message: b.String(),
				Fix: "find why the estimate was wrong (compiled against runtime parameter values, stale statistics); see row-estimate-skew", Evidence: ev})
			return
		}
	}
	if len(cols) == 0 {
		// Nothing in the predicate can be sought on (OR, <>, ...): no
		// index to propose, so this is context only.
		r.report(Finding{Severity: Info, NodeID: Node(n.NodeID), Message: b.String() + "; no part of it can be sought on", Evidence: ev})
		return
	}
	outputs := tableOutputs(n)
	x := indexDDL{Schema: o.Schema, Table: o.Table, Keys: cols}
	if requested {
		ev["missing_index_impact"] = round(impact, 1)
		ev["missing_index_request"] = missingIndexKey(mi)
		outputs = uniqueFold(append(outputs, mi.Include...))
		fmt.Fprintf(&b, "; SQL Server's missing-index request (impact %s%%) asks for the same keys", trimFloat(impact))
	}
	x.Include = includesFor(p, o, cols, outputs)
	wide := ""
	if w := int(p.Param("wide_include")); len(x.Include) > w {
		ev["wide_include_columns"] = x.Include
		wide = fmt.Sprintf(" (the operator returns %d columns: this index has only the keys, so the rows it finds are looked up; INCLUDE the columns the query really needs)", len(x.Include))
		x.Include = nil
	}
	fix := x.String() + " seeks on " + quoteList(cols) + " instead" + wide
	if t := findTable(p.Catalog, o); t != nil {
		var ineq []string
		if keys.Range != "" {
			ineq = []string{keys.Range}
		}
		if ix, missing := existingWithKeys(t, plan.MissingIndex{Equality: keys.Eq, Inequality: ineq, Include: x.Include}); ix != nil && !strings.EqualFold(ix.Name, o.Index) {
			// Do not propose what exists: the index is there and the plan
			// reads another one.
			ev["existing_index"] = ix.Name
			if len(missing) == 0 {
				r.report(Finding{Severity: Info, NodeID: Node(n.NodeID), Evidence: ev,
					Message: b.String() + fmt.Sprintf("; index %s already seeks on %s, but the plan does not use it", ix.Name, quoteList(cols)),
					Fix:     "find why " + ix.Name + " is not chosen (statistics, a parameter's compiled value, a hint); see the statement's other findings"})
				return
			}
			x = extendIndex(t, ix, missing)
			fix = fmt.Sprintf("extend %s, which already has these keys, so the plan can seek it without lookups: %s", ix.Name, x.String())
		}
	}
	primary := x
	if fx, ok := filteredVariant(p, q.QueryPlan, n, keys, outputs); ok {
		primary = fx
		ev["unfiltered_index"] = x.String()
		fix = fmt.Sprintf("%s keeps only the rows with %s, so it stays small however many other rows the table holds; "+
			"if other values of %s are queried too, %s", fx.String(), fx.Where, quoteList(literalColumns(keys)), x.String())
	}
	if prev := r.byDDL[primary.String()]; prev != nil {
		// The same index serves another scan of this statement: one
		// finding, the others counted on it.
		ids, _ := prev.Evidence["same_index_nodes"].([]int)
		prev.Evidence["same_index_nodes"] = append(ids, n.NodeID)
		return
	}
	primary.addEvidence(ev)
	f := &Finding{Severity: sev, NodeID: Node(n.NodeID), Message: b.String(), Fix: fix, Evidence: ev}
	r.byDDL[primary.String()] = f
	r.list = append(r.list, f)
}

// underAntiSemiJoin reports an access on the inner side of an anti semi
// join (NOT IN / NOT EXISTS): its IS NULL or per-row test belongs to that
// rewrite, not to an index of its own.
func underAntiSemiJoin(n *plan.RelOp) bool {
	child := n
	for a := n.Parent; a != nil; child, a = a, a.Parent {
		if strings.Contains(a.LogicalOp, "Anti Semi Join") {
			return len(a.Children) > 1 && a.Children[0] != child
		}
		if !passThrough(a) && !strings.HasSuffix(a.PhysicalOp, "Spool") && a.PhysicalOp != "Nested Loops" {
			return false
		}
	}
	return false
}

// estimatedVolume is the optimizer's expectation of rows read and returned.
func estimatedVolume(n *plan.RelOp) (readVolume, bool) {
	copyOp := *n
	copyOp.RunTime = nil
	return accessVolume(&copyOp)
}

// tableOutputs lists the operator's output columns that belong to a table
// (not bookmarks or computed values).
func tableOutputs(n *plan.RelOp) []string {
	var out []string
	for _, c := range n.OutputList {
		if c.Table != "" {
			out = append(out, c.Column)
		}
	}
	return uniqueFold(out)
}

func sqlTextOr(s *plan.Scalar) string {
	if renderable(s) {
		return sqlText(s)
	}
	return s.String()
}

func trimFloat(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0") }

// seekableKeys orders the columns an index could seek on: the seek's own
// equality columns, the residual's equality columns, then one range column
// (the seek's range, else the residual's first).
func seekableKeys(n *plan.RelOp, residual []*plan.Scalar) residualKeys {
	o := n.Access.Object()
	k := residualKeys{Literal: map[string]string{}, Preds: map[string][]string{}}
	seekRange := ""
	for _, sp := range n.Access.SeekPredicates {
		for _, key := range sp.Keys {
			for _, c := range key.Columns {
				switch {
				case key.Part == "Prefix" || key.ScanType == "EQ":
					k.Eq = append(k.Eq, c.Column)
				case seekRange == "":
					seekRange = c.Column
				}
			}
		}
	}
	var residualRange string
	for _, c := range residual {
		if col, ok := inList(c, o); ok {
			k.Eq = append(k.Eq, col)
			k.Preds[col] = append(k.Preds[col], sqlTextOr(c))
			continue
		}
		if c.Kind != plan.ScalarCompare || len(c.Args) != 2 {
			continue
		}
		cmp, ok := orient(c.Op, c.Args[0], c.Args[1])
		if !ok || cmp.ColumnConverted || !(cmp.Column.BelongsTo(o) || cmp.Column.Table == "") {
			continue
		}
		if oc := cmp.Operand; oc != nil && oc.Kind == plan.ScalarIdentifier && oc.Column != nil && oc.Column.BelongsTo(o) {
			continue // column against a column of the same row
		}
		col := cmp.Column.Column
		k.Preds[col] = append(k.Preds[col], sqlTextOr(c))
		switch cmp.Op {
		case "EQ", "IS":
			k.Eq = append(k.Eq, col)
			if cmp.operandKind() == "literal" && cmp.Op == "EQ" {
				k.Literal[col] = cmp.Operand.Value
			}
		case "LT", "LE", "GT", "GE":
			if residualRange == "" {
				residualRange = col
			}
		}
	}
	k.Eq = uniqueFold(k.Eq)
	k.Range = seekRange
	if k.Range == "" {
		k.Range = residualRange
	}
	if containsFold(k.Eq, k.Range) {
		k.Range = ""
	}
	return k
}

// inList recognises "col = a OR col = b ..." on one bare column of the
// table (an IN list), which an index on the column seeks once per value.
func inList(c *plan.Scalar, o plan.ObjectRef) (string, bool) {
	if c.Kind != plan.ScalarLogical || !strings.EqualFold(c.Op, "OR") {
		return "", false
	}
	col := ""
	for _, arm := range c.Args {
		if arm.Kind != plan.ScalarCompare || arm.Op != "EQ" || len(arm.Args) != 2 {
			return "", false
		}
		cmp, ok := orient(arm.Op, arm.Args[0], arm.Args[1])
		if !ok || cmp.ColumnConverted || !cmp.Column.BelongsTo(o) || (cmp.operandKind() != "literal" && cmp.operandKind() != "parameter") {
			return "", false
		}
		if col != "" && !strings.EqualFold(col, cmp.Column.Column) {
			return "", false
		}
		col = cmp.Column.Column
	}
	return col, col != ""
}

// includesFor lists the columns to INCLUDE: the outputs that are not keys,
// without the clustered key and wide columns when the catalog knows them.
func includesFor(p *Pass, o plan.ObjectRef, keys, outputs []string) []string {
	t := findTable(p.Catalog, o)
	var out []string
	for _, c := range outputs {
		if containsFold(keys, c) {
			continue
		}
		if t != nil {
			if col := t.FindColumn(c); col != nil && col.IsWide() {
				continue
			}
			if cl := t.Clustered(); cl != nil && cl.IsKey(c) {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

var statusLike = regexp.MustCompile(`(?i)(status|state|flag|stage|kind|type|processed|deleted|active|pending|enabled|archived)$|^(is|has)[A-Z_]`)

// filteredVariant proposes the filtered index for literal equalities on
// status-like columns of a large table: only the matching rows are kept,
// keyed on the remaining seek columns, else on the ORDER BY of a Sort or
// Top above that reads this table, else on the filtered column.
func filteredVariant(p *Pass, q *plan.QueryPlan, n *plan.RelOp, keys residualKeys, outputs []string) (indexDDL, bool) {
	if n.TableCardinality < p.Param("filtered_min_table_rows") {
		return indexDDL{}, false
	}
	o := n.Access.Object()
	t := findTable(p.Catalog, o)
	var filterCols []string
	for _, col := range keys.Eq {
		lit, ok := keys.Literal[col]
		if !ok || len(lit) > 24 {
			continue
		}
		lowSelectivity := statusLike.MatchString(col)
		if t != nil {
			if c := t.FindColumn(col); c != nil {
				ty := strings.ToLower(c.Type)
				lowSelectivity = lowSelectivity || ty == "bit" || ty == "tinyint" || strings.HasPrefix(ty, "char(1)")
			}
		}
		if lowSelectivity {
			filterCols = append(filterCols, col)
		}
	}
	if len(filterCols) == 0 {
		return indexDDL{}, false
	}
	sort.Strings(filterCols)
	var where []string
	for _, c := range filterCols {
		where = append(where, quoteIdent(c)+" = "+keys.Literal[c])
	}
	var keyCols []string
	for _, c := range keys.Eq {
		if !containsFold(filterCols, c) {
			keyCols = append(keyCols, c)
		}
	}
	if keys.Range != "" {
		keyCols = append(keyCols, keys.Range)
	}
	desc := map[string]bool{}
	if len(keyCols) == 0 {
		for _, oc := range orderAbove(n, o) {
			keyCols = append(keyCols, oc.Column.Column)
			desc[oc.Column.Column] = !oc.Ascending
		}
	}
	if len(keyCols) == 0 {
		keyCols = filterCols[:1]
	}
	keyCols = uniqueFold(keyCols)
	return indexDDL{Schema: o.Schema, Table: o.Table, Keys: keyCols, Desc: desc,
		Include: includesFor(p, o, append(append([]string{}, keyCols...), filterCols...), outputs),
		Where:   strings.Join(where, " AND ")}, true
}

func literalColumns(k residualKeys) []string {
	var out []string
	for _, c := range k.Eq {
		if _, ok := k.Literal[c]; ok {
			out = append(out, c)
		}
	}
	return out
}

// orderAbove returns the sort order of the nearest Sort (or TopN Sort)
// above n whose columns all come from n's table.
func orderAbove(n *plan.RelOp, o plan.ObjectRef) []plan.OrderColumn {
	for a := n.Parent; a != nil; a = a.Parent {
		if a.Sort == nil {
			continue
		}
		for _, c := range a.Sort.Columns {
			if !c.Column.BelongsTo(o) {
				return nil
			}
		}
		return a.Sort.Columns
	}
	return nil
}

// matchingMissingIndex finds the plan's missing-index request on the table
// whose key columns are the same set as cols.
func matchingMissingIndex(q *plan.QueryPlan, o plan.ObjectRef, cols []string) (plan.MissingIndex, float64, bool) {
	for _, g := range q.MissingIndexes {
		for _, mi := range g.Indexes {
			if !(plan.ObjectRef{Database: mi.Database, Schema: mi.Schema, Table: mi.Table}).SameTable(o) {
				continue
			}
			keys := append(append([]string{}, mi.Equality...), mi.Inequality...)
			if sameSetFold(keys, cols) {
				return mi, g.Impact, true
			}
		}
	}
	return plan.MissingIndex{}, 0, false
}

func sameSetFold(a, b []string) bool {
	a, b = uniqueFold(a), uniqueFold(b)
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !containsFold(b, x) {
			return false
		}
	}
	return true
}

func init() { register(ResidualPredicateScan) }

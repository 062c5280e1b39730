package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// JoinOrClause reports an OR across two tables in a join predicate: either
// a Nested Loops that tests it row by row, or a Merge Interval built from
// several outer columns for a seek at every outer row.
var JoinOrClause = &Rule{
	Code:     "PL308",
	Name:     "join-or-clause",
	Severity: Error,
	Summary:  "An OR in a join predicate forces a nested loops join that tests it row by row",
	Params: []Param{
		{"warn_ms", 1000, "actual plans: the join taking at least this many milliseconds is a warning"},
		{"error_ms", 10000, "actual plans: the join taking at least this many milliseconds is an error"},
		{"warn_pairs", 1000000, "without timings: at least this many row pairs tested by a residual OR is a warning"},
		{"error_pairs", 100000000, "actual plans without timings: at least this many row pairs tested is an error"},
	},
	Doc: Doc{
		Problem: "`ON a.X = b.X OR a.Y = b.Y` cannot be hashed or merged: the optimizer either runs a Nested Loops join that " +
			"tests the OR for every pair of rows (outer rows × inner rows), or, when one side has an index, builds the list " +
			"of seek ranges for every outer row (Constant Scans per OR branch, concatenated, sorted and merged by a Merge " +
			"Interval) and seeks once per range. Both repeat work per outer row that two plain equi-joins would do once.",
		Evidence: "(1) A `Nested Loops` whose join `Predicate` is an `OR` of disjuncts that each compare columns of both " +
			"inputs: planlint reports the outer rows, the inner rows per execution and the pairs tested. (2) A `Merge " +
			"Interval` feeding the outer side of a seek loop whose Concatenation branches take their values from two or " +
			"more different columns of another table (the outer row), executed once per outer row. A Merge Interval whose " +
			"branches hold parameters or literals (`IN (@a, @b)`, a dynamic seek) or one column twice (a type-mismatched " +
			"comparison) is not this.",
		Example: "```sql\nSELECT o.Id, c.Name FROM dbo.Orders AS o\nJOIN dbo.Customers AS c ON c.Id = o.BillToId OR c.Id = o.ShipToId;\n```",
		Fix: "Split the OR into a `UNION` of two joins, each an equality the optimizer can hash, merge or seek: " +
			"`SELECT … FROM dbo.Orders AS o JOIN dbo.Customers AS c ON c.Id = o.BillToId UNION SELECT … FROM dbo.Orders AS o " +
			"JOIN dbo.Customers AS c ON c.Id = o.ShipToId` (`UNION ALL` when the branches cannot return the same pair, or " +
			"with `AND NOT (first predicate)` in the second branch).",
		FalseAlarms: "A Merge Interval over parameters (dynamic seek) is a single seek per query and fine. With few outer " +
			"rows the per-row seeks are cheap: planlint reports them as info.",
	},
	Run: runJoinOrClause,
}

func runJoinOrClause(p *Pass) {
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			switch {
			case n.PhysicalOp == "Nested Loops" && len(n.Children) == 2 && n.Predicate != nil:
				residualJoinOr(p, q, n)
			case n.PhysicalOp == "Merge Interval":
				mergeIntervalJoinOr(p, q, n)
			}
		}
	}
}

// disjuncts splits an OR tree into its parts.
func disjuncts(s *plan.Scalar) []*plan.Scalar {
	if s == nil {
		return nil
	}
	if s.Kind == plan.ScalarLogical && strings.EqualFold(s.Op, "OR") {
		var out []*plan.Scalar
		for _, a := range s.Args {
			out = append(out, disjuncts(a)...)
		}
		return out
	}
	return []*plan.Scalar{s}
}

// touches reports whether the expression reads a column of any table in ts.
func touches(s *plan.Scalar, ts []plan.ObjectRef) bool {
	for _, c := range s.Columns() {
		for _, t := range ts {
			if c.BelongsTo(t) && (t.Alias == "" || c.Alias == "" || strings.EqualFold(unbracketed(t.Alias), c.Alias)) {
				return true
			}
		}
	}
	return false
}

// equiJoins reports whether the expression holds an equality between a
// column of one side and a column of the other: a join key, not a test.
func equiJoins(s *plan.Scalar, a, b []plan.ObjectRef) bool {
	var cs []comparison
	cs = appendScalarComparisons(cs, nil, s, false)
	for _, c := range cs {
		if c.Op != "EQ" || c.operandKind() != "column" {
			continue
		}
		l := &plan.Scalar{Kind: plan.ScalarIdentifier, Column: &c.Column}
		if touches(l, a) && touches(c.Operand, b) || touches(l, b) && touches(c.Operand, a) {
			return true
		}
	}
	return false
}

func unbracketed(s string) string { return strings.Trim(s, "[]") }

func residualJoinOr(p *Pass, q plan.LabeledPlan, nl *plan.RelOp) {
	outer, inner := nl.Children[0], nl.Children[1]
	ot, it := sideTables(outer), sideTables(inner)
	for _, conj := range nl.Predicate.Conjuncts() {
		ds := disjuncts(conj)
		if len(ds) < 2 {
			continue
		}
		cross := 0
		for _, d := range ds {
			if equiJoins(d, ot, it) {
				cross++
			}
		}
		if cross < 2 {
			continue
		}
		reportResidualJoinOr(p, q, nl, conj, ds)
		return
	}
}

func reportResidualJoinOr(p *Pass, q plan.LabeledPlan, nl *plan.RelOp, or *plan.Scalar, ds []*plan.Scalar) {
	outer, inner := nl.Children[0], nl.Children[1]
	outerRows, kind := rowsOut(outer)
	execs, _ := executions(inner)
	innerRows, _ := rowsOut(inner)
	perExec := innerRows
	if execs > 0 {
		perExec = innerRows / execs
	}
	pairs := outerRows * perExec
	texts := make([]string, len(ds))
	for i, d := range ds {
		texts[i] = d.String()
	}
	ev := map[string]any{
		"predicate":                or.String(),
		"disjuncts":                texts,
		"outer_rows":               round(outerRows, 1),
		"inner_rows_per_execution": round(perExec, 1),
		"pairs":                    round(pairs, 1),
		"rows_kind":                kind,
	}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s tests the OR join predicate %s row by row: %s outer rows × %s inner rows per execution = %s pairs (%s)",
		nl.DisplayName(), strings.Join(texts, " OR "), units.Count(outerRows), units.Count(perExec), units.Count(pairs), kind)
	sev := Info
	if ms, ok := elapsedMs(nl); ok {
		sev = gradeByTime(p, q.QueryPlan, ms, "the join", false, ev, &b)
	} else {
		switch {
		case kind == "actual" && pairs >= p.Param("error_pairs"):
			sev = Error
		case pairs >= p.Param("warn_pairs"):
			sev = Warning
		}
	}
	from := fmt.Sprintf("%s JOIN %s", aliased(sideTables(outer)), aliased(sideTables(inner)))
	ev["rewrite"] = unionRewrite(from, texts)
	p.Report(Finding{Severity: sev, NodeID: Node(nl.NodeID), Message: b.String(), Evidence: ev,
		Fix: "split the OR into a UNION of joins, one per branch, each an equality the optimizer can hash, merge or seek: " + unionRewrite(from, texts)})
}

// aliased names the first table of a join input as "schema.table AS alias".
func aliased(ts []plan.ObjectRef) string {
	if len(ts) == 0 || ts[0].Table == "" {
		return "..."
	}
	name := ts[0].TableName(false)
	if a := unbracketed(ts[0].Alias); a != "" {
		name += " AS " + a
	}
	return name
}

// unionRewrite sketches the UNION of one join per OR branch.
func unionRewrite(from string, branches []string) string {
	parts := make([]string, len(branches))
	for i, t := range branches {
		parts[i] = "SELECT ... FROM " + from + " ON " + t
	}
	return strings.Join(parts, " UNION ") + " (UNION ALL when the branches cannot match the same pair)"
}

// branchColumns returns, per Concatenation branch below a Merge Interval,
// the table columns its Compute Scalars take their values from.
func branchColumns(mi *plan.RelOp) [][]plan.ColumnRef {
	var concat *plan.RelOp
	mi.Walk(func(x *plan.RelOp) bool {
		if concat == nil && x.PhysicalOp == "Concatenation" {
			concat = x
		}
		return concat == nil
	})
	if concat == nil {
		return nil
	}
	var out [][]plan.ColumnRef
	for _, br := range concat.Children {
		var cols []plan.ColumnRef
		br.Walk(func(x *plan.RelOp) bool {
			for _, dv := range x.DefinedValues {
				for _, c := range dv.Value.Columns() {
					if c.Table != "" && !c.IsParameter() {
						cols = append(cols, c)
					}
				}
			}
			return true
		})
		out = append(out, cols)
	}
	return out
}

func mergeIntervalJoinOr(p *Pass, q plan.LabeledPlan, mi *plan.RelOp) {
	// The Merge Interval feeds the outer side of the loop that seeks.
	loop := mi.Parent
	for loop != nil && passThrough(loop) {
		loop = loop.Parent
	}
	if loop == nil || loop.PhysicalOp != "Nested Loops" || len(loop.Children) != 2 || belowPassThrough(loop.Children[0]) != mi {
		return
	}
	branches := branchColumns(mi)
	distinct := map[string]plan.ColumnRef{}
	withColumns := 0
	for _, cols := range branches {
		if len(cols) > 0 {
			withColumns++
		}
		for _, c := range cols {
			distinct[strings.ToLower(c.Name()+"|"+c.Table)] = c
		}
	}
	if withColumns < 2 || len(distinct) < 2 {
		return // parameters, literals or one column twice: a dynamic seek
	}
	var names []string
	for _, c := range distinct {
		names = append(names, c.Name())
	}
	sort.Strings(names)
	seek := belowPassThrough(loop.Children[1])
	var seekCols []string
	if seek.Access != nil {
		for _, sp := range seek.Access.SeekPredicates {
			for _, k := range sp.Keys {
				seekCols = append(seekCols, columnNames(k.Columns)...)
			}
		}
	}
	seekCols = uniqueFold(seekCols)
	execs, kind := executions(mi)
	ev := map[string]any{
		"outer_columns":   names,
		"executions":      round(execs, 1),
		"executions_kind": kind,
		"seek_node_id":    seek.NodeID,
	}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	target := fmt.Sprintf("node %d", seek.NodeID)
	if o := seek.Access.Object(); o.Table != "" {
		target = o.TableName(false)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the join predicate is an OR over %s: for every outer row (%s, %s) the Merge Interval at node %d builds one seek range per branch and %s (node %d) seeks %s on %s once per range",
		quoteList(names), units.Count(execs), kind, mi.NodeID, seek.DisplayName(), seek.NodeID, target, strings.Join(seekCols, ", "))
	sev := Info
	if ms, ok := elapsedMs(loop); ok {
		sev = gradeByTime(p, q.QueryPlan, ms, "the seeks", false, ev, &b)
	}
	var branchesText []string
	col := "key"
	if len(seekCols) > 0 {
		col = seekCols[0]
	}
	qual := target
	if a := unbracketed(seek.Access.Object().Alias); a != "" {
		qual = a
	}
	for _, n := range names {
		branchesText = append(branchesText, fmt.Sprintf("%s.%s = %s", qual, col, n))
	}
	keys := make([]string, 0, len(distinct))
	for k := range distinct {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	from := tableAlias(distinct[keys[0]]) + " JOIN " + aliased(seek.Objects())
	ev["rewrite"] = unionRewrite(from, branchesText)
	p.Report(Finding{Severity: sev, NodeID: Node(mi.NodeID), Message: b.String(), Evidence: ev,
		Fix: "split the OR into a UNION of joins, one per branch: " + unionRewrite(from, branchesText)})
}

func init() { register(JoinOrClause) }

package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// NestedLoopsRepetition reports the inner side of a Nested Loops join that
// scans, or tests a residual over many rows, once per outer row.
var NestedLoopsRepetition = &Rule{
	Code:     "PL306",
	Name:     "nested-loops-repetition",
	Severity: Error,
	Summary:  "The inner side of a Nested Loops join scans or filters many rows at every execution",
	Params: []Param{
		{"min_executions", 100, "ignore inner sides executed fewer times (actual, or estimated rebinds + rewinds + 1)"},
		{"min_rows_read", 100000, "ignore inner sides that read fewer rows over all executions"},
		{"min_rows_per_execution", 100, "a scan or residual seek counts only when it reads at least this many rows per execution (or its inner side took warn_ms)"},
		{"warn_ms", 1000, "actual plans: an inner side taking at least this many milliseconds is a warning"},
		{"error_ms", 10000, "actual plans: an inner side taking at least this many milliseconds is an error"},
		{"error_rows_read", 10000000, "without timings: actual rows read at least this high make an error"},
		{"warn_cost_share", 0.25, "estimated plans: the inner side's share of the statement cost that makes a warning"},
		{"seek_min_executions", 1000, "a plain seek below an underestimated outer input is reported only from this many executions"},
		{"skew_factor", 10, "a plain seek is reported only below an outer input underestimated by this factor (row-estimate-skew)"},
	},
	After: []string{"row-estimate-skew", "row-count-spool-not-in"},
	Doc: Doc{
		Problem: "A Nested Loops join runs its inner input once per outer row. A seek there is the normal, cheap case; a " +
			"scan, a Top over a scan or a seek whose residual predicate discards most of what it reads repeats that work for " +
			"every outer row: 24 million outer rows times a scan is the query that never finishes.",
		Evidence: "For every Nested Loops, planlint follows the inner input through Compute Scalar, Filter and Top to the " +
			"access. It reports a scan, or a seek with a residual predicate reading at least `min_rows_per_execution` rows " +
			"per execution, when the access ran at least `min_executions` times (actual `ActualExecutions`, or " +
			"`EstimateRebinds + EstimateRewinds + 1`) and read at least `min_rows_read` rows in all (`ActualRowsRead`, " +
			"`EstimatedRowsRead`, or the table cardinality for an estimated scan), at least `min_rows_per_execution` per " +
			"execution unless the inner side took `warn_ms` or more. Severity follows the inner side's " +
			"elapsed time in actual plans, the rows read without timings, the cost share in estimated plans. A plain seek " +
			"executed many times is reported (as info) only when the outer input was badly underestimated: the finding " +
			"then points at the `row-estimate-skew` finding that is its cause, once per misestimated operator (the most " +
			"executed seek, naming the others). Inner sides that are part of a `NOT IN` " +
			"null check defer to `row-count-spool-not-in`; Key Lookups are `key-lookup`'s.",
		Example: "```sql\nSELECT o.Id, x.Total FROM dbo.Orders AS o\nCROSS APPLY (SELECT SUM(l.Amount) AS Total FROM dbo.OrderLines AS l " +
			"WHERE l.OrderId = o.Id) AS x;\n```\nWithout an index on `OrderLines.OrderId`, the inner Table Scan of " +
			"OrderLines runs once per order.",
		Fix: "Give the inner side a seek: an index keyed on the inner table's columns compared with the outer row (equality " +
			"columns first, then the range column), INCLUDE the columns it returns; planlint prints it, e.g. " +
			"`CREATE INDEX IX_OrderLines_OrderId ON dbo.OrderLines (OrderId) INCLUDE (Amount);`. When no predicate links " +
			"the inner side to the outer row, the join order or the query shape is the problem: rewrite it (a join the " +
			"optimizer can hash, `NOT EXISTS` for `NOT IN`).",
		FalseAlarms: "A scan of a tiny table (a few pages) on the inner side is as cheap as a seek; `min_rows_read` and " +
			"`min_rows_per_execution` skip it. A lazy " +
			"Table Spool on the inner side replays a cached result (rewinds) and is not a repeated scan.",
	},
	Run: runNestedLoopsRepetition,
}

// innerAccess follows a Nested Loops' inner input through pass-through
// operators (Top included), a Sort or a stream aggregate (an APPLY with
// SUM or TOP ... ORDER BY) to a table access.
func innerAccess(inner *plan.RelOp) *plan.RelOp {
	for n := inner; n != nil; {
		if n.Access != nil && len(n.Children) == 0 {
			return n
		}
		if len(n.Children) != 1 || !passThrough(n) && n.PhysicalOp != "Stream Aggregate" && n.PhysicalOp != "Sort" {
			return nil
		}
		n = n.Children[0]
	}
	return nil
}

func runNestedLoopsRepetition(p *Pass) {
	for _, q := range p.Plans() {
		var consequences []Finding
		for _, nl := range q.Nodes {
			if nl.PhysicalOp == "Nested Loops" && len(nl.Children) == 2 {
				checkLoop(p, q, nl, &consequences)
			}
		}
		reportConsequences(p, consequences)
	}
}

// reportConsequences reports, for each misestimated operator, one of the
// seeks it multiplied (the most executed), naming the others: one root
// cause, one finding.
func reportConsequences(p *Pass, fs []Finding) {
	byRoot := map[int][]Finding{}
	var roots []int
	for _, f := range fs {
		id := f.Evidence["root_cause_node_id"].(int)
		if _, ok := byRoot[id]; !ok {
			roots = append(roots, id)
		}
		byRoot[id] = append(byRoot[id], f)
	}
	for _, id := range roots {
		group := byRoot[id]
		best := 0
		for i, f := range group {
			if f.Evidence["executions"].(float64) > group[best].Evidence["executions"].(float64) {
				best = i
			}
		}
		f := group[best]
		var others []string
		for i, g := range group {
			if i != best {
				others = append(others, fmt.Sprint(*g.NodeID))
			}
		}
		if len(others) > 0 {
			f.Evidence["other_node_ids"] = others
			f.Message += fmt.Sprintf("; the same misestimate multiplies the %s at %s %s", plural(len(others), "seek"), plural(len(others), "node"), quoteList(others))
		}
		p.Report(f)
	}
}

// loopIndexColumns returns the inner table's columns compared with another
// table's columns or with a parameter: equality keys first, then ranges.
func loopIndexColumns(nl, acc *plan.RelOp) (eq, rng []string) {
	table := acc.Access.Object()
	// The seek's own keys come first: the new index extends them.
	for _, sp := range acc.Access.SeekPredicates {
		for _, k := range sp.Keys {
			switch {
			case k.Part == "Prefix" && (k.ScanType == "" || k.ScanType == "EQ"):
				eq = append(eq, columnNames(k.Columns)...)
			case k.Part == "StartRange" || k.Part == "EndRange" || k.Part == "Prefix":
				rng = append(rng, columnNames(k.Columns)...)
			}
		}
	}
	var cs []comparison
	cs = appendScalarComparisons(cs, acc, acc.Access.Residual(), false)
	cs = appendScalarComparisons(cs, nl, nl.Predicate, false)
	for _, c := range cs {
		if c.InOr || c.ColumnConverted || !c.Column.BelongsTo(table) {
			continue
		}
		switch c.operandKind() {
		case "column":
			if c.Operand.Column.BelongsTo(table) && strings.EqualFold(c.Operand.Column.Alias, c.Column.Alias) {
				continue
			}
		case "parameter", "literal":
		default:
			continue
		}
		switch c.Op {
		case "EQ":
			eq = append(eq, c.Column.Column)
		case "LT", "LE", "GT", "GE":
			rng = append(rng, c.Column.Column)
		}
	}
	eq = uniqueFold(eq)
	return eq, without(uniqueFold(rng), eq)
}

func checkLoop(p *Pass, q plan.LabeledPlan, nl *plan.RelOp, consequences *[]Finding) {
	inner, outer := nl.Children[1], nl.Children[0]
	acc := innerAccess(inner)
	if acc == nil || acc.IsLookup() || !(isScan(acc) || isSeek(acc)) {
		return
	}
	execs, execKind := executions(acc)
	if execs < p.Param("min_executions") {
		return
	}
	read, readKind := rowsReadTotal(acc)
	out, _ := rowsOut(acc)
	perExec := read / execs
	obj := acc.Access.Object()
	residualHeavy := isSeek(acc) && acc.Access.Residual() != nil && perExec >= p.Param("min_rows_per_execution") && read >= 10*out
	repeated := isScan(acc) || residualHeavy

	ev := map[string]any{
		"inner_node_id":           acc.NodeID,
		"object":                  objectEvidence(obj),
		"executions":              round(execs, 1),
		"executions_kind":         execKind,
		"rows_read":               round(read, 1),
		"rows_read_kind":          readKind,
		"rows_read_per_execution": round(perExec, 1),
		"rows_returned":           round(out, 1),
	}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	outerRows, outerKind := rowsOut(outer)
	ev["outer_rows"] = round(outerRows, 1)

	// One root cause, one finding: a NOT IN null check is reported there.
	for _, f := range p.Prior("row-count-spool-not-in") {
		ids, _ := f.Evidence["check_node_ids"].([]int)
		for _, id := range ids {
			if id == inner.NodeID && f.CursorOperation() == q.Label {
				ev["root_cause_rule"] = f.Rule
				ev["root_cause_node_id"] = *f.NodeID
				p.Report(Finding{Severity: Info, NodeID: Node(acc.NodeID), Evidence: ev,
					Message: fmt.Sprintf("%s on %s runs %s times on the inner side of %s (node %d), reading %s rows in all: it is the NOT IN null check reported by row-count-spool-not-in at node %d",
						acc.DisplayName(), obj.TableName(false), units.Count(execs), nl.DisplayName(), nl.NodeID, units.Count(read), *f.NodeID),
					Fix: f.Fix})
				return
			}
		}
	}

	skew := priorOnSubtree(p, q, "row-estimate-skew", outer, func(f Finding) bool {
		factor, _ := f.Evidence["factor"].(float64)
		return f.Evidence["direction"] == "under" && factor >= p.Param("skew_factor")
	})
	if !repeated {
		if skew == nil || execs < p.Param("seek_min_executions") {
			return // a seek executed many times is what Nested Loops is for
		}
		ev["root_cause_rule"] = skew.Rule
		ev["root_cause_node_id"] = *skew.NodeID
		*consequences = append(*consequences, Finding{Severity: Info, NodeID: Node(acc.NodeID), Evidence: ev,
			Message: fmt.Sprintf("%s on %s runs %s times (%s) on the inner side of %s (node %d) because its outer input returned %s rows (%s) where far fewer were estimated: a consequence of the misestimate at node %d (row-estimate-skew)",
				acc.DisplayName(), obj.TableName(false), units.Count(execs), execKind, nl.DisplayName(), nl.NodeID, units.Count(outerRows), outerKind, *skew.NodeID),
			Fix: "fix the estimate at node " + fmt.Sprint(*skew.NodeID) + " (see row-estimate-skew); with a right estimate the optimizer picks a hash or merge join"})
		return
	}
	ms, timed := elapsedMs(inner)
	if read < p.Param("min_rows_read") || perExec < p.Param("min_rows_per_execution") && !(timed && ms >= p.Param("warn_ms")) {
		return // a scan of a one-page table is as cheap as a seek
	}

	var b strings.Builder
	what := acc.DisplayName()
	if top := inner; top != acc && top.PhysicalOp == "Top" {
		what = "Top over " + what
	}
	fmt.Fprintf(&b, "%s on %s runs %s times (%s) on the inner side of %s (node %d), once per outer row (%s %s), reading %s rows per execution, %s in all (%s)",
		what, obj.TableName(false), units.Count(execs), execKind, nl.DisplayName(), nl.NodeID, units.Count(outerRows), outerKind, units.Count(perExec), units.Count(read), readKind)
	if residualHeavy {
		ev["residual_predicate"] = acc.Access.Residual().String()
		fmt.Fprintf(&b, " to return %s: the residual %s is tested row by row", units.Count(out), acc.Access.Residual().String())
	}
	sev := Info
	if timed {
		sev = gradeByTime(p, q.QueryPlan, ms, "the inner side", true, ev, &b)
	} else {
		share := noteSubtreeShare(q.QueryPlan, inner, ev, &b)
		switch {
		case readKind == "actual" && read >= p.Param("error_rows_read"):
			sev = Error
		case readKind == "actual" || share >= p.Param("warn_cost_share"):
			sev = Warning
		}
	}
	if skew != nil {
		ev["outer_misestimate_node_id"] = *skew.NodeID
		fmt.Fprintf(&b, "; the outer input was underestimated (row-estimate-skew at node %d), which is why a loop was chosen", *skew.NodeID)
	}

	f := Finding{Severity: sev, NodeID: Node(acc.NodeID), Message: b.String(), Evidence: ev}
	eq, rng := loopIndexColumns(nl, acc)
	if len(eq)+len(rng) > 0 {
		keys := append(append([]string{}, eq...), rng...)
		if len(rng) > 1 {
			keys = append(append([]string{}, eq...), rng[0])
		}
		include := without(uniqueFold(columnNames(acc.OutputList)), keys)
		include = without(include, without(rng, keys))
		include = append(include, without(rng, keys)...)
		x, covered := indexForKeys(p, obj, keys, include)
		if covered {
			f.Fix = fmt.Sprintf("index %s already has keys %s and every column the inner side needs: the plan predates it or the optimizer refused it; recompile and check that the seek columns' types match", x.Name, strings.Join(keys, ", "))
		} else {
			x.addEvidence(ev)
			f.Fix = "give the inner side a seek: " + x.String()
		}
	} else {
		f.Fix = fmt.Sprintf("nothing links %s to the outer row, so no index turns this into a seek: rewrite the query so the optimizer can join the two inputs once (a hash or merge join), or reorder the join", obj.TableName(false))
	}
	p.Report(f)
}

func init() { register(NestedLoopsRepetition) }

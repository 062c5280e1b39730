package rules

import (
	"math"
	"strconv"
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
)

// percent formats a share in [0,1] as a whole percentage.
func percent(share float64) string {
	p := math.Round(share * 100)
	if p == 0 && share > 0 {
		return "<1%"
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}

// round keeps evidence figures readable and stable in JSON.
func round(v float64, digits int) float64 {
	m := math.Pow(10, float64(digits))
	return math.Round(v*m) / m
}

// costShare is the operator's own cost as a share of the plan's cost.
func costShare(q *plan.QueryPlan, n *plan.RelOp) float64 {
	total := q.Cost()
	if total <= 0 {
		return 0
	}
	s := n.OwnCost() / total
	if s > 1 {
		return 1
	}
	return s
}

// subtreeShare is the operator's subtree cost as a share of the plan's cost.
func subtreeShare(q *plan.QueryPlan, n *plan.RelOp) float64 {
	total := q.Cost()
	if total <= 0 {
		return 0
	}
	return math.Min(1, n.SubtreeCost/total)
}

// objectName renders "schema.table" or "schema.table.index" for messages.
func objectName(o plan.ObjectRef) string {
	name := o.TableName(false)
	if o.Index != "" {
		name += "." + o.Index
	}
	return name
}

// objectEvidence describes an object for Finding.Evidence.
func objectEvidence(o plan.ObjectRef) map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{"database": o.Database, "schema": o.Schema, "table": o.Table, "index": o.Index, "index_kind": o.IndexKind} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// columnNames lists the columns' names (without table prefixes).
func columnNames(cols []plan.ColumnRef) []string {
	out := make([]string, 0, len(cols))
	for _, c := range cols {
		out = append(out, c.Column)
	}
	return out
}

// uniqueFold removes case-insensitive duplicates, keeping the first spelling.
func uniqueFold(names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		k := strings.ToLower(n)
		if !seen[k] {
			seen[k] = true
			out = append(out, n)
		}
	}
	return out
}

// containsFold reports whether list holds name, ignoring case.
func containsFold(list []string, name string) bool {
	for _, s := range list {
		if strings.EqualFold(s, name) {
			return true
		}
	}
	return false
}

// actualOrEstimated returns the actual total when the operator ran with
// runtime counters, else the estimate, and which one it is. Actual counts
// come from plan.RelOp's parallel-aware readers, which count like the
// estimates do (a branch each thread runs once is one execution).
func actualOrEstimated(actual func(*plan.RelOp) (float64, bool), n *plan.RelOp, est float64) (float64, string) {
	if v, ok := actual(n); ok {
		return v, "actual"
	}
	return est, "estimated"
}

// executions of an operator: actual when known, else estimated.
func executions(n *plan.RelOp) (float64, string) {
	return actualOrEstimated((*plan.RelOp).ActualExecutionCount, n, n.EstimatedExecutions())
}

// rowsOut is the operator's output rows over all executions.
func rowsOut(n *plan.RelOp) (float64, string) {
	return actualOrEstimated((*plan.RelOp).ActualRowCount, n, n.EstimatedRowsAllExecutions())
}

// passThrough reports operators that hand their input on row by row
// without changing which table it comes from.
func passThrough(n *plan.RelOp) bool {
	switch n.PhysicalOp {
	case "Compute Scalar", "Filter", "Parallelism", "Segment", "Sequence Project", "Top", "Bitmap":
		return true
	}
	return false
}

// singleTableSource follows pass-through operators below n and returns the
// seek or scan that feeds it when the input comes from one table access with
// no join in between. A Nested Loops join that only adds a Key or RID Lookup
// on the same table counts as that table's access.
func singleTableSource(n *plan.RelOp) *plan.RelOp {
	for cur := n; cur != nil; {
		if cur.Access != nil && len(cur.Children) == 0 {
			return cur
		}
		if cur != n && cur.PhysicalOp == "Nested Loops" && len(cur.Children) == 2 {
			return lookupJoinSource(cur)
		}
		if len(cur.Children) != 1 || (cur != n && !passThrough(cur)) {
			return nil
		}
		cur = cur.Children[0]
	}
	return nil
}

// lookupJoinSource returns the outer seek or scan of a Nested Loops join
// whose inner side is only a lookup into the same table, else nil.
func lookupJoinSource(nl *plan.RelOp) *plan.RelOp {
	inner, outer := belowPassThrough(nl.Children[1]), belowPassThrough(nl.Children[0])
	if !inner.IsLookup() || outer.Access == nil || len(outer.Children) != 0 || outer.IsLookup() {
		return nil
	}
	if !outer.Access.Object().SameTable(inner.Access.Object()) {
		return nil
	}
	return outer
}

// belowPassThrough skips single-input pass-through operators.
func belowPassThrough(n *plan.RelOp) *plan.RelOp {
	for passThrough(n) && len(n.Children) == 1 {
		n = n.Children[0]
	}
	return n
}

// lookupOuterAccess finds, for a Key or RID Lookup, the seek or scan on the
// same table in the outer input of the Nested Loops join that drives it.
func lookupOuterAccess(lookup *plan.RelOp) *plan.RelOp {
	child := lookup
	for p := lookup.Parent; p != nil; child, p = p, p.Parent {
		if p.PhysicalOp != "Nested Loops" {
			if passThrough(p) {
				continue
			}
			return nil
		}
		if len(p.Children) < 2 || p.Children[0] == child {
			continue
		}
		target := lookup.Access.Object()
		// In a self-join the alias tells which access the lookup follows.
		var found, sameAlias *plan.RelOp
		p.Children[0].Walk(func(n *plan.RelOp) bool {
			if sameAlias != nil {
				return false
			}
			if n.Access != nil && !n.IsLookup() && n.Access.Object().SameTable(target) {
				if found == nil {
					found = n
				}
				if strings.EqualFold(n.Access.Object().Alias, target.Alias) {
					sameAlias = n
				}
			}
			return true
		})
		if sameAlias != nil {
			return sameAlias
		}
		return found
	}
	return nil
}

// findTable resolves a plan object in the catalog.
func findTable(cat *catalog.Catalog, o plan.ObjectRef) *catalog.Table {
	if cat == nil || o.Table == "" {
		return nil
	}
	return cat.FindTable(o.Database, o.Schema, o.Table)
}

// indexFilter reports whether the object's index is filtered, as the plan
// (Object/@Filtered) or the catalog says, and the catalog's filter
// definition when it has one.
func indexFilter(cat *catalog.Catalog, o plan.ObjectRef) (filter string, filtered bool) {
	if t := findTable(cat, o); t != nil {
		if ix := t.FindIndex(o.Index); ix != nil && ix.FilterDefinition != "" {
			return ix.FilterDefinition, true
		}
	}
	return "", o.Filtered
}

// databaseOf returns the catalog settings of the object's database (or of
// the only database known when the plan does not name one).
func databaseOf(cat *catalog.Catalog, o plan.ObjectRef) *catalog.Database {
	if cat == nil {
		return nil
	}
	if o.Database != "" {
		return cat.FindDatabase(o.Database)
	}
	if len(cat.Databases) == 1 {
		return cat.Databases[0]
	}
	return nil
}

// accessedObjects lists the distinct tables the plan reads or writes, with
// the operators that touch each.
func accessedTables(q *plan.QueryPlan) []tableAccess {
	var out []tableAccess
	for _, n := range q.Nodes {
		for _, o := range n.Objects() {
			if o.Table == "" {
				continue
			}
			found := false
			for i := range out {
				if out[i].Object.SameTable(o) {
					out[i].Nodes = append(out[i].Nodes, n)
					found = true
					break
				}
			}
			if !found {
				out = append(out, tableAccess{Object: o, Nodes: []*plan.RelOp{n}})
			}
		}
	}
	return out
}

type tableAccess struct {
	Object plan.ObjectRef
	Nodes  []*plan.RelOp
}

// readsIndex reports whether any operator of the plan reads or writes the
// named index of the table.
func readsIndex(q *plan.QueryPlan, table plan.ObjectRef, index string) bool {
	for _, n := range q.Nodes {
		for _, o := range n.Objects() {
			if o.SameTable(table) && strings.EqualFold(o.Index, index) {
				return true
			}
		}
	}
	return false
}

// isWrite reports whether the operator inserts, updates or deletes rows.
func isWrite(n *plan.RelOp) bool {
	switch n.LogicalOp {
	case "Insert", "Update", "Delete", "Merge":
		return n.Access != nil
	}
	return false
}

// quoteList renders names as "a, b and c".
func quoteList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// plural returns the plural of word unless n is 1.
func plural(n int, word string) string {
	switch {
	case n == 1:
		return word
	case word == "index":
		return "indexes"
	}
	return word + "s"
}

// Elapsed times come from QueryTimeStats (actual plans from SQL Server 2014
// SP2 and 2016 on) or from the operators' runtime counters. In row mode an
// operator's time includes the operators below it; in batch mode it is its
// own, so the statement's time is the longest of them, not the root's.

// queryTimeMs is QueryTimeStats/@ElapsedTime of a plan, and whether the
// plan carries QueryTimeStats.
func queryTimeMs(q *plan.QueryPlan) (float64, bool) {
	if q == nil || q.QueryTime == nil {
		return 0, false
	}
	return q.QueryTime.ElapsedTimeMs, true
}

// elapsedMs is the operator's actual elapsed time in milliseconds, and
// whether the plan carried it.
func elapsedMs(n *plan.RelOp) (float64, bool) {
	if n == nil || n.RunTime == nil || !n.RunTime.HasTiming {
		return 0, false
	}
	return float64(n.RunTime.ElapsedMs), true
}

// longestOperatorMs is the longest elapsed time of any operator of the
// plan, and whether any carried one.
func longestOperatorMs(q *plan.QueryPlan) (float64, bool) {
	best, timed := 0.0, false
	for _, n := range q.Nodes {
		if t, ok := elapsedMs(n); ok {
			best, timed = math.Max(best, t), true
		}
	}
	return best, timed
}

// planElapsedMs is the elapsed time of one plan (a statement's or a cursor
// operation's): QueryTimeStats/@ElapsedTime when above zero, else the
// longest operator's, and whether either is known.
func planElapsedMs(q *plan.QueryPlan) (float64, bool) {
	if t, ok := queryTimeMs(q); ok && t > 0 {
		return t, true
	}
	return longestOperatorMs(q)
}

// statementElapsedMs is the statement's elapsed time on an actual plan:
// QueryTimeStats/@ElapsedTime, else the longest elapsed time of any
// operator of its plans; -1 when the plan carries no timings.
func statementElapsedMs(s *plan.Statement) float64 {
	if t, ok := queryTimeMs(s.QueryPlan); ok && t > 0 {
		return t
	}
	best := -1.0
	for _, q := range s.Plans() {
		if t, ok := longestOperatorMs(q.QueryPlan); ok {
			best = math.Max(best, t)
		}
	}
	return best
}

// findingAt returns the first finding among fs on the given node.
func findingAt(fs []Finding, node int) *Finding {
	for i := range fs {
		if fs[i].NodeID != nil && *fs[i].NodeID == node {
			return &fs[i]
		}
	}
	return nil
}

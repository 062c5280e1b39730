package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// NoJoinPredicate reports the NoJoinPredicate warning and says whether the
// join really is a cross join or whether the predicate was moved into the
// seeks below it.
var NoJoinPredicate = &Rule{
	Code:     "PL307",
	Name:     "no-join-predicate",
	Severity: Error,
	Summary:  "A join has no join predicate: a real cross join, or a predicate pushed into the seeks below",
	Params: []Param{
		{"warn_rows", 10000, "a real cross join producing at least this many rows (actual, else estimated) is a warning"},
		{"error_rows", 1000000, "a real cross join producing at least this many rows is an error"},
	},
	Doc: Doc{
		Problem: "A join without a predicate pairs every row of one input with every row of the other: a forgotten `ON` " +
			"condition or a comma join turns two 10,000-row tables into 100 million rows. SQL Server marks such joins with " +
			"the `NoJoinPredicate` warning, but it also sets the warning when the predicate did not disappear at all: with " +
			"`a.x = b.x AND b.x = @p` the optimizer derives `a.x = @p` and seeks both tables on `@p`, leaving nothing to " +
			"test at the join. Viewers show both cases with the same red cross, which is why users call the warning " +
			"misleading.",
		Evidence: "`RelOp/Warnings/@NoJoinPredicate=\"true\"` on a join. planlint then reads the join's inputs: when both " +
			"sides seek or filter on the same outer value (one parameter, literal or column of a table outside the join), " +
			"the predicate was moved to those seeks (transitive closure) and the join is not a cross join (info); when the " +
			"inner side of a Nested Loops uses the join's outer references, it is a correlated join (info). Otherwise it " +
			"is a real cross join, graded by the rows it produces; one input of at most one row makes it harmless (info).",
		Example: "```sql\nSELECT d1.Name, d2.Name FROM dbo.docs AS d1, dbo.docs AS d2;  -- real cross join\n" +
			"SELECT p.Id, b.Name FROM dbo.Posts AS p JOIN dbo.Badges AS b ON b.UserId = p.OwnerUserId\n" +
			"WHERE p.OwnerUserId = @UserId;  -- warning set, but both sides seek on @UserId\n```",
		Fix: "For a real cross join add the missing join condition (`ON a.Key = b.Key`), or write `CROSS JOIN` when " +
			"every pair is really wanted. For a pushed-down predicate nothing is wrong; suppress the finding if it is noise.",
		FalseAlarms: "Joins to a one-row input (a scalar aggregate, a variable table with one row) are cross joins by " +
			"construction and cheap.",
	},
	Run: runNoJoinPredicate,
}

func runNoJoinPredicate(p *Pass) {
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			if n.Warnings != nil && n.Warnings.NoJoinPredicate && len(n.Children) == 2 {
				reportNoJoinPredicate(p, q, n)
			}
		}
	}
}

// sideTables lists the tables accessed below n.
func sideTables(n *plan.RelOp) []plan.ObjectRef {
	var out []plan.ObjectRef
	n.Walk(func(x *plan.RelOp) bool {
		out = append(out, x.Objects()...)
		return true
	})
	return out
}

// outerValues returns the values that the seeks and predicates below n
// compare its tables' columns with and that come from outside n: parameters,
// literals and columns of other tables, keyed by their text.
func outerValues(n *plan.RelOp) map[string]string {
	tables := sideTables(n)
	inside := func(c plan.ColumnRef) bool {
		for _, t := range tables {
			if c.BelongsTo(t) {
				return true
			}
		}
		return false
	}
	out := map[string]string{}
	add := func(col plan.ColumnRef, v *plan.Scalar) {
		if v == nil || !inside(col) {
			return
		}
		switch {
		case v.Kind == plan.ScalarIdentifier && v.Column != nil && v.Column.IsParameter():
			out[strings.ToLower(v.Column.Column)] = v.Column.Column
		case v.Kind == plan.ScalarIdentifier && v.Column != nil && v.Column.Table != "" && !inside(*v.Column):
			out[strings.ToLower(v.Column.Name()+"|"+v.Column.Table)] = v.Column.Name()
		case v.Kind == plan.ScalarConst:
			out["const:"+v.Value] = v.Value
		}
	}
	n.Walk(func(x *plan.RelOp) bool {
		var cs []comparison
		if a := x.Access; a != nil {
			for _, sp := range a.SeekPredicates {
				for _, k := range sp.Keys {
					if k.Part != "Prefix" {
						continue
					}
					for i, col := range k.Columns {
						if i < len(k.Values) {
							v, _ := k.Values[i].StripConvert()
							add(col, v)
						}
					}
				}
			}
			cs = appendScalarComparisons(cs, x, a.Predicate, false)
		}
		cs = appendScalarComparisons(cs, x, x.Predicate, false)
		for _, c := range cs {
			if c.Op == "EQ" && !c.InOr {
				add(c.Column, c.Operand)
			}
		}
		return true
	})
	return out
}

// usesOuterReferences reports whether the inner side of a Nested Loops
// reads any of the join's outer references.
func usesOuterReferences(nl *plan.RelOp) bool {
	if len(nl.OuterReferences) == 0 {
		return false
	}
	vals := outerValues(nl.Children[1])
	for _, r := range nl.OuterReferences {
		for k := range vals {
			if strings.HasPrefix(k, strings.ToLower(r.Name()+"|")) || strings.EqualFold(k, r.Column) {
				return true
			}
		}
	}
	return false
}

func reportNoJoinPredicate(p *Pass, q plan.LabeledPlan, n *plan.RelOp) {
	outer, inner := n.Children[0], n.Children[1]
	ov, iv := outerValues(outer), outerValues(inner)
	var shared []string
	for k, v := range ov {
		if _, ok := iv[k]; ok {
			shared = append(shared, v)
		}
	}
	sort.Strings(shared)
	rows, kind := rowsOut(n)
	ev := map[string]any{"rows": round(rows, 1), "rows_kind": kind}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	name := func(x *plan.RelOp) string {
		var names []string
		for _, o := range sideTables(x) {
			if t := o.TableName(false); t != "" && !containsFold(names, t) {
				names = append(names, t)
			}
		}
		if len(names) == 0 {
			return fmt.Sprintf("node %d", x.NodeID)
		}
		return quoteList(names)
	}
	f := Finding{Severity: Info, NodeID: Node(n.NodeID), Evidence: ev}
	switch {
	case len(shared) > 0:
		ev["kind"] = "pushed-down"
		ev["shared_values"] = shared
		f.Message = fmt.Sprintf("%s carries the NoJoinPredicate warning, but it is not a cross join: both inputs (%s; %s) are already restricted to the same %s, so the optimizer moved the join predicate into their seeks (transitive closure) and had nothing left to test at the join",
			n.DisplayName(), name(outer), name(inner), quoteList(shared))
		f.Fix = "nothing to change; suppress this finding if the warning is noise"
	case n.PhysicalOp == "Nested Loops" && usesOuterReferences(n):
		ev["kind"] = "correlated"
		f.Message = fmt.Sprintf("%s carries the NoJoinPredicate warning, but its inner side (%s) seeks on the outer references %s: the predicate was pushed down into the seek, it is not a cross join",
			n.DisplayName(), name(inner), quoteList(columnNames(n.OuterReferences)))
		f.Fix = "nothing to change; suppress this finding if the warning is noise"
	default:
		ev["kind"] = "cross-join"
		outerRows, _ := rowsOut(outer)
		innerPer := inner.EstimateRows
		if rt := inner.RunTime; rt != nil && rt.ActualExecutions > 0 {
			innerPer = float64(rt.ActualRows) / float64(rt.ActualExecutions)
		}
		f.Message = fmt.Sprintf("%s joins %s with %s without any join predicate (NoJoinPredicate): every row of one input is paired with every row of the other, %s rows (%s)",
			n.DisplayName(), name(outer), name(inner), units.Count(rows), kind)
		switch {
		case outerRows <= 1 || innerPer <= 1:
			f.Message += "; one input has at most one row, so the cross join is harmless"
		case rows >= p.Param("error_rows"):
			f.Severity = Error
		case rows >= p.Param("warn_rows"):
			f.Severity = Warning
		}
		f.Fix = fmt.Sprintf("add the missing join condition between %s and %s (ON a.Key = b.Key), or write CROSS JOIN if every pair is wanted", name(outer), name(inner))
	}
	p.Report(f)
}

func init() { register(NoJoinPredicate) }

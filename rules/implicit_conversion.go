package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// ImplicitConversion reports a CONVERT_IMPLICIT applied to a table column in
// a seek, residual, filter or join predicate.
var ImplicitConversion = &Rule{
	Code:     "PL301",
	Name:     "implicit-conversion",
	Severity: Error,
	Summary:  "A column is implicitly converted in a predicate, so its index cannot be sought",
	Params: []Param{
		{"min_elapsed_ms", 100, "an actual plan whose statement took less than this (ms, elapsed and CPU) is info"},
		{"warn_rows_read", 10000, "a conversion on an operator that read at least this many rows is a warning"},
		{"error_rows_read", 1000000, "a conversion on an operator that read at least this many rows is an error"},
		{"max_share", 0.1, "the operator must return at most this share of the rows it read to be a warning or error"},
		{"misestimate_factor", 10, "actual rows off the estimate by this factor (either way) on the operator make a warning"},
		{"misestimate_min_rows", 1000, "a misestimate counts when the larger side has at least this many rows"},
	},
	Doc: Doc{
		Problem: "When the two sides of a comparison have different types, SQL Server converts the side with the lower type " +
			"precedence. If that is the column (a varchar column against an nvarchar parameter or an N'…' literal, an " +
			"int column against a varchar value, join columns of different types), every row's value must be converted " +
			"before the test: the index on the column cannot be sought, the table or index is scanned, and the " +
			"estimate is a guess. The classic cause is an application that sends every string as nvarchar.",
		Evidence: "A `Convert Implicit=\"1\"` around a `ColumnReference` of a table inside a `Compare` (or `like`) of a seek " +
			"range, a residual `Predicate`, a `Filter` or a join predicate. The statement's `Warnings/PlanAffectingConvert` " +
			"(`ConvertIssue=\"Seek Plan\"` or `\"Cardinality Estimate\"`) is quoted when it names the same column. A computed value " +
			"(`Expr1044`) compared in a join is followed to the Compute Scalar that defines it as `CONVERT_IMPLICIT(…, column)`. The other " +
			"side is named: a parameter with its `ParameterDataType`, a literal, or the other column. Severity comes from " +
			"what the conversion cost: rows read against rows returned by the operator (actual `ActualRowsRead`, else " +
			"`EstimatedRowsRead`, else the table cardinality for a full scan), or a misestimate on that operator. A " +
			"conversion over a small lookup table is info.",
		Example: "```sql\n-- AccountCode is varchar(20); the literal is nvarchar\nSELECT CustomerId FROM dbo.Customers WHERE AccountCode = N'ACCT-00042000';\n```\n" +
			"Index Scan of IX_Customers_AccountCode with `Predicate` `CONVERT_IMPLICIT(nvarchar(20),[AccountCode],0)=N'ACCT-00042000'`: " +
			"1,000,000 rows read to return 1.",
		Fix: "Make the other side the column's type: declare the parameter as the column is declared (in ADO.NET give " +
			"`SqlParameter` the column's `SqlDbType` and size instead of letting strings default to nvarchar), drop the " +
			"`N` prefix of a literal compared with a varchar column, or give join columns the same type. Changing the " +
			"column's type is the last resort.",
		FalseAlarms: "A conversion of the parameter or literal (`Id = CONVERT_IMPLICIT(int,@1,0)`) is harmless and never " +
			"reported. `Cardinality Estimate` warnings about conversions in the select list are not predicates and are " +
			"left alone. Over a few hundred rows the scan costs nothing (info). An actual plan whose statement took under `min_elapsed_ms` (elapsed and CPU time) is info.",
		References: []string{"https://learn.microsoft.com/sql/t-sql/data-types/data-type-precedence-transact-sql"},
	},
	Run: runImplicitConversion,
}

// columnConversion is one implicitly converted column in a comparison.
type columnConversion struct {
	Node    *plan.RelOp
	Column  plan.ColumnRef
	To      string       // target type, e.g. nvarchar(20)
	Other   *plan.Scalar // the other side, conversions removed
	Where   string       // "seek", "residual" or "predicate"
	Compare string       // the comparison's text
}

func runImplicitConversion(p *Pass) {
	for _, q := range p.Plans() {
		// One finding per operator: conversions of several columns in one
		// predicate share the operator's cost and are fixed together.
		var order []*plan.RelOp
		byNode := map[*plan.RelOp][]columnConversion{}
		seen := map[string]bool{}
		for _, c := range columnConversions(q.QueryPlan) {
			key := fmt.Sprintf("%d/%s", c.Node.NodeID, strings.ToLower(columnLabel(c.Column)))
			if seen[key] {
				continue
			}
			seen[key] = true
			if byNode[c.Node] == nil {
				order = append(order, c.Node)
			}
			byNode[c.Node] = append(byNode[c.Node], c)
		}
		for _, n := range order {
			var keep []columnConversion
			for _, c := range byNode[n] {
				if systemObject(c.Column.Database, c.Column.Schema) {
					continue
				}
				// Widening one number type to another keeps the column
				// seekable; SQL Server warns when it does not.
				if numericType(c.To) && len(matchingConvertWarnings(q.QueryPlan, c)) == 0 {
					continue
				}
				keep = append(keep, c)
			}
			if len(keep) > 0 {
				reportConversions(p, q, n, keep)
			}
		}
	}
}

// columnConversions finds every implicit conversion of a table column in
// the plan's predicates.
func columnConversions(q *plan.QueryPlan) []columnConversion {
	var out []columnConversion
	defs := computedValues(q)
	for _, n := range q.Nodes {
		if a := n.Access; a != nil {
			for _, sp := range a.SeekPredicates {
				for _, k := range sp.Keys {
					for i, v := range k.Values {
						col, to, ok := implicitOnColumn(v, defs)
						if !ok || i >= len(k.Columns) {
							continue
						}
						seekCol := k.Columns[i]
						out = append(out, columnConversion{Node: n, Column: *col, To: to, Where: "seek",
							Other: &plan.Scalar{Kind: plan.ScalarIdentifier, Column: &seekCol}, Compare: v.String()})
					}
				}
			}
			out = appendConversions(out, n, a.Predicate, "residual", defs)
		}
		out = appendConversions(out, n, n.Predicate, "predicate", defs)
	}
	return out
}

func appendConversions(out []columnConversion, n *plan.RelOp, s *plan.Scalar, where string, defs map[string]*plan.Scalar) []columnConversion {
	if s == nil {
		return out
	}
	isLike := s.Kind == plan.ScalarIntrinsic && strings.EqualFold(s.Op, "like")
	if (s.Kind == plan.ScalarCompare || isLike) && len(s.Args) >= 2 {
		for i := 0; i < 2; i++ {
			if col, to, ok := implicitOnColumn(s.Args[i], defs); ok {
				other, _ := s.Args[1-i].StripConvert()
				out = append(out, columnConversion{Node: n, Column: *col, To: to, Other: other, Where: where, Compare: s.String()})
			}
		}
	}
	for _, a := range s.Args {
		out = appendConversions(out, n, a, where, defs)
	}
	return out
}

// computedValues maps the plan's Compute Scalar outputs (Expr1044, …) to
// the expressions that define them, by lower-case name.
func computedValues(q *plan.QueryPlan) map[string]*plan.Scalar {
	defs := map[string]*plan.Scalar{}
	for _, n := range q.Nodes {
		for _, dv := range n.DefinedValues {
			if len(dv.Columns) == 1 && dv.Columns[0].Table == "" && dv.Value != nil && dv.Value.Kind == plan.ScalarConvert && dv.Value.Implicit {
				defs[strings.ToLower(dv.Columns[0].Column)] = dv.Value
			}
		}
	}
	return defs
}

// implicitOnColumn reports an implicit conversion wrapping a table column,
// with the outermost target type. A computed value (Expr1044) stands for
// the expression a Compute Scalar defined it as.
func implicitOnColumn(s *plan.Scalar, defs map[string]*plan.Scalar) (*plan.ColumnRef, string, bool) {
	if s != nil && s.Kind == plan.ScalarIdentifier && s.Column != nil && s.Column.Table == "" && !s.Column.IsParameter() {
		s = defs[strings.ToLower(s.Column.Column)]
	}
	if s == nil || s.Kind != plan.ScalarConvert {
		return nil, "", false
	}
	to, implicit := s.DataType, false
	if to == "" {
		to = s.Op
	}
	for s != nil && s.Kind == plan.ScalarConvert && len(s.Args) == 1 {
		implicit = implicit || s.Implicit
		s = s.Args[0]
	}
	col, ok := tableColumn(s)
	return col, to, ok && implicit
}

func reportConversions(p *Pass, q plan.LabeledPlan, n *plan.RelOp, cs []columnConversion) {
	ev := map[string]any{"where": cs[0].Where}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	var parts, fixes, warned []string
	var convs []map[string]any
	for _, c := range cs {
		colName := columnLabel(c.Column)
		colType := catalogColumnType(p, c.Column)
		other, otherKind, fix := conversionOther(p, q.QueryPlan, c, colType)
		cv := map[string]any{"column": colName, "converted_to": c.To, "other_side": other, "other_kind": otherKind, "comparison": c.Compare}
		typeNote := ""
		if colType != "" {
			cv["column_type"] = colType
			typeNote = " (" + colType + ")"
		}
		convs = append(convs, cv)
		parts = append(parts, fmt.Sprintf("%s%s is implicitly converted to %s to compare it with %s", colName, typeNote, c.To, other))
		fixes = append(fixes, fix)
		for _, w := range matchingConvertWarnings(q.QueryPlan, c) {
			if !containsFold(warned, w) {
				warned = append(warned, w)
			}
		}
	}
	ev["conversions"] = convs
	if len(warned) > 0 {
		ev["plan_affecting_convert"] = warned
	}
	var b strings.Builder
	b.WriteString(strings.Join(parts, "; "))

	sev := Info
	seekWarned := containsFold(warned, "Seek Plan")
	if cs[0].Where == "seek" {
		// The conversion sits on the value fed to a seek: the seek works,
		// but the converted column (the other input) cannot be sought.
		fmt.Fprintf(&b, " in the seek of %s; an index on %s cannot drive this join the other way", n.DisplayName(), cs[0].Column.Column)
	} else if vol, ok := accessVolume(n); ok && isSeekOrScan(n) {
		vol.evidence(ev)
		fmt.Fprintf(&b, ", so %s on %s tests every row: it read %s rows (%s) to return %s", n.DisplayName(), objectName(n.Access.Object()),
			units.Count(vol.Read), vol.Kind, units.Count(vol.Returned))
		// Only SQL Server's Seek Plan warning says the conversion kept
		// an index from being sought; without it the scan may have
		// other causes (no index on the column at all).
		if seekWarned && vol.share() <= p.Param("max_share") {
			switch {
			case vol.Read >= p.Param("error_rows_read"):
				sev = Error
			case vol.Read >= p.Param("warn_rows_read"):
				sev = Warning
			}
		}
	} else {
		fmt.Fprintf(&b, " in the %s of %s", cs[0].Where, n.DisplayName())
	}
	if sk, ok := n.EstimateSkew(); ok && sk.Factor >= p.Param("misestimate_factor") && maxf(sk.EstimatedAll, sk.ActualAll) >= p.Param("misestimate_min_rows") {
		fmt.Fprintf(&b, "; the estimate was %s rows against %s actual", units.Count(sk.EstimatedAll), units.Count(sk.ActualAll))
		ev["estimated_rows"], ev["actual_rows"] = round(sk.EstimatedAll, 1), round(sk.ActualAll, 1)
		if sev < Warning {
			sev = Warning
		}
	}
	if ms, quick := quickStatement(q.QueryPlan, p.Param("min_elapsed_ms")); quick && sev > Info {
		sev = Info
		ev["statement_time_ms"] = ms
		fmt.Fprintf(&b, "; the statement took %s ms", trimFloat(ms))
	}
	if len(warned) > 0 {
		fmt.Fprintf(&b, " (SQL Server warns: %s)", strings.Join(warned, ", "))
	}
	p.Report(Finding{Severity: sev, NodeID: Node(n.NodeID), Message: b.String(), Fix: strings.Join(fixes, "; "), Evidence: ev})
}

// numericType reports the number types (and bit) a conversion can target.
func numericType(t string) bool {
	name, _, _ := strings.Cut(strings.ToLower(t), "(")
	switch name {
	case "bit", "tinyint", "smallint", "int", "bigint", "decimal", "numeric", "float", "real", "money", "smallmoney":
		return true
	}
	return false
}

func maxf(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}

// conversionOther describes the other side of the comparison and the fix.
func conversionOther(p *Pass, q *plan.QueryPlan, c columnConversion, colType string) (desc, kind, fix string) {
	col := c.Column.Column
	wanted := colType
	if wanted == "" {
		wanted = col + "'s own type"
		if strings.HasPrefix(c.To, "n") {
			wanted = col + "'s non-Unicode type (varchar or char)"
		}
	}
	o := c.Other
	switch {
	case o == nil:
		return "an expression", "expression", fmt.Sprintf("make the expression compared with %s the column's type (%s) so the column is not converted", col, wanted)
	case o.Kind == plan.ScalarConst:
		v := o.Value
		if strings.HasPrefix(v, "N'") {
			return "the Unicode literal " + v, "literal", fmt.Sprintf("drop the N prefix: compare %s with %s, a literal of the column's type", col, v[1:])
		}
		return "the literal " + v, "literal", fmt.Sprintf("write the literal as a value of %s so that the literal, not the column, is converted", wanted)
	case o.Kind == plan.ScalarIdentifier && o.Column != nil && o.Column.IsParameter():
		name := o.Column.Column
		pt := parameterType(q, name)
		desc = name
		if pt != "" {
			desc += " (" + pt + ")"
		}
		if isAutoParameter(name) {
			return desc, "parameter", fmt.Sprintf("%s stands for a literal of the query text: write that literal as a value of %s (no N prefix for a varchar column)", name, wanted)
		}
		return desc, "parameter", fmt.Sprintf("declare %s as %s instead of %s (in ADO.NET set the SqlParameter's SqlDbType and Size to the column's)", name, wanted, orUnknown(pt))
	case o.Kind == plan.ScalarIdentifier && o.Column != nil:
		other := columnLabel(*o.Column)
		return other, "column", fmt.Sprintf("give %s and %s the same data type (today %s is converted to %s to match %s)", columnLabel(c.Column), other, col, c.To, other)
	}
	return o.String(), "expression", fmt.Sprintf("CAST the expression %s to %s so the column is not converted", o.String(), wanted)
}

func orUnknown(s string) string {
	if s == "" {
		return "its current type"
	}
	return s
}

// isAutoParameter reports the @0, @1, ... names of simple or forced
// parameterization.
func isAutoParameter(name string) bool {
	if len(name) < 2 || name[0] != '@' {
		return false
	}
	for _, r := range name[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// matchingConvertWarnings returns the PlanAffectingConvert issues of the
// plan whose expression converts the same column.
func matchingConvertWarnings(q *plan.QueryPlan, c columnConversion) []string {
	if q.Warnings == nil {
		return nil
	}
	needle := strings.ToLower("[" + c.Column.Column + "]")
	var out []string
	for _, w := range q.Warnings.Converts {
		e := strings.ToLower(w.Expression)
		_, arg, _ := strings.Cut(e, "convert_implicit(")
		if strings.Contains(arg, needle+",") && !containsFold(out, w.Issue) {
			out = append(out, w.Issue)
		}
	}
	return out
}

func init() { register(ImplicitConversion) }

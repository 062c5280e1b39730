package rules

import (
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
)

// comparison is one "column op operand" test found in a plan's seek,
// residual or filter predicates.
type comparison struct {
	Node   *plan.RelOp
	Column plan.ColumnRef
	// Op is the showplan operator (EQ, NE, LT, LE, GT, GE, IS, IS NOT)
	// oriented so that the column is on the left.
	Op string
	// Operand is the other side with CONVERTs removed.
	Operand *plan.Scalar
	// ColumnConverted: the column was wrapped in a CONVERT (often an
	// implicit conversion that blocks index matching).
	ColumnConverted bool
	// InOr: the comparison sits under an OR.
	InOr bool
	// Seek: the comparison came from a seek predicate.
	Seek bool
	Text string
}

// operandKind classifies the non-column side of a comparison.
func (c comparison) operandKind() string {
	switch {
	case c.Operand == nil:
		return "none"
	case c.Operand.Kind == plan.ScalarConst:
		return "literal"
	case c.Operand.Kind == plan.ScalarIdentifier && c.Operand.Column != nil && c.Operand.Column.IsParameter():
		return "parameter"
	case c.Operand.Kind == plan.ScalarIdentifier:
		return "column"
	}
	return "expression"
}

// parameter returns the parameter name when the operand is one.
func (c comparison) parameter() string {
	if c.operandKind() == "parameter" {
		return c.Operand.Column.Column
	}
	return ""
}

// text renders the comparison as T-SQL.
func (c comparison) text() string {
	if c.Text != "" {
		return c.Text
	}
	col := c.Column.Column
	if c.ColumnConverted {
		col = "CONVERT(" + col + ")"
	}
	switch c.Op {
	case "IS", "IS NOT":
		return col + " " + c.Op + " " + c.Operand.String()
	}
	return col + " " + plan.CompareSymbol(c.Op) + " " + c.Operand.String()
}

// conjunct turns a comparison with a literal operand into a catalog
// conjunct, for filter implication. ok is false for other operands.
func (c comparison) conjunct() (catalog.Conjunct, bool) {
	if c.operandKind() != "literal" || c.InOr {
		return catalog.Conjunct{}, false
	}
	v := c.Operand.Value
	isNull := strings.EqualFold(strings.Trim(v, "()"), "NULL")
	switch c.Op {
	case "IS":
		if isNull {
			return catalog.Conjunct{Column: c.Column.Column, Op: "IS NULL"}, true
		}
	case "IS NOT":
		if isNull {
			return catalog.Conjunct{Column: c.Column.Column, Op: "IS NOT NULL"}, true
		}
	case "EQ", "NE", "LT", "LE", "GT", "GE":
		if isNull {
			return catalog.Conjunct{}, false
		}
		return catalog.Conjunct{Column: c.Column.Column, Op: plan.CompareSymbol(c.Op), Values: []string{v}}, true
	}
	return catalog.Conjunct{}, false
}

// substituted returns the comparison as a catalog conjunct with the
// parameter replaced by value (a T-SQL literal such as "(0)").
func (c comparison) substituted(value string) (catalog.Conjunct, bool) {
	lit := c
	lit.Operand = &plan.Scalar{Kind: plan.ScalarConst, Value: value}
	lit.InOr = false
	return lit.conjunct()
}

var flipped = map[string]string{"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "EQ": "EQ", "NE": "NE"}

// comparisons collects every column comparison of a plan, from seek
// predicates, residual predicates and Filter/join predicates.
func comparisons(q *plan.QueryPlan) []comparison {
	var out []comparison
	for _, n := range q.Nodes {
		if a := n.Access; a != nil {
			for _, sp := range a.SeekPredicates {
				for _, k := range sp.Keys {
					for i, col := range k.Columns {
						if i >= len(k.Values) {
							break
						}
						op := k.ScanType
						if k.Part == "Prefix" || op == "" {
							op = "EQ"
						}
						v, _ := k.Values[i].StripConvert()
						out = append(out, comparison{Node: n, Column: col, Op: op, Operand: v, Seek: true})
					}
				}
			}
			out = appendScalarComparisons(out, n, a.Predicate, false)
		}
		out = appendScalarComparisons(out, n, n.Predicate, false)
	}
	return out
}

func appendScalarComparisons(out []comparison, n *plan.RelOp, s *plan.Scalar, inOr bool) []comparison {
	if s == nil {
		return out
	}
	switch s.Kind {
	case plan.ScalarLogical:
		or := inOr || !strings.EqualFold(s.Op, "AND")
		for _, a := range s.Args {
			out = appendScalarComparisons(out, n, a, or)
		}
		return out
	case plan.ScalarCompare:
		if len(s.Args) == 2 {
			if c, ok := orient(s.Op, s.Args[0], s.Args[1]); ok {
				c.Node, c.InOr = n, inOr
				return append(out, c)
			}
		}
	}
	for _, a := range s.Args {
		out = appendScalarComparisons(out, n, a, inOr)
	}
	return out
}

// orient puts the table column on the left of a comparison. A parameter
// or constant never counts as the column side.
func orient(op string, l, r *plan.Scalar) (comparison, bool) {
	isCol := func(s *plan.Scalar) (*plan.ColumnRef, bool) {
		inner, conv := s.StripConvert()
		if inner != nil && inner.Kind == plan.ScalarIdentifier && inner.Column != nil && !inner.Column.IsParameter() {
			return inner.Column, conv
		}
		return nil, false
	}
	if col, conv := isCol(l); col != nil {
		v, _ := r.StripConvert()
		return comparison{Column: *col, Op: op, Operand: v, ColumnConverted: conv}, true
	}
	if col, conv := isCol(r); col != nil {
		f, ok := flipped[op]
		if !ok {
			return comparison{}, false
		}
		v, _ := l.StripConvert()
		return comparison{Column: *col, Op: f, Operand: v, ColumnConverted: conv}, true
	}
	return comparison{}, false
}

// onTable keeps the comparisons whose column belongs to the table.
func onTable(cs []comparison, table plan.ObjectRef) []comparison {
	var out []comparison
	for _, c := range cs {
		if c.Column.BelongsTo(table) || (c.Column.Table == "" && c.Node.Access != nil && c.Node.Access.Object().SameTable(table)) {
			out = append(out, c)
		}
	}
	return out
}

// onColumn keeps the comparisons on one column (case-insensitive).
func onColumn(cs []comparison, column string) []comparison {
	var out []comparison
	for _, c := range cs {
		if strings.EqualFold(c.Column.Column, column) {
			out = append(out, c)
		}
	}
	return out
}

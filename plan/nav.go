package plan

import "strings"

// Statements returns every statement of the document in document order,
// nested ones (StmtCond branches, procedure bodies) right after their parent.
func (d *Document) Statements() []*Statement {
	var out []*Statement
	for _, b := range d.Batches {
		for _, s := range b.Statements {
			out = s.appendAll(out)
		}
	}
	return out
}

func (s *Statement) appendAll(out []*Statement) []*Statement {
	out = append(out, s)
	for _, c := range s.Children {
		out = c.appendAll(out)
	}
	return out
}

// Plans returns the statement's own plans: its QueryPlan and, for a cursor,
// the plan of every cursor operation, each with a label ("" for the
// statement's own plan, the OperationType for a cursor operation).
func (s *Statement) Plans() []LabeledPlan {
	var out []LabeledPlan
	if s.QueryPlan != nil {
		out = append(out, LabeledPlan{QueryPlan: s.QueryPlan})
	}
	if s.Cursor != nil {
		for _, op := range s.Cursor.Operations {
			if op.QueryPlan != nil {
				out = append(out, LabeledPlan{Label: op.Type, QueryPlan: op.QueryPlan})
			}
		}
	}
	return out
}

// Node returns the operator with NodeId id among the statement's plans:
// the one in the plan labelled label when there is one, else the first.
func (s *Statement) Node(id int, label string) *RelOp {
	var first *RelOp
	for _, q := range s.Plans() {
		n := q.Node(id)
		if n == nil {
			continue
		}
		if label != "" && q.Label == label {
			return n
		}
		if first == nil {
			first = n
		}
	}
	return first
}

// LabeledPlan is a QueryPlan with the cursor operation it belongs to.
type LabeledPlan struct {
	Label string
	*QueryPlan
}

// IsActual reports whether any operator of the statement carries runtime
// counters, i.e. the plan is an actual (post-execution) plan.
func (s *Statement) IsActual() bool {
	for _, p := range s.Plans() {
		for _, n := range p.Nodes {
			if n.RunTime != nil {
				return true
			}
		}
	}
	return false
}

// NodeCount is the number of RelOps in all of the statement's own plans.
func (s *Statement) NodeCount() int {
	n := 0
	for _, p := range s.Plans() {
		n += len(p.Nodes)
	}
	return n
}

// IsActual reports whether any statement of the document is an actual plan.
func (d *Document) IsActual() bool {
	for _, s := range d.Statements() {
		if s.IsActual() {
			return true
		}
	}
	return false
}

// Node returns the operator with the given NodeId, or nil.
func (q *QueryPlan) Node(id int) *RelOp {
	// The parser's index holds positions, so it stays right for a copy of
	// the plan whose Nodes are copies in the same order.
	if q.nodeIndex != nil && len(q.nodeIndex) <= len(q.Nodes) {
		if i, ok := q.nodeIndex[id]; ok && i < len(q.Nodes) && q.Nodes[i].NodeID == id {
			return q.Nodes[i]
		}
	}
	for _, n := range q.Nodes {
		if n.NodeID == id {
			return n
		}
	}
	return nil
}

// Cost is the plan's estimated cost: the root operator's subtree cost.
func (q *QueryPlan) Cost() float64 {
	if q == nil || q.Root == nil {
		return 0
	}
	return q.Root.SubtreeCost
}

// EstimatedExecutions is EstimateRebinds + EstimateRewinds + 1.
func (r *RelOp) EstimatedExecutions() float64 {
	return r.EstimateRebinds + r.EstimateRewinds + 1
}

// EstimatedRowsAllExecutions is EstimateRows for all estimated executions.
func (r *RelOp) EstimatedRowsAllExecutions() float64 {
	return r.EstimateRows * r.EstimatedExecutions()
}

// OwnCost is the operator's own estimated cost: its subtree cost minus its
// children's, never below zero.
func (r *RelOp) OwnCost() float64 {
	c := r.SubtreeCost
	for _, ch := range r.Children {
		c -= ch.SubtreeCost
	}
	if c < 0 {
		return 0
	}
	return c
}

// IsLookup reports whether the operator is a Key Lookup or RID Lookup.
func (r *RelOp) IsLookup() bool {
	if r.PhysicalOp == "RID Lookup" || r.PhysicalOp == "Key Lookup" {
		return true
	}
	return r.Access != nil && r.Access.Lookup
}

// DisplayName is the operator name as SSMS shows it: "Key Lookup" for a
// clustered index seek marked Lookup, else PhysicalOp, with LogicalOp added
// when it says more (e.g. "Sort (TopN Sort)").
func (r *RelOp) DisplayName() string {
	name := r.PhysicalOp
	if r.Access != nil && r.Access.Lookup && r.PhysicalOp == "Clustered Index Seek" {
		name = "Key Lookup"
	}
	if r.LogicalOp != "" && r.LogicalOp != r.PhysicalOp && !strings.Contains(name, r.LogicalOp) &&
		(r.PhysicalOp == "Sort" || r.PhysicalOp == "Nested Loops" || r.PhysicalOp == "Hash Match" ||
			r.PhysicalOp == "Merge Join" || r.PhysicalOp == "Parallelism" || strings.HasSuffix(r.PhysicalOp, "Spool")) {
		name += " (" + r.LogicalOp + ")"
	}
	return name
}

// Residual returns the access's residual predicate; nil-safe.
func (a *Access) Residual() *Scalar {
	if a == nil {
		return nil
	}
	return a.Predicate
}

// Walk calls fn for r and every operator below it in pre-order; returning
// false from fn skips that operator's children.
func (r *RelOp) Walk(fn func(*RelOp) bool) {
	if r == nil || !fn(r) {
		return
	}
	for _, c := range r.Children {
		c.Walk(fn)
	}
}

// Objects returns the distinct objects the operator reads or writes.
func (r *RelOp) Objects() []ObjectRef {
	if r.Access == nil {
		return nil
	}
	return r.Access.Objects
}

// TableName is "schema.table" (or "db.schema.table" with withDB), without
// brackets, skipping empty parts.
func (o ObjectRef) TableName(withDB bool) string {
	parts := make([]string, 0, 3)
	if withDB && o.Database != "" {
		parts = append(parts, o.Database)
	}
	if o.Schema != "" {
		parts = append(parts, o.Schema)
	}
	if o.Table != "" {
		parts = append(parts, o.Table)
	}
	return strings.Join(parts, ".")
}

// SameTable reports whether two references name the same table, ignoring
// parts either side leaves empty and letter case (SQL Server's default
// collations are case-insensitive).
func (o ObjectRef) SameTable(p ObjectRef) bool {
	eq := func(a, b string) bool { return a == "" || b == "" || strings.EqualFold(a, b) }
	return o.Table != "" && strings.EqualFold(o.Table, p.Table) && eq(o.Schema, p.Schema) && eq(o.Database, p.Database)
}

// Name is "table.column" (or just the column, or the parameter name).
func (c ColumnRef) Name() string {
	t := c.Alias
	if t == "" {
		t = c.Table
	}
	if t == "" {
		return c.Column
	}
	return t + "." + c.Column
}

// BelongsTo reports whether the column comes from the given table.
func (c ColumnRef) BelongsTo(o ObjectRef) bool {
	if c.Table == "" {
		return false
	}
	return ObjectRef{Database: c.Database, Schema: c.Schema, Table: c.Table}.SameTable(o)
}

// Conjuncts splits an AND tree into its parts; any other expression is one
// conjunct. A nil scalar has none.
func (s *Scalar) Conjuncts() []*Scalar {
	if s == nil {
		return nil
	}
	if s.Kind == ScalarLogical && strings.EqualFold(s.Op, "AND") {
		var out []*Scalar
		for _, a := range s.Args {
			out = append(out, a.Conjuncts()...)
		}
		return out
	}
	return []*Scalar{s}
}

// Columns returns every column and parameter referenced in the expression,
// in order of appearance (duplicates kept).
func (s *Scalar) Columns() []ColumnRef {
	var out []ColumnRef
	var walk func(*Scalar)
	walk = func(x *Scalar) {
		if x == nil {
			return
		}
		if x.Column != nil {
			out = append(out, *x.Column)
		}
		for _, a := range x.Args {
			walk(a)
		}
	}
	walk(s)
	return out
}

// StripConvert returns the expression below any CONVERT/CONVERT_IMPLICIT
// wrappers, and whether one was removed.
func (s *Scalar) StripConvert() (*Scalar, bool) {
	converted := false
	for s != nil && s.Kind == ScalarConvert && len(s.Args) == 1 {
		s = s.Args[0]
		converted = true
	}
	return s, converted
}

// String is the expression's ScalarString, or a rendering of the tree when
// the plan did not carry one.
func (s *Scalar) String() string {
	if s == nil {
		return ""
	}
	if s.Text != "" {
		return s.Text
	}
	switch s.Kind {
	case ScalarIdentifier:
		if s.Column != nil {
			return s.Column.Name()
		}
	case ScalarConst:
		return s.Value
	case ScalarCompare:
		if len(s.Args) == 2 {
			return s.Args[0].String() + " " + compareSymbol(s.Op) + " " + s.Args[1].String()
		}
		if len(s.Args) == 1 {
			return s.Args[0].String() + " " + s.Op
		}
	case ScalarLogical:
		parts := make([]string, len(s.Args))
		for i, a := range s.Args {
			parts[i] = a.String()
		}
		return strings.Join(parts, " "+s.Op+" ")
	case ScalarConvert:
		if len(s.Args) == 1 {
			fn := "CONVERT"
			if s.Implicit {
				fn = "CONVERT_IMPLICIT"
			}
			return fn + "(" + s.Op + "," + s.Args[0].String() + ")"
		}
	}
	parts := make([]string, len(s.Args))
	for i, a := range s.Args {
		parts[i] = a.String()
	}
	if s.Op != "" {
		return s.Op + "(" + strings.Join(parts, ",") + ")"
	}
	return strings.Join(parts, ",")
}

// compareSymbol maps a showplan CompareOp to its T-SQL operator.
func compareSymbol(op string) string {
	switch op {
	case "EQ":
		return "="
	case "NE":
		return "<>"
	case "LT":
		return "<"
	case "LE":
		return "<="
	case "GT":
		return ">"
	case "GE":
		return ">="
	}
	return op
}

// CompareSymbol maps a showplan CompareOp or ScanType (EQ, GE, IS NOT, ...)
// to its T-SQL operator.
func CompareSymbol(op string) string { return compareSymbol(op) }

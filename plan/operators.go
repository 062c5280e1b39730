package plan

// SpoolInfo is a Spool element (Table, Index and Row Count Spool).
type SpoolInfo struct {
	// SeekPredicates are the seeks into an Index Spool's worktable index:
	// their columns are the index's keys.
	SeekPredicates []SeekPredicate
	Stack          bool // Spool/@Stack
	// PrimaryNodeID is Spool/@PrimaryNodeId: a spool that replays another
	// spool's worktable names it (0 when absent).
	PrimaryNodeID int
}

// SeekColumns lists the columns the spool is seeked on, in key order and
// without duplicates.
func (s *SpoolInfo) SeekColumns() []ColumnRef {
	if s == nil {
		return nil
	}
	var out []ColumnRef
	seen := map[string]bool{}
	for _, sp := range s.SeekPredicates {
		for _, k := range sp.Keys {
			for _, c := range k.Columns {
				if !seen[c.Name()] {
					seen[c.Name()] = true
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// MergeInfo is a Merge element (Merge Join).
type MergeInfo struct {
	ManyToMany bool // Merge/@ManyToMany: duplicates on both sides, via a worktable
	// InnerColumns and OuterColumns are InnerSideJoinColumns and
	// OuterSideJoinColumns (the inner side is the second child).
	InnerColumns []ColumnRef
	OuterColumns []ColumnRef
}

// DefinedValue is one ComputeScalar DefinedValue: the column(s) it defines
// and the expression (nil when the plan gives none).
type DefinedValue struct {
	Columns []ColumnRef
	Value   *Scalar
}

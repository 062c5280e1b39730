package report

import (
	"slices"
	"sync"
)

// stmtKey is how a finding without an ordinal names its statement.
type stmtKey struct{ batch, id int }

// stmtIndex maps a file's statements by ordinal and by batch and id (the
// first of a repeated id, as a scan would find), so that renderers look a
// finding's statement up in constant time: a file may hold 100,000
// statements.
type stmtIndex struct {
	file      *File
	n         int
	first     *Statement
	byOrdinal map[int]*Statement
	byKey     map[stmtKey]*Statement
	// multiBatch: some statement is in a batch after the first.
	multiBatch bool
	// repeated holds, for each batch and id that several statements
	// share, their ordinals in ascending order.
	repeated map[stmtKey][]int
}

// lastIndex is the index of the file rendered last; renderers walk one
// file's findings at a time.
var lastIndex struct {
	sync.Mutex
	idx *stmtIndex
}

// indexOf returns the statement index of f, rebuilt when f changed.
func indexOf(f *File) *stmtIndex {
	lastIndex.Lock()
	defer lastIndex.Unlock()
	idx := lastIndex.idx
	if idx == nil || idx.file != f || idx.n != len(f.Statements) ||
		(idx.n > 0 && idx.first != f.Statements[0]) {
		idx = &stmtIndex{file: f, n: len(f.Statements),
			byOrdinal: make(map[int]*Statement, len(f.Statements)), byKey: make(map[stmtKey]*Statement, len(f.Statements))}
		if idx.n > 0 {
			idx.first = f.Statements[0]
		}
		var dups map[stmtKey]bool
		for _, s := range f.Statements {
			if s.Ordinal > 0 {
				idx.byOrdinal[s.Ordinal] = s
			}
			idx.multiBatch = idx.multiBatch || s.Batch > 1
			k := stmtKey{s.Batch, s.StatementID}
			if _, dup := idx.byKey[k]; !dup {
				idx.byKey[k] = s
			} else {
				if dups == nil {
					dups = map[stmtKey]bool{}
				}
				dups[k] = true
			}
		}
		if dups != nil {
			idx.repeated = make(map[stmtKey][]int, len(dups))
			for _, s := range f.Statements {
				if k := (stmtKey{s.Batch, s.StatementID}); dups[k] {
					idx.repeated[k] = append(idx.repeated[k], s.Ordinal)
				}
			}
			for _, o := range idx.repeated {
				slices.Sort(o)
			}
		}
		lastIndex.idx = idx
	}
	return idx
}

// statementOf is the first statement of f with the batch and id given.
func statementOf(f *File, batch, id int) *Statement {
	return indexOf(f).byKey[stmtKey{batch, id}]
}

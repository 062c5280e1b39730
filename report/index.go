package report

import "sync"

// stmtKey is how a finding names its statement.
type stmtKey struct{ batch, id int }

// stmtIndex maps a file's statements by batch and id (the first of a
// repeated id, as a scan would find), so that renderers look a finding's
// statement up in constant time: a file may hold 100,000 statements.
type stmtIndex struct {
	file  *File
	n     int
	first *Statement
	m     map[stmtKey]*Statement
}

// lastIndex is the index of the file rendered last; renderers walk one
// file's findings at a time.
var lastIndex struct {
	sync.Mutex
	idx *stmtIndex
}

// statementOf is the first statement of f with the batch and id given.
func statementOf(f *File, batch, id int) *Statement {
	lastIndex.Lock()
	idx := lastIndex.idx
	if idx == nil || idx.file != f || idx.n != len(f.Statements) ||
		(idx.n > 0 && idx.first != f.Statements[0]) {
		idx = &stmtIndex{file: f, n: len(f.Statements), m: make(map[stmtKey]*Statement, len(f.Statements))}
		if idx.n > 0 {
			idx.first = f.Statements[0]
		}
		for _, s := range f.Statements {
			k := stmtKey{s.Batch, s.StatementID}
			if _, dup := idx.m[k]; !dup {
				idx.m[k] = s
			}
		}
		lastIndex.idx = idx
	}
	lastIndex.Unlock()
	return idx.m[stmtKey{batch, id}]
}

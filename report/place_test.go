package report

import "testing"

// TestStatementPlace: a statement's place counts the statements of its
// file with the same batch and StatementId (from the index, not a scan
// per finding) and names the batch once the file has several; a file that
// changes between calls is indexed again.
func TestStatementPlace(t *testing.T) {
	st := func(ordinal, batch, id int) *Statement {
		return &Statement{Ordinal: ordinal, Batch: batch, StatementID: id}
	}
	one := []*Statement{st(1, 1, 1), st(2, 1, 33), st(3, 1, 33), st(4, 1, 2), st(5, 1, 33)}
	node := 7
	for _, c := range []struct {
		name  string
		stmts []*Statement
		of    int // index into stmts
		node  *int
		want  string
	}{
		{"single", one, 0, nil, "stmt 1"},
		{"first of three", one, 1, nil, "stmt 33#1"},
		{"second of three", one, 2, &node, "stmt 33#2 node 7"},
		{"third of three", one, 4, nil, "stmt 33#3"},
		{"unique between repeats", one, 3, nil, "stmt 2"},
		{"several batches", []*Statement{st(1, 1, 1), st(2, 2, 1), st(3, 2, 1)}, 2, nil, "batch 2 stmt 1#2"},
		{"same id in another batch", []*Statement{st(1, 1, 1), st(2, 2, 1)}, 1, nil, "batch 2 stmt 1"},
		{"out of file order", []*Statement{st(2, 1, 5), st(1, 1, 5)}, 0, nil, "stmt 5#2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &File{Statements: c.stmts}
			if got := f.StatementPlace(c.stmts[c.of], c.node); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}

	f := &File{Statements: []*Statement{st(1, 1, 1)}}
	if got := f.StatementPlace(f.Statements[0], nil); got != "stmt 1" {
		t.Errorf("before the change: %q", got)
	}
	f.Statements = append(f.Statements, st(2, 2, 1))
	if got := f.StatementPlace(f.Statements[0], nil); got != "batch 1 stmt 1" {
		t.Errorf("after a statement in batch 2 was added: %q", got)
	}
}

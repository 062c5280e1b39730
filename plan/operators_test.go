package plan

import (
	"path/filepath"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

func TestSpoolMergeAndStartup(t *testing.T) {
	colID := `<ColumnReference Table="[Queue]" Column="Id"/>`
	seek := `<SeekPredicateNew><SeekKeys><Prefix ScanType="EQ"><RangeColumns>` + colID + `</RangeColumns>` +
		`<RangeExpressions>` + constant("(1)") + `</RangeExpressions></Prefix></SeekKeys></SeekPredicateNew>`
	scanQueue := relop("2", "Table Scan", `<TableScan Ordered="0"><Object Table="[Queue]"/></TableScan>`)
	tests := []struct {
		name  string
		op    string
		check func(t *testing.T, op *RelOp)
	}{
		{"index spool seek columns", relop("0", "Index Spool", `<Spool Stack="1">`+seek+scanQueue+`</Spool>`), func(t *testing.T, op *RelOp) {
			if op.Spool == nil || !op.Spool.Stack || len(op.Spool.SeekColumns()) != 1 || op.Spool.SeekColumns()[0].Column != "Id" {
				t.Fatalf("spool = %+v", op.Spool)
			}
			if op.Access != nil || len(op.Children) != 1 {
				t.Fatalf("a spool reads no object itself: access %+v, children %d", op.Access, len(op.Children))
			}
		}},
		{"table spool replaying a primary", relop("0", "Table Spool", `<Spool PrimaryNodeId="7"/>`), func(t *testing.T, op *RelOp) {
			if op.Spool == nil || op.Spool.PrimaryNodeID != 7 || op.Spool.SeekColumns() != nil {
				t.Fatalf("spool = %+v", op.Spool)
			}
		}},
		{"many-to-many merge", relop("0", "Merge Join", `<Merge ManyToMany="true"><InnerSideJoinColumns>`+colID+
			`</InnerSideJoinColumns><OuterSideJoinColumns>`+colA+`</OuterSideJoinColumns>`+scanQueue+scanQueue+`</Merge>`), func(t *testing.T, op *RelOp) {
			m := op.Merge
			if m == nil || !m.ManyToMany || len(m.InnerColumns) != 1 || m.InnerColumns[0].Column != "Id" || len(m.OuterColumns) != 1 || m.OuterColumns[0].Column != "Status" {
				t.Fatalf("merge = %+v", m)
			}
		}},
		{"one-to-many merge", relop("0", "Merge Join", `<Merge ManyToMany="0"/>`), func(t *testing.T, op *RelOp) {
			if op.Merge == nil || op.Merge.ManyToMany {
				t.Fatalf("merge = %+v", op.Merge)
			}
		}},
		{"startup filter", relop("0", "Filter", `<Filter StartupExpression="1"><RelOp_/></Filter>`), func(t *testing.T, op *RelOp) {
			if !op.StartupExpression || op.Spool != nil || op.Merge != nil {
				t.Fatalf("op = %+v", op)
			}
		}},
		{"plain filter", relop("0", "Filter", `<Filter StartupExpression="0"/>`), func(t *testing.T, op *RelOp) {
			if op.StartupExpression {
				t.Fatal("StartupExpression=0 read as set")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, onlyOp(t, showplan(simple("q", tc.op))))
		})
	}
}

// TestCorpusSpoolSeekColumns checks a real eager index spool: the spool in
// hqp index_spool.sqlplan (node 6) is seeked on Pedido.Data (alias Ped2, a range: Ped2.Data < Ped1.Data).
func TestCorpusSpoolSeekColumns(t *testing.T) {
	dir := sharedtest.Require(t, "corpus/plans")
	d, err := ParseFile(filepath.Join(dir, "hqp__test_plans__index_spool.sqlplan"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range d.Statements() {
		if s.QueryPlan == nil {
			continue
		}
		if n := s.QueryPlan.Node(6); n != nil && n.PhysicalOp == "Index Spool" {
			cols := n.Spool.SeekColumns()
			if len(cols) != 1 || cols[0].Column != "Data" || cols[0].Table != "Pedido" {
				t.Fatalf("seek columns = %+v", cols)
			}
			return
		}
	}
	t.Fatal("no Index Spool at node 6")
}

func TestComputeScalarDefinedValues(t *testing.T) {
	sub := relop("2", "Index Seek", `<IndexScan Ordered="1"><Object Table="[Other]"/></IndexScan>`)
	op := onlyOp(t, showplan(simple("q", relop("0", "Compute Scalar",
		`<ComputeScalar><DefinedValues>`+
			`<DefinedValue><ColumnReference Column="Expr1010"/><ScalarOperator ScalarString="[o].[A]"><Identifier>`+colA+`</Identifier></ScalarOperator></DefinedValue>`+
			`<DefinedValue><ColumnReference Column="Expr1"/><ScalarOperator><Subquery Operation="EXISTS"><ScalarOperator/>`+sub+`</Subquery></ScalarOperator></DefinedValue>`+
			`<DefinedValue><ColumnReference Column="Expr2"/></DefinedValue>`+
			`</DefinedValues>`+relop("1", "Constant Scan", "<ConstantScan/>")+`</ComputeScalar>`))))
	dv := op.DefinedValues
	if len(dv) != 3 || dv[0].Columns[0].Column != "Expr1010" || dv[0].Value == nil || dv[0].Value.Column == nil || dv[0].Value.Column.Column != "Status" {
		t.Fatalf("defined values %+v", dv)
	}
	if dv[2].Value != nil || dv[2].Columns[0].Column != "Expr2" {
		t.Fatalf("a value without expression: %+v", dv[2])
	}
	// The subquery's operators stay children, in document order.
	if len(op.Children) != 2 || op.Children[0].NodeID != 2 || op.Children[1].NodeID != 1 {
		t.Fatalf("children: %+v", op.Children)
	}
}

package plan

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

func TestStatementProperties(t *testing.T) {
	qp := onlyPlan(t, showplan(simple("q",
		`<ThreadStat Branches="2" UsedThreads="8"><ThreadReservation NodeId="0" ReservedThreads="6"/>`+
			`<ThreadReservation NodeId="1" ReservedThreads="2"/></ThreadStat>`+
			`<MemoryGrantInfo SerialRequiredMemory="512" SerialDesiredMemory="544" GrantedMemory="2000" MaxUsedMemory="100"`+
			` MaxQueryMemory="5000000" LastRequestedMemory="1900"/>`+
			`<OptimizerHardwareDependentProperties EstimatedAvailableMemoryGrant="208665" EstimatedPagesCached="52166"`+
			` EstimatedAvailableDegreeOfParallelism="4" MaxCompileMemory="5346200"/>`+
			`<QueryTimeStats CpuTime="5" ElapsedTime="9" UdfCpuTime="3" UdfElapsedTime="4"/>`+
			relop("0", "Constant Scan", "<ConstantScan/>"))))
	wantTS := ThreadStat{Branches: 2, UsedThreads: 8, Reservations: []ThreadReservation{{0, 6}, {1, 2}}}
	if !reflect.DeepEqual(*qp.ThreadStat, wantTS) {
		t.Errorf("ThreadStat %+v, want %+v", *qp.ThreadStat, wantTS)
	}
	if g := qp.MemoryGrant; g.MaxQueryMemoryKB != 5000000 || g.LastRequestedKB != 1900 || g.GrantedKB != 2000 {
		t.Errorf("MemoryGrant %+v", *g)
	}
	wantHW := HardwareProperties{EstimatedAvailableMemoryGrantKB: 208665, EstimatedPagesCached: 52166, EstimatedAvailableDOP: 4, MaxCompileMemoryKB: 5346200}
	if qp.Hardware == nil || *qp.Hardware != wantHW {
		t.Errorf("Hardware %+v, want %+v", qp.Hardware, wantHW)
	}
	wantQT := QueryTimeStats{CPUTimeMs: 5, ElapsedTimeMs: 9, UDFCPUTimeMs: 3, UDFElapsedTimeMs: 4, HasUDF: true}
	if *qp.QueryTime != wantQT {
		t.Errorf("QueryTime %+v, want %+v", *qp.QueryTime, wantQT)
	}
}

func TestStatementPropertiesAbsent(t *testing.T) {
	qp := onlyPlan(t, showplan(simple("q", `<QueryTimeStats CpuTime="1" ElapsedTime="2"/>`+relop("0", "Constant Scan", "<ConstantScan/>"))))
	if qp.QueryTime.HasUDF || qp.Hardware != nil || qp.ThreadStat != nil {
		t.Errorf("absent elements parsed: %+v %+v %+v", qp.QueryTime, qp.Hardware, qp.ThreadStat)
	}
}

// TestStatementPropertiesCorpus checks figures read by hand from real plans.
func TestStatementPropertiesCorpus(t *testing.T) {
	dir := sharedtest.Require(t, "corpus/plans")
	for _, tc := range []struct {
		file  string
		check func(*testing.T, *QueryPlan)
	}{
		// <ThreadStat Branches="1" UsedThreads="4"><ThreadReservation NodeId="0" ReservedThreads="4" />,
		// MemoryGrantInfo ... MaxUsedMemory="412160" MaxQueryMemory="413792",
		// OptimizerHardwareDependentProperties EstimatedAvailableDegreeOfParallelism="2" MaxCompileMemory="1486264",
		// QueryTimeStats CpuTime="36177" ElapsedTime="47245" (no UDF times).
		{"hqp__test_plans__spilltotempdb.sqlplan", func(t *testing.T, q *QueryPlan) {
			wantTS := ThreadStat{Branches: 1, UsedThreads: 4, Reservations: []ThreadReservation{{NodeID: 0, ReservedThreads: 4}}}
			if !reflect.DeepEqual(*q.ThreadStat, wantTS) {
				t.Errorf("ThreadStat %+v, want %+v", *q.ThreadStat, wantTS)
			}
			if g := q.MemoryGrant; g.MaxUsedKB != 412160 || g.MaxQueryMemoryKB != 413792 {
				t.Errorf("MemoryGrant %+v", *g)
			}
			if h := q.Hardware; h == nil || h.EstimatedAvailableDOP != 2 || h.MaxCompileMemoryKB != 1486264 || h.EstimatedAvailableMemoryGrantKB != 206720 {
				t.Errorf("Hardware %+v", h)
			}
			if *q.QueryTime != (QueryTimeStats{CPUTimeMs: 36177, ElapsedTimeMs: 47245}) {
				t.Errorf("QueryTime %+v", *q.QueryTime)
			}
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			d, err := ParseFile(filepath.Join(dir, tc.file), Options{})
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, d.Statements()[0].QueryPlan)
		})
	}
}

func TestExchangePartitioning(t *testing.T) {
	scan := relop("2", "Index Scan", `<IndexScan><Object Table="[T]"/></IndexScan>`)
	qp := onlyPlan(t, showplan(simple("q", relop("0", "Parallelism", `<Parallelism PartitioningType="Hash"><PartitionColumns>`+
		`<ColumnReference Table="[T]" Column="Status"/></PartitionColumns>`+
		relop("1", "Parallelism", `<Parallelism>`+scan+`</Parallelism>`)+`</Parallelism>`))))
	x := qp.Root.Exchange
	if x == nil || x.PartitioningType != "Hash" || len(x.PartitionColumns) != 1 || x.PartitionColumns[0].Column != "Status" {
		t.Errorf("repartition exchange %+v", x)
	}
	if g := qp.Node(1).Exchange; g == nil || g.PartitioningType != "" || g.PartitionColumns != nil {
		t.Errorf("gather exchange %+v", g)
	}
	if qp.Node(2).Exchange != nil || len(qp.Nodes) != 3 {
		t.Errorf("scan has an exchange or the tree is wrong: %d nodes", len(qp.Nodes))
	}
}

func TestMemoryFractionsAndOptimizedLoops(t *testing.T) {
	scan := relop("1", "Index Scan", `<IndexScan><Object Table="[T]"/></IndexScan>`)
	seek := relop("2", "Index Seek", `<IndexScan><Object Table="[U]"/></IndexScan>`)
	loops := `<RelOp NodeId="0" PhysicalOp="Nested Loops" LogicalOp="Inner Join" EstimateRows="1" EstimateIO="0" EstimateCPU="0"` +
		` AvgRowSize="9" EstimatedTotalSubtreeCost="0.1" Parallel="0" EstimateRebinds="0" EstimateRewinds="0"><OutputList/>` +
		`<MemoryFractions Input="0" Output="0.997049"/><NestedLoops Optimized="true" WithUnorderedPrefetch="true">` + scan + seek + `</NestedLoops></RelOp>`
	qp := onlyPlan(t, showplan(simple("q", loops)))
	if mf := qp.Root.MemoryFractions; mf == nil || *mf != (MemoryFractions{Input: 0, Output: 0.997049}) {
		t.Errorf("MemoryFractions %+v", mf)
	}
	if !qp.Root.OptimizedLoops || len(qp.Root.Children) != 2 {
		t.Errorf("optimized loops %v with %d children", qp.Root.OptimizedLoops, len(qp.Root.Children))
	}
	if qp.Node(1).MemoryFractions != nil || qp.Node(1).OptimizedLoops {
		t.Errorf("scan has memory fractions or optimized loops")
	}
}

package plan

import (
	"path/filepath"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

func corpusPlan(t *testing.T, name string) *QueryPlan {
	t.Helper()
	doc, err := ParseFile(filepath.Join(sharedtest.Require(t, "corpus/plans"), name), Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := doc.Statements()[0].QueryPlan
	if q == nil {
		t.Fatalf("%s: first statement has no plan", name)
	}
	return q
}

// The expected self times were worked out by hand from the XML's
// RunTimeCountersPerThread (see the comments); they are not planlint output.
func TestSelfTimeHandChecked(t *testing.T) {
	type want struct {
		node          int
		selfElapsedMs int64
		selfCPUMs     int64 // -1: not checked
	}
	tests := []struct {
		name string
		file string
		want []want
	}{
		{
			// Serial row mode: every time includes the children.
			name: "serial row mode",
			file: "perfstudio__tests__PlanViewer.Core.Tests__Plans__lazy_spool_plan.sqlplan",
			want: []want{
				{5, 1079, 1074},                 // Clustered Index Scan: a leaf
				{4, 22687 - 1079, 21682 - 1074}, // Eager Index Spool 22687 (CPU 21682) over the scan 1079 (1074)
				{3, 25661 - 22687, 24512 - 21682},
				{2, 37690 - 25661, 35640 - 24512},
				{1, 2597, 2597},
				{0, 42466 - 2597 - 37690, 40415 - 2597 - 35640}, // Nested Loops over both inputs
			},
		},
		{
			// A batch-mode Hash Match over row-mode operators: batch times are
			// the operator's own, row-mode ones include their children.
			name: "batch over row mode",
			file: "perfstudio__tests__PlanViewer.Core.Tests__Plans__mismatched_data_type_plan.sqlplan",
			want: []want{
				{0, 24, 15},
				{1, 4646 - 0 - 3760, 4644 - 3760},
				{4, 3760, 3760},
			},
		},
		{
			// Parallel batch mode under a row-mode Gather Streams: the gather's
			// children run on threads 1-4; their cumulative time is the sum of
			// the batch operators' own times per thread (thread 2: 42+204+606+13
			// = 865 is the slowest), so the gather's own time is 1582-865.
			name: "parallel batch mode",
			file: "hqp__test_plans__batch mode.sqlplan",
			want: []want{
				{3, 606, 568 + 585 + 595 + 559},
				{2, 204, -1},
				{1, 42, -1},
				{0, 1582 - 865, 977},
			},
		},
		{
			// Parallel row mode at DOP 6: per thread, then the slowest thread.
			name: "parallel row mode",
			file: "perfstudio__tests__PlanViewer.Core.Tests__Plans__row-count-spool-slow.sqlplan",
			want: []want{
				{14, 1562674, -1},                  // Table Scan, thread 4
				{13, 1562525 - 1561544, -1},        // Top: thread 1 has the largest own time (981)
				{11, 1545777 - 1017 - 1543347, -1}, // Nested Loops: thread 3 (1413)
				{9, 1568283 - 1567848, -1},         // Repartition: its slowest consumer thread minus the slowest producer
				{3, 0, -1},                         // Gather Streams 1570273 over a branch whose slowest thread took 1570273
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := corpusPlan(t, tc.file)
			for _, w := range tc.want {
				n := q.Node(w.node)
				if n == nil || n.Time == nil {
					t.Fatalf("node %d: no time", w.node)
				}
				if n.Time.SelfElapsedMs != w.selfElapsedMs {
					t.Errorf("node %d %s: self elapsed %d ms, want %d", w.node, n.PhysicalOp, n.Time.SelfElapsedMs, w.selfElapsedMs)
				}
				if w.selfCPUMs >= 0 && n.Time.SelfCPUMs != w.selfCPUMs {
					t.Errorf("node %d %s: self CPU %d ms, want %d", w.node, n.PhysicalOp, n.Time.SelfCPUMs, w.selfCPUMs)
				}
			}
		})
	}
}

// Counts read from the XML by hand: executions and rows as the estimate
// counts them.
func TestParallelCounts(t *testing.T) {
	tests := []struct {
		file       string
		node       int
		executions float64
		rows       float64
	}{
		// DOP 16 scan: 16 threads ran it once each; 525,600 rows over all threads.
		{"planlab__results__05-key-lookup-tipping-fast.sqlplan", 1, 1, 525600},
		// DOP 8 hash join: 8 threads once each, 522,078 rows in total.
		{"showplan-dotnet__tests__Showplan.Tests__plans__parallelism.sqlplan", 3, 1, 522078},
		// Serial branch on thread 1 below a Distribute Streams: the seek on the
		// inner side of the loop ran twice.
		{"showplan-dotnet__tests__Showplan.Tests__plans__parallelism.sqlplan", 36, 2, 522088},
		// Broadcast to 8 threads: each thread got the same 151 rows.
		{"hqp__test_plans__stack overflow__how unsung am i.sqlplan", 9, 1, 151},
		// Bitmap above the broadcast passes the copy on.
		{"hqp__test_plans__stack overflow__how unsung am i.sqlplan", 8, 1, 151},
		// Inner side of a parallel Nested Loops: one execution per outer row (163 rows from node 15), spread over 8 threads.
		{"hqp__test_plans__stack overflow__how unsung am i.sqlplan", 17, 163, -1},
		// Below a Row Count Spool on the inner side of a loop: each of 6 threads
		// scanned once and the spool replayed it; one execution, as estimated.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__row-count-spool-slow.sqlplan", 16, 1, 0},
		// Inner side of a parallel loop at DOP 6: 24,534,678 executions over threads.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__row-count-spool-slow.sqlplan", 14, 3940992 + 4140032 + 4139972 + 4060416 + 4113286 + 4140032, -1},
	}
	for _, tc := range tests {
		q := corpusPlan(t, tc.file)
		n := q.Node(tc.node)
		ex, _ := n.ActualExecutionCount()
		rows, _ := n.ActualRowCount()
		if ex != tc.executions {
			t.Errorf("%s node %d: executions %v, want %v", tc.file, tc.node, ex, tc.executions)
		}
		if tc.rows >= 0 && rows != tc.rows {
			t.Errorf("%s node %d: rows %v, want %v", tc.file, tc.node, rows, tc.rows)
		}
	}
}

func TestRowsUnreportedAndStoppedEarly(t *testing.T) {
	tests := []struct {
		file       string
		node       int
		unreported bool
		stopped    bool
	}{
		// Index Insert without OUTPUT under Gather Streams: 0 rows on every thread.
		{"hqp__test_plans__spilltotempdb.sqlplan", 1, true, false},
		{"hqp__test_plans__spilltotempdb.sqlplan", 0, true, false},
		{"hqp__test_plans__spilltotempdb.sqlplan", 2, false, false},
		// Merge Join input read 1 row and stopped: ActualEndOfScans 0 of 1.
		{"showplan-dotnet__tests__Showplan.Tests__plans__update-assert-collapse-table-spool-split-merge-join.sqlplan", 19, false, true},
		// Fill step of a multi-statement TVF: first input of Sequence.
		{"supratimas__plans__table-value.sqlplan", 1, true, false},
		{"supratimas__plans__table-value.sqlplan", 4, false, false},
		// Row-mode loop under a batch-mode aggregate: EndOfScans 0 is no early stop.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__mismatched_data_type_plan.sqlplan", 1, false, false},
	}
	for _, tc := range tests {
		n := corpusPlan(t, tc.file).Node(tc.node)
		if got := n.RowsUnreported(); got != tc.unreported {
			t.Errorf("%s node %d: RowsUnreported %v, want %v", tc.file, tc.node, got, tc.unreported)
		}
		if got := n.StoppedEarly(); got != tc.stopped {
			t.Errorf("%s node %d: StoppedEarly %v, want %v", tc.file, tc.node, got, tc.stopped)
		}
	}
}

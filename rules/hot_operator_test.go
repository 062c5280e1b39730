package rules

import (
	"strconv"
	"strings"
	"testing"
)

func TestHotOperatorCorpus(t *testing.T) {
	// 1,562,674 ms of 1,570,273 ms in the Table Scan on the inner side of a
	// loop executed 24,534,730 times (sum over 6 threads).
	fs := statementFindings(t, "perfstudio__tests__PlanViewer.Core.Tests__Plans__row-count-spool-slow.sqlplan", 1, "hot-operator")
	if len(fs) != 1 || *fs[0].NodeID != 14 || fs[0].Severity != Warning {
		t.Fatalf("want one warning at node 14, got %+v", fs)
	}
	f := fs[0]
	if f.Evidence["self_elapsed_ms"] != int64(1562674) || f.Evidence["actual_executions"] != int64(24534730) || f.Evidence["time_share"] != 0.995 {
		t.Errorf("evidence %+v", f.Evidence)
	}
	// The full-table scan that reads 17,142,169 rows for 375 gets the index
	// on its predicate column.
	fs = statementFindings(t, "perfstudio__tests__PlanViewer.Core.Tests__Plans__isnull_plan.sqlplan", 1, "hot-operator")
	if len(fs) != 1 || *fs[0].NodeID != 3 || !strings.Contains(fs[0].Fix, "CREATE INDEX") {
		t.Errorf("isnull plan: %+v", fs)
	}
	// A fast statement (14 ms) is not examined; an exchange's waiting time
	// (Gather Streams: 2,701 of 3,836 ms) is not the hot operator.
	for _, file := range []string{"planlab__results__04-missing-covering-index-fast.sqlplan", "planlab__results__05-key-lookup-tipping-fast.sqlplan"} {
		if fs := statementFindings(t, file, 1, "hot-operator"); len(fs) != 0 {
			t.Errorf("%s: %+v", file, fs)
		}
	}
}

// An operator another rule already explains is left to it.
func TestHotOperatorDefersToOtherFindings(t *testing.T) {
	timed := func(rows int64, ms int) string {
		return strings.Replace(runtime(rows, 1), `ActualExecutions="1"`, `ActualExecutions="1" ActualElapsedms="`+itoa(ms)+`" ActualCPUms="`+itoa(ms)+`"`, 1)
	}
	tree := withCounters(scan(0, "Clustered Index Scan", "PK_Work", "Clustered", 10, 10, "", ""), timed(5000000, 9000))
	d := showplan(t, stmt("", "", `<QueryTimeStats CpuTime="9000" ElapsedTime="9100"/>`, tree))
	s := d.Statements()[0]
	fs, _ := runAfter(HotOperator, d, s, nil, nil, nil)
	if len(fs) != 1 {
		t.Fatalf("want one finding, got %+v", fs)
	}
	prior := []Finding{{Rule: "other", NodeID: Node(0)}}
	if fs, _ := runAfter(HotOperator, d, s, nil, nil, prior); len(fs) != 0 {
		t.Errorf("node explained by another finding reported again: %+v", fs)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

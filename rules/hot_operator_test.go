package rules

import (
	"strconv"
	"strings"
	"testing"
)

func TestHotOperatorCorpus(t *testing.T) {
	// 1,562,674 ms of 1,570,273 ms in the Table Scan on the inner side of a
	// loop executed 24,534,730 times: row-count-spool-not-in (node 15) and
	// nested-loops-repetition (node 14) explain it, so hot-operator is silent.
	if fs := statementFindings(t, "perfstudio__tests__PlanViewer.Core.Tests__Plans__row-count-spool-slow.sqlplan", 1, "hot-operator"); len(fs) != 0 {
		t.Errorf("row-count-spool-slow: the loop rules explain node 14, got %+v", fs)
	}
	// The full-table scan that reads 17,142,169 rows for 375 is left to
	// non-sargable-predicate, which gives the rewrite.
	if fs := statementFindings(t, "perfstudio__tests__PlanViewer.Core.Tests__Plans__isnull_plan.sqlplan", 1, "hot-operator"); len(fs) != 0 {
		t.Errorf("isnull plan: %+v", fs)
	}
	// slow-multi-seek: Index Seek node 6 took 17,805 ms of its own of the
	// 19,956 ms statement and no other rule explains it.
	fs := statementFindings(t, "perfstudio__tests__PlanViewer.Core.Tests__Plans__slow-multi-seek.sqlplan", 1, "hot-operator")
	if len(fs) != 1 || *fs[0].NodeID != 6 || fs[0].Severity != Warning {
		t.Fatalf("slow-multi-seek: want one warning at node 6, got %+v", fs)
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

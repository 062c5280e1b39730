package rules

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
)

// threads builds RunTimeInformation with one RunTimeCountersPerThread per
// (rows, executions) pair on threads 1..n, plus the idle Thread 0 entry of
// a parallel branch.
func threads(pairs ...[2]int64) string {
	var b strings.Builder
	b.WriteString(`<RunTimeInformation><RunTimeCountersPerThread Thread="0" ActualRows="0" ActualEndOfScans="0" ActualExecutions="0"/>`)
	for i, p := range pairs {
		fmt.Fprintf(&b, `<RunTimeCountersPerThread Thread="%d" ActualRows="%d" ActualEndOfScans="%d" ActualExecutions="%d"/>`, i+1, p[0], p[1], p[1])
	}
	b.WriteString(`</RunTimeInformation>`)
	return b.String()
}

func withCounters(relop, counters string) string {
	return strings.Replace(relop, "<OutputList/>", "<OutputList/>"+counters, 1)
}

func gather(child string) string {
	return withCounters(op(0, "Parallelism", "Gather Streams", 1, 20, `Parallel="1"`, `<Parallelism>`+child+`</Parallelism>`), runtime(1, 1))
}

func skewNodes(fs []Finding) []int {
	var got []int
	for _, f := range fs {
		got = append(got, *f.NodeID)
	}
	return got
}

func TestRowEstimateSkewParallelAndUnreported(t *testing.T) {
	parScan := func(est float64, counters, extra string) string {
		return withCounters(scan(1, "Clustered Index Scan", "PK_Work", "Clustered", est, 10, extra, ""), counters)
	}
	cases := []struct {
		name  string
		tree  string
		nodes []int
	}{
		// 4 threads read 250,000 rows each once: 1,000,000 rows in one execution.
		{"perfect estimate at DOP 4 is silent", gather(parScan(1000000, threads([2]int64{250000, 1}, [2]int64{250000, 1}, [2]int64{250000, 1}, [2]int64{250000, 1}), "")), nil},
		// 22.5× under in total; per thread it would look like 2.8×.
		{"real underestimate at DOP 8 is found", gather(parScan(23178, threads(
			[2]int64{65260, 1}, [2]int64{65260, 1}, [2]int64{65260, 1}, [2]int64{65260, 1},
			[2]int64{65260, 1}, [2]int64{65260, 1}, [2]int64{65260, 1}, [2]int64{65260, 1}), "")), []int{1}},
		{"bitmap probe is not a misestimate", gather(withCounters(scan(1, "Clustered Index Scan", "PK_Work", "Clustered", 1000000, 10, "",
			`<Predicate><ScalarOperator ScalarString="PROBE([Opt_Bitmap1005],[WorkDb].[dbo].[Work].[Id])"/></Predicate>`),
			threads([2]int64{5000, 1}, [2]int64{5000, 1}))), nil},
		{"row goal met is not a misestimate", parScan(100000, runtime(20, 1), `EstimateRowsWithoutRowGoal="500000"`), nil},
		{"row goal missed with a good goal-free estimate is not a misestimate", parScan(10, runtime(400000, 1), `EstimateRowsWithoutRowGoal="500000"`), nil},
		{"stopped early (end of scans 0 of 1) is not a misestimate",
			strings.Replace(parScan(100000, runtime(1, 1), ""), `ActualEndOfScans="1"`, `ActualEndOfScans="0"`, 1), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := analyze(t, showplan(t, stmt(`CardinalityEstimationModelVersion="160"`, "", "", c.tree)), nil, RowEstimateSkew)
			if got := skewNodes(fs); fmt.Sprint(got) != fmt.Sprint(c.nodes) {
				t.Errorf("reported nodes %v, want %v: %+v", got, c.nodes, fs)
			}
		})
	}
}

func TestRowEstimateSkewWriteWithoutOutput(t *testing.T) {
	insert := `<RelOp NodeId="1" PhysicalOp="Clustered Index Insert" LogicalOp="Insert" EstimateRows="7368560" EstimateIO="0" EstimateCPU="0" ` +
		`AvgRowSize="9" EstimatedTotalSubtreeCost="50" Parallel="0" EstimateRebinds="0" EstimateRewinds="0"><OutputList/>` + runtime(0, 1) +
		`<Update DMLRequestSort="0">` + fmt.Sprintf(workObj, "PK_Work", "Clustered") +
		withCounters(scan(2, "Clustered Index Scan", "PK_Work", "Clustered", 7368560, 10, "", ""), runtime(7368560, 1)) + `</Update></RelOp>`
	fs := analyze(t, showplan(t, stmt("", "", "", insert)), nil, RowEstimateSkew)
	if len(fs) != 0 {
		t.Errorf("an insert without OUTPUT reports no rows; got %+v", fs)
	}
}

// A misestimate seen through a Compute Scalar without counters is the
// child's, not the parent's.
func TestRowEstimateSkewLooksThroughComputeScalar(t *testing.T) {
	src := withCounters(scan(3, "Clustered Index Scan", "PK_Work", "Clustered", 10, 10, "", ""), runtime(100000, 1))
	cs := op(2, "Compute Scalar", "Compute Scalar", 10, 10, "", `<ComputeScalar>`+src+`</ComputeScalar>`)
	sort := withCounters(op(1, "Sort", "Sort", 10, 12, "", `<Sort Distinct="0"><OrderBy/>`+cs+`</Sort>`), runtime(100000, 1))
	fs := analyze(t, showplan(t, stmt(`CardinalityEstimationModelVersion="160"`, "", "", sort)), nil, RowEstimateSkew)
	if got := skewNodes(fs); fmt.Sprint(got) != "[3]" {
		t.Errorf("reported nodes %v, want [3]", got)
	}
}

// Reads of one table variable are one finding that names the cause.
func TestRowEstimateSkewMergesTableVariableReads(t *testing.T) {
	tv := func(id int) string {
		return withCounters(op(id, "Table Scan", "Table Scan", 1, 1, "", `<TableScan Ordered="0"><Object Table="[@Changes]"/></TableScan>`), runtime(5000, 1))
	}
	concat := withCounters(op(1, "Concatenation", "Concatenation", 2, 3, "", `<Concat>`+tv(2)+tv(3)+`</Concat>`), runtime(10000, 1))
	fs := analyze(t, showplan(t, stmt(`CardinalityEstimationModelVersion="160"`, "", "", concat)), nil, RowEstimateSkew)
	if len(fs) != 1 {
		t.Fatalf("want one finding, got %+v", fs)
	}
	f := fs[0]
	if *f.NodeID != 2 || f.Evidence["cause"] != "table-variable" || fmt.Sprint(f.Evidence["also_nodes"]) != "[3]" || !strings.Contains(f.Fix, "temp table") {
		t.Errorf("finding %+v", f)
	}
}

// A node a cause-specific rule already reported is left to it.
func TestRowEstimateSkewDefersToCauseRules(t *testing.T) {
	fake := &Rule{Code: "PL999", Name: "fake-cause", Severity: Warning, Run: func(p *Pass) {
		p.Report(Finding{NodeID: Node(1), Message: "explained"})
	}}
	saved := skewCauseRules
	skewCauseRules = []string{"fake-cause"}
	defer func() { skewCauseRules = saved }()
	d := showplan(t, stmt(`CardinalityEstimationModelVersion="160"`, "", "", withCounters(scan(1, "Clustered Index Scan", "PK_Work", "Clustered", 200, 10, "", ""), runtime(2000000, 1))))
	s := d.Statements()[0]
	prior, err := run(fake, d, s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fs, _ := runAfter(RowEstimateSkew, d, s, nil, nil, nil); len(fs) != 1 {
		t.Fatalf("without the cause rule's finding: %+v", fs)
	}
	if fs, _ := runAfter(RowEstimateSkew, d, s, nil, nil, prior); len(fs) != 0 {
		t.Errorf("node explained by fake-cause reported again: %+v", fs)
	}
}

// Real plans named in the issue.
func TestRowEstimateSkewCorpusCases(t *testing.T) {
	dir := sharedtest.Require(t, "corpus/plans")
	cases := []struct {
		file   string
		id     int    // StatementId (first statement with it)
		nodes  string // reported nodes
		factor float64
	}{
		{"planlab__results__05-key-lookup-tipping-fast.sqlplan", 1, "[]", 0},
		{"showplan-dotnet__tests__Showplan.Tests__plans__parallelism.sqlplan", 1, "[3]", 22.5},
		{"hqp__test_plans__spilltotempdb.sqlplan", 1, "[]", 0},
		{"supratimas__plans__TestPlan02_5.sqlplan", 5, "[34]", 100},
	}
	for _, c := range cases {
		d, err := plan.ParseFile(filepath.Join(dir, c.file), plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var s *plan.Statement
		for _, st := range d.Statements() {
			if st.ID == c.id && s == nil {
				s = st
			}
		}
		fs, err := run(RowEstimateSkew, d, s, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := skewNodes(fs)
		if got == nil {
			got = []int{}
		}
		if fmt.Sprint(got) != c.nodes {
			t.Errorf("%s: nodes %v, want %s: %+v", c.file, got, c.nodes, fs)
			continue
		}
		if c.factor > 0 && fs[0].Evidence["factor"] != c.factor {
			t.Errorf("%s: factor %v, want %v", c.file, fs[0].Evidence["factor"], c.factor)
		}
	}
}

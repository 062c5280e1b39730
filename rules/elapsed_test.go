package rules

import (
	"testing"

	"github.com/planlint/planlint/plan"
)

// TestPlanElapsedMs: without QueryTimeStats a plan's time is its longest
// operator's. planElapsedMs used to take the root's, which in batch mode is
// only the root's own time ("the inner side took 9 s of the statement's
// 1 s"); statementElapsedMs already took the longest.
func TestPlanElapsedMs(t *testing.T) {
	timed := func(id int, ms int64) *plan.RelOp {
		return &plan.RelOp{NodeID: id, RunTime: &plan.RunTime{HasTiming: true, ElapsedMs: ms}}
	}
	root, child := timed(0, 1000), timed(1, 9000)
	untimed := &plan.RelOp{NodeID: 2}
	for _, tc := range []struct {
		name string
		q    *plan.QueryPlan
		want float64
		ok   bool
	}{
		{"query time", &plan.QueryPlan{QueryTime: &plan.QueryTimeStats{ElapsedTimeMs: 1234}, Root: root, Nodes: []*plan.RelOp{root, child}}, 1234, true},
		{"longest operator, not the root", &plan.QueryPlan{Root: root, Nodes: []*plan.RelOp{root, child}}, 9000, true},
		{"zero query time falls back", &plan.QueryPlan{QueryTime: &plan.QueryTimeStats{}, Root: root, Nodes: []*plan.RelOp{root, child}}, 9000, true},
		{"no timings", &plan.QueryPlan{Root: untimed, Nodes: []*plan.RelOp{untimed}}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := planElapsedMs(tc.q)
			if got != tc.want || ok != tc.ok {
				t.Errorf("planElapsedMs = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
			st := &plan.Statement{QueryPlan: tc.q}
			want := tc.want
			if !tc.ok {
				want = -1
			}
			if got := statementElapsedMs(st); got != want {
				t.Errorf("statementElapsedMs = %v, want %v", got, want)
			}
		})
	}
}

package report

import (
	"math"

	"github.com/planlint/planlint/plan"
)

// OperatorRuntime is one operator's runtime figures on an actual plan, as
// JSON carries them: rows and executions counted like the estimate, the
// estimate's error and the operator's own time.
type OperatorRuntime struct {
	NodeID           int     `json:"node_id"`
	CursorOperation  string  `json:"cursor_operation,omitempty"`
	Operator         string  `json:"operator"`
	EstimatedRows    float64 `json:"estimated_rows"`
	ActualRows       float64 `json:"actual_rows"`
	ActualExecutions float64 `json:"actual_executions"`
	Threads          int     `json:"threads,omitempty"`
	// EstimateFactor is the estimate's error per execution (≥ 1), the
	// figure row-estimate-skew and --tree show; 0 when not measurable.
	EstimateFactor    float64 `json:"estimate_factor,omitempty"`
	EstimateDirection string  `json:"estimate_direction,omitempty"`
	// SelfElapsedMs and SelfCPUMs are the operator's own time (children
	// excluded); absent without timings.
	SelfElapsedMs *int64 `json:"self_elapsed_ms,omitempty"`
	SelfCPUMs     *int64 `json:"self_cpu_ms,omitempty"`
}

// operatorRuntimes lists the runtime figures of every operator with
// counters in the statement's plans; nil on estimated plans.
func operatorRuntimes(s *plan.Statement) []*OperatorRuntime {
	var out []*OperatorRuntime
	for _, q := range s.Plans() {
		for _, n := range q.Nodes {
			if n.RunTime == nil {
				continue
			}
			o := &OperatorRuntime{NodeID: n.NodeID, CursorOperation: q.Label, Operator: n.DisplayName(),
				EstimatedRows: math.Round(n.EstimatedRowsAllExecutions()*100) / 100}
			o.ActualRows, _ = n.ActualRowCount()
			o.ActualExecutions, _ = n.ActualExecutionCount()
			if t := n.RunTime.ActiveThreads(); t > 1 {
				o.Threads = t
			}
			if sk := OperatorSkew(n); sk.OK {
				o.EstimateFactor = math.Round(sk.Factor*10) / 10
				o.EstimateDirection = map[bool]string{true: "under", false: "over"}[sk.Under]
			}
			if t := n.Time; t != nil {
				el, cpu := t.SelfElapsedMs, t.SelfCPUMs
				o.SelfElapsedMs, o.SelfCPUMs = &el, &cpu
			}
			out = append(out, o)
		}
	}
	return out
}

// selfTimeText renders an operator's own elapsed time for --tree.
func selfTimeText(n *plan.RelOp) string {
	if n.Time == nil {
		return ""
	}
	s := "self " + FormatCount(float64(n.Time.SelfElapsedMs)) + " ms"
	if n.Time.Waiting {
		s += " waiting"
	}
	return s
}

package plan

import "strings"

// Runtime counters of actual plans, read the way the estimates count them.
//
// In a parallel zone every worker thread runs the operator's branch, so the
// counters summed over threads count thread runs: a scan that each of 16
// threads runs once shows ActualExecutions=16, while the estimate
// (EstimateRebinds + EstimateRewinds + 1 = 1) counts one execution whose
// EstimateRows covers all threads. Only the inner side of a Nested Loops
// join in the same zone runs once per outer row, and there the sum over
// threads is the number of executions. A Broadcast exchange hands every
// consumer thread a full copy of its input, so one thread's rows are the
// rows the estimate counts.

// IsExchange reports whether the operator is a Parallelism exchange
// (Gather, Distribute or Repartition Streams).
func (r *RelOp) IsExchange() bool { return r.PhysicalOp == "Parallelism" }

// IsBatchMode reports whether the operator ran (or, without counters, was
// planned to run) in batch mode.
func (r *RelOp) IsBatchMode() bool {
	if r.RunTime != nil && r.RunTime.ExecutionMode != "" {
		return r.RunTime.ExecutionMode == "Batch"
	}
	return r.EstimatedExecutionMode == "Batch"
}

// ActiveThreads is the number of threads that executed the operator at
// least once (the all-zero Thread 0 entry of a parallel branch excluded).
func (rt *RunTime) ActiveThreads() int {
	if rt == nil {
		return 0
	}
	n := 0
	for _, t := range rt.Threads {
		if t.ActualExecutions > 0 {
			n++
		}
	}
	return n
}

// maxPerThread returns the largest value of f over the threads.
func (rt *RunTime) maxPerThread(f func(ThreadCounters) int64) int64 {
	var m int64
	for _, t := range rt.Threads {
		m = max(m, f(t))
	}
	return m
}

// MaxThreadRows is the most rows any one thread returned.
func (rt *RunTime) MaxThreadRows() int64 {
	return rt.maxPerThread(func(t ThreadCounters) int64 { return t.ActualRows })
}

// RebindsInZone reports whether the operator runs once per outer row of a
// Nested Loops join in its own parallel zone (no exchange or spool in
// between): on its inner side.
func (r *RelOp) RebindsInZone() bool {
	child := r
	for p := r.Parent; p != nil; child, p = p, p.Parent {
		if p.IsExchange() || strings.HasSuffix(p.PhysicalOp, "Spool") && p.SpoolPrimaryID() == 0 {
			return false // a spool replays what its input produced once per thread
		}
		if p.PhysicalOp == "Nested Loops" && len(p.Children) > 1 && p.Children[0] != child {
			return true
		}
	}
	return false
}

// Replicated reports whether every thread of the operator's zone carries
// the same rows: a Broadcast exchange, and the operators that only pass its
// output on (Bitmap, Compute Scalar, Filter, ...).
func (r *RelOp) Replicated() bool {
	for n := r; ; n = n.Children[0] {
		if n.IsExchange() {
			return n.Exchange != nil && n.Exchange.PartitioningType == "Broadcast"
		}
		if len(n.Children) != 1 {
			return false // a join or a leaf starts a stream of its own
		}
	}
}

// ActualExecutionCount is how many times the operator ran, counted like
// the estimate: the sum over threads on the inner side of a Nested Loops
// join in the same zone, else the most any one thread ran it (a branch that
// each thread runs once is one execution). ok is false without counters.
func (r *RelOp) ActualExecutionCount() (n float64, ok bool) {
	rt := r.RunTime
	if rt == nil {
		return 0, false
	}
	if rt.ActiveThreads() <= 1 || r.RebindsInZone() && !r.Replicated() {
		return float64(rt.ActualExecutions), true
	}
	return float64(rt.maxPerThread(func(t ThreadCounters) int64 { return t.ActualExecutions })), true
}

// ActualRowCount is the operator's output rows over all executions,
// counted like EstimatedRowsAllExecutions: the sum over threads, except on
// a replicated (broadcast) stream, where one thread's copy counts.
func (r *RelOp) ActualRowCount() (n float64, ok bool) {
	rt := r.RunTime
	if rt == nil {
		return 0, false
	}
	if r.Replicated() && rt.ActiveThreads() > 1 {
		return float64(rt.MaxThreadRows()), true
	}
	return float64(rt.ActualRows), true
}

// PerThreadLimit reports a Top or TopN Sort that each thread of a parallel
// zone applies on its own: every thread may return up to the limit, while
// the estimate counts the limit once.
func (r *RelOp) PerThreadLimit() bool {
	if r.RunTime.ActiveThreads() <= 1 {
		return false
	}
	return r.PhysicalOp == "Top" || r.Sort != nil && r.Sort.TopRows > 0
}

// RowsUnreported reports an operator whose ActualRows never counts the
// rows it handled, so zero actual rows say nothing about its estimate: an
// Insert, Update, Delete or Merge without an OUTPUT list, a Batch Hash
// Table Build, the fill step of a multi-statement table-valued function
// (a Table-valued function operator feeding Sequence before the read of
// its result), and Compute Scalars, exchanges and Sequence (its last
// input) above one of these.
func (r *RelOp) RowsUnreported() bool {
	switch {
	case r.PhysicalOp == "Batch Hash Table Build":
		return true
	case r.Access != nil && len(r.OutputList) == 0 && isWriteOp(r):
		return true
	}
	if p := r.Parent; r.PhysicalOp == "Table-valued function" && p != nil && p.PhysicalOp == "Sequence" && p.Children[len(p.Children)-1] != r {
		return true
	}
	if (r.IsExchange() || r.PhysicalOp == "Compute Scalar") && len(r.Children) == 1 {
		return r.Children[0].RowsUnreported()
	}
	if r.PhysicalOp == "Sequence" && len(r.Children) > 0 {
		return r.Children[len(r.Children)-1].RowsUnreported() // Sequence returns its last input's rows
	}
	return false
}

func isWriteOp(r *RelOp) bool {
	switch r.LogicalOp {
	case "Insert", "Update", "Delete", "Merge":
		return true
	}
	return strings.HasSuffix(r.PhysicalOp, "Insert") || strings.HasSuffix(r.PhysicalOp, "Update") ||
		strings.HasSuffix(r.PhysicalOp, "Delete") || strings.HasSuffix(r.PhysicalOp, "Merge")
}

// StoppedEarly reports a row-mode operator that was not read to its end
// in at least one execution (ActualEndOfScans below ActualExecutions): its
// parent stopped asking for rows, as a Merge Join does with one input when
// the other ends, or a Top. Batch-mode operators do not count end of scans,
// and operators whose rows go unreported have no end to reach.
func (r *RelOp) StoppedEarly() bool {
	rt := r.RunTime
	if rt == nil || r.IsBatchMode() || r.Parent != nil && r.Parent.IsBatchMode() || r.RowsUnreported() {
		return false // a row-mode input of a batch operator reports no end of scan either
	}
	return rt.ActualExecutions > 0 && rt.ActualEndOfScans < rt.ActualExecutions
}

// OperatorTime is an operator's own time on an actual plan.
type OperatorTime struct {
	// SelfElapsedMs is the operator's own elapsed time on its slowest
	// thread: in row mode ActualElapsedms minus its children's on the same
	// thread (children across an exchange run on other threads and count
	// with their slowest thread), in batch mode ActualElapsedms itself.
	SelfElapsedMs int64
	// SelfCPUMs is the operator's own CPU time summed over its threads.
	SelfCPUMs int64
	// Thread is the thread that SelfElapsedMs was measured on.
	Thread int
	// Waiting is set for exchanges: their time is mostly waiting for
	// the producer or consumer threads, not work of their own.
	Waiting bool
}

// computeSelfTimes sets Time on every operator with timed counters.
func (q *QueryPlan) computeSelfTimes() {
	if q.Root == nil {
		return
	}
	cum := map[*RelOp]map[int]threadTime{}
	cumulative(q.Root, cum)
	for _, n := range q.Nodes {
		n.Time = selfTime(n, cum)
	}
}

type threadTime struct{ elapsed, cpu int64 }

// cumulative returns, per thread, the elapsed and CPU time of n together
// with everything below it in its zone, and records it in cum.
func cumulative(n *RelOp, cum map[*RelOp]map[int]threadTime) map[int]threadTime {
	below := map[int]threadTime{}
	for _, c := range n.Children {
		cc := cumulative(c, cum)
		if n.IsExchange() {
			continue // children run on other threads
		}
		for t, v := range cc {
			b := below[t]
			below[t] = threadTime{b.elapsed + v.elapsed, b.cpu + v.cpu}
		}
	}
	out := below
	if rt := n.RunTime; rt != nil && rt.HasTiming {
		out = map[int]threadTime{}
		for _, t := range rt.Threads {
			v := threadTime{t.ElapsedMs, t.CPUMs}
			if n.IsBatchMode() {
				b := below[t.Thread]
				v = threadTime{v.elapsed + b.elapsed, v.cpu + b.cpu}
			}
			out[t.Thread] = v
		}
	}
	cum[n] = out
	return out
}

func slowest(m map[int]threadTime) int64 {
	var s int64
	for _, v := range m {
		s = max(s, v.elapsed)
	}
	return s
}

func selfTime(n *RelOp, cum map[*RelOp]map[int]threadTime) *OperatorTime {
	rt := n.RunTime
	if rt == nil || !rt.HasTiming {
		return nil
	}
	ot := &OperatorTime{Waiting: n.IsExchange()}
	first := true
	for _, t := range rt.Threads {
		if t.ActualExecutions == 0 && t.ElapsedMs == 0 && t.CPUMs == 0 {
			continue
		}
		el, cpu := t.ElapsedMs, t.CPUMs
		if !n.IsBatchMode() {
			for _, c := range n.Children {
				if n.IsExchange() {
					el -= slowest(cum[c])
					continue
				}
				v := cum[c][t.Thread]
				el -= v.elapsed
				cpu -= v.cpu
			}
		}
		el, cpu = max(el, 0), max(cpu, 0)
		ot.SelfCPUMs += cpu
		if first || el > ot.SelfElapsedMs {
			ot.SelfElapsedMs, ot.Thread, first = el, t.Thread, false
		}
	}
	return ot
}

// RowSkew compares an operator's estimated and actual rows per execution,
// both counted like the estimate (see ActualExecutionCount and
// ActualRowCount). Factor is at least 1 (counts below 1 count as 1); Under
// is set when more rows came than estimated.
type RowSkew struct {
	Factor             float64
	Under              bool
	EstimatedPerExec   float64
	ActualPerExec      float64
	EstimatedAll       float64
	ActualAll          float64
	EstimatedExecs     float64
	ActualExecs        float64
	PerThreadLimitRows bool // a per-thread Top: ActualAll is one thread's rows
}

// EstimateSkew measures the operator's row estimate against its actual
// rows. ok is false without counters, when it never ran, or when its
// actual rows go unreported (RowsUnreported).
func (r *RelOp) EstimateSkew() (s RowSkew, ok bool) {
	execs, ok := r.ActualExecutionCount()
	if !ok || execs == 0 || r.RowsUnreported() {
		return RowSkew{}, false
	}
	rows, _ := r.ActualRowCount()
	s = RowSkew{EstimatedPerExec: r.EstimateRows, EstimatedAll: r.EstimatedRowsAllExecutions(),
		EstimatedExecs: r.EstimatedExecutions(), ActualExecs: execs, ActualAll: rows}
	if r.PerThreadLimit() && !r.RebindsInZone() {
		s.ActualAll, s.PerThreadLimitRows = float64(r.RunTime.MaxThreadRows()), true
	}
	s.ActualPerExec = s.ActualAll / execs
	e, a := max(s.EstimatedPerExec, 1), max(s.ActualPerExec, 1)
	s.Under = a > e
	s.Factor = max(a, e) / min(a, e)
	return s, true
}

// SpoolPrimaryID is Spool/@PrimaryNodeId: a secondary spool reader replays
// the rows of that spool. Zero for a primary spool and for other operators.
func (r *RelOp) SpoolPrimaryID() int {
	if r.Spool == nil {
		return 0
	}
	return r.Spool.PrimaryNodeID
}

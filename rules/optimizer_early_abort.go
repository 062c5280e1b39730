package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
)

// OptimizerEarlyAbort reports statements whose optimization stopped before
// the search finished: a compile memory limit or the optimizer's timeout.
var OptimizerEarlyAbort = &Rule{
	Code:     "PL406",
	Name:     "optimizer-early-abort",
	Severity: Error,
	Summary:  "The optimizer stopped searching early (timeout or compile memory limit) on a costly statement",
	Params: []Param{
		{"min_cost", 5, "timeouts on statements estimated cheaper than this are not reported (a cheap plan cannot be much improved)"},
		{"warn_cost", 50, "from this estimated cost the statement is costly: a timeout is a warning, a memory limit an error"},
		{"warn_elapsed_ms", 1000, "an actual elapsed time from this many milliseconds also makes the statement costly"},
	},
	Doc: Doc{
		Problem: "The optimizer explores alternatives until it finds a plan good enough for the statement's cost, runs out " +
			"of its time budget, or runs out of compile memory. `TimeOut` means it kept the best plan found within a budget " +
			"that grows with the statement's complexity: on a large query with many joins, views or subqueries the plan may " +
			"be far from the best one, and which plan is found can change from one compile to the next. `MemoryLimitExceeded` " +
			"means the search was cut short because compilation hit its memory limit, which also points at memory pressure " +
			"on the server while it compiled (compile gateways, `RESOURCE_SEMAPHORE_QUERY_COMPILE` waits).",
		Evidence: "`StmtSimple/@StatementOptmEarlyAbortReason` = `TimeOut` or `MemoryLimitExceeded` (`GoodEnoughPlanFound` is " +
			"the normal end and never reported). The statement's `StatementSubTreeCost` and, in actual plans, " +
			"`QueryTimeStats/@ElapsedTime` decide whether it matters; the message gives `CompileCPU`, `CompileTime` and " +
			"`CompileMemory` against `OptimizerHardwareDependentProperties/@MaxCompileMemory`.",
		Example: "`StatementOptmEarlyAbortReason=\"TimeOut\" StatementSubTreeCost=\"1657.71\"` with `CompileCPU=\"9467\"`: " +
			"a 1,658-cost statement whose optimizer gave up after 9.5 s of compile CPU.",
		Fix: "Give the optimizer a smaller problem: split the statement into steps that materialise intermediate results " +
			"in `#temp` tables (they get statistics), remove joins and nested views the result does not need, replace " +
			"`OR`-heavy or repeated subqueries with simpler forms. Once a good plan is known, keep it with Query Store plan " +
			"forcing or a plan guide. For `MemoryLimitExceeded`, also check the server's compile memory: " +
			"`sys.dm_exec_query_optimizer_memory_gateways` and `RESOURCE_SEMAPHORE_QUERY_COMPILE` waits.",
		FalseAlarms: "A timeout on a cheap statement is normal: the budget is small because there is little to gain, so " +
			"statements under `min_cost` are not reported and those under `warn_cost` (that ran faster than " +
			"`warn_elapsed_ms`) are info. A memory limit on a cheap statement says more about the server than the query: it is info.",
	},
	Run: runOptimizerEarlyAbort,
}

func runOptimizerEarlyAbort(p *Pass) {
	st := p.Statement
	reason := st.OptmEarlyAbortReason
	if reason != "TimeOut" && reason != "MemoryLimitExceeded" {
		return
	}
	cost := st.SubtreeCost
	q := st.QueryPlan
	elapsed, timed := queryTimeMs(q)
	costly := cost >= p.Param("warn_cost") || timed && elapsed >= p.Param("warn_elapsed_ms")
	if reason == "TimeOut" && cost < p.Param("min_cost") && !costly {
		return
	}
	ev := map[string]any{"reason": reason, "statement_cost": round(cost, 3)}
	var b strings.Builder
	if reason == "TimeOut" {
		fmt.Fprintf(&b, "the optimizer timed out on this statement (estimated cost %s) and kept the best plan found so far", costText(cost))
	} else {
		fmt.Fprintf(&b, "optimization of this statement (estimated cost %s) stopped at the compile memory limit: the plan is the best of a truncated search", costText(cost))
	}
	if timed {
		ev["elapsed_ms"] = elapsed
		fmt.Fprintf(&b, "; it ran %s", units.Ms(elapsed))
	}
	if q != nil && (q.CompileCPUMs > 0 || q.CompileMemoryKB > 0) {
		ev["compile_cpu_ms"], ev["compile_time_ms"], ev["compile_memory_kb"] = q.CompileCPUMs, q.CompileTimeMs, q.CompileMemoryKB
		fmt.Fprintf(&b, "; compile: %s CPU, %s elapsed, %s memory", units.Ms(q.CompileCPUMs), units.Ms(q.CompileTimeMs), units.KB(q.CompileMemoryKB))
		if h := q.Hardware; h != nil && h.MaxCompileMemoryKB > 0 {
			ev["max_compile_memory_kb"] = h.MaxCompileMemoryKB
			fmt.Fprintf(&b, " of %s allowed", units.KB(h.MaxCompileMemoryKB))
		}
	}
	sev := Info
	fix := "split the statement into steps that materialise intermediate results in #temp tables, remove joins and views the result does not need; keep a good plan with Query Store plan forcing"
	switch {
	case reason == "MemoryLimitExceeded" && costly:
		sev = Error
	case reason == "MemoryLimitExceeded":
		b.WriteString("; on a statement this cheap the limit points at compile memory pressure on the server rather than at the query")
	case costly:
		sev = Warning
	}
	if reason == "MemoryLimitExceeded" {
		fix += "; check compile memory pressure: sys.dm_exec_query_optimizer_memory_gateways and RESOURCE_SEMAPHORE_QUERY_COMPILE waits"
	}
	p.Report(Finding{Severity: sev, Message: b.String(), Fix: fix, Evidence: ev})
}

// costText renders an estimated cost readably, including absurd ones.
func costText(c float64) string {
	if c >= 1e9 {
		return fmt.Sprintf("%.3g", c)
	}
	if c < 10 {
		return fmt.Sprintf("%.2f", c)
	}
	return units.Count(c)
}

func init() { register(OptimizerEarlyAbort) }

package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
)

// CompileCost reports statements whose compilation is expensive enough to
// matter, above all when OPTION (RECOMPILE) pays it on every execution.
var CompileCost = &Rule{
	Code:     "PL407",
	Name:     "compile-cost",
	Severity: Error,
	Summary:  "Compiling the statement costs enough CPU or memory to matter when it recompiles",
	Params: []Param{
		{"info_cpu_ms", 1000, "compile CPU from this many milliseconds is info"},
		{"warn_cpu_ms", 5000, "compile CPU from this many milliseconds is a warning"},
		{"recompile_warn_cpu_ms", 100, "with OPTION (RECOMPILE) (a compile on every execution), compile CPU from this is a warning"},
		{"recompile_error_cpu_ms", 1000, "with OPTION (RECOMPILE), compile CPU from this is an error"},
		{"memory_mb", 100, "compile memory from this many MB is reported like compile CPU at info_cpu_ms"},
		{"wait_ms", 1000, "compile time exceeding compile CPU by this many milliseconds is reported: the compile waited"},
	},
	After: []string{"optimizer-early-abort"},
	Doc: Doc{
		Problem: "Every compile burns CPU and memory before the query runs. Once per cached plan that rarely matters; it " +
			"matters when the statement compiles often: `OPTION (RECOMPILE)`, a plan evicted or invalidated again and again " +
			"(statistics updates on a busy table, schema changes, `WITH RECOMPILE` procedures, unparameterized ad hoc " +
			"text). A statement that needs seconds of compile CPU multiplies that by its compile rate, and large compiles " +
			"queue behind the compile memory gateways (`RESOURCE_SEMAPHORE_QUERY_COMPILE`).",
		Evidence: "`QueryPlan/@CompileCPU` and `@CompileTime` (ms), `@CompileMemory` (KB) against " +
			"`OptimizerHardwareDependentProperties/@MaxCompileMemory`; `OPTION (RECOMPILE)` in the statement text. In " +
			"actual plans the compile CPU is compared with the execution's `QueryTimeStats/@CpuTime`. A compile time far " +
			"above its CPU means the compile waited.",
		Example: "`CompileTime=\"10999\" CompileCPU=\"9467\" CompileMemory=\"155504\"`: 9.5 s of CPU and 152 MB to compile one statement.",
		Fix: "With `OPTION (RECOMPILE)`: keep it only where a per-value plan is worth the compile, otherwise parameterize and " +
			"let the plan be reused (for skewed values, `OPTIMIZE FOR` or a dedicated statement per value class). For a " +
			"large compile: simplify the statement (split it through `#temp` tables, drop unneeded joins and nested " +
			"views) and find why it recompiles (`sys.dm_exec_query_stats.plan_generation_num`, the `sql_statement_recompile` " +
			"extended event).",
		FalseAlarms: "A statement compiled once and reused for days pays its compile once: then a large compile is only " +
			"info. When the optimizer stopped early, the `optimizer-early-abort` finding carries the compile figures; this rule " +
			"then reports only a recompile hint or a compile cost graded above that finding.",
	},
	Run: runCompileCost,
}

func runCompileCost(p *Pass) {
	st := p.Statement
	q := st.QueryPlan
	if q == nil {
		return
	}
	cpu, elapsed, mem := q.CompileCPUMs, q.CompileTimeMs, q.CompileMemoryKB
	recompile := recompileHint.MatchString(st.Text)
	sev := Severity(0)
	switch {
	case recompile && cpu >= p.Param("recompile_error_cpu_ms"):
		sev = Error
	case recompile && cpu >= p.Param("recompile_warn_cpu_ms"), cpu >= p.Param("warn_cpu_ms"):
		sev = Warning
	case cpu >= p.Param("info_cpu_ms"), mem >= p.Param("memory_mb")*1024, elapsed-cpu >= p.Param("wait_ms"):
		sev = Info
	}
	if sev == 0 {
		return
	}
	if !recompile {
		for _, f := range p.Prior("optimizer-early-abort") {
			if f.Severity >= sev {
				return // the early-abort finding names the same complexity and carries the compile figures
			}
		}
	}
	ev := map[string]any{"compile_cpu_ms": cpu, "compile_time_ms": elapsed, "compile_memory_kb": mem, "recompile_hint": recompile}
	var b strings.Builder
	fmt.Fprintf(&b, "compiling this statement took %s of CPU, %s elapsed and %s of memory", units.Ms(cpu), units.Ms(elapsed), units.KB(mem))
	if h := q.Hardware; h != nil && h.MaxCompileMemoryKB > 0 {
		ev["max_compile_memory_kb"] = h.MaxCompileMemoryKB
		fmt.Fprintf(&b, " (%s of the %s compile limit)", percent(mem/h.MaxCompileMemoryKB), units.KB(h.MaxCompileMemoryKB))
	}
	if elapsed-cpu >= p.Param("wait_ms") {
		fmt.Fprintf(&b, "; it waited %s beyond its CPU (compile memory gateways or blocking)", units.Ms(elapsed-cpu))
	}
	if qt := q.QueryTime; qt != nil {
		ev["execution_cpu_ms"] = qt.CPUTimeMs
		if cpu > qt.CPUTimeMs {
			fmt.Fprintf(&b, "; more than the %s of CPU the execution itself used", units.Ms(qt.CPUTimeMs))
		}
	}
	fix := "simplify the statement (split it through #temp tables, drop unneeded joins and nested views) and find why it recompiles (sys.dm_exec_query_stats.plan_generation_num, the sql_statement_recompile event)"
	if recompile {
		b.WriteString("; OPTION (RECOMPILE) pays this on every execution")
		fix = "remove OPTION (RECOMPILE) unless a plan per value is worth this compile on every execution: parameterize and reuse the plan (OPTIMIZE FOR or a dedicated statement per value class for skewed values)"
	}
	p.Report(Finding{Severity: sev, Message: b.String(), Fix: fix, Evidence: ev})
}

func init() { register(CompileCost) }

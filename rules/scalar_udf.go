package rules

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// ScalarUDF reports scalar user-defined functions called by a plan: how
// often, what they cost, whether they kept the plan serial and whether
// SQL Server 2019 inlining could apply.
var ScalarUDF = &Rule{
	Code:     "PL413",
	Name:     "scalar-udf",
	Severity: Warning,
	Summary:  "Scalar user-defined functions run once per row and keep the plan serial",
	Params: []Param{
		{"info_calls", 100, "calls below which a function is not reported (unless its time or a serial plan says otherwise)"},
		{"warn_calls", 10000, "calls (rows through the calling operator) from which it is a warning"},
		{"warn_ms", 1000, "UDF elapsed time (QueryTimeStats/@UdfElapsedTime) from which it is a warning"},
		{"parallel_cost", 5, "statement cost from which a plan kept serial by T-SQL UDFs is a warning (the default cost threshold for parallelism)"},
	},
	Doc: Doc{
		Problem: "A T-SQL scalar function is a separate module: SQL Server runs its body once per row, its cost is invisible " +
			"to the optimizer (estimated as almost nothing), and before SQL Server 2019 any T-SQL scalar UDF forbids a " +
			"parallel plan for the whole statement. A function over 100,000 rows is 100,000 executions of its statements.",
		Evidence: "`UserDefinedFunction FunctionName=\"…\"` inside an operator's expressions (usually a Compute Scalar's " +
			"`DefinedValues`, or a predicate). The calls are about the rows through the calling operator (its input for a " +
			"Filter). Actual plans from SQL Server 2016 SP2/2017 carry `QueryTimeStats/@UdfCpuTime` and `@UdfElapsedTime`; " +
			"`QueryPlan/@NonParallelPlanReason=\"TSQLUserDefinedFunctionsNotParallelizable\"` (2019+) says the UDFs kept the " +
			"plan serial; `ContainsInlineScalarTsqlUdfs` says some were inlined. One finding per statement lists every " +
			"function, at the operator that calls them most.",
		Example: "```sql\nCREATE FUNCTION dbo.Age (@d datetime2) RETURNS int AS BEGIN RETURN DATEDIFF(minute, @d, SYSUTCDATETIME()); END;\n" +
			"SELECT WorkId, dbo.Age(CreatedAt) FROM dbo.Work WHERE Status = 0;  -- one call per pending row, serial plan\n```",
		Fix: "Inline the logic: an expression in the query, a computed column, or an inline table-valued function called " +
			"with CROSS APPLY. On SQL Server 2019+ at compatibility level 150+, scalar UDF inlining rewrites inlineable " +
			"functions automatically (`sys.sql_modules.is_inlineable = 1`; not with time-dependent intrinsics such as " +
			"GETDATE(), table variables, or some constructs listed in the documentation).",
		FalseAlarms: "A function called a few times on a cheap statement costs little: below `warn_calls` calls, without " +
			"UDF time above `warn_ms` and without keeping a costly plan serial, it is info.",
		References: []string{
			"https://learn.microsoft.com/en-us/sql/relational-databases/user-defined-functions/scalar-udf-inlining",
			"https://learn.microsoft.com/en-us/sql/relational-databases/user-defined-functions/create-user-defined-functions-database-engine",
		},
	},
	Run: runScalarUDF,
}

func init() { register(ScalarUDF) }

// udfCalls estimates how often an operator evaluates its expressions: the
// rows through it (its input when it has one child, as a Filter tests every
// input row), and at least its executions.
func udfCalls(n *plan.RelOp) (float64, string) {
	calls, kind := rowsOut(n)
	if len(n.Children) == 1 {
		if in, k := rowsOut(n.Children[0]); in > calls || n.RunTime == nil && k == "actual" {
			calls, kind = in, k
		}
	}
	if e, k := executions(n); e > calls {
		calls, kind = e, k
	}
	return calls, kind
}

func runScalarUDF(p *Pass) {
	for _, q := range p.Plans() {
		var names []string
		seen := map[string]bool{}
		clr := true
		var busiest *plan.RelOp
		var callers []int
		var most float64
		kind := "estimated"
		for _, n := range q.Nodes {
			if len(n.UDFs) == 0 {
				continue
			}
			callers = append(callers, n.NodeID)
			for _, u := range n.UDFs {
				if !seen[strings.ToLower(u.Name)] {
					seen[strings.ToLower(u.Name)] = true
					names = append(names, u.Name)
				}
				clr = clr && u.CLR
			}
			if c, k := udfCalls(n); busiest == nil || c > most {
				busiest, most, kind = n, c, k
			}
		}
		if busiest == nil {
			continue
		}
		sort.Strings(names)
		reportScalarUDF(p, q.QueryPlan, udfSite{names, clr, busiest, math.Ceil(most), kind, callers})
	}
}

// udfSite is what a statement's plan says about its scalar UDF calls.
type udfSite struct {
	names   []string // every function the plan calls, sorted
	clr     bool     // all of them are CLR functions
	busiest *plan.RelOp
	calls   float64 // calls by the busiest operator
	kind    string  // "actual" or "estimated"
	callers []int   // every calling operator's NodeId
}

func reportScalarUDF(p *Pass, q *plan.QueryPlan, site udfSite) {
	n, calls := site.busiest, site.calls
	ev := map[string]any{"functions": site.names, "calls": calls, "calls_kind": site.kind, "calling_nodes": site.callers}
	var own []string
	for _, u := range n.UDFs {
		own = append(own, u.Name)
	}
	own = uniqueFold(own)
	var msg strings.Builder
	times := "times"
	if calls == 1 {
		times = "time"
	}
	fmt.Fprintf(&msg, "%s (node %d) calls scalar function %s about %s %s (%s rows through it): the function runs once per row",
		n.DisplayName(), n.NodeID, strings.Join(own, ", "), units.Count(calls), times, site.kind)
	if len(site.names) > len(own) {
		fmt.Fprintf(&msg, "; the statement calls %s in all, at nodes %s", strings.Join(site.names, ", "), joinInts(site.callers))
	}
	sev := Severity(0)
	if calls >= p.Param("info_calls") {
		sev = Info
	}
	if calls >= p.Param("warn_calls") {
		sev = Warning
	}
	clr := site.clr
	if t := q.QueryTime; t != nil && t.UDFElapsedTimeMs > 0 {
		ev["udf_elapsed_ms"], ev["udf_cpu_ms"] = t.UDFElapsedTimeMs, t.UDFCPUTimeMs
		fmt.Fprintf(&msg, "; they took %s ms (%s ms CPU)", units.Count(t.UDFElapsedTimeMs), units.Count(t.UDFCPUTimeMs))
		if t.ElapsedTimeMs > 0 {
			fmt.Fprintf(&msg, " of the statement's %s ms", units.Count(t.ElapsedTimeMs))
		}
		if t.UDFElapsedTimeMs >= p.Param("warn_ms") {
			sev = Warning
		} else if sev == 0 {
			sev = Info
		}
	}
	cost := p.Statement.SubtreeCost
	switch q.NonParallelPlanReason {
	case "TSQLUserDefinedFunctionsNotParallelizable":
		ev["non_parallel_plan_reason"] = q.NonParallelPlanReason
		fmt.Fprintf(&msg, "; they keep the plan serial (NonParallelPlanReason %s, statement cost %s)", q.NonParallelPlanReason, costText(cost))
		if cost >= p.Param("parallel_cost") {
			sev = Warning
		} else if sev == 0 {
			sev = Info
		}
	case "CouldNotGenerateValidParallelPlan":
		if !clr && cost >= p.Param("parallel_cost") {
			ev["non_parallel_plan_reason"] = q.NonParallelPlanReason
			fmt.Fprintf(&msg, "; the plan is serial (CouldNotGenerateValidParallelPlan, statement cost %s), which T-SQL scalar functions cause before SQL Server 2019", costText(cost))
		}
	}
	if sev == 0 {
		return
	}
	fix := "move the logic into the query (an expression, a computed column, or an inline table-valued function with CROSS APPLY)"
	switch {
	case clr:
		fix += "; CLR functions are not inlined"
	case p.Statement.CEModelVersion >= 150:
		fix += "; the statement runs at compatibility level 150+ and the function was still not inlined: check sys.sql_modules.is_inlineable and the inlining requirements (no GETDATE()-like intrinsics, table variables or recursion, among others)"
	default:
		fix += "; on SQL Server 2019+ at compatibility level 150+, scalar UDF inlining does this automatically for inlineable functions (sys.sql_modules.is_inlineable = 1)"
	}
	p.Report(Finding{Severity: sev, NodeID: Node(n.NodeID), Message: msg.String(), Fix: fix, Evidence: ev})
}

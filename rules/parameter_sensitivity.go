package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// ParameterSensitivity reports a plan compiled for one parameter value
// and run with another whose rows it does not suit, and PSP-optimized
// plan variants.
var ParameterSensitivity = &Rule{
	Code:     "PL408",
	Name:     "parameter-sensitivity",
	Severity: Error,
	Summary:  "A plan compiled for one parameter value ran with a value whose rows it does not suit",
	Params: []Param{
		{"min_factor", 10, "estimate off by at least this factor (either direction) at an operator that compares the parameter"},
		{"warn_rows", 10000, "rows processed by that operator from which it is a warning"},
		{"warn_ms", 1000, "statement elapsed time from which it is a warning"},
		{"error_ms", 10000, "statement elapsed time from which a misestimate of at least error_factor is an error"},
		{"error_factor", 100, "misestimate factor that, with error_ms, makes an error"},
	},
	After: []string{"filtered-index-parameterized"},
	Doc: Doc{
		Problem: "A cached plan is compiled for the parameter values of its first execution (parameter sniffing) and " +
			"reused for every other value. When values select very different row counts — a queue's `Status = @Status` " +
			"for the few pending rows versus millions of finished ones, a customer with 27 orders versus one with " +
			"600,000 — the plan that suits one is a scan, a spill or a million lookups for the other.",
		Evidence: "An actual plan's `ParameterList` gives each parameter's `ParameterCompiledValue` and " +
			"`ParameterRuntimeValue`. planlint reports a parameter whose two values differ when an operator that " +
			"compares it (seek or residual predicate) was misestimated by at least `min_factor`: the value the plan was " +
			"built for selects other rows than the value it ran with. One finding per parameter, at that operator. A " +
			"PSP-optimized plan (SQL Server 2022: a `Dispatcher` with `ParameterSensitivePredicate`, `QueryVariantID`) " +
			"is reported at info with the cardinality range the variant serves.",
		Example: "```sql\nEXEC sp_executesql N'SELECT OrderId FROM dbo.Orders WHERE CustomerId = @CustomerId',\n" +
			"  N'@CustomerId int', @CustomerId = 27;\n-- compiled for @CustomerId = 1 (666,693 rows estimated: a parallel scan of 2,000,000 rows);\n" +
			"-- customer 27 has 27 orders\n```",
		Fix: "Choose per statement: `OPTION (RECOMPILE)` when a compile per execution is cheap next to the execution; a " +
			"dedicated query for the values that need their own plan (the queue case: a literal `WHERE Status = 0` for " +
			"pending work, which can also use a filtered index); `OPTIMIZE FOR (@p = value)` when one value is typical; " +
			"on SQL Server 2022 at compatibility level 160, parameter-sensitive plan optimization keeps up to three plans " +
			"by the predicate's cardinality.",
		FalseAlarms: "Different values are normal: without a misestimate at an operator that compares the parameter, the " +
			"plan suits both and nothing is reported. A misestimate whose compiled and runtime values agree is not " +
			"parameter sensitivity (see row-estimate-skew). This rule reads one plan; several plans of one query, and the " +
			"spread of one plan's executions, from the plan cache or Query Store are compared by plan-variance (PL415).",
		References: []string{
			"https://learn.microsoft.com/en-us/sql/relational-databases/performance/parameter-sensitive-plan-optimization",
			"https://learn.microsoft.com/en-us/sql/relational-databases/query-processing-architecture-guide#parameter-sensitivity",
		},
	},
	Run: runParameterSensitivity,
}

func init() { register(ParameterSensitivity) }

func runParameterSensitivity(p *Pass) {
	explained := map[string]bool{}
	for _, f := range p.Prior("filtered-index-parameterized") {
		if name, ok := f.Evidence["parameter"].(string); ok {
			explained[strings.ToLower(name)] = true
		}
	}
	for _, q := range p.Plans() {
		reportPSPVariant(p, q.QueryPlan)
		names, uses := variableUses(q.QueryPlan)
		for _, name := range names {
			prm := findParameter(q.QueryPlan, name)
			if prm == nil || !prm.HasCompiled || !prm.HasRuntime || prm.CompiledValue == prm.RuntimeValue || explained[strings.ToLower(name)] {
				continue
			}
			reportSniffed(p, q.QueryPlan, *prm, uses[strings.ToLower(name)])
		}
	}
}

func reportSniffed(p *Pass, q *plan.QueryPlan, prm plan.Parameter, nodes []*plan.RelOp) {
	n, factor, under := worstMisestimate(nodes, p.Param("min_factor"))
	if n == nil {
		return
	}
	rows := rowsProcessed(n)
	est, act, _ := actualPerExecution(n)
	ev := map[string]any{"parameter": prm.Name, "compiled_value": prm.CompiledValue, "runtime_value": prm.RuntimeValue,
		"estimated_rows_per_execution": round(est, 2), "actual_rows_per_execution": round(act, 2), "factor": round(factor, 1), "rows_processed": rows}
	if prm.DataType != "" {
		ev["data_type"] = prm.DataType
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "the plan was compiled for %s = %s and ran with %s: %s", prm.Name, prm.CompiledValue, prm.RuntimeValue, misestimateText(n, factor, under))
	sev := gradeByImpact(p, q, rows, factor, ev, &msg)
	p.Report(Finding{Severity: sev, NodeID: Node(n.NodeID), Message: msg.String(), Evidence: ev, Fix: sensitivityFix(p.Statement, q, prm)})
}

func sensitivityFix(s *plan.Statement, q *plan.QueryPlan, prm plan.Parameter) string {
	recompile := "1) OPTION (RECOMPILE) on this statement, if a compile per execution is acceptable"
	if q.CompileCPUMs > 0 {
		recompile += fmt.Sprintf(" (this plan took %s ms of compile CPU)", units.Count(q.CompileCPUMs))
	}
	parts := []string{recompile,
		fmt.Sprintf("2) a dedicated statement for the values of %s that need their own plan (for a status or type column, a literal predicate per value, which can also use a filtered index)", prm.Name),
		fmt.Sprintf("3) OPTIMIZE FOR (%s = <typical value>) when one value is typical", prm.Name)}
	psp := "4) on SQL Server 2022+ at compatibility level 160, parameter-sensitive plan optimization keeps up to three plans by the predicate's cardinality"
	if s.CEModelVersion > 0 && s.CEModelVersion < 160 {
		psp += fmt.Sprintf(" (this statement was compiled under cardinality model %d)", s.CEModelVersion)
	}
	return strings.Join(append(parts, psp), "; ")
}

// reportPSPVariant describes a PSP-optimized plan variant, once per plan.
func reportPSPVariant(p *Pass, q *plan.QueryPlan) {
	s := p.Statement
	if len(s.PSPPredicates) == 0 && q.QueryVariantID == 0 {
		return
	}
	ev := map[string]any{"query_variant_id": q.QueryVariantID}
	msg := fmt.Sprintf("parameter-sensitive plan optimization: this plan is variant %d of the query", q.QueryVariantID)
	var ranges []string
	for _, psp := range s.PSPPredicates {
		ranges = append(ranges, fmt.Sprintf("%s with an estimated cardinality between %s and %s rows", psp.Predicate, units.Count(psp.Low), units.Count(psp.High)))
	}
	if len(ranges) > 0 {
		ev["predicates"] = ranges
		msg += ", for " + strings.Join(ranges, " and ")
	}
	msg += "; other values of the parameter run other variants, so compare the variants' plans (Query Store keeps each) before changing this one"
	p.Report(Finding{Severity: Info, Message: msg, Evidence: ev})
}

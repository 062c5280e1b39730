package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/plan"
)

// LocalVariable reports predicates on local variables, which the optimizer
// estimates from the column's density instead of the value.
var LocalVariable = &Rule{
	Code:     "PL409",
	Name:     "local-variable",
	Severity: Warning,
	Summary:  "A predicate on a local variable is estimated from density, not from the value",
	Params: []Param{
		{"min_cost", 1, "estimated statement cost below which an estimated plan is not reported"},
		{"min_factor", 10, "on actual plans, estimate off by at least this factor at the comparing operator"},
		{"warn_rows", 10000, "rows processed by that operator from which it is a warning"},
		{"warn_ms", 1000, "statement elapsed time from which it is a warning"},
	},
	After: []string{"filtered-index-parameterized", "optimize-for-unknown", "implicit-conversion"},
	Doc: Doc{
		Problem: "The value of a variable declared in the batch or procedure (`DECLARE @s tinyint = 0`) is unknown when " +
			"the statement is compiled, so the optimizer estimates `col = @s` from the column's average density (and " +
			"`col > @s` as a fixed 30% guess) whatever the value. On a skewed column — a queue's Status, with a few " +
			"pending rows among millions of finished ones — the estimate suits neither, and a filtered index on the value " +
			"cannot be matched at all.",
		Evidence: "A seek or residual predicate compares a column with `@name` that is not a parameter of the plan: " +
			"absent from `ParameterList` (estimated plans) or listed with a `ParameterRuntimeValue` and no " +
			"`ParameterCompiledValue` (actual plans). On actual plans planlint reports it when the comparing operator was " +
			"misestimated; on estimated plans of statements that are not trivial it is context (info). With " +
			"`OPTION (RECOMPILE)` the value is embedded and no variable appears.",
		Example: "```sql\nDECLARE @Status tinyint = 0;\nSELECT TOP (20) WorkId FROM dbo.Work WHERE Status = @Status ORDER BY CreatedAt;\n" +
			"-- estimated from density: 1,666,667 rows of 5,000,000, though 200 are pending\n```",
		Fix: "Pass the value as a parameter (`sp_executesql N'… WHERE Status = @Status', N'@Status tinyint', @Status = @s`, " +
			"or a stored procedure parameter) so it is sniffed at compile time, or add `OPTION (RECOMPILE)` so the " +
			"statement is compiled with the variable's current value. For a fixed value such as a queue's pending status, " +
			"write the literal (`WHERE Status = 0`), which also lets a filtered index match.",
		FalseAlarms: "On a column without skew the density estimate is right and nothing is reported on actual plans. A " +
			"variable used on purpose to get an average plan (the effect of OPTIMIZE FOR UNKNOWN) is a choice: suppress " +
			"the finding with a reason. An operator whose column is converted to the variable's type is left to implicit-conversion, which explains both the scan and the estimate.",
		References: []string{
			"https://learn.microsoft.com/en-us/sql/relational-databases/query-processing-architecture-guide#parameter-sensitivity",
			"https://learn.microsoft.com/en-us/sql/relational-databases/statistics/statistics#query-optimizer-uses-statistics",
		},
	},
	Run: runLocalVariable,
}

func init() { register(LocalVariable) }

func runLocalVariable(p *Pass) {
	if p.Statement.OptmLevel == "TRIVIAL" {
		return
	}
	explained := explainedVariables(p, "filtered-index-parameterized", "optimize-for-unknown")
	// A conversion on the column explains its operator's estimate and scan.
	converted := map[int]bool{}
	for _, f := range p.Prior("implicit-conversion") {
		if f.NodeID != nil {
			converted[*f.NodeID] = true
		}
	}
	for _, q := range p.Plans() {
		// One finding per operator: variables compared in the same
		// predicate share one estimate.
		var order []*plan.RelOp
		vars := map[*plan.RelOp][]string{}
		equality := map[*plan.RelOp]bool{}
		for _, c := range comparisons(q.QueryPlan) {
			name := c.parameter()
			if name == "" || explained[strings.ToLower(name)] || converted[c.Node.NodeID] {
				continue
			}
			if prm := findParameter(q.QueryPlan, name); prm != nil && prm.HasCompiled {
				continue
			}
			if vars[c.Node] == nil {
				order = append(order, c.Node)
			}
			if !containsFold(vars[c.Node], name) {
				vars[c.Node] = append(vars[c.Node], name)
			}
			equality[c.Node] = equality[c.Node] || c.Op == "EQ"
		}
		reportLocalVariables(p, q.QueryPlan, order, vars, equality)
	}
}

// explainedVariables lists the parameters and variables (lower case) that
// the given rules' findings on this statement name in evidence "parameter".
func explainedVariables(p *Pass, rules ...string) map[string]bool {
	out := map[string]bool{}
	for _, r := range rules {
		for _, f := range p.Prior(r) {
			if name, ok := f.Evidence["parameter"].(string); ok {
				out[strings.ToLower(name)] = true
			}
		}
	}
	return out
}

// reportLocalVariables reports, on an estimated plan, the first operator
// that compares each variable; on an actual plan, per variable, the
// operator whose estimate was furthest off.
func reportLocalVariables(p *Pass, q *plan.QueryPlan, order []*plan.RelOp, vars map[*plan.RelOp][]string, equality map[*plan.RelOp]bool) {
	done := map[string]bool{}
	if len(order) > 0 && order[0].RunTime != nil {
		// Actual plan: group the misestimated operators by variable.
		byVar := map[string][]*plan.RelOp{}
		var names []string
		for _, n := range order {
			for _, v := range vars[n] {
				k := strings.ToLower(v)
				if byVar[k] == nil {
					names = append(names, v)
				}
				byVar[k] = append(byVar[k], n)
			}
		}
		reported := map[*plan.RelOp]bool{}
		for _, v := range names {
			n, factor, under := worstMisestimate(byVar[strings.ToLower(v)], p.Param("min_factor"))
			if n == nil || reported[n] {
				continue
			}
			reported[n] = true
			reportActualLocalVariable(p, q, n, vars[n], equality[n], factor, under)
		}
		return
	}
	if p.Statement.SubtreeCost < p.Param("min_cost") {
		return
	}
	for _, n := range order {
		var fresh []string
		for _, v := range vars[n] {
			if !done[strings.ToLower(v)] {
				fresh = append(fresh, v)
				done[strings.ToLower(v)] = true
			}
		}
		if len(fresh) == 0 {
			continue
		}
		ev := map[string]any{"parameter": fresh[0], "variables": fresh, "estimated_rows": round(n.EstimateRows, 2)}
		p.Report(Finding{Severity: Info, NodeID: Node(n.NodeID), Evidence: ev, Fix: localVariableFix(fresh),
			Message: fmt.Sprintf("%s %s: %s (node %d) is estimated %s (%s), whatever the value",
				quoteList(fresh), isAreVariable(len(fresh)), n.DisplayName(), n.NodeID, guessKind(equality[n]), rowsWord(n.EstimateRows))})
	}
}

func isAreVariable(n int) string {
	if n == 1 {
		return "is a local variable"
	}
	return "are local variables"
}

// guessKind says how the optimizer estimates a comparison with an unknown
// value: equality from the column's density, ranges by a fixed guess.
func guessKind(equality bool) string {
	if equality {
		return "from the column's average density"
	}
	return "with a fixed guess for a range on an unknown value"
}

func localVariableFix(names []string) string {
	return fmt.Sprintf("pass %s as %s (sp_executesql with typed parameters, or procedure parameters) so the values are sniffed at compile time, "+
		"or add OPTION (RECOMPILE) so the statement is compiled with the current values; for a fixed value (a queue's pending status) write the literal, which also lets a filtered index match",
		quoteList(names), map[bool]string{true: "a parameter", false: "parameters"}[len(names) == 1])
}

func reportActualLocalVariable(p *Pass, q *plan.QueryPlan, n *plan.RelOp, names []string, equality bool, factor float64, under bool) {
	rows := rowsProcessed(n)
	ev := map[string]any{"parameter": names[0], "variables": names, "factor": round(factor, 1), "rows_processed": rows}
	var runtimeValues []string
	for _, v := range names {
		if prm := findParameter(q, v); prm != nil && prm.HasRuntime {
			runtimeValues = append(runtimeValues, v+" = "+prm.RuntimeValue)
		}
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "%s %s, so the optimizer estimated %s instead of from the value", quoteList(names), isAreVariable(len(names)), guessKind(equality))
	if len(runtimeValues) > 0 {
		ev["runtime_values"] = runtimeValues
		fmt.Fprintf(&msg, " (%s at run time)", strings.Join(runtimeValues, ", "))
	}
	fmt.Fprintf(&msg, ": %s", misestimateText(n, factor, under))
	sev := gradeByImpact(p, q, rows, factor, ev, &msg)
	p.Report(Finding{Severity: sev, NodeID: Node(n.NodeID), Message: msg.String(), Evidence: ev, Fix: localVariableFix(names)})
}

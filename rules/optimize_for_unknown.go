package rules

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/planlint/planlint/plan"
)

// OptimizeForUnknown reports statements that ask for density estimates on
// purpose (OPTIMIZE FOR UNKNOWN, DISABLE_PARAMETER_SNIFFING).
var OptimizeForUnknown = &Rule{
	Code:     "PL410",
	Name:     "optimize-for-unknown",
	Severity: Warning,
	Summary:  "OPTIMIZE FOR UNKNOWN estimates from density on purpose; on skewed data it suits no value",
	Params: []Param{
		{"min_factor", 10, "on actual plans, estimate off by at least this factor at an operator that compares the parameter"},
		{"warn_rows", 10000, "rows processed by that operator from which it is a warning"},
		{"warn_ms", 1000, "statement elapsed time from which it is a warning"},
	},
	Doc: Doc{
		Problem: "`OPTION (OPTIMIZE FOR UNKNOWN)`, `OPTIMIZE FOR (@p UNKNOWN)` and `USE HINT ('DISABLE_PARAMETER_SNIFFING')` " +
			"make the optimizer ignore the parameter's value and estimate from the column's average density — a stable " +
			"average plan. On skewed data (a status column with a few pending rows and millions of finished ones) the " +
			"average is wrong for every value that matters.",
		Evidence: "The hint in the statement text. On an actual plan, an operator that compares the parameter whose " +
			"estimate was off by at least `min_factor` shows what the average cost; without one, the hint is context " +
			"(info).",
		Example: "```sql\nSELECT TOP (20) WorkId FROM dbo.Work WHERE Status = @Status ORDER BY CreatedAt\nOPTION (OPTIMIZE FOR UNKNOWN);\n```",
		Fix: "On skewed columns prefer a dedicated statement per value class (a literal `WHERE Status = 0` for the pending " +
			"rows), `OPTIMIZE FOR (@p = <typical value>)`, `OPTION (RECOMPILE)`, or on SQL Server 2022 parameter-sensitive " +
			"plan optimization; keep UNKNOWN where the column is evenly distributed.",
		FalseAlarms: "Where the data is even, the density estimate is right and the hint only buys plan stability: the " +
			"finding stays at info.",
		References: []string{"https://learn.microsoft.com/en-us/sql/t-sql/queries/hints-transact-sql-query#optimize-for-unknown"},
	},
	Run: runOptimizeForUnknown,
}

func init() { register(OptimizeForUnknown) }

var (
	unknownAll     = regexp.MustCompile(`(?i)OPTIMIZE\s+FOR\s+UNKNOWN|DISABLE_PARAMETER_SNIFFING`)
	unknownList    = regexp.MustCompile(`(?i)OPTIMIZE\s+FOR\s*\(([^)]*)\)`)
	unknownOneName = regexp.MustCompile(`(?i)(@[\w@#$]+)\s+UNKNOWN\b`)
)

// unknownHint reads the statement text: whether every parameter is
// estimated as unknown, and which ones are by name.
func unknownHint(text string) (all bool, names map[string]string) {
	names = map[string]string{}
	all = unknownAll.MatchString(text)
	for _, m := range unknownList.FindAllStringSubmatch(text, -1) {
		for _, u := range unknownOneName.FindAllStringSubmatch(m[1], -1) {
			names[strings.ToLower(u[1])] = u[1]
		}
	}
	return all, names
}

func runOptimizeForUnknown(p *Pass) {
	all, named := unknownHint(p.Statement.Text)
	if !all && len(named) == 0 {
		return
	}
	hint := "OPTIMIZE FOR UNKNOWN"
	if m := unknownAll.FindString(p.Statement.Text); strings.EqualFold(m, "DISABLE_PARAMETER_SNIFFING") {
		hint = "USE HINT ('DISABLE_PARAMETER_SNIFFING')"
	}
	for _, q := range p.Plans() {
		names, uses := variableUses(q.QueryPlan)
		reported := false
		for _, name := range names {
			key := strings.ToLower(name)
			if !all && named[key] == "" {
				continue
			}
			h := hint
			if named[key] != "" {
				h = "OPTIMIZE FOR (" + named[key] + " UNKNOWN)"
			}
			if reportUnknown(p, q.QueryPlan, name, h, uses[key]) {
				reported = true
			}
		}
		if !reported {
			p.Report(Finding{Severity: Info, Evidence: map[string]any{"hint": hint},
				Message: fmt.Sprintf("the statement uses %s: its parameters are estimated from density, not from their values", hint),
				Fix:     unknownFix("the parameter")})
		}
	}
}

func unknownFix(name string) string {
	return fmt.Sprintf("on a skewed column prefer a dedicated statement per value class (a literal predicate for the few rows that matter), OPTIMIZE FOR (%s = <typical value>), OPTION (RECOMPILE), or on SQL Server 2022 parameter-sensitive plan optimization; keep UNKNOWN where the data is even", name)
}

func reportUnknown(p *Pass, q *plan.QueryPlan, name, hint string, nodes []*plan.RelOp) bool {
	ev := map[string]any{"parameter": name, "hint": hint}
	n, factor, under := worstMisestimate(nodes, p.Param("min_factor"))
	if n == nil {
		at := nodes[0]
		ev["estimated_rows"] = round(at.EstimateRows, 2)
		p.Report(Finding{Severity: Info, NodeID: Node(at.NodeID), Evidence: ev, Fix: unknownFix(name),
			Message: fmt.Sprintf("%s makes %s (node %d) estimate %s from the column's density (%s), not from its value", hint, at.DisplayName(), at.NodeID, name, rowsWord(at.EstimateRows))})
		return true
	}
	rows := rowsProcessed(n)
	ev["factor"], ev["rows_processed"] = round(factor, 1), rows
	var msg strings.Builder
	fmt.Fprintf(&msg, "%s estimated %s from the column's density, and the data is skewed: %s", hint, name, misestimateText(n, factor, under))
	sev := gradeByImpact(p, q, rows, factor, ev, &msg)
	p.Report(Finding{Severity: sev, NodeID: Node(n.NodeID), Message: msg.String(), Evidence: ev, Fix: unknownFix(name)})
	return true
}

package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// TableVariable reports a table variable (or table-valued parameter) read
// with the optimizer's fixed guess while it held far more rows.
var TableVariable = &Rule{
	Code:     "PL411",
	Name:     "table-variable",
	Severity: Warning,
	Summary:  "A table variable was estimated at a fixed guess and held far more rows",
	Params: []Param{
		{"min_ratio", 10, "actual rows per execution at least this many times the estimate"},
		{"info_rows", 100, "actual rows (all executions) from which the misestimate is reported at info"},
		{"warn_rows", 10000, "actual rows, or executions of a Nested Loops inner side it drives, from which it is a warning"},
	},
	Doc: Doc{
		Problem: "Table variables and table-valued parameters have no statistics. Unless the statement is compiled when " +
			"the variable already holds its rows (OPTION (RECOMPILE), or table variable deferred compilation at " +
			"compatibility level 150+ on SQL Server 2019, which uses the row count at first compilation and then reuses " +
			"the plan), the optimizer guesses 1 row. A plan built for one row — Nested Loops, no memory for sorts or " +
			"hashes, no parallelism — then runs for thousands.",
		Evidence: "On an actual plan, a scan or seek of an object whose name starts with `@` " +
			"(`Object Table=\"[@t]\"`) whose actual rows per execution (`RunTimeCountersPerThread/@ActualRows` over " +
			"`ActualExecutions`) are far above `EstimateRows`. When it feeds the outer input of a Nested Loops join, the " +
			"join's inner side ran once per row that was not planned for. Estimated plans do not show the actual row " +
			"count and are not reported.",
		Example: "```sql\nDECLARE @ids TABLE (Id int PRIMARY KEY);\nINSERT @ids SELECT WorkId FROM dbo.Work WHERE Status = 0; -- 50,000 rows\n" +
			"SELECT w.* FROM @ids i JOIN dbo.WorkDetail w ON w.WorkId = i.Id;  -- Table Scan [@ids]: estimated 1, actual 50,000\n```",
		Fix: "Use a temporary table (`CREATE TABLE #ids …`): it has statistics, so the estimate follows the rows. Or add " +
			"`OPTION (RECOMPILE)` to the statement that reads the variable, so it is compiled with the row count. On SQL " +
			"Server 2019+ at compatibility level 150 or higher, deferred compilation estimates from the first execution's " +
			"row count: that helps when the count is stable, not when the plan is reused for very different counts.",
		FalseAlarms: "A table variable that holds a handful of rows is fine: the rule needs `min_ratio` times the estimate " +
			"and at least `info_rows` rows, and is a warning only from `warn_rows` rows (or inner-side executions).",
		References: []string{
			"https://learn.microsoft.com/en-us/sql/relational-databases/performance/intelligent-query-processing-details#table-variable-deferred-compilation",
			"https://learn.microsoft.com/en-us/sql/t-sql/data-types/table-transact-sql#limitations-and-restrictions",
		},
	},
	Run: runTableVariable,
}

func init() { register(TableVariable) }

func runTableVariable(p *Pass) {
	for _, q := range p.Plans() {
		// One finding per table variable and statement: its reads share
		// one cause, the fixed estimate.
		var order []string
		reads := map[string][]*plan.RelOp{}
		for _, n := range q.Nodes {
			o := n.Access.Object()
			if !readsTable(n) || !isTableVariable(o) {
				continue
			}
			key := strings.ToLower(o.Table)
			if reads[key] == nil {
				order = append(order, key)
			}
			reads[key] = append(reads[key], n)
		}
		for _, key := range order {
			reportTableVariable(p, q.QueryPlan, reads[key])
		}
	}
}

// tvRead is one underestimated read (of a table variable or a table-valued
// function's result) with its misestimate and impact.
type tvRead struct {
	n                     *plan.RelOp
	est, act, total, exec float64
	join, inner           *plan.RelOp
	innerRows, innerExecs float64
	impact                float64
}

// underestimatedRead is a read (of a table variable, a table-valued
// function's result) whose actual rows per execution exceed the estimate
// by at least minRatio, with at least info_rows rows in all, and the work
// it drives; nil otherwise. Its impact is the larger of its rows and the
// rows of the work it drives.
func underestimatedRead(p *Pass, n *plan.RelOp, minRatio float64) *tvRead {
	est, act, ok := actualPerExecution(n)
	if !ok {
		return nil
	}
	total, _ := rowsOut(n)
	if underestimate(est, act) < minRatio || total < p.Param("info_rows") {
		return nil
	}
	r := &tvRead{n: n, est: est, act: act, total: total, impact: total}
	r.exec, _ = executions(n)
	r.join, r.inner, r.innerRows, r.innerExecs = drivenWork(n, minRatio)
	if r.innerRows > r.impact {
		r.impact = r.innerRows
	}
	return r
}

func reportTableVariable(p *Pass, q *plan.QueryPlan, nodes []*plan.RelOp) {
	minRatio := p.Param("min_ratio")
	var worst *tvRead
	var all []int
	for _, n := range nodes {
		r := underestimatedRead(p, n, minRatio)
		if r == nil {
			continue
		}
		all = append(all, n.NodeID)
		if worst == nil || r.impact > worst.impact {
			worst = r
		}
	}
	if worst == nil {
		return
	}
	n, o := worst.n, worst.n.Access.Object()
	ratio := underestimate(worst.est, worst.act)
	ev := objectEvidence(o)
	ev["estimated_rows_per_execution"] = round(worst.est, 2)
	ev["actual_rows_per_execution"] = round(worst.act, 2)
	ev["actual_rows"] = worst.total
	ev["executions"] = worst.exec
	ev["factor"] = round(ratio, 1)
	if len(all) > 1 {
		ev["misestimated_reads"] = all
	}

	kind := "table variable"
	if findParameter(q, o.Table) != nil {
		kind = "table-valued parameter"
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "%s %s was estimated at %s per execution and returned %s", kind, o.Table, rowsWord(worst.est), units.Count(worst.act))
	if worst.exec > 1 {
		fmt.Fprintf(&msg, " per execution over %s executions", units.Count(worst.exec))
	}
	fmt.Fprintf(&msg, " (%s× under)", factorText(ratio))
	if worst.join != nil {
		ev["driven_join_node"] = worst.join.NodeID
		ev["inner_node"] = worst.inner.NodeID
		ev["inner_rows"] = worst.innerRows
		ev["inner_executions"] = worst.innerExecs
		fmt.Fprintf(&msg, "; the plan built for that guess runs the inner side of Nested Loops (node %d), %s (node %d), %s times for %s rows",
			worst.join.NodeID, worst.inner.DisplayName(), worst.inner.NodeID, units.Count(worst.innerExecs), units.Count(worst.innerRows))
	}
	if len(all) > 1 {
		fmt.Fprintf(&msg, "; %d reads of %s in this statement are misestimated the same way (nodes %s)", len(all), o.Table, joinInts(all))
	}
	sev := Info
	if worst.impact >= p.Param("warn_rows") {
		sev = Warning
	}
	p.Report(Finding{Severity: sev, NodeID: Node(n.NodeID), Message: msg.String(),
		Fix: tableVariableFix(p.Statement, kind, o.Table), Evidence: ev})
}

func tableVariableFix(s *plan.Statement, kind, name string) string {
	var fix string
	if kind == "table-valued parameter" {
		fix = fmt.Sprintf("copy %s into a temporary table (SELECT … INTO #rows FROM %s) and read that, or add OPTION (RECOMPILE) to this statement so it is compiled with the parameter's row count", name, name)
	} else {
		fix = fmt.Sprintf("replace %s with a temporary table (CREATE TABLE #%s …), which has statistics, or add OPTION (RECOMPILE) to this statement so it is compiled with the variable's row count", name, strings.TrimPrefix(name, "@"))
	}
	switch {
	case s.CEModelVersion >= 150:
		fix += "; deferred compilation (compatibility level 150+) estimated from the row count at first compile, so a reused plan keeps that guess: OPTION (RECOMPILE) is the reliable fix"
	case s.CEModelVersion > 0:
		fix += fmt.Sprintf("; the statement was compiled under cardinality model %d: at compatibility level 150+ (SQL Server 2019) table variable deferred compilation estimates from the actual row count", s.CEModelVersion)
	}
	return fix
}

// rowsWord is "1 row" or "N rows" for an estimate.
func rowsWord(n float64) string {
	if units.Count(n) == "1" {
		return "1 row"
	}
	return units.Count(n) + " rows"
}

// factorText formats a misestimate factor: one decimal below 10, whole above.
func factorText(f float64) string {
	if f < 10 {
		return fmt.Sprintf("%.1f", f)
	}
	return units.Count(f)
}

package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// TableValuedFunction reports a multi-statement table-valued function: its
// fixed row estimate against the rows it returned, and how often its body ran.
var TableValuedFunction = &Rule{
	Code:     "PL412",
	Name:     "table-valued-function",
	Severity: Warning,
	Summary:  "A multi-statement table-valued function is estimated at a fixed guess or runs once per outer row",
	Params: []Param{
		{"min_ratio", 10, "actual rows per execution at least this many times the estimate is a misestimate"},
		{"info_rows", 100, "rows (all executions) from which a misestimate is reported at info"},
		{"warn_rows", 10000, "rows, or rows of a Nested Loops inner side it drives, from which a misestimate is a warning"},
		{"info_executions", 100, "executions of the function's body from which it is reported at info"},
		{"warn_executions", 1000, "executions of the function's body from which it is a warning"},
	},
	Doc: Doc{
		Problem: "A multi-statement table-valued function (`RETURNS @t TABLE (…) AS BEGIN … END`) is a black box to the " +
			"optimizer: its result gets a fixed estimate (1 row before SQL Server 2014's cardinality estimator, 100 " +
			"after), and when its arguments come from an outer row (CROSS APPLY) its whole body runs once per row. " +
			"Plans built on the guess choose Nested Loops and small memory grants for results of any size.",
		Evidence: "Two operators under a Sequence: `Table-valued function` (`TableValuedFunction/Object`, the call " +
			"that fills the result table; it reports no output rows) and a Table Scan of the same object (the read). " +
			"On an actual plan, the read's actual rows per execution against `EstimateRows`, and the fill's " +
			"`ActualExecutions` (how often the body ran). System functions (no schema, e.g. XML readers) are not " +
			"reported. On estimated plans the fixed estimate is reported at info.",
		Example: "```sql\nCREATE FUNCTION dbo.OpenWork (@Queue int) RETURNS @r TABLE (WorkId bigint) AS\n" +
			"BEGIN INSERT @r SELECT WorkId FROM dbo.Work WHERE QueueId = @Queue AND Status = 0; RETURN; END;\n" +
			"SELECT q.Name, w.WorkId FROM dbo.Queue q CROSS APPLY dbo.OpenWork(q.QueueId) w;\n" +
			"-- the function body runs once per queue; each read is estimated at 100 rows\n```",
		Fix: "Rewrite it as an inline table-valued function (`RETURNS TABLE AS RETURN (SELECT …)`): the optimizer " +
			"expands it into the calling query, with statistics and joins instead of one call per row. If it must stay " +
			"multi-statement, interleaved execution (SQL Server 2017+, compatibility level 140+) uses the actual row count " +
			"for read-only statements that call it without outer references; or materialize its result into a " +
			"temporary table first.",
		FalseAlarms: "A function called once that returns about what was guessed costs nothing extra; the rule needs a " +
			"`min_ratio` misestimate with `info_rows` rows, or `info_executions` calls.",
		References: []string{
			"https://learn.microsoft.com/en-us/sql/relational-databases/user-defined-functions/create-user-defined-functions-database-engine#TVF",
			"https://learn.microsoft.com/en-us/sql/relational-databases/performance/intelligent-query-processing-details#interleaved-execution-for-mstvfs",
		},
	},
	Run: runTableValuedFunction,
}

func init() { register(TableValuedFunction) }

// userFunction reports whether a Table-valued function operator calls a
// user function: it has a schema (system readers such as "XML Reader" and
// internal rowsets such as SYSLANG have none). Called with constant
// arguments, a multi-statement function is filled once under a Sequence
// that then reads its result table; called with outer references, the
// operator sits on the inner side of a Nested Loops join and runs per row.
func userFunction(n *plan.RelOp) (plan.ObjectRef, bool) {
	if n.PhysicalOp != "Table-valued function" {
		return plan.ObjectRef{}, false
	}
	o := n.Access.Object()
	if o.Table == "" || o.Schema == "" || strings.EqualFold(o.Schema, "sys") {
		return plan.ObjectRef{}, false
	}
	return o, true
}

func runTableValuedFunction(p *Pass) {
	for _, q := range p.Plans() {
		var order []string
		fills := map[string][]*plan.RelOp{}
		objects := map[string]plan.ObjectRef{}
		for _, n := range q.Nodes {
			if o, ok := userFunction(n); ok {
				key := strings.ToLower(o.TableName(true))
				if fills[key] == nil {
					order = append(order, key)
					objects[key] = o
				}
				fills[key] = append(fills[key], n)
			}
		}
		for _, key := range order {
			o := objects[key]
			var reads []*plan.RelOp
			for _, n := range q.Nodes {
				if readsTable(n) && n.Access.Object().SameTable(o) {
					reads = append(reads, n)
				}
			}
			reportFunction(p, o, fills[key], reads)
		}
	}
}

func reportFunction(p *Pass, o plan.ObjectRef, fills, reads []*plan.RelOp) {
	name := o.TableName(false)
	ev := objectEvidence(o)
	fix := fmt.Sprintf("if %s is a multi-statement T-SQL function, rewrite it as an inline table-valued function (RETURNS TABLE AS RETURN (SELECT …)) so the optimizer expands it into this query with real estimates; "+
		"if it must stay multi-statement, materialize its result into a temporary table first, or rely on interleaved execution (SQL Server 2017+, compatibility level 140+) for read-only calls without outer references", name)

	if fills[0].RunTime == nil {
		// Estimated plan: the fixed guess and the planned calls are
		// context for the reviewer.
		var calls float64
		for _, f := range fills {
			calls += f.EstimatedExecutions()
		}
		var parts []string
		at := fills[0]
		if len(reads) > 0 {
			at = reads[0]
			ev["estimated_rows"] = round(at.EstimateRows, 2)
			parts = append(parts, fmt.Sprintf("its result is estimated at a fixed %s; the plan does not know how many rows it returns", rowsWord(at.EstimateRows)))
		}
		if calls >= p.Param("info_executions") {
			ev["estimated_executions"] = round(calls, 0)
			parts = append(parts, fmt.Sprintf("it is planned to run %s times, once per outer row", units.Count(calls)))
		}
		if len(parts) == 0 {
			return
		}
		p.Report(Finding{Severity: Info, NodeID: Node(at.NodeID), Evidence: ev, Fix: fix,
			Message: fmt.Sprintf("table-valued function %s: %s", name, strings.Join(parts, "; "))})
		return
	}

	var calls, most float64
	busiest := fills[0]
	for _, f := range fills {
		e, _ := executions(f)
		calls += e
		if e > most {
			most, busiest = e, f
		}
	}
	minRatio := p.Param("min_ratio")
	var worst *plan.RelOp
	var worstEst, worstAct, worstImpact, worstRows float64
	var join, inner *plan.RelOp
	var innerRows, innerExecs float64
	for _, n := range reads {
		r := underestimatedRead(p, n, minRatio)
		if r == nil {
			continue
		}
		if worst == nil || r.impact > worstImpact {
			worst, worstEst, worstAct, worstImpact, worstRows = n, r.est, r.act, r.impact, r.total
			join, inner, innerRows, innerExecs = r.join, r.inner, r.innerRows, r.innerExecs
		}
	}

	var parts []string
	sev := Severity(0)
	at := busiest
	if calls >= p.Param("info_executions") {
		ev["executions"] = calls
		parts = append(parts, fmt.Sprintf("it ran %s times, once per outer row, each call running the function's body", units.Count(calls)))
		sev = Info
		if calls >= p.Param("warn_executions") {
			sev = Warning
		}
	}
	if worst != nil {
		ev["estimated_rows_per_execution"] = round(worstEst, 2)
		ev["actual_rows_per_execution"] = round(worstAct, 2)
		ev["actual_rows"] = worstRows
		ev["factor"] = round(underestimate(worstEst, worstAct), 1)
		part := fmt.Sprintf("its result was estimated at %s per read and returned %s (%s× under)",
			rowsWord(worstEst), units.Count(worstAct), factorText(underestimate(worstEst, worstAct)))
		if join != nil {
			ev["driven_join_node"], ev["inner_node"], ev["inner_rows"], ev["inner_executions"] = join.NodeID, inner.NodeID, innerRows, innerExecs
			part += fmt.Sprintf("; the plan built for that guess runs the inner side of Nested Loops (node %d), %s (node %d), %s times for %s rows",
				join.NodeID, inner.DisplayName(), inner.NodeID, units.Count(innerExecs), units.Count(innerRows))
		}
		parts = append(parts, part)
		s := Info
		if worstImpact >= p.Param("warn_rows") {
			s = Warning
		}
		if s > sev || sev == 0 {
			sev = s
		}
		if worstImpact >= calls {
			at = worst
		}
	}
	if sev == 0 {
		return
	}
	p.Report(Finding{Severity: sev, NodeID: Node(at.NodeID), Evidence: ev, Fix: fix,
		Message: fmt.Sprintf("table-valued function %s: %s", name, strings.Join(parts, "; "))})
}

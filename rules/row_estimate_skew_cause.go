package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// skewCause is what the plan shows about why an estimate is off.
type skewCause struct {
	kind     string // evidence "cause"
	subject  string // what several merged reads share, e.g. "table variable @t"
	detail   string // message clause
	fix      string
	mergeKey string // reads with the same key are one finding; "" never merges
}

// skewCauseOf names the cause of n's misestimate that the plan shows, in
// order of certainty: a table variable, a multi-statement table-valued
// function, sniffed parameter values, a local variable, a predicate the
// optimizer cannot estimate, values beyond the histogram, modified
// statistics; otherwise what to check.
func skewCauseOf(q *plan.QueryPlan, n *plan.RelOp, s plan.RowSkew) skewCause {
	src := n
	if n.Access == nil {
		if t := singleTableSource(n); t != nil {
			src = t
		}
	}
	o := src.Access.Object()
	table := strings.Trim(o.Table, "[]")
	if strings.HasPrefix(table, "@") {
		return skewCause{kind: "table-variable", subject: "table variable " + table, mergeKey: "tv:" + strings.ToLower(table),
			detail: table + " is a table variable: it has no statistics, so its row count was a fixed guess",
			fix: fmt.Sprintf("replace %s with a temp table (#%s), which has statistics, or add OPTION (RECOMPILE) to the statement "+
				"so it compiles with the table variable's row count; on SQL Server 2019+ compatibility level 150 defers the "+
				"compilation until the table variable is filled", table, strings.TrimPrefix(table, "@"))}
	}
	if tvf := tableValuedFunction(q, src, o); tvf != "" {
		return skewCause{kind: "table-valued-function", subject: "function " + tvf, mergeKey: "tvf:" + strings.ToLower(tvf),
			detail: fmt.Sprintf("%s is a multi-statement table-valued function: its result has a fixed estimate of %s rows", tvf, units.Count(s.EstimatedPerExec)),
			fix: fmt.Sprintf("rewrite %s as an inline table-valued function (RETURNS TABLE AS RETURN SELECT ...), or on SQL Server 2017+ "+
				"use compatibility level 140 or higher so interleaved execution uses its actual row count; alternatively load its "+
				"result into a temp table first", tvf)}
	}
	params := referencedParameters(q, n, src)
	for _, pr := range params {
		if pr.HasCompiled && pr.HasRuntime && pr.CompiledValue != pr.RuntimeValue {
			return skewCause{kind: "parameter-values",
				detail: fmt.Sprintf("the plan was compiled for %s = %s and ran with %s", pr.Name, clip(pr.CompiledValue), clip(pr.RuntimeValue)),
				fix: fmt.Sprintf("the plan suits %s = %s, not %s: add OPTION (RECOMPILE) if the statement runs rarely, "+
					"OPTIMIZE FOR (%s = <typical value>) if one value is typical, or run a separate query per kind of value "+
					"(on SQL Server 2022 parameter sensitive plan optimization does this)", pr.Name, clip(pr.CompiledValue), clip(pr.RuntimeValue), pr.Name)}
		}
	}
	for _, pr := range params {
		if !pr.HasCompiled {
			return skewCause{kind: "local-variable",
				detail: fmt.Sprintf("%s is a local variable: the optimizer estimated from the column's average density, not from its value", pr.Name),
				fix: fmt.Sprintf("let the optimizer see the value of %s: add OPTION (RECOMPILE), or pass it as a parameter "+
					"(sp_executesql or a stored procedure parameter)", pr.Name)}
		}
	}
	if expr := unestimable(q, n, src); expr != "" {
		return skewCause{kind: "unestimable-predicate",
			detail: fmt.Sprintf("the optimizer cannot estimate %s from statistics", clip(expr)),
			fix: "rewrite the predicate so the column stands alone (no function, conversion or arithmetic on it; matching data " +
				"types), or add a computed column for the expression, which gets statistics"}
	}
	if n.PhysicalOp == "Filter" && n.Predicate != nil {
		return skewCause{kind: "filter-predicate",
			detail: fmt.Sprintf("the Filter's predicate %s was estimated with a selectivity guess", clip(n.Predicate.String())),
			fix: "a predicate left to a Filter after the joins cannot use index statistics: rewrite it as plain column " +
				"comparisons that the index access can apply, or store the rows it needs in a temp table first so the rest " +
				"of the query is estimated from their real count"}
	}
	if src.Access != nil && table != "" {
		name := o.TableName(false)
		if st := modifiedStatistics(q, src, o); st != nil {
			if s.Under && rangeSeek(src) {
				return skewCause{kind: "ascending-key",
					detail: fmt.Sprintf("the range predicate reads values past the statistics %s (%s modifications since %s)", st.Statistics, units.Count(st.ModificationCount), st.LastUpdate),
					fix: fmt.Sprintf("UPDATE STATISTICS %s %s WITH FULLSCAN, and schedule it as often as new key values arrive; "+
						"under the legacy cardinality estimator the newer one (model 120+) estimates past the histogram", name, st.Statistics)}
			}
			return skewCause{kind: "stale-statistics",
				detail: fmt.Sprintf("statistics %s had %s modifications since their update (%s)", st.Statistics, units.Count(st.ModificationCount), st.LastUpdate),
				fix: fmt.Sprintf("UPDATE STATISTICS %s %s WITH FULLSCAN (filtered statistics need their own schedule: the "+
					"auto-update threshold counts changes to the whole table)", name, st.Statistics)}
		}
		if src == n {
			return skewCause{kind: "unknown",
				fix: fmt.Sprintf("compare the estimate with the histogram (DBCC SHOW_STATISTICS ('%s', <statistics>)) for this "+
					"predicate; if the histogram is out of date, UPDATE STATISTICS %s WITH FULLSCAN", name, name)}
		}
	}
	return skewCause{kind: "join",
		fix: "the inputs' estimates hold but their combination does not (correlated or skewed join and filter columns): " +
			"create multi-column statistics on the columns joined and filtered together, or store the intermediate result " +
			"in a temp table so the rest of the query is estimated from its real row count"}
}

func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// tableValuedFunction returns the function's name when src reads the
// result of a multi-statement table-valued function (a Table-valued
// function operator on the same object fills it).
func tableValuedFunction(q *plan.QueryPlan, src *plan.RelOp, o plan.ObjectRef) string {
	if src.PhysicalOp == "Table-valued function" {
		return o.TableName(false)
	}
	if o.Table == "" {
		return ""
	}
	for _, m := range q.Nodes {
		if m.PhysicalOp == "Table-valued function" && m != src && m.Access.Object().SameTable(o) {
			return o.TableName(false)
		}
	}
	return ""
}

// predicateScalars are the expressions that filter at n and its source.
func predicateScalars(ns ...*plan.RelOp) []*plan.Scalar {
	var out []*plan.Scalar
	for _, n := range ns {
		if n.Predicate != nil {
			out = append(out, n.Predicate)
		}
		if n.Access != nil {
			if n.Access.Predicate != nil {
				out = append(out, n.Access.Predicate)
			}
			for _, sp := range n.Access.SeekPredicates {
				for _, k := range sp.Keys {
					out = append(out, k.Values...)
				}
			}
		}
	}
	return out
}

// referencedParameters lists the statement parameters and variables the
// operator's predicates use.
func referencedParameters(q *plan.QueryPlan, ns ...*plan.RelOp) []plan.Parameter {
	var out []plan.Parameter
	seen := map[string]bool{}
	for _, x := range predicateScalars(ns...) {
		if x == nil {
			continue
		}
		for _, c := range x.Columns() {
			if !c.IsParameter() || seen[strings.ToLower(c.Column)] {
				continue
			}
			seen[strings.ToLower(c.Column)] = true
			for _, pr := range q.Parameters {
				if strings.EqualFold(pr.Name, c.Column) {
					out = append(out, pr)
				}
			}
		}
	}
	return out
}

// unestimable returns an expression the optimizer cannot estimate from
// statistics: a function, conversion or arithmetic around a column, or a
// plan-affecting conversion the plan warns about.
func unestimable(q *plan.QueryPlan, ns ...*plan.RelOp) string {
	// A statement-level conversion warning counts where it names a column
	// the operator filters on.
	var cols []string
	for _, x := range predicateScalars(ns...) {
		for _, c := range x.Columns() {
			if !c.IsParameter() && c.Table != "" {
				cols = append(cols, strings.ToLower("["+c.Column+"]"))
			}
		}
	}
	for _, w := range []*plan.Warnings{q.Warnings, ns[0].Warnings} {
		if w == nil {
			continue
		}
		for _, c := range w.Converts {
			if !strings.HasPrefix(c.Issue, "Cardinality") {
				continue
			}
			for _, col := range cols {
				if strings.Contains(strings.ToLower(c.Expression), col) {
					return c.Expression
				}
			}
		}
	}
	for _, n := range ns {
		for _, x := range []*plan.Scalar{n.Predicate, n.Access.Residual()} {
			if e := expressionOnColumn(x); e != "" {
				return e
			}
		}
	}
	return ""
}

func expressionOnColumn(x *plan.Scalar) string {
	if x == nil {
		return ""
	}
	switch x.Kind {
	case plan.ScalarIntrinsic, plan.ScalarArithmetic, plan.ScalarConvert:
		for _, c := range x.Columns() {
			if !c.IsParameter() {
				return x.String()
			}
		}
		return ""
	}
	for _, a := range x.Args {
		if e := expressionOnColumn(a); e != "" {
			return e
		}
	}
	return ""
}

// modifiedStatistics returns the statistics on o that the optimizer used
// and that saw enough modifications since their update to explain a
// misestimate (20% of the table and at least 500 rows), or nil.
func modifiedStatistics(q *plan.QueryPlan, src *plan.RelOp, o plan.ObjectRef) *plan.StatisticsInfo {
	var best *plan.StatisticsInfo
	for i := range q.Statistics {
		st := &q.Statistics[i]
		if !strings.EqualFold(strings.Trim(st.Table, "[]"), strings.Trim(o.Table, "[]")) {
			continue
		}
		if st.ModificationCount >= 500 && st.ModificationCount >= 0.2*src.TableCardinality && (best == nil || st.ModificationCount > best.ModificationCount) {
			best = st
		}
	}
	return best
}

// rangeSeek reports a seek with an open-ended range (>, >=) on its key.
func rangeSeek(n *plan.RelOp) bool {
	if n.Access == nil {
		return false
	}
	for _, sp := range n.Access.SeekPredicates {
		hasStart, hasEnd := false, false
		for _, k := range sp.Keys {
			switch k.Part {
			case "StartRange":
				hasStart = k.ScanType == "GT" || k.ScanType == "GE"
			case "EndRange":
				hasEnd = true
			}
		}
		if hasStart && !hasEnd {
			return true
		}
	}
	return false
}

package rules

import "fmt"

// UnmatchedIndexes reports the statement-level UnmatchedIndexes warning
// with every index it names.
var UnmatchedIndexes = &Rule{
	Code:     "PL101",
	Name:     "unmatched-indexes",
	Severity: Warning,
	Summary:  "The optimizer could not match a filtered index because of parameterization",
	Doc: Doc{
		Problem: "A filtered index (`CREATE INDEX ... WHERE Status = 0`) can serve a query only when the optimizer can " +
			"prove, at compile time, that every row the query needs is in the index. When the predicate on the filter " +
			"column is a parameter (`Status = @Status`), a forced-parameterization parameter (`@0`) or a local variable, " +
			"a cached plan must stay correct for every value, so the index is left out and the plan usually scans the " +
			"table instead. SQL Server records this as the UnmatchedIndexes warning.",
		Evidence: "`QueryPlan/Warnings/@UnmatchedIndexes=\"1\"` flags the statement; the index names are in a sibling element, " +
			"`QueryPlan/UnmatchedIndexes/Parameterization/Object` (`@Database`, `@Schema`, `@Table`, `@Index`). planlint " +
			"names every index listed there. The warning names only the index, not the predicate: with catalog facts " +
			"(`explain`, or `check --schema`) the rule `filtered-index-parameterized` explains which predicate and parameter " +
			"caused it and what to change.",
		Example: "```sql\nCREATE INDEX IX_Work_Pending ON dbo.Work (CreatedAt, WorkId) INCLUDE (CustomerId) WHERE Status = 0;\n" +
			"EXEC sp_executesql N'SELECT TOP (20) WorkId FROM dbo.Work WHERE Status = @Status ORDER BY CreatedAt',\n" +
			"                   N'@Status tinyint', @Status = 0;\n```\n" +
			"```xml\n<UnmatchedIndexes><Parameterization>\n  <Object Database=\"[WorkDb]\" Schema=\"[dbo]\" Table=\"[Work]\" Index=\"[IX_Work_Pending]\"/>\n" +
			"</Parameterization></UnmatchedIndexes>\n<Warnings UnmatchedIndexes=\"1\"/>\n```",
		Fix: "Send the pending-work query with the literal predicate (`WHERE Status = 0`) as its own statement; or add " +
			"`OPTION (RECOMPILE)` to the statement when its compile cost is acceptable, so parameter values are embedded " +
			"before optimization. Do not force the index with a hint: a filtered-index hint the optimizer cannot prove safe " +
			"fails with error 8622. Under forced parameterization, a TEMPLATE plan guide with `PARAMETERIZATION SIMPLE` " +
			"exempts the query shape.",
		FalseAlarms: "Under simple parameterization SQL Server can emit the warning and still use the filtered index; " +
			"planlint then reports at info level and says the index was used. Suppress when the parameterized statement " +
			"is intended to run for values outside the filter.",
		References: []string{
			"https://learn.microsoft.com/sql/relational-databases/indexes/create-filtered-indexes",
			"https://www.mssqltips.com/sqlservertip/6139/how-forced-parameterization-in-sql-server-affects-filtered-indexes/",
		},
	},
	After: []string{"filtered-index-parameterized"},
	Run:   runUnmatchedIndexes,
}

func runUnmatchedIndexes(p *Pass) {
	for _, q := range p.Plans() {
		flag := q.Warnings != nil && q.Warnings.UnmatchedIndexes
		if !flag && len(q.UnmatchedIndexes) == 0 {
			continue
		}
		var names, used []string
		var list []map[string]any
		for _, o := range q.UnmatchedIndexes {
			names = append(names, objectName(o))
			list = append(list, objectEvidence(o))
			if readsIndex(q.QueryPlan, o, o.Index) {
				used = append(used, objectName(o))
			}
		}
		ev := map[string]any{"indexes": list, "warning_flag": flag}
		if q.Label != "" {
			ev["cursor_operation"] = q.Label
		}
		sev := Warning
		var msg string
		switch {
		case len(names) == 0:
			msg = "the plan carries the UnmatchedIndexes warning but does not name the index; a filtered index could not be " +
				"used because of parameterization"
		default:
			msg = fmt.Sprintf("the optimizer could not use filtered %s %s because the statement is parameterized",
				plural(len(names), "index"), quoteList(names))
			if db := q.UnmatchedIndexes[0].Database; db != "" {
				msg += " (database " + db + ")"
			}
		}
		if len(used) > 0 && len(used) == len(names) {
			sev = Info
			msg += "; the plan still reads " + quoteList(used) + ", so the warning is harmless here"
			ev["used_anyway"] = used
		}
		if !flag && len(names) > 0 {
			ev["note"] = "UnmatchedIndexes element present without the Warnings flag"
		}
		if sev > Info && len(p.Prior("filtered-index-parameterized")) > 0 {
			// one root cause: that finding names the parameter and the fix
			sev = Info
			msg += "; filtered-index-parameterized says which parameter and what to do"
		}
		p.Report(Finding{Severity: sev, Message: msg, Evidence: ev,
			Fix: "use a dedicated statement with the literal filter predicate, or OPTION (RECOMPILE); not an index hint (error 8622)"})
	}
}

func init() { register(UnmatchedIndexes) }

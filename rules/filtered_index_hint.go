package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/plan"
)

// FilteredIndexHint reports index hints and FORCESEEK on filtered indexes.
var FilteredIndexHint = &Rule{
	Code:     "PL106",
	Name:     "filtered-index-hint",
	Severity: Error,
	Summary:  "An index hint or FORCESEEK targets a filtered index (error 8622 risk)",
	Doc: Doc{
		Problem: "An INDEX hint or FORCESEEK on a filtered index works only while the optimizer can prove the query needs no " +
			"row outside the filter. The day the predicate becomes a parameter (an ORM, sp_executesql, forced " +
			"parameterization, a local variable) or the SET options change, the statement stops compiling: error 8622, " +
			"\"Query processor could not produce a query plan because of the hints defined in this query\".",
		Evidence: "`IndexScan/@ForcedIndex=\"1\"` or `@ForceSeek=\"1\"` on an operator whose `Object` is a filtered index " +
			"(`Object/@Filtered`, or `has_filter` in the catalog facts). The statement text shows the hint.",
		Example: "```sql\nSELECT TOP (20) WorkId FROM dbo.Work WITH (INDEX(IX_Work_Pending)) WHERE Status = 0 ORDER BY CreatedAt;\n```",
		Fix: "Remove the hint and keep the literal predicate that matches the filter (`WHERE Status = 0`); the optimizer " +
			"chooses the filtered index on its own when it is provably safe. If the hint is there because the index is " +
			"ignored, find out why (SET options, parameterization) rather than forcing it.",
		FalseAlarms: "A hinted statement that is always sent with a literal predicate in a database with simple " +
			"parameterization works; the finding is a warning about fragility, an error when the database forces " +
			"parameterization or the predicate is already a parameter.",
	},
	Run: runFilteredIndexHint,
}

func runFilteredIndexHint(p *Pass) {
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			a := n.Access
			if a == nil || !(a.ForcedIndex || a.ForceSeek) {
				continue
			}
			o := a.Object()
			filter, filtered := indexFilter(p.Catalog, o)
			if !filtered {
				continue
			}
			hint := "INDEX hint"
			if a.ForceSeek && !a.ForcedIndex {
				hint = "FORCESEEK hint"
			} else if a.ForceSeek {
				hint = "INDEX and FORCESEEK hints"
			}
			ev := map[string]any{"index": objectEvidence(o), "hint": hint}
			msg := fmt.Sprintf("%s forces filtered index %s", hint, objectName(o))
			if filter != "" {
				ev["filter"] = filter
				msg += " (WHERE " + filter + ")"
			}
			sev := Warning
			var reasons []string
			if db := databaseOf(p.Catalog, o); db != nil && db.ParameterizationForced {
				reasons = append(reasons, "the database uses forced parameterization")
			}
			if p.Statement.ParameterizationType == plan.ParamForced || p.Statement.ParameterizationType == plan.ParamSimple {
				reasons = append(reasons, "the statement was auto-parameterized")
			}
			if len(reasons) > 0 {
				sev = Error
				ev["reasons"] = reasons
				msg += "; " + strings.Join(reasons, " and ") + ", so the hint can fail with error 8622"
			} else {
				msg += "; if the filter predicate ever becomes a parameter or the SET options change, the statement fails with error 8622"
			}
			p.Report(Finding{Severity: sev, NodeID: Node(n.NodeID), Message: msg, Evidence: ev,
				Fix: "remove the hint and keep the literal predicate that matches the filter"})
		}
	}
}

func init() { register(FilteredIndexHint) }

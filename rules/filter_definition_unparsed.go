package rules

import "fmt"

// FilterDefinitionUnparsed reports filtered indexes whose filter planlint
// could not parse, so the filtered-index rules skipped them.
var FilterDefinitionUnparsed = &Rule{
	Code:     "PL205",
	Name:     "filter-definition-unparsed",
	Severity: Info,
	Summary:  "A filtered index's filter could not be parsed, so the filtered-index rules skipped it",
	Catalog:  true,
	Doc: Doc{
		Problem: "planlint reasons about filters it understands: conjuncts of `column op constant`, `IN (...)` and `IS [NOT] " +
			"NULL`, the grammar CREATE INDEX allows. A filter it cannot parse is reported rather than guessed.",
		Evidence: "The catalog facts (`sys.indexes.filter_definition`, or the WHERE clause of a CREATE INDEX in `--schema`) " +
			"of an index on a table the plan touches.",
		Example:     "`WHERE Status = 0 OR Priority = 1` in a hand-written schema script (not valid for a filtered index).",
		Fix:         "Correct the schema script, or report the filter text if SQL Server accepted it and planlint did not.",
		FalseAlarms: "None: this finding only says what planlint did not check.",
	},
	Run: runFilterDefinitionUnparsed,
}

func runFilterDefinitionUnparsed(p *Pass) {
	for _, q := range p.Plans() {
		for _, ta := range accessedTables(q.QueryPlan) {
			t := findTable(p.Catalog, ta.Object)
			if t == nil {
				continue
			}
			for _, ix := range t.Indexes {
				if ix.FilterDefinition == "" || ix.Filter != nil {
					continue
				}
				p.Report(Finding{
					Message: fmt.Sprintf("the filter of index %s on %s.%s (WHERE %s) could not be parsed: %s; the filtered-index rules skipped it",
						ix.Name, t.Schema, t.Name, ix.FilterDefinition, ix.FilterError),
					Evidence: map[string]any{"index": ix.Name, "filter": ix.FilterDefinition, "error": ix.FilterError},
				})
			}
		}
	}
}

func init() { register(FilterDefinitionUnparsed) }

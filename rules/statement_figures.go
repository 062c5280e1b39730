package rules

import (
	"regexp"
)

// defaultCostThreshold is SQL Server's default 'cost threshold for
// parallelism'.
const defaultCostThreshold = 5

// costThreshold is the server's cost threshold for parallelism from the
// catalog facts, else the default, and where the value came from.
func costThreshold(p *Pass) (float64, string) {
	if p.Catalog != nil && p.Catalog.Server != nil && p.Catalog.Server.CostThresholdForParallelism != nil {
		return *p.Catalog.Server.CostThresholdForParallelism, "the server's setting"
	}
	return defaultCostThreshold, "the default"
}

// recompileHint matches OPTION (... RECOMPILE ...) in a statement's text.
var recompileHint = regexp.MustCompile(`(?is)\bOPTION\s*\([^)]*\bRECOMPILE\b`)

// maxdopHint finds OPTION (... MAXDOP n ...) and captures n.
var maxdopHint = regexp.MustCompile(`(?is)\bOPTION\s*\([^)]*\bMAXDOP\s*(\d+)`)

package rules

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/planlint/planlint/plan"
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

// statementElapsed is the statement's elapsed time in milliseconds from
// QueryTimeStats (actual plans from SQL Server 2014 SP2 and 2016 on).
func statementElapsed(q *plan.QueryPlan) (float64, bool) {
	if q == nil || q.QueryTime == nil {
		return 0, false
	}
	return q.QueryTime.ElapsedTimeMs, true
}

// recompileHint matches OPTION (... RECOMPILE ...) in a statement's text.
var recompileHint = regexp.MustCompile(`(?is)\bOPTION\s*\([^)]*\bRECOMPILE\b`)

// maxdopHint finds OPTION (... MAXDOP n ...) and captures n.
var maxdopHint = regexp.MustCompile(`(?is)\bOPTION\s*\([^)]*\bMAXDOP\s*(\d+)`)

// kb renders a size given in KB as KB, MB or GB.
func kb(v float64) string {
	switch {
	case v >= 1024*1024:
		return strconv.FormatFloat(v/1024/1024, 'f', 1, 64) + " GB"
	case v >= 1024:
		return strconv.FormatFloat(v/1024, 'f', 0, 64) + " MB"
	}
	return count(v) + " KB"
}

// ms renders milliseconds as ms or seconds.
func ms(v float64) string {
	if v >= 10000 {
		return count(v/1000) + " s"
	}
	if v >= 1000 {
		return fmt.Sprintf("%.1f s", v/1000)
	}
	return count(v) + " ms"
}

package rules

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// MemoryGrant reports memory grants that were far larger than the memory
// used, grants the query had to queue for, and very large desired grants in
// estimated plans.
var MemoryGrant = &Rule{
	Code:     "PL403",
	Name:     "memory-grant",
	Severity: Error,
	Summary:  "The statement's memory grant was far above what it used, or it queued for its grant",
	Params: []Param{
		{"min_grant_mb", 100, "grants below this many MB are not excessive whatever share is used"},
		{"unused_share", 0.1, "a grant of at least min_grant_mb is excessive when at most this share of it was used"},
		{"large_grant_mb", 1024, "from this many MB a grant is excessive when at most half of it was used, and reported as info when used"},
		{"max_query_share", 0.25, "a grant of at least min_grant_mb and this share of MaxQueryMemory is excessive when at most half was used"},
		{"error_wait_s", 10, "a grant wait (GrantWaitTime, seconds) from this long is an error; any wait is a warning"},
		{"estimated_warn_mb", 1024, "in estimated plans, a DesiredMemory from this many MB is a warning"},
	},
	Doc: Doc{
		Problem: "Before it runs, a query with sorts or hashes reserves a memory grant sized from its estimates. Memory " +
			"granted and not used is taken from the buffer pool and from every other query: under concurrency large idle " +
			"grants make other queries queue (`RESOURCE_SEMAPHORE` waits) or run with less. A query that queued for its " +
			"own grant lost that time before its first row.",
		Evidence: "`QueryPlan/MemoryGrantInfo`: `GrantedMemory` against `MaxUsedMemory` (KB), `MaxQueryMemory`, " +
			"`GrantWaitTime` (seconds; a `RESOURCE_SEMAPHORE` wait in `WaitStats` gives it in milliseconds), " +
			"`IsMemoryGrantFeedbackAdjusted`; `Warnings/MemoryGrantWarning` (`Excessive Grant`, which SQL Server also " +
			"raises for tiny grants that are not reported, or `Used More Than Granted` / `Grant Increase`, info for grants " +
			"of at least `min_grant_mb`). The operators that asked for the memory are the sorts, " +
			"hashes and adaptive joins; for each the finding gives the estimated and actual rows and row size of the " +
			"input it holds (and its `UsedMemoryGrant` where the plan has it). In estimated plans only `DesiredMemory` is known.",
		Example: "`GrantedMemory=\"1395216\" MaxUsedMemory=\"19736\"`: 1.3 GB granted, 19 MB (1%) used, because the TopN Sort " +
			"expected 5,097,990 input rows and received 3,926.",
		Fix: "Fix what sized the grant: the row estimate of the sort or hash input (statistics, a predicate the " +
			"optimizer cannot estimate, a parameter compiled for a much larger value) or its row width (select only the " +
			"columns needed; leave wide `varchar(max)` columns out of the sort and fetch them afterwards). As a cap, " +
			"`OPTION (MAX_GRANT_PERCENT = n)`; on SQL Server 2019+ (compatibility 150) memory grant feedback adjusts " +
			"repeated executions. For a grant wait, also look at the other queries holding grants at that time " +
			"(`sys.dm_exec_query_memory_grants`).",
		FalseAlarms: "A grant that is mostly used is the memory the query needs: only very large ones (`large_grant_mb`) are " +
			"mentioned, as info. Small grants (`min_grant_mb`) are never excessive, even when SQL Server's own " +
			"MemoryGrantWarning says so. A grant just filled by feedback (`IsMemoryGrantFeedbackAdjusted` = Yes: Adjusting) " +
			"may be smaller next time.",
	},
	Run: runMemoryGrant,
}

func runMemoryGrant(p *Pass) {
	st := p.Statement
	q := st.QueryPlan
	if q == nil || q.MemoryGrant == nil {
		return
	}
	g := q.MemoryGrant
	mb := 1024.0
	if !st.IsActual() {
		desired := math.Max(g.DesiredKB, g.SerialDesiredKB)
		if desired < p.Param("estimated_warn_mb")*mb {
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, "the plan asks for a %s memory grant (DesiredMemory)", units.KB(desired))
		if g.RequestedKB > 0 && g.RequestedKB < desired {
			fmt.Fprintf(&b, ", capped at a request of %s", units.KB(g.RequestedKB))
		}
		ev := map[string]any{"desired_kb": desired, "requested_kb": g.RequestedKB}
		cons := grantConsumers(q)
		describeConsumers(&b, cons, ev)
		p.Report(Finding{Severity: Warning, NodeID: consumerNode(cons), Message: b.String(), Fix: grantFix(cons, g, desired, 0), Evidence: ev})
		return
	}
	// Without GrantedMemory (older plans carry only QueryPlan/@MemoryGrant)
	// the memory used is unknown: only a grant wait can be judged.
	granted, used := g.GrantedKB, g.MaxUsedKB
	if granted <= 0 && g.GrantWaitTimeS <= 0 {
		return
	}
	share := 0.0
	if granted > 0 {
		share = used / granted
	}
	minGrant, large := p.Param("min_grant_mb")*mb, p.Param("large_grant_mb")*mb
	excessive := granted >= minGrant && share <= p.Param("unused_share") ||
		granted >= large && share <= 0.5 ||
		granted >= minGrant && g.MaxQueryMemoryKB > 0 && granted >= p.Param("max_query_share")*g.MaxQueryMemoryKB && share <= 0.5
	wait := g.GrantWaitTimeS
	semaphoreMs := 0.0 // RESOURCE_SEMAPHORE in WaitStats: the wait in milliseconds
	for _, w := range q.Waits {
		if w.Type == "RESOURCE_SEMAPHORE" {
			semaphoreMs += w.TimeMs
		}
	}
	waitSource := "GrantWaitTime"
	if semaphoreMs >= 1000 && semaphoreMs/1000 > wait {
		wait, waitSource = math.Round(semaphoreMs/100)/10, "RESOURCE_SEMAPHORE wait"
	}
	bigUsed := granted >= large && !excessive
	var warning *plan.MemoryGrantWarning
	if q.Warnings != nil {
		warning = q.Warnings.MemoryGrant
	}
	grew := warning != nil && warning.Kind != "Excessive Grant" && granted >= minGrant
	if !excessive && wait <= 0 && !bigUsed && !grew {
		return
	}
	ev := map[string]any{"granted_kb": granted, "max_used_kb": used, "used_share": round(share, 3), "grant_wait_s": wait}
	if semaphoreMs > 0 {
		ev["resource_semaphore_wait_ms"] = semaphoreMs
	}
	if warning != nil {
		ev["memory_grant_warning"] = warning.Kind
	}
	if g.MaxQueryMemoryKB > 0 {
		ev["max_query_memory_kb"] = g.MaxQueryMemoryKB
	}
	if g.FeedbackAdjusted != "" {
		ev["feedback"] = g.FeedbackAdjusted
	}
	var b strings.Builder
	sev := Info
	switch {
	case wait > 0:
		sev = Warning
		if wait >= p.Param("error_wait_s") {
			sev = Error
		}
		fmt.Fprintf(&b, "the query waited %s for its memory grant (%s) before it could start; it was granted %s and used %s (%s)",
			secondsText(wait), waitSource, units.KB(granted), units.KB(used), percent(share))
		if excessive {
			fmt.Fprintf(&b, ", so %s of it stayed idle", units.KB(granted-used))
		}
		if qt := q.QueryTime; qt != nil {
			fmt.Fprintf(&b, "; QueryTimeStats gives %s elapsed", units.Ms(qt.ElapsedTimeMs))
		}
	case excessive:
		sev = Warning
		fmt.Fprintf(&b, "memory grant of %s, of which %s (%s) was used: %s stayed reserved and idle for the whole execution",
			units.KB(granted), units.KB(used), percent(share), units.KB(granted-used))
	case grew && !bigUsed:
		fmt.Fprintf(&b, "the query needed more memory than its grant (MemoryGrantWarning %s: requested %s, granted %s, used %s)",
			warning.Kind, units.KB(warning.RequestedKB), units.KB(warning.GrantedKB), units.KB(warning.MaxUsedKB))
	default:
		fmt.Fprintf(&b, "large memory grant of %s, %s of it used", units.KB(granted), percent(share))
	}
	if g.MaxQueryMemoryKB > 0 && granted >= 0.9*g.MaxQueryMemoryKB && g.DesiredKB > granted {
		fmt.Fprintf(&b, "; the grant is the most one query may get (MaxQueryMemory %s) while the plan desired %s", units.KB(g.MaxQueryMemoryKB), units.KB(g.DesiredKB))
	}
	if g.FeedbackAdjusted != "" {
		fmt.Fprintf(&b, "; memory grant feedback: %s", g.FeedbackAdjusted)
	}
	cons := grantConsumers(q)
	describeConsumers(&b, cons, ev)
	capKB := 0.0
	if excessive {
		capKB = 2 * used
	}
	p.Report(Finding{Severity: sev, NodeID: consumerNode(cons), Message: b.String(), Fix: grantFix(cons, g, granted, capKB), Evidence: ev})
}

// grantConsumer is an operator whose input is held in granted memory.
type grantConsumer struct {
	op, input  *plan.RelOp
	fraction   float64 // the larger MemoryFractions value, 0 when absent
	estRows    float64
	actRows    float64
	hasActual  bool
	estKB      float64 // estimated input size
	usedKB     int64   // UsedMemoryGrant summed over threads
	hasUsedMem bool
}

// grantConsumers lists the operators that hold granted memory (those with
// MemoryFractions, else the sorts, hashes, adaptive and optimized loops
// joins), largest share or estimated input first.
func grantConsumers(q *plan.QueryPlan) []grantConsumer {
	var out []grantConsumer
	fractions := false
	for _, n := range q.Nodes {
		if !memoryConsumer(n) || len(n.Children) == 0 {
			continue
		}
		in := n.Children[0] // the sort input, the hash build input, the outer rows a loops join sorts
		c := grantConsumer{op: n, input: in, estRows: in.EstimatedRowsAllExecutions()}
		if mf := n.MemoryFractions; mf != nil {
			c.fraction = math.Max(mf.Input, mf.Output)
			fractions = fractions || c.fraction > 0
		}
		c.estKB = c.estRows * in.AvgRowSize / 1024
		if in.RunTime != nil {
			c.actRows, c.hasActual = float64(in.RunTime.ActualRows), true
		}
		if n.RunTime != nil && n.RunTime.UsedMemoryGrantKB > 0 {
			c.usedKB, c.hasUsedMem = n.RunTime.UsedMemoryGrantKB, true
		}
		out = append(out, c)
	}
	if fractions {
		kept := out[:0]
		for _, c := range out {
			if c.fraction > 0 {
				kept = append(kept, c)
			}
		}
		out = kept
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].estKB > out[j].estKB })
	return out
}

func memoryConsumer(n *plan.RelOp) bool {
	switch n.PhysicalOp {
	case "Sort", "Hash Match", "Adaptive Join", "Window Aggregate":
		return true
	}
	return n.OptimizedLoops || n.MemoryFractions != nil && math.Max(n.MemoryFractions.Input, n.MemoryFractions.Output) > 0
}

func consumerNode(cons []grantConsumer) *int {
	if len(cons) == 0 {
		return nil
	}
	return Node(cons[0].op.NodeID)
}

// describeConsumers names up to three operators that asked for memory.
func describeConsumers(b *strings.Builder, cons []grantConsumer, ev map[string]any) {
	if len(cons) == 0 {
		return
	}
	var parts []string
	var evs []map[string]any
	for i, c := range cons {
		if i == 3 {
			break
		}
		what := "holding"
		if c.op.OptimizedLoops {
			what = "(optimized: it sorts batches of its outer rows) over"
		}
		s := fmt.Sprintf("%s (node %d) %s %s estimated rows of %s bytes (%s)", c.op.DisplayName(), c.op.NodeID, what,
			units.Count(c.estRows), units.Count(c.input.AvgRowSize), units.KB(c.estKB))
		e := map[string]any{"node_id": c.op.NodeID, "operator": c.op.DisplayName(), "estimated_rows": round(c.estRows, 1),
			"row_size": c.input.AvgRowSize, "estimated_kb": round(c.estKB, 0)}
		if c.fraction > 0 {
			e["memory_fraction"] = round(c.fraction, 4)
		}
		if c.hasActual {
			s += fmt.Sprintf(", actual %s rows", units.Count(c.actRows))
			e["actual_rows"] = int64(c.actRows)
		}
		if c.hasUsedMem {
			s += fmt.Sprintf(", %s used", units.KB(float64(c.usedKB)))
			e["used_memory_kb"] = c.usedKB
		}
		parts = append(parts, s)
		evs = append(evs, e)
	}
	ev["consumers"] = evs
	fmt.Fprintf(b, "; the memory is for %s", strings.Join(parts, "; "))
}

// grantFix names what sized the grant (grantKB): the largest consumer's
// estimate or row width, an optimized loops join's reservation, and a cap
// when capKB is set.
func grantFix(cons []grantConsumer, g *plan.MemoryGrantInfo, grantKB, capKB float64) string {
	var fixes []string
	if len(cons) > 0 {
		c := cons[0]
		where := fmt.Sprintf("%s (node %d)", c.op.DisplayName(), c.op.NodeID)
		others := 0.0 // estimated input of the consumers that are not optimized loops
		var loops *plan.RelOp
		for _, x := range cons {
			if x.op.OptimizedLoops {
				if loops == nil {
					loops = x.op
				}
				continue
			}
			others += x.estKB
		}
		switch {
		case loops != nil && others < 0.1*grantKB:
			fixes = append(fixes, fmt.Sprintf("most of the grant is the reservation of the optimized nested loops join %s (node %d) for sorting its outer rows (the inputs of the sorts and hashes come to %s): OPTION (USE HINT ('DISABLE_OPTIMIZED_NESTED_LOOP')) removes it",
				loops.DisplayName(), loops.NodeID, units.KB(others)))
		case c.hasActual && c.estRows >= 10*math.Max(c.actRows, 1):
			fixes = append(fixes, fmt.Sprintf("fix the estimate that sized the grant: %s expected %s input rows and received %s (statistics, the predicate, compiled parameter values of the operators below it)",
				where, units.Count(c.estRows), units.Count(c.actRows)))
		case c.input.AvgRowSize >= 500:
			fixes = append(fixes, fmt.Sprintf("narrow the %s-byte rows %s holds: select only the columns needed and fetch wide columns after it", units.Count(c.input.AvgRowSize), where))
		default:
			fixes = append(fixes, fmt.Sprintf("reduce the rows or the width of what %s holds (filter earlier, select fewer columns)", where))
		}
	}
	if capKB > 0 && g.MaxQueryMemoryKB > 0 {
		// MAX_GRANT_PERCENT is a share of the limit of which MaxQueryMemory
		// is the default 25%.
		pct := math.Max(0.1, math.Ceil(25*capKB/g.MaxQueryMemoryKB*10)/10)
		if pct < 25 {
			fixes = append(fixes, fmt.Sprintf("as a cap, OPTION (MAX_GRANT_PERCENT = %g) allows about %s, twice what it used (assuming the default 25%% request_max_memory_grant_percent)",
				pct, units.KB(pct/25*g.MaxQueryMemoryKB)))
		}
	}
	if len(fixes) == 0 {
		return "reduce the rows or the width of what the sorts and hashes hold"
	}
	return strings.Join(fixes, "; ")
}

// seconds renders a GrantWaitTime.
func secondsText(s float64) string {
	if s == 1 {
		return "1 second"
	}
	return units.Count(s) + " seconds"
}

func init() { register(MemoryGrant) }

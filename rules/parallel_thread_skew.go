package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// ParallelThreadSkew reports parallel zones where one thread did most of
// the work, so the statement ran close to serially on a parallel plan.
var ParallelThreadSkew = &Rule{
	Code:     "PL405",
	Name:     "parallel-thread-skew",
	Severity: Warning,
	Summary:  "In a parallel plan one thread handled most of the rows",
	Params: []Param{
		{"min_rows", 100000, "the operator must return at least this many rows over all threads"},
		{"share", 0.5, "one thread's share of the rows from which a plan with more than two threads is skewed"},
		{"share_dop2", 0.8, "the same share for two threads"},
		{"min_cpu_ms", 100, "when the operator's threads used at least this much CPU, the busy thread must also have used most of it"},
	},
	Doc: Doc{
		Problem: "A parallel plan splits rows among threads; when one thread gets most of them the others wait and the " +
			"statement takes as long as the serial plan, holding DOP worker threads and its memory grant meanwhile.",
		Evidence: "Actual plans only: `RunTimeCountersPerThread/@ActualRows` per worker thread (thread 0, the coordinator, " +
			"is left out), on operators with at least `min_rows` rows, where one thread has at least `share` of them (and, " +
			"where the counters have CPU times, most of the CPU). Broadcast exchanges copy every row to every thread and " +
			"Gather Streams has a single consumer: they are not skew. One finding per parallel zone (the operators between " +
			"two exchanges), on its busiest operator, with the rows per thread and the likely cause the plan shows: a " +
			"Repartition Streams whose hash key has one hot value, an exchange that had only a handful of rows to hand out " +
			"(each row then drives a whole branch on one thread), or a parallel scan whose qualifying rows sit together.",
		Example: "Distribute Streams (RoundRobin) hands its single row to thread 1; the Nested Loops above it returns " +
			"10,810,787 rows, all on thread 1 of 8, and the statement runs 17 s on one core.",
		Fix: "For a hot hash key: check the key's distribution (`SELECT TOP (10) key, COUNT_BIG(*) ... GROUP BY key ORDER " +
			"BY 2 DESC`) and treat the dominant value separately (its own query, `UNION ALL`). For an exchange with too few " +
			"rows: give the parallel branch a large driving input (compute the few-row input into a variable first, or a " +
			"join type that reads the large table in parallel, e.g. `OPTION (HASH JOIN)`). For a scan: an index that " +
			"leads with the predicate column lets every thread seek into the qualifying range.",
		FalseAlarms: "Small operators (`min_rows`) and operators whose CPU was spread evenly although their output was not " +
			"(every thread scanned and filtered its share; only one found matches) are not reported.",
	},
	Run: runParallelThreadSkew,
}

// threadRows is one operator's rows and CPU per worker thread.
type threadRows struct {
	n         *plan.RelOp
	threads   []plan.ThreadCounters // worker threads, Thread > 0
	total     int64
	busy      plan.ThreadCounters
	share     float64
	cpuTotal  int64
	cpuShare  float64
	hasTiming bool
}

func measureThreads(n *plan.RelOp) (threadRows, bool) {
	rt := n.RunTime
	if rt == nil {
		return threadRows{}, false
	}
	t := threadRows{n: n, hasTiming: rt.HasTiming}
	for _, c := range rt.Threads {
		if c.Thread == 0 {
			continue
		}
		t.threads = append(t.threads, c)
		t.total += c.ActualRows
		t.cpuTotal += c.CPUMs
		if c.ActualRows > t.busy.ActualRows {
			t.busy = c
		}
	}
	if len(t.threads) < 2 || t.total == 0 {
		return t, false
	}
	t.share = float64(t.busy.ActualRows) / float64(t.total)
	if t.cpuTotal > 0 {
		t.cpuShare = float64(t.busy.CPUMs) / float64(t.cpuTotal)
	}
	return t, true
}

// skewed applies the thresholds to one operator.
func skewed(p *Pass, t threadRows) bool {
	if float64(t.total) < p.Param("min_rows") {
		return false
	}
	limit := p.Param("share")
	if len(t.threads) == 2 {
		limit = p.Param("share_dop2")
	}
	if t.share < limit {
		return false
	}
	if t.hasTiming && float64(t.cpuTotal) >= p.Param("min_cpu_ms") && t.cpuShare < 0.5 {
		return false // the work was spread; only the output was not
	}
	if x := t.n.Exchange; x != nil && (x.PartitioningType == "Broadcast" || t.n.LogicalOp == "Gather Streams") {
		return false
	}
	return true
}

// zoneOf is the exchange whose producer side the operator runs on (nil in
// the serial zone at the top). An exchange's own counters are its consumer
// threads, so it belongs to the zone above it like its parent.
func zoneOf(n *plan.RelOp) *plan.RelOp {
	for a := n.Parent; a != nil; a = a.Parent {
		if a.Exchange != nil {
			return a
		}
	}
	return nil
}

func runParallelThreadSkew(p *Pass) {
	for _, q := range p.Plans() {
		zones := map[*plan.RelOp][]threadRows{}
		var order []*plan.RelOp
		for _, n := range q.Nodes {
			t, ok := measureThreads(n)
			if !ok || !skewed(p, t) {
				continue
			}
			z := zoneOf(n)
			if _, seen := zones[z]; !seen {
				order = append(order, z)
			}
			zones[z] = append(zones[z], t)
		}
		for _, z := range order {
			reportSkewZone(p, q, z, zones[z])
		}
	}
}

func reportSkewZone(p *Pass, q plan.LabeledPlan, zone *plan.RelOp, ops []threadRows) {
	// The busiest operator; among equals the deepest, where the rows start.
	best := ops[0]
	for _, t := range ops[1:] {
		if t.total >= best.total {
			best = t
		}
	}
	n := best.n
	per := make([]string, 0, len(best.threads))
	perEv := map[string]int64{}
	threads := append([]plan.ThreadCounters(nil), best.threads...)
	sort.Slice(threads, func(i, j int) bool { return threads[i].Thread < threads[j].Thread })
	for _, c := range threads {
		per = append(per, fmt.Sprintf("%d: %s", c.Thread, units.Count(float64(c.ActualRows))))
		perEv[fmt.Sprint(c.Thread)] = c.ActualRows
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s", n.DisplayName())
	if o := n.Access.Object(); o.Table != "" {
		fmt.Fprintf(&b, " on %s", objectName(o))
	}
	fmt.Fprintf(&b, " returned %s of its %s rows (%s) on thread %d of %d (rows per thread %s)",
		units.Count(float64(best.busy.ActualRows)), units.Count(float64(best.total)), percent(best.share), best.busy.Thread, len(best.threads), strings.Join(per, ", "))
	if best.hasTiming && best.cpuTotal > 0 {
		fmt.Fprintf(&b, "; that thread used %s of the operator's %s of CPU", units.Ms(float64(best.busy.CPUMs)), units.Ms(float64(best.cpuTotal)))
	}
	ev := map[string]any{"rows": best.total, "busy_thread": best.busy.Thread, "busy_share": round(best.share, 3),
		"threads": len(best.threads), "rows_per_thread": perEv}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	if qt := q.QueryTime; qt != nil {
		ev["statement_elapsed_ms"] = qt.ElapsedTimeMs
		fmt.Fprintf(&b, "; the statement ran %s", units.Ms(qt.ElapsedTimeMs))
	}
	cause, fix := threadSkewCause(p, zone, best)
	if cause != "" {
		ev["cause"] = cause
		b.WriteString("; " + cause)
	}
	p.Report(Finding{NodeID: Node(n.NodeID), Message: b.String(), Fix: fix, Evidence: ev})
}

// threadSkewCause looks in the zone for what put the rows on one thread: an
// input exchange that was skewed too or had almost no rows to hand out, or
// a parallel scan or seek whose rows came on one thread. Only driving
// inputs count: the inner side of a Nested Loops join follows its outer row.
func threadSkewCause(p *Pass, zone *plan.RelOp, best threadRows) (cause, fix string) {
	var inputs, leaves []*plan.RelOp
	var walk func(n *plan.RelOp)
	walk = func(n *plan.RelOp) {
		children := n.Children
		if n.PhysicalOp == "Nested Loops" && len(children) > 1 {
			children = children[:1] // the inner side runs on the thread of its outer row
		}
		for _, c := range children {
			switch {
			case c.Exchange != nil:
				inputs = append(inputs, c) // its consumer side runs in this zone; do not cross it
			case len(c.Children) == 0:
				if c.Access != nil {
					leaves = append(leaves, c)
				}
			default:
				walk(c)
			}
		}
	}
	if zone != nil {
		walk(zone)
	} else {
		walk(best.n)
	}
	for _, x := range inputs {
		t, ok := measureThreads(x)
		if !ok {
			continue
		}
		switch {
		case t.total < int64(len(t.threads)) || t.total <= 2*int64(len(t.threads)) && t.share >= 0.5:
			return fmt.Sprintf("%s (node %d) had only %s %s to hand out to %d threads (estimated %s), so the branch above it ran on no more threads than that",
					x.DisplayName(), x.NodeID, units.Count(float64(t.total)), plural(int(t.total), "row"), len(t.threads), units.Count(x.EstimatedRowsAllExecutions())),
				"give the parallel branch a large driving input: compute the few-row input into a variable first and filter the large table with it, or use a join that reads the large table in parallel (e.g. OPTION (HASH JOIN))"
		case t.busy.Thread == best.busy.Thread && t.share >= 0.5 && len(x.Exchange.PartitionColumns) > 0 &&
			(x.Exchange.PartitioningType == "Hash" || x.Exchange.PartitioningType == "Range"):
			cols := x.Exchange.PartitionColumns
			names := make([]string, 0, len(cols))
			for _, c := range cols {
				names = append(names, c.Name())
			}
			who := fmt.Sprintf("%s (node %d)", x.DisplayName(), x.NodeID)
			if x == best.n {
				who = "it"
			}
			return fmt.Sprintf("%s routes rows by %s of %s and sent %s of them to thread %d: most rows share one value (a hot key)",
					who, strings.ToLower(x.Exchange.PartitioningType), quoteList(names), percent(t.share), t.busy.Thread),
				hotKeyFix(cols)
		}
	}
	for _, l := range leaves {
		t, ok := measureThreads(l)
		if ok && t.busy.Thread == best.busy.Thread && t.share >= 0.5 && float64(t.total) >= p.Param("min_rows")/10 {
			return fmt.Sprintf("the parallel %s of %s (node %d) returned %s of its rows on that thread: the rows that qualify are stored together, and threads share pages, not rows",
					strings.ToLower(l.DisplayName()), objectName(l.Access.Object()), l.NodeID, percent(t.share)),
				"an index that leads with the predicate's column lets every thread seek into the qualifying range; if the zone gains nothing from parallelism, OPTION (MAXDOP 1) frees the idle threads"
		}
	}
	return "", "find why the rows meet on one thread (a hot value of a join or grouping key, an input with very few rows) and spread them: treat a dominant value in its own query, or give the branch a larger driving input"
}

// hotKeyFix builds the distribution query for the partitioning columns.
func hotKeyFix(cols []plan.ColumnRef) string {
	table := ""
	var names []string
	for _, c := range cols {
		names = append(names, c.Column)
		if table == "" && c.Table != "" {
			table = c.Schema + "." + c.Table
			table = strings.TrimPrefix(table, ".")
		}
	}
	list := strings.Join(names, ", ")
	if table == "" || len(cols) > 1 && cols[0].Table == "" {
		return fmt.Sprintf("check the distribution of %s and treat the dominant value in its own query (UNION ALL the rest)", list)
	}
	return fmt.Sprintf("check the distribution: SELECT TOP (10) %s, COUNT_BIG(*) AS n FROM %s GROUP BY %s ORDER BY n DESC; treat a dominant value in its own query (UNION ALL the rest)", list, table, list)
}

func init() { register(ParallelThreadSkew) }

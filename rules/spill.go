package rules

import (
	"fmt"
	"math"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// Spill reports sorts, hashes and exchanges that wrote to tempdb.
var Spill = &Rule{
	Code:     "PL402",
	Name:     "spill",
	Severity: Error,
	Summary:  "A sort, hash or exchange spilled to tempdb",
	Params: []Param{
		{"min_pages", 1000, "a spill writing fewer pages (8 KB each) and taking less than min_share of the statement is info"},
		{"min_share", 0.1, "share of the statement's elapsed time from which a spill is at least a warning"},
		{"error_pages", 1000000, "a spill writing at least this many pages is an error"},
		{"error_share", 0.5, "a spill whose operator took at least this share of the statement's elapsed time is an error"},
	},
	After: append([]string{"row-estimate-skew"}, skewCauseRules...),
	Doc: Doc{
		Problem: "An operator whose memory grant is too small writes its rows to tempdb and reads them back: a sort or hash " +
			"runs at disk speed instead of memory speed, and a hash that spills again at deeper levels re-reads its input " +
			"each time. An exchange spills when its consumer cannot keep up, typically an order-preserving exchange " +
			"feeding a Merge Join.",
		Evidence: "Operator `Warnings`: `SpillToTempDb` (`SpillLevel`, `SpilledThreadCount`), `SortSpillDetails`, " +
			"`HashSpillDetails`, `ExchangeSpillDetails` (`WritesToTempDb`, `ReadsFromTempDb`, granted and used memory) and " +
			"`SpillOccurred`. planlint adds the operator's own elapsed time and its share of the statement, the statement's " +
			"memory grant, and the misestimate below the operator (the row-estimate-skew finding, or the input's estimate) " +
			"that sized the grant too small.",
		Example: "`<SortSpillDetails GrantedMemoryKb=\"17384\" UsedMemoryKb=\"17408\" WritesToTempDb=\"145296\" " +
			"ReadsFromTempDb=\"145296\"/>` on a Sort that took 94 of the statement's 110 seconds.",
		Fix: "Fix the estimate that sized the grant (the misestimate finding it points to); where the estimate cannot be " +
			"fixed, `OPTION (MIN_GRANT_PERCENT = n)` or memory grant feedback (SQL Server 2019+, compatibility level 150) " +
			"gives the operator the memory it needed. For an exchange spill, remove the order-preserving exchange: a hash " +
			"join instead of the merge join (`OPTION (HASH JOIN)`), or a serial plan for this query.",
		FalseAlarms: "A spill of a few pages in a fast statement costs nothing worth acting on; it is info.",
	},
	Run: runSpill,
}

type spillFacts struct {
	kind                     string // sort, hash, exchange
	level, threads           int
	writes, reads            float64
	grantedKB, usedKB        float64
	hasDetails, spillOccured bool
}

func spillOf(n *plan.RelOp) (spillFacts, bool) {
	w := n.Warnings
	if w == nil || len(w.SpillToTempDb) == 0 && len(w.SortSpills) == 0 && len(w.HashSpills) == 0 && len(w.ExchangeSpills) == 0 && !w.SpillOccurred {
		return spillFacts{}, false
	}
	f := spillFacts{spillOccured: w.SpillOccurred}
	switch {
	case len(w.ExchangeSpills) > 0 || n.IsExchange():
		f.kind = "exchange"
	case len(w.HashSpills) > 0 || n.PhysicalOp == "Hash Match":
		f.kind = "hash"
	default:
		f.kind = "sort"
	}
	for _, s := range w.SpillToTempDb {
		f.level = max(f.level, s.Level)
		f.threads = max(f.threads, s.SpilledThreadCount)
	}
	for _, list := range [][]plan.SpillDetails{w.SortSpills, w.HashSpills, w.ExchangeSpills} {
		for _, d := range list {
			f.hasDetails = true
			f.writes += d.WritesToTempDb
			f.reads += d.ReadsFromTempDb
			f.grantedKB += d.GrantedMemoryKB
			f.usedKB += d.UsedMemoryKB
		}
	}
	return f, true
}

func runSpill(p *Pass) {
	elapsed := statementElapsedMs(p.Statement)
	skews := p.Prior("row-estimate-skew")
	for _, r := range skewCauseRules {
		skews = append(skews, p.Prior(r)...)
	}
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			f, ok := spillOf(n)
			if !ok {
				continue
			}
			reportSpill(p, q, n, f, elapsed, skews)
		}
	}
}

func reportSpill(p *Pass, q plan.LabeledPlan, n *plan.RelOp, f spillFacts, elapsed float64, skews []Finding) {
	ev := map[string]any{"operator": n.DisplayName(), "spill_kind": f.kind}
	var b strings.Builder
	fmt.Fprintf(&b, "%s spilled to tempdb", n.DisplayName())
	var parts []string
	if f.level > 0 || f.kind != "exchange" && len(n.Warnings.SpillToTempDb) > 0 {
		ev["spill_level"] = f.level
		parts = append(parts, fmt.Sprintf("level %d", f.level))
	}
	if f.threads > 0 {
		ev["spilled_threads"] = f.threads
		parts = append(parts, fmt.Sprintf("%d %s", f.threads, plural(f.threads, "thread")))
	}
	if f.hasDetails {
		ev["writes_to_tempdb_pages"], ev["reads_from_tempdb_pages"] = int64(f.writes), int64(f.reads)
		parts = append(parts, fmt.Sprintf("%s pages written (%s), %s read", units.Count(f.writes), sizeMB(f.writes*8), units.Count(f.reads)))
		if f.grantedKB > 0 {
			ev["operator_granted_kb"], ev["operator_used_kb"] = int64(f.grantedKB), int64(f.usedKB)
			parts = append(parts, fmt.Sprintf("%s of its %s grant used", sizeMB(f.usedKB), sizeMB(f.grantedKB)))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	}
	share := -1.0 // unknown; an exchange's own time is mostly waiting, not spilling
	if t := n.Time; t != nil && elapsed > 0 && !t.Waiting {
		share = math.Min(1, float64(t.SelfElapsedMs)/elapsed)
		ev["self_elapsed_ms"], ev["statement_elapsed_ms"], ev["time_share"] = t.SelfElapsedMs, elapsed, round(share, 3)
		fmt.Fprintf(&b, "; it took %s ms of its own, %s of the statement's %s ms", units.Count(float64(t.SelfElapsedMs)), percent(share), units.Count(elapsed))
	}
	if mg := q.MemoryGrant; mg != nil && mg.GrantedKB > 0 {
		ev["statement_granted_kb"], ev["statement_max_used_kb"] = int64(mg.GrantedKB), int64(mg.MaxUsedKB)
		fmt.Fprintf(&b, "; the statement was granted %s and used %s", sizeMB(mg.GrantedKB), sizeMB(mg.MaxUsedKB))
	}
	cause := spillCause(n, f, skews)
	if cause.text != "" {
		fmt.Fprintf(&b, "; %s", cause.text)
	}
	if cause.node >= 0 {
		ev["misestimate_node"] = cause.node
	}

	sev := spillSeverity(p, f, share, elapsed)
	p.Report(Finding{Severity: sev, NodeID: Node(n.NodeID), Message: b.String(), Evidence: ev, Fix: spillFix(n, f, cause)})
}

// spillSeverity grades by pages moved and by the operator's share of the
// statement's time (share < 0: unknown).
func spillSeverity(p *Pass, f spillFacts, share, elapsed float64) Severity {
	pages := math.Max(f.writes, f.reads)
	minPages, minShare := p.Param("min_pages"), p.Param("min_share")
	switch {
	case pages >= p.Param("error_pages"):
		return Error
	case share >= p.Param("error_share") && elapsed >= 1000:
		return Error
	case share >= minShare && (pages >= minPages || !f.hasDetails):
		return Warning
	case share < 0 && pages >= minPages:
		return Warning
	case pages >= 100*minPages: // hundreds of MB through tempdb, however fast
		return Warning
	}
	return Info
}

type spillReason struct {
	text string
	node int // the misestimated node, -1 when none
	skew *plan.RowSkew
}

// underestimated reports whether a finding on c is about c returning more
// rows than estimated: row-estimate-skew says so, a cause rule's finding
// (parameter values, table variable, …) counts when c was underestimated.
func underestimated(f *Finding, c *plan.RelOp) bool {
	if f.Rule == "row-estimate-skew" {
		return f.Evidence["direction"] == "under"
	}
	s, ok := c.EstimateSkew()
	return ok && s.Under
}

// spillCause finds the underestimate that starved the operator: a
// row-estimate-skew finding on it or below it, else its input's estimate.
func spillCause(n *plan.RelOp, f spillFacts, skews []Finding) spillReason {
	if f.kind == "exchange" {
		if p := n.Parent; p != nil && p.PhysicalOp == "Merge Join" {
			return spillReason{text: fmt.Sprintf("it feeds %s (node %d), which needs its input in order, so the exchange "+
				"preserves order and waits for the slowest thread", p.DisplayName(), p.NodeID), node: -1}
		}
		return spillReason{node: -1}
	}
	var found *Finding
	n.Walk(func(c *plan.RelOp) bool {
		if found != nil {
			return false
		}
		if fd := findingAt(skews, c.NodeID); fd != nil && underestimated(fd, c) {
			found = fd
			return false
		}
		return true
	})
	if found != nil {
		return spillReason{text: fmt.Sprintf("the grant was sized from an underestimate: %s (node %d, %s)", found.Operator, *found.NodeID, found.Rule), node: *found.NodeID}
	}
	// The input whose rows fill the memory: the sort's input, the hash build.
	if len(n.Children) > 0 {
		in := n.Children[0]
		for in.RunTime == nil && len(in.Children) == 1 {
			in = in.Children[0]
		}
		if s, ok := in.EstimateSkew(); ok && s.Under && s.Factor >= 2 {
			return spillReason{text: fmt.Sprintf("its input %s (node %d) was estimated at %s rows and produced %s",
				in.DisplayName(), in.NodeID, units.Count(s.EstimatedAll), units.Count(s.ActualAll)), node: in.NodeID, skew: &s}
		}
	}
	return spillReason{node: -1}
}

func spillFix(n *plan.RelOp, f spillFacts, c spillReason) string {
	switch {
	case f.kind == "exchange":
		return "remove the order-preserving exchange: let the join be a hash join (OPTION (HASH JOIN)) or run the query " +
			"serially (OPTION (MAXDOP 1)) and compare; an index that delivers both inputs in join order avoids the repartition"
	case c.node >= 0:
		return fmt.Sprintf("fix the estimate of node %d first (its finding names the cause), so the grant fits the rows; "+
			"until then OPTION (MIN_GRANT_PERCENT = n) or memory grant feedback (SQL Server 2019+, compatibility level 150) "+
			"gives the operator the memory it needs", c.node)
	}
	need := ""
	if f.hasDetails && f.usedKB > 0 {
		need = fmt.Sprintf(" (it needed about %s: %s in memory plus %s written)", sizeMB(f.usedKB+f.writes*8), sizeMB(f.usedKB), sizeMB(f.writes*8))
	}
	return "give the operator the memory it needs" + need + ": OPTION (MIN_GRANT_PERCENT = n), memory grant feedback " +
		"(SQL Server 2019+, compatibility level 150), or fewer or narrower rows into it (select only the columns needed)"
}

// sizeMB renders kilobytes as KB, MB or GB.
func sizeMB(kb float64) string {
	switch {
	case kb >= 1024*1024:
		return fmt.Sprintf("%.1f GB", kb/1024/1024)
	case kb >= 1024:
		return fmt.Sprintf("%.0f MB", kb/1024)
	}
	return fmt.Sprintf("%.0f KB", kb)
}

func init() { register(Spill) }

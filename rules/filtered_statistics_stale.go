package rules

import (
	"fmt"
	"math"
	"strings"

	"github.com/planlint/planlint/plan"
)

// FilteredStatisticsStale reports filtered-index statistics that the plan's
// estimates came from although the active subset they describe has changed
// many times over since they were built.
var FilteredStatisticsStale = &Rule{
	Code:     "PL206",
	Name:     "filtered-statistics-stale",
	Severity: Warning,
	Summary:  "The statistics of a filtered index are stale for the subset they describe",
	Params: []Param{
		{"min_modifications", 100, "ignore statistics with fewer modifications than this since their last update"},
		{"modification_ratio", 10, "estimated plans: report when modifications reach this multiple of the rows estimated from the statistics"},
		{"skew_factor", 10, "actual plans: report when the operator reading the index is off by at least this factor (either direction)"},
		{"min_rows", 100, "actual plans: ignore operators where both estimated and actual rows are below this"},
	},
	Doc: Doc{
		Problem: "A filtered index on a queue's active rows has its own statistics, and they describe a small subset that " +
			"changes all the time: every enqueued row is inserted into it, every finished row leaves it. SQL Server updates " +
			"statistics automatically when the modification counter reaches a threshold computed from the *whole table's* " +
			"rows (500 + 20 %, or √(1000 × rows) from SQL Server 2016 with compatibility level 130), not from the subset. " +
			"On a table of 50,000,000 rows that is about 223,607 modifications, so the statistics of an index holding 200 " +
			"pending rows can keep describing a queue that drained or grew long ago, and the plans compiled from them keep " +
			"the wrong join types, memory grants and access paths during a backlog.",
		Evidence: "SQL Server 2017 CU3 and later write `OptimizerStatsUsage/StatisticsInfo` into each plan: the statistics " +
			"the optimizer loaded, with `ModificationCount` (modifications since the last update, at compile time), " +
			"`LastUpdate` and `SamplingPercent`. planlint takes the statistics that belong to a filtered index (the " +
			"operator's `Object/@Filtered`, or a filter in the catalog facts) and the operator that reads that index. In " +
			"an actual plan it reports them when that operator's actual rows differ from its estimate by `skew_factor` " +
			"or more; in an estimated plan, when the modifications reach `modification_ratio` times the rows the " +
			"operator expects (info). The message gives the automatic-update threshold computed from the operator's " +
			"`TableCardinality`; a count past that threshold at compile time means automatic updates are off or " +
			"asynchronous for the database.",
		Example: "`Index Scan` of `IX_Work_Pending` (`WHERE Status = 0`) estimated 200 rows and read 60,000 during a " +
			"backlog; `StatisticsInfo Statistics=\"[IX_Work_Pending]\" ModificationCount=\"61500\"` on a 5,000,000-row " +
			"table, whose automatic-update threshold is about 70,711 modifications.",
		Fix: "Update the filtered index's statistics yourself: `UPDATE STATISTICS dbo.Work IX_Work_Pending WITH FULLSCAN` " +
			"is cheap because the index holds only the active rows. Run it from a job as often as the queue turns over, " +
			"and after a backlog builds or drains; plans that used the statistics recompile on their next execution. " +
			"Compare a plan captured at normal depth with one captured during a backlog (`planlint explain " +
			"--compare-with database=...`) to see the difference the statistics make.",
		FalseAlarms: "A skew that comes from parameter sniffing or a misestimated join is not about freshness; with " +
			"`ModificationCount` near 0 the rule stays silent. In an estimated plan the ratio is a hint, not proof: " +
			"modifications that move rows in and out of the subset and back leave its size unchanged.",
		References: []string{
			"https://www.sqlskills.com/blogs/kimberly/filtered-indexes-and-filtered-stats-might-become-seriously-out-of-date/",
			"https://learn.microsoft.com/sql/relational-databases/statistics/statistics#auto_update_statistics-option",
		},
	},
	Run: runFilteredStatisticsStale,
}

func runFilteredStatisticsStale(p *Pass) {
	minMods := p.Param("min_modifications")
	for _, q := range p.Plans() {
		for _, st := range q.Statistics {
			if st.ModificationCount < minMods {
				continue
			}
			readers := statisticsReaders(p, q.QueryPlan, st)
			if len(readers) == 0 {
				continue
			}
			if f, ok := staleStatisticsFinding(p, q, st, readers); ok {
				p.Report(f)
			}
		}
	}
}

// statisticsReaders are the operators that read the filtered index the
// statistics belong to.
func statisticsReaders(p *Pass, q *plan.QueryPlan, st plan.StatisticsInfo) []*plan.RelOp {
	table := plan.ObjectRef{Database: st.Database, Schema: st.Schema, Table: st.Table}
	var out []*plan.RelOp
	for _, n := range q.Nodes {
		if n.Access == nil || isWrite(n) || n.IsLookup() {
			continue
		}
		o := n.Access.Object()
		if !o.SameTable(table) || !strings.EqualFold(o.Index, st.Statistics) || !filteredIndex(p, o) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// filteredIndex reports whether the plan or the catalog says the object's
// index has a filter.
func filteredIndex(p *Pass, o plan.ObjectRef) bool {
	if o.Filtered {
		return true
	}
	if t := findTable(p.Catalog, o); t != nil {
		if ix := t.FindIndex(o.Index); ix != nil {
			return ix.FilterDefinition != ""
		}
	}
	return false
}

// autoUpdateThreshold is the modification count at which SQL Server updates
// statistics of a table with rows rows: 500 + 20 %, or from compatibility
// level 130 (cardinality estimator 130 and later) the smaller of that and
// √(1000 × rows).
func autoUpdateThreshold(rows float64, ceVersion int) float64 {
	t := 500 + 0.2*rows
	if ceVersion >= 130 {
		t = math.Min(t, math.Sqrt(1000*rows))
	}
	return t
}

func staleStatisticsFinding(p *Pass, q plan.LabeledPlan, st plan.StatisticsInfo, readers []*plan.RelOp) (Finding, bool) {
	reader, sk, measured := readers[0], skew{}, false
	for _, n := range readers {
		if s, ok := measureSkew(n); ok && (!measured || s.factor > sk.factor) {
			reader, sk, measured = n, s, true
		}
	}
	o := reader.Access.Object()
	ev := objectEvidence(o)
	ev["statistics"] = st.Statistics
	ev["modification_count"] = int64(st.ModificationCount)
	if st.LastUpdate != "" {
		ev["last_update"] = st.LastUpdate
	}
	if st.SamplingPercent > 0 {
		ev["sampling_percent"] = round(st.SamplingPercent, 2)
	}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}

	var b strings.Builder
	fmt.Fprintf(&b, "the statistics of filtered index %s on %s have %s modifications since their last update",
		o.Index, o.TableName(false), count(st.ModificationCount))
	if st.LastUpdate != "" {
		fmt.Fprintf(&b, " (%s", st.LastUpdate)
		if st.SamplingPercent > 0 {
			fmt.Fprintf(&b, ", %g%% sampled", round(st.SamplingPercent, 2))
		}
		b.WriteString(")")
	}
	sev := Info
	if measured {
		minRows := p.Param("min_rows")
		if sk.factor < p.Param("skew_factor") || math.Max(sk.estAll, sk.actAll) < minRows || !sk.under && earlyTermination(reader) {
			return Finding{}, false
		}
		dir := map[bool]string{true: "under", false: "over"}[sk.under]
		ev["estimated_rows"] = round(sk.estAll, 1)
		ev["actual_rows"] = int64(sk.actAll)
		ev["factor"] = round(sk.factor, 1)
		ev["direction"] = dir
		fmt.Fprintf(&b, ", and %s (node %d) read %s rows where they predicted %s (%s× %s)",
			reader.DisplayName(), reader.NodeID, count(sk.actAll), count(sk.estAll), count(sk.factor), dir)
		sev = Warning
	} else {
		est := reader.EstimateRows
		if reader.EstimateRowsWithoutRowGoal != nil {
			est = *reader.EstimateRowsWithoutRowGoal
		}
		ratio := st.ModificationCount / math.Max(est, 1)
		if ratio < p.Param("modification_ratio") {
			return Finding{}, false
		}
		ev["estimated_rows"] = round(est, 1)
		ev["modification_ratio"] = round(ratio, 1)
		fmt.Fprintf(&b, ", %s× the %s rows %s (node %d) expects from them", count(ratio), count(est), reader.DisplayName(), reader.NodeID)
	}
	if rows := reader.TableCardinality; rows > 0 {
		t := autoUpdateThreshold(rows, p.Statement.CEModelVersion)
		ev["table_rows"] = int64(rows)
		ev["auto_update_threshold"] = int64(math.Round(t))
		if st.ModificationCount < t {
			fmt.Fprintf(&b, ": the automatic update waits for about %s modifications, a threshold computed from all %s rows of the table, not from the filtered subset",
				count(t), count(rows))
		} else {
			fmt.Fprintf(&b, ": that is past the automatic-update threshold (about %s for the table's %s rows), so AUTO_UPDATE_STATISTICS is off or asynchronous for this database",
				count(t), count(rows))
		}
	}
	fix := fmt.Sprintf("UPDATE STATISTICS %s %s WITH FULLSCAN (cheap: the index holds only the active rows) from a job that runs as often as the queue turns over and after a backlog builds or drains",
		o.TableName(false), st.Statistics)
	return Finding{Severity: sev, NodeID: Node(reader.NodeID), Message: b.String(), Fix: fix, Evidence: ev}, true
}

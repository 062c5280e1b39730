package rules

import (
	"fmt"
	"math"
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/internal/units"
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
		Evidence: "Two sources, used together when both are there. SQL Server 2017 CU3 and later write " +
			"`OptimizerStatsUsage/StatisticsInfo` into each plan: the statistics the optimizer loaded, with " +
			"`ModificationCount` (modifications since the last update, at compile time), `LastUpdate` and " +
			"`SamplingPercent`. The catalog facts that `explain` reads (and `--save` keeps) add, per index, the rows it " +
			"holds now (`sys.partitions`) and, from `sys.dm_db_stats_properties`, the rows it held when its statistics " +
			"were built, the rows sampled and the modification counter. planlint takes the filtered indexes the plan " +
			"reads (the operator's `Object/@Filtered`, or a filter in the catalog facts) and reports, as a warning, an " +
			"operator of an actual plan whose rows differ from its estimate by `skew_factor` or more while the statistics " +
			"show modifications or growth, or an index that holds `skew_factor` times more (or fewer) rows than when its " +
			"statistics were built; and, at info level, an estimated plan whose statistics have `modification_ratio` " +
			"times more modifications than the rows the operator expects. The message gives the automatic-update " +
			"threshold computed from the table's rows (`TableCardinality`, or the clustered index's size); a count past " +
			"that threshold at compile time means automatic updates are off or asynchronous for the database.",
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
	for _, q := range p.Plans() {
		for _, r := range filteredIndexReads(p, q.QueryPlan) {
			if f, ok := staleStatisticsFinding(p, q, r); ok {
				p.Report(f)
			}
		}
	}
}

// indexRead is a filtered index the plan reads, with what is known about
// its statistics.
type indexRead struct {
	object  plan.ObjectRef
	readers []*plan.RelOp
	stats   *plan.StatisticsInfo // the plan's OptimizerStatsUsage entry; nil when absent
	facts   *catalog.Index       // catalog facts; nil when unknown
}

// filteredIndexReads groups the seeks and scans of filtered indexes by
// index.
func filteredIndexReads(p *Pass, q *plan.QueryPlan) []*indexRead {
	var out []*indexRead
	for _, n := range q.Nodes {
		if n.Access == nil || isWrite(n) || n.IsLookup() {
			continue
		}
		o := n.Access.Object()
		if _, filtered := indexFilter(p.Catalog, o); o.Index == "" || !filtered {
			continue
		}
		var r *indexRead
		for _, x := range out {
			if x.object.SameTable(o) && strings.EqualFold(x.object.Index, o.Index) {
				r = x
				break
			}
		}
		if r == nil {
			r = &indexRead{object: o}
			for i, st := range q.Statistics {
				if o.SameTable(plan.ObjectRef{Database: st.Database, Schema: st.Schema, Table: st.Table}) && strings.EqualFold(st.Statistics, o.Index) {
					r.stats = &q.Statistics[i]
				}
			}
			if t := findTable(p.Catalog, o); t != nil {
				r.facts = t.FindIndex(o.Index)
			}
			out = append(out, r)
		}
		r.readers = append(r.readers, n)
	}
	return out
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

// freshness is what is known about an index's statistics: from the
// catalog (at capture time, consistent with the index's current size) when
// it has them, else from the plan (at compile time).
type freshness struct {
	lastUpdate    string
	sampled       float64 // percent; 0 when unknown
	modifications float64
	known         bool    // modifications known
	fromPlan      bool    // counted at compile time (plan), not at capture (catalog)
	builtRows     float64 // rows when built (catalog); -1 when unknown
	nowRows       float64 // rows now (catalog); -1 when unknown
}

func (r *indexRead) freshness() freshness {
	f := freshness{builtRows: -1, nowRows: -1}
	if st := r.stats; st != nil {
		f.lastUpdate, f.sampled, f.modifications, f.known, f.fromPlan = st.LastUpdate, st.SamplingPercent, st.ModificationCount, true, true
	}
	if fs := r.facts; fs != nil {
		if st := fs.Statistics; st != nil {
			f.lastUpdate, f.modifications, f.known, f.fromPlan = st.LastUpdated, float64(st.ModificationCounter), true, false
			f.builtRows, f.sampled = float64(st.Rows), 0
			if st.Rows > 0 {
				f.sampled = 100 * float64(st.RowsSampled) / float64(st.Rows)
			}
		}
		if fs.Size != nil {
			f.nowRows = float64(fs.Size.Rows)
		}
	}
	return f
}

func staleStatisticsFinding(p *Pass, q plan.LabeledPlan, r *indexRead) (Finding, bool) {
	skewMin, minRows := p.Param("skew_factor"), p.Param("min_rows")
	fr := r.freshness()
	stale := fr.known && fr.modifications >= p.Param("min_modifications")
	growth := 0.0
	if fr.builtRows >= 0 && fr.nowRows >= 0 && math.Max(fr.builtRows, fr.nowRows) >= minRows {
		growth = math.Max(fr.builtRows, fr.nowRows) / math.Max(math.Min(fr.builtRows, fr.nowRows), 1)
	}
	reader, sk, measured := r.readers[0], plan.RowSkew{}, false
	for _, n := range r.readers {
		if s, ok := n.EstimateSkew(); ok && (!measured || s.Factor > sk.Factor) {
			reader, sk, measured = n, s, true
		}
	}

	o := reader.Access.Object()
	ev := objectEvidence(o)
	ev["statistics"] = o.Index
	var b strings.Builder
	fmt.Fprintf(&b, "the statistics of filtered index %s on %s", o.Index, o.TableName(false))
	sev := Info
	switch {
	case measured:
		if !stale && growth < skewMin || sk.Factor < skewMin || math.Max(sk.EstimatedAll, sk.ActualAll) < minRows || !sk.Under && earlyTermination(reader) {
			return Finding{}, false
		}
		dir := map[bool]string{true: "under", false: "over"}[sk.Under]
		ev["estimated_rows"], ev["actual_rows"] = round(sk.EstimatedAll, 1), int64(sk.ActualAll)
		ev["factor"], ev["direction"] = round(sk.Factor, 1), dir
		describeFreshness(&b, ev, fr)
		fmt.Fprintf(&b, ", and %s (node %d) read %s rows where they predicted %s (%s× %s)",
			reader.DisplayName(), reader.NodeID, units.Count(sk.ActualAll), units.Count(sk.EstimatedAll), units.Count(sk.Factor), dir)
		sev = Warning
	case growth >= skewMin:
		ev["growth_factor"] = round(growth, 1)
		describeFreshness(&b, ev, fr)
		fmt.Fprintf(&b, "; the index holds %s rows now (%s× %s), so %s (node %d) is compiled for a subset of another size",
			units.Count(fr.nowRows), units.Count(growth), map[bool]string{true: "more", false: "fewer"}[fr.nowRows > fr.builtRows], reader.DisplayName(), reader.NodeID)
		sev = Warning
	case stale && r.stats != nil && (fr.builtRows < 0 || fr.nowRows < 0): // size unknown: modifications hint at change
		est := reader.EstimateRows
		if reader.EstimateRowsWithoutRowGoal != nil {
			est = *reader.EstimateRowsWithoutRowGoal
		}
		ratio := fr.modifications / math.Max(est, 1)
		if ratio < p.Param("modification_ratio") {
			return Finding{}, false
		}
		ev["estimated_rows"], ev["modification_ratio"] = round(est, 1), round(ratio, 1)
		describeFreshness(&b, ev, fr)
		fmt.Fprintf(&b, ", %s× the %s rows %s (node %d) expects from them", units.Count(ratio), units.Count(est), reader.DisplayName(), reader.NodeID)
	default:
		return Finding{}, false
	}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}
	describeThreshold(&b, ev, fr, tableRows(p, reader), p.Statement.CEModelVersion)
	fix := fmt.Sprintf("UPDATE STATISTICS %s %s WITH FULLSCAN (cheap: the index holds only the active rows) from a job that runs as often as the queue turns over and after a backlog builds or drains",
		o.TableName(false), o.Index)
	return Finding{Severity: sev, NodeID: Node(reader.NodeID), Message: b.String(), Fix: fix, Evidence: ev}, true
}

// describeFreshness continues "the statistics of filtered index X" with
// what is known of their age.
func describeFreshness(b *strings.Builder, ev map[string]any, fr freshness) {
	if fr.builtRows >= 0 {
		fmt.Fprintf(b, " were built when it held %s rows", units.Count(fr.builtRows))
		ev["statistics_rows"] = int64(fr.builtRows)
		if fr.known {
			fmt.Fprintf(b, " and have counted %s modifications since", units.Count(fr.modifications))
		}
	} else if fr.known {
		fmt.Fprintf(b, " have %s modifications since their last update", units.Count(fr.modifications))
	}
	if fr.known {
		ev["modification_count"] = int64(fr.modifications)
	}
	if fr.nowRows >= 0 {
		ev["index_rows"] = int64(fr.nowRows)
	}
	if fr.lastUpdate != "" {
		ev["last_update"] = fr.lastUpdate
		fmt.Fprintf(b, " (%s", fr.lastUpdate)
		if fr.sampled > 0 {
			ev["sampling_percent"] = round(fr.sampled, 2)
			fmt.Fprintf(b, ", %g%% sampled", round(fr.sampled, 2))
		}
		b.WriteString(")")
	}
}

// tableRows is the table's row count: the operator's TableCardinality,
// else the catalog's size of the clustered index.
func tableRows(p *Pass, n *plan.RelOp) float64 {
	if n.TableCardinality > 0 {
		return n.TableCardinality
	}
	if t := findTable(p.Catalog, n.Access.Object()); t != nil {
		if c := t.Clustered(); c != nil && c.Size != nil {
			return float64(c.Size.Rows)
		}
	}
	return 0
}

// describeThreshold ends the message with the automatic-update threshold
// of the whole table.
func describeThreshold(b *strings.Builder, ev map[string]any, fr freshness, rows float64, ce int) {
	if rows <= 0 {
		return
	}
	t := autoUpdateThreshold(rows, ce)
	ev["table_rows"] = int64(rows)
	ev["auto_update_threshold"] = int64(math.Round(t))
	if !fr.known || fr.modifications < t {
		fmt.Fprintf(b, ": the automatic update waits for about %s modifications, a threshold computed from all %s rows of the table, not from the filtered subset",
			units.Count(t), units.Count(rows))
		return
	}
	if fr.fromPlan {
		fmt.Fprintf(b, ": that is past the automatic-update threshold (about %s for the table's %s rows) at compile time, so AUTO_UPDATE_STATISTICS is off or asynchronous for this database",
			units.Count(t), units.Count(rows))
		return
	}
	fmt.Fprintf(b, ": that is past the automatic-update threshold (about %s for the table's %s rows), so the next compile that loads them updates them unless AUTO_UPDATE_STATISTICS is off; plans compiled before keep the old estimates",
		units.Count(t), units.Count(rows))
}

func init() { register(FilteredStatisticsStale) }

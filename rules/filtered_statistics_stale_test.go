package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/planlint/planlint/catalog"
)

func TestFilteredStatisticsStale(t *testing.T) {
	stats := func(name string, mods float64) string {
		return fmt.Sprintf(`<OptimizerStatsUsage><StatisticsInfo Database="[WorkDb]" Schema="[dbo]" Table="[Work]" Statistics="[%s]"`+
			` ModificationCount="%g" SamplingPercent="100" LastUpdate="2025-11-01T02:00:14.87"/></OptimizerStatsUsage>`, name, mods)
	}
	filteredObj := `<Object Database="[WorkDb]" Schema="[dbo]" Table="[Work]" Index="[IX_Work_Pending]" Filtered="1" IndexKind="NonClustered"/>`
	pending := func(est float64, extra, body string) string {
		return op(1, "Index Scan", "Index Scan", est, 1, `TableCardinality="5000000" `+extra,
			`<IndexScan Ordered="1" ForcedIndex="0" ForceScan="0" NoExpandHint="0">`+filteredObj+`</IndexScan>`)
	}
	withRT := func(relop string, rows int64) string {
		return strings.Replace(relop, "<OutputList/>", "<OutputList/>"+runtime(rows, 1), 1)
	}
	top := func(child string) string {
		return op(0, "Top", "Top", 20, 1, "", `<Top RowCount="0" IsPercent="0" WithTies="0"><TopExpression><ScalarOperator ScalarString="(20)"/></TopExpression>`+child+`</Top>`)
	}
	const ce160 = `CardinalityEstimationModelVersion="160"`
	cases := []struct {
		name     string
		attrs    string
		planHead string
		tree     string
		catalog  bool
		want     string // severity and a message fragment; "" for no finding
		facts    func(*catalog.Index)
	}{
		{"actual: backlog outran the statistics", ce160, stats("IX_Work_Pending", 61500), withRT(pending(200, "", ""), 60000),
			false, "warning: the statistics of filtered index IX_Work_Pending on dbo.Work have 61,500 modifications since their last update (2025-11-01T02:00:14.87, 100% sampled), and Index Scan (node 1) read 60,000 rows where they predicted 200 (300× under): the automatic update waits for about 70,711 modifications", nil},
		{"actual: drained queue, overestimate", ce160, stats("IX_Work_Pending", 3000), withRT(pending(50000, "", ""), 150),
			false, "warning: the statistics of filtered index IX_Work_Pending", nil},
		{"actual: estimate right, statistics fine in effect", ce160, stats("IX_Work_Pending", 61500), withRT(pending(200, "", ""), 240),
			false, "", nil},
		{"actual: skew without modifications is not about freshness", ce160, stats("IX_Work_Pending", 0), withRT(pending(200, "", ""), 60000),
			false, "", nil},
		{"actual: fewer rows below a Top is early termination", ce160, stats("IX_Work_Pending", 61500), top(withRT(pending(20, `EstimateRowsWithoutRowGoal="50000"`, ""), 20)),
			false, "", nil},
		{"estimated: modifications dwarf the estimate", ce160, stats("IX_Work_Pending", 61500), pending(200, "", ""),
			false, "info: the statistics of filtered index IX_Work_Pending on dbo.Work have 61,500 modifications since their last update (2025-11-01T02:00:14.87, 100% sampled), 308× the 200 rows Index Scan (node 1) expects from them", nil},
		{"estimated: the row goal does not shrink the subset", ce160, stats("IX_Work_Pending", 1500), top(pending(20, `EstimateRowsWithoutRowGoal="500"`, "")),
			false, "", nil},
		{"estimated: past the threshold means auto-update is off", ce160, stats("IX_Work_Pending", 900000), pending(200, "", ""),
			false, "so AUTO_UPDATE_STATISTICS is off or asynchronous", nil},
		{"legacy estimator threshold is 20 %", `CardinalityEstimationModelVersion="120"`, stats("IX_Work_Pending", 61500), pending(200, "", ""),
			false, "waits for about 1,000,500 modifications", nil},
		{"statistics of another index are ignored", ce160, stats("PK_Work", 61500), pending(200, "", ""),
			false, "", nil},
		{"unfiltered index without catalog facts is ignored", ce160, stats("IX_Work_Pending", 61500),
			strings.Replace(pending(200, "", ""), ` Filtered="1"`, "", 1), false, "", nil},
		{"the catalog knows the filter when the plan does not say", ce160, stats("IX_Work_Pending", 61500),
			strings.Replace(pending(200, "", ""), ` Filtered="1"`, "", 1), true, "info: the statistics of filtered index IX_Work_Pending", nil},
		{"catalog: the index grew since its statistics were built", ce160, "", pending(200, "", ""), true,
			"warning: the statistics of filtered index IX_Work_Pending on dbo.Work were built when it held 200 rows and have counted 61,500 modifications since (2025-11-01T02:00:14.87, 100% sampled); the index holds 60,000 rows now (300× more), so Index Scan (node 1) is compiled for a subset of another size: the automatic update waits for about 70,711 modifications",
			grown(200, 60000, 61500)},
		{"catalog: the index drained", ce160, "", pending(50000, "", ""), true,
			"the index holds 150 rows now (333× fewer)", grown(50000, 150, 99700)},
		{"catalog: same size, nothing to say", ce160, "", pending(200, "", ""), true, "", grown(200, 240, 61500)},
		{"catalog: a stable size outweighs the plan's modification count", ce160, stats("IX_Work_Pending", 61500), pending(200, "", ""), true, "", grown(200, 240, 61500)},
		{"catalog: tiny subsets are ignored", ce160, "", pending(2, "", ""), true, "", grown(2, 60, 500)},
		{"catalog: past the threshold is pending, not off", ce160, "", pending(200, "", ""), true,
			"so the next compile that loads them updates them unless AUTO_UPDATE_STATISTICS is off", grown(200, 60000, 900000)},
		{"actual: skew explained by catalog growth alone", ce160, "", withRT(pending(200, "", ""), 60000), true,
			"warning: the statistics of filtered index IX_Work_Pending on dbo.Work were built when it held 200 rows and have counted 0 modifications since", grown(200, 60000, 0)},
		{"actual: skew with fresh statistics and a stable index is not this rule's", ce160, "", withRT(pending(200, "", ""), 60000), true, "", grown(200, 200, 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := showplan(t, stmt(c.attrs, "", c.planHead, c.tree))
			cat := queueCatalogOrNil(t, c.catalog)
			if c.facts != nil {
				c.facts(cat.FindTable("", "dbo", "Work").FindIndex("IX_Work_Pending"))
			}
			fs := analyze(t, d, cat, FilteredStatisticsStale)
			if c.want == "" {
				if len(fs) != 0 {
					t.Errorf("want no finding, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 {
				t.Fatalf("want one finding, got %+v", fs)
			}
			got := fs[0].Severity.String() + ": " + fs[0].Message
			if !strings.Contains(got, c.want) {
				t.Errorf("finding\n got %s\nwant %s", got, c.want)
			}
			if fs[0].NodeID == nil || *fs[0].NodeID != 1 {
				t.Errorf("finding on node %v, want the index scan", fs[0].NodeID)
			}
			if !strings.Contains(fs[0].Fix, "UPDATE STATISTICS dbo.Work IX_Work_Pending WITH FULLSCAN") {
				t.Errorf("fix %q", fs[0].Fix)
			}
		})
	}
}

func TestAutoUpdateThreshold(t *testing.T) {
	for _, c := range []struct {
		rows float64
		ce   int
		want float64
	}{
		{1000, 160, 700},            // 500 + 20 % is the smaller
		{5_000_000, 160, 70_711},    // √(1000 × rows)
		{50_000_000, 150, 223_607},  // the article's 50-million-row queue
		{5_000_000, 120, 1_000_500}, // before compatibility level 130
	} {
		if got := autoUpdateThreshold(c.rows, c.ce); round(got, 0) != c.want {
			t.Errorf("autoUpdateThreshold(%g, %d) = %g, want %g", c.rows, c.ce, got, c.want)
		}
	}
}

func queueCatalogOrNil(t *testing.T, want bool) *catalog.Catalog {
	if !want {
		return nil
	}
	return queueCatalog(t)
}

// grown sets the catalog facts of an index whose statistics were built
// over built rows and which holds now rows.
func grown(built, now, mods int64) func(*catalog.Index) {
	return func(ix *catalog.Index) {
		ix.Size = &catalog.IndexSize{Rows: now, UsedPages: now/300 + 1}
		ix.Statistics = &catalog.StatisticsFacts{LastUpdated: "2025-11-01T02:00:14.87", Rows: built, RowsSampled: built, ModificationCounter: mods}
	}
}

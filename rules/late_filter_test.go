package rules

import "testing"

func TestLateFilterCorpus(t *testing.T) {
	corpusCases(t, LateFilter, []nodeCase{
		// HAVING MAX(p.Score) >= 5000 after the aggregate: 97 of 1,440,301 rows.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__join_or_clause_plan.sqlplan", 2, Info, []string{"keeps 97 of 1,440,301 rows", "HAVING", "MAX(x) >= c"}},
		// ROW_NUMBER() = 0 needs the window first.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__slow-multi-seek.sqlplan", 1, Info, []string{"windowed function computed by Sequence Project (node 4)"}},
		// A bitmap probe over a scan is not late.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__parallel-skew.sqlplan", 4, 0, nil},
		// 324 of 600 rows kept.
		{"hqp__test_plans__index_spool.sqlplan", 0, 0, nil},
	})
}

func TestLateFilterFixtures(t *testing.T) {
	fixtureCases(t, LateFilter, []nodeCase{
		// LEFT JOIN ... WHERE s.OrderId IS NULL: 10,000 of 1,000,000 joined rows kept, 4.2 s.
		{"late-filter-anti-join.sqlplan", 0, Warning, []string{"Filter s.OrderId IS NULL keeps 10,000 of 1,000,000 rows", "Hash Match (Left Outer Join) (node 1)",
			"NOT EXISTS (SELECT 1 FROM dbo.Shipments AS s"}},
	})
}

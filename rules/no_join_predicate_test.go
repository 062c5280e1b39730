package rules

import "testing"

func TestNoJoinPredicateCorpus(t *testing.T) {
	corpusCases(t, NoJoinPredicate, []nodeCase{
		// Posts and Badges both sought on v.UserId: the warning is misleading.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__param-sniffing-posttypeid2.sqlplan", 12, Info, []string{"not a cross join", "v.UserId", "transitive closure"}},
		// docs × docs with no predicate at all, 16 rows.
		{"hqp__test_plans__issue_39.sqlplan", 1, Info, []string{"without any join predicate", "16 rows (actual)"}},
		// LEFT JOIN ... ON 1=1 whose outer scan returned one row.
		{"sqlplanfordummies__public__examples__company.sqlplan", 6, Info, []string{"at most one row"}},
		// A correlated APPLY has no warning.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__lazy_spool_plan.sqlplan", 0, 0, nil},
	})
}

func TestNoJoinPredicateFixtures(t *testing.T) {
	fixtureCases(t, NoJoinPredicate, []nodeCase{
		// A comma join of 10,000 customers with 5,000 products: 50 million rows.
		{"cross-join.sqlplan", 0, Error, []string{"dbo.Customers with dbo.Products", "50,000,000 rows (estimated)", "ON a.Key = b.Key"}},
	})
}

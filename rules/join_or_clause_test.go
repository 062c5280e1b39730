package rules

import "testing"

func TestJoinOrClauseCorpus(t *testing.T) {
	corpusCases(t, JoinOrClause, []nodeCase{
		// ON u.Id = p.OwnerUserId OR u.Id = p.LastEditorUserId: 17,091,572 Merge Intervals, 31 s of seeks.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__join_or_clause_plan.sqlplan", 7, Error, []string{
			"p.LastEditorUserId and p.OwnerUserId", "17,091,572", "the seeks took 31 s",
			"FROM dbo.Posts AS p JOIN dbo.Users AS u ON u.Id = p.LastEditorUserId UNION SELECT ... FROM dbo.Posts AS p JOIN dbo.Users AS u ON u.Id = p.OwnerUserId"}},
		// A dynamic seek over literals.
		{"showplan-dotnet__tests__Showplan.Tests__plans__merge-interval-constant-scan.sqlplan", 1, 0, nil},
		// One parameter in both branches (type-mismatched comparison).
		{"supratimas__plans__set01__plans__plan5.sqlplan", 22, 0, nil},
		// An OR of inequalities between two rows is a change test, not a join key.
		{"supratimas__plans__set01__plans__plan79.sqlplan", 6, 0, nil},
	})
}

func TestJoinOrClauseFixtures(t *testing.T) {
	fixtureCases(t, JoinOrClause, []nodeCase{
		// 100,000 orders × 20,000 spooled customers tested against the OR.
		{"join-or-residual.sqlplan", 0, Warning, []string{"c.CustomerId = o.BillToId OR c.CustomerId = o.ShipToId", "2,000,000,000 pairs (estimated)",
			"FROM dbo.Orders AS o JOIN dbo.Customers AS c ON c.CustomerId = o.BillToId UNION"}},
	})
}

package rules

import "testing"

func TestRowCountSpoolNotInCorpus(t *testing.T) {
	corpusCases(t, RowCountSpoolNotIn, []nodeCase{
		// NOT IN over #OldUsers.UserId: 1,565 s of the statement's 1,570 s.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__row-count-spool-slow.sqlplan", 15, Error, []string{
			"24,198,656 (node 15) and 24,534,730 (node 13)", "1,565 s of the statement's 1,570 s",
			"NOT EXISTS (SELECT 1 FROM #OldUsers AS ou WHERE ou.UserId = nu.UserId)"}},
		// NOT EXISTS: the Row Count Spool's subtree is a correlated seek, no IS NULL test.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__param-sniffing-posttypeid2.sqlplan", 9, 0, nil},
		// Row Count Spool under a semi join.
		{"supratimas__plans__set01__plans__plan103.sqlplan", 21, 0, nil},
	})
}

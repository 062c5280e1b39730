package rules

import "testing"

func TestManyToManyMergeCorpus(t *testing.T) {
	corpusCases(t, ManyToManyMerge, []nodeCase{
		// INNER MERGE JOIN on PostTypeId = VoteTypeId: 3.6 s in the join itself.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__many_to_many_merge_plan.sqlplan", 1, Warning, []string{
			"neither dbo.Posts (PostTypeId) nor dbo.Votes (VoteTypeId)", "the join itself took 3.6 s", "remove the MERGE JOIN hint",
			"CREATE UNIQUE INDEX UX_Posts_PostTypeId ON dbo.Posts (PostTypeId);"}},
		// A table variable cannot take CREATE INDEX: declare the key in the DECLARE.
		{"supratimas__plans__set01__plans__plan59.sqlplan", 170, Info, []string{"PRIMARY KEY or UNIQUE in the table variable's DECLARE"}},
		// Remote inputs with estimates of 1e44 rows: no index DDL, numbers stay readable.
		{"showplan-dotnet__tests__Showplan.Tests__plans__HJMchor2.sqlplan", 3, Info, []string{"remote source", "1.78e+44 rows"}},
		// ManyToMany="0".
		{"supratimas__plans__set01__plans__plan10.sqlplan", 2, 0, nil},
	})
}

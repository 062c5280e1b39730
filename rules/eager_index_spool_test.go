package rules

import "testing"

func TestEagerIndexSpoolCorpus(t *testing.T) {
	corpusCases(t, EagerIndexSpool, []nodeCase{
		// 8,042,005 Badges rows copied into the spool: 22.7 s of 44.1 s.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__lazy_spool_plan.sqlplan", 4, Error,
			[]string{"8,042,005 rows", "CREATE INDEX IX_Badges_UserId ON dbo.Badges (UserId) INCLUDE (Id, Date);"}},
		// The lazy index spool above it caches TopN Sort results: not an index build.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__lazy_spool_plan.sqlplan", 2, 0, nil},
		// 600 rows, 26 ms.
		{"hqp__test_plans__index_spool.sqlplan", 6, Info, []string{"CREATE INDEX IX_Pedido_Data ON dbo.Pedido (Data) INCLUDE (Valor);"}},
		// Estimated: the whole 329,235-row tbRVObjet copied at every execution.
		{"showplan-dotnet__tests__Showplan.Tests__plans__parallelism2.sqlplan", 49, Warning, []string{"329,235 rows (estimated)", "(IDRV) INCLUDE (ID, Ordre)"}},
		// A two-key spool whose output is an expression.
		{"showplan-dotnet__tests__Showplan.Tests__plans__parallelism2.sqlplan", 60, Info, []string{"ON dbo.tbPaysISO (Langue, PaysISOChar3);", "Expr1025"}},
		// Eager Table Spool (Halloween protection).
		{"hqp__test_plans__index_update.sqlplan", 5, 0, nil},
	})
}

package rules

import (
	"strings"
	"testing"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
)

func TestNestedLoopsRepetitionCorpus(t *testing.T) {
	corpusCases(t, NestedLoopsRepetition, []nodeCase{
		// The Top/Table Scan of #OldUsers runs 24,534,730 times (1,562,674 ms of
		// 1,570,273 ms): it is NOT IN's null check, so this rule points at
		// row-count-spool-not-in's finding (node 15) instead of repeating it.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__row-count-spool-slow.sqlplan", 14, Info,
			[]string{"24,534,730 times", "row-count-spool-not-in at node 15", "NOT EXISTS"}},
		// Three seeks run 39,553 times because node 4 was estimated at 1 row:
		// one finding, naming the other two.
		{"hqp__test_plans__Not showing Seek Predicates.sqlplan", 23, Info, []string{"39,553 times", "misestimate at node 4", "seeks at nodes 26 and 22"}},
		{"hqp__test_plans__Not showing Seek Predicates.sqlplan", 22, 0, nil},
		// The Clustered Index Scan of Votes below the loop runs once.
		{"perfstudio__tests__PlanViewer.Core.Tests__Plans__top_above_scan_plan.sqlplan", 5, 0, nil},
		// A one-row table scanned 427,576 times reads one row each time.
		{"showplan-dotnet__tests__Showplan.Tests__plans__S1uW0oS3.sqlplan", 79, 0, nil},
		// A seek below a 100× misestimate, but only 100 executions.
		{"supratimas__plans__TestPlan02.sqlplan", 46, 0, nil},
	})
}

func TestNestedLoopsRepetitionFixtures(t *testing.T) {
	fixtureCases(t, NestedLoopsRepetition, []nodeCase{
		// APPLY with SUM over a scan of OrderLines (400,000 rows) run for each of 2,000 orders: 48 s.
		{"loop-inner-scan.sqlplan", 3, Error, []string{"2,000 times", "400,000 rows per execution", "48 s of the statement's 48 s",
			"row-estimate-skew at node 1", "CREATE INDEX IX_OrderLines_OrderId ON dbo.OrderLines (OrderId) INCLUDE (Amount);"}},
		// The outer seek is not on an inner side.
		{"loop-inner-scan.sqlplan", 1, 0, nil},
	})
}

func TestNestedLoopsRepetitionWithCatalog(t *testing.T) {
	d, err := plan.ParseFile(fixturePlan("loop-inner-scan.sqlplan"), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, schema, want string }{
		{"no index on OrderId yet",
			`CREATE TABLE dbo.OrderLines (OrderLineId int NOT NULL CONSTRAINT PK_OrderLines PRIMARY KEY CLUSTERED, OrderId int NOT NULL, Amount money NOT NULL);`,
			"CREATE INDEX IX_OrderLines_OrderId ON dbo.OrderLines (OrderId) INCLUDE (Amount);"},
		{"an index on OrderId is widened, not duplicated",
			`CREATE TABLE dbo.OrderLines (OrderLineId int NOT NULL CONSTRAINT PK_OrderLines PRIMARY KEY CLUSTERED, OrderId int NOT NULL, Amount money NOT NULL);
CREATE INDEX IX_Lines_Order ON dbo.OrderLines (OrderId, OrderLineId);`,
			"CREATE INDEX IX_Lines_Order ON dbo.OrderLines (OrderId, OrderLineId) INCLUDE (Amount) WITH (DROP_EXISTING = ON);"},
		{"an index that covers already",
			`CREATE TABLE dbo.OrderLines (OrderLineId int NOT NULL CONSTRAINT PK_OrderLines PRIMARY KEY CLUSTERED, OrderId int NOT NULL, Amount money NOT NULL);
CREATE INDEX IX_Lines_Order ON dbo.OrderLines (OrderId) INCLUDE (Amount);`,
			"index IX_Lines_Order already has keys OrderId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat, diags, err := catalog.ParseScript("schema.sql", strings.NewReader(tc.schema))
			if err != nil || len(diags) > 0 {
				t.Fatalf("schema: %v %v", err, diags)
			}
			all, err := Analyze(d, cat, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range all {
				if f.Rule == NestedLoopsRepetition.Name && f.NodeID != nil && *f.NodeID == 3 {
					if !strings.Contains(f.Fix, tc.want) {
						t.Fatalf("fix %q does not contain %q", f.Fix, tc.want)
					}
					return
				}
			}
			t.Fatal("no finding at node 3")
		})
	}
}

// TestNestedLoopsRepetitionResidualSeek covers a seek on the inner side whose
// residual predicate discards most of what each execution reads, and the
// plain seek (no residual) that must stay silent.
func TestNestedLoopsRepetitionResidualSeek(t *testing.T) {
	col := func(table, alias, name string) string {
		return `<ColumnReference Database="[Db]" Schema="[dbo]" Table="[` + table + `]" Alias="[` + alias + `]" Column="` + name + `"/>`
	}
	ident := func(c string) string { return `<ScalarOperator><Identifier>` + c + `</Identifier></ScalarOperator>` }
	loop := func(residual string) string {
		return `<RelOp NodeId="0" PhysicalOp="Nested Loops" LogicalOp="Inner Join" EstimateRows="10000" EstimateIO="0" EstimateCPU="0.04" AvgRowSize="20" EstimatedTotalSubtreeCost="400" Parallel="0" EstimateRebinds="0" EstimateRewinds="0"><OutputList/>` +
			`<NestedLoops Optimized="0"><OuterReferences>` + col("Orders", "o", "CustomerId") + col("Orders", "o", "OrderDate") + `</OuterReferences>` +
			`<RelOp NodeId="1" PhysicalOp="Clustered Index Scan" LogicalOp="Clustered Index Scan" EstimateRows="10000" EstimatedRowsRead="10000" EstimateIO="0.1" EstimateCPU="0.01" AvgRowSize="20" EstimatedTotalSubtreeCost="0.2" TableCardinality="10000" Parallel="0" EstimateRebinds="0" EstimateRewinds="0"><OutputList/>` +
			`<IndexScan Ordered="0"><Object Database="[Db]" Schema="[dbo]" Table="[Orders]" Index="[PK_Orders]" Alias="[o]" IndexKind="Clustered"/></IndexScan></RelOp>` +
			`<RelOp NodeId="2" PhysicalOp="Index Seek" LogicalOp="Index Seek" EstimateRows="1" EstimatedRowsRead="5000" EstimateIO="0.01" EstimateCPU="0.005" AvgRowSize="20" EstimatedTotalSubtreeCost="399" TableCardinality="5000000" Parallel="0" EstimateRebinds="9999" EstimateRewinds="0"><OutputList>` + col("Payments", "p", "Amount") + `</OutputList>` +
			`<IndexScan Ordered="1"><Object Database="[Db]" Schema="[dbo]" Table="[Payments]" Index="[IX_Payments_CustomerId]" Alias="[p]" IndexKind="NonClustered"/>` +
			`<SeekPredicates><SeekPredicateNew><SeekKeys><Prefix ScanType="EQ"><RangeColumns>` + col("Payments", "p", "CustomerId") + `</RangeColumns><RangeExpressions>` + ident(col("Orders", "o", "CustomerId")) + `</RangeExpressions></Prefix></SeekKeys></SeekPredicateNew></SeekPredicates>` +
			residual + `</IndexScan></RelOp></NestedLoops></RelOp>`
	}
	residual := `<Predicate><ScalarOperator ScalarString="[p].[PaidOn]&gt;=[o].[OrderDate]"><Compare CompareOp="GE">` + ident(col("Payments", "p", "PaidOn")) + ident(col("Orders", "o", "OrderDate")) + `</Compare></ScalarOperator></Predicate>`

	fs := analyze(t, showplan(t, stmt(`StatementSubTreeCost="400"`, "", "", loop(residual))), nil, NestedLoopsRepetition)
	if len(fs) != 1 || fs[0].Severity != Warning || *fs[0].NodeID != 2 {
		t.Fatalf("want one warning at node 2, got %+v", fs)
	}
	for _, s := range []string{"10,000 times (estimated)", "5,000 rows per execution", "the residual [p].[PaidOn]>=[o].[OrderDate]",
		"CREATE INDEX IX_Payments_CustomerId_PaidOn ON dbo.Payments (CustomerId, PaidOn) INCLUDE (Amount);"} {
		if !strings.Contains(fs[0].Message+" | "+fs[0].Fix, s) {
			t.Errorf("%q not in %s | %s", s, fs[0].Message, fs[0].Fix)
		}
	}
	if fs := analyze(t, showplan(t, stmt(`StatementSubTreeCost="400"`, "", "", loop(""))), nil, NestedLoopsRepetition); len(fs) != 0 {
		t.Fatalf("a plain seek executed 10,000 times: want nothing, got %+v", fs)
	}
}

package rules

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
)

// accessCase expects one finding of rule on a statement and node (node -1:
// statement level), with text in its message and fix; severity 0 means
// no finding of the rule there.
type accessCase struct {
	name    string
	stmt    int
	node    int
	rule    string
	want    Severity
	message string
	fix     string
}

func checkAccessCases(t *testing.T, fs []Finding, cases []accessCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []Finding
			for _, f := range fs {
				if f.Rule != c.rule || f.StatementID != c.stmt {
					continue
				}
				if (c.node < 0) != (f.NodeID == nil) || (f.NodeID != nil && *f.NodeID != c.node) {
					continue
				}
				if c.want != 0 && !strings.Contains(f.Message, c.message) {
					continue // another finding of the rule on the same place
				}
				got = append(got, f)
			}
			if c.want == 0 {
				if len(got) != 0 {
					t.Fatalf("want no %s finding, got %+v", c.rule, got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one %s finding, got %d: %+v", c.rule, len(got), got)
			}
			f := got[0]
			if f.Severity != c.want || !strings.Contains(f.Message, c.message) || !strings.Contains(f.Fix, c.fix) {
				t.Fatalf("want %s with message containing %q and fix containing %q, got %s:\n%s\nfix: %s", c.want, c.message, c.fix, f.Severity, f.Message, f.Fix)
			}
		})
	}
}

// The hand-written plan (testdata/access, valid against the SQL Server
// 2022 showplan schema) has one statement per case.
func TestAccessPathRulesOnWrittenPlan(t *testing.T) {
	d, err := plan.ParseFile(filepath.Join("testdata", "access", "access-paths.sqlplan"), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := Analyze(d, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkAccessCases(t, fs, []accessCase{
		{"queue literal: filtered index, merged with the request", 1, 0, "residual-predicate-scan", Warning,
			"read 5,000,000 rows (estimated) to return 200", "CREATE INDEX IX_Work_Status_Filtered ON dbo.Work (Status) INCLUDE (WorkId, CreatedAt) WHERE Status = (0);"},
		{"the merged request is not reported again", 1, -1, "missing-index", 0, "", ""},
		{"varchar column against an nvarchar parameter", 2, 0, "implicit-conversion", Error,
			"dbo.Customers.AccountCode is implicitly converted to nvarchar(20) to compare it with @code (nvarchar(20))", "declare @code as AccountCode's non-Unicode type"},
		{"the conversion is the root cause, not a missing index", 2, 0, "residual-predicate-scan", 0, "", ""},
		{"parameter-side conversion is harmless", 3, 0, "implicit-conversion", 0, "", ""},
		{"YEAR() on the column", 4, 0, "non-sargable-predicate", Error,
			"DATEPART(year, OrderDate) = (2024)", "OrderDate >= '20240101' AND OrderDate < '20250101'"},
		{"non-SARGable is the root cause", 4, 0, "residual-predicate-scan", 0, "", ""},
		{"repeated request: first statement, others counted", 5, -1, "missing-index", Warning,
			"the same request appears in 1 other statement of this file (statement 6)", "CREATE INDEX IX_Orders_CustomerId ON dbo.Orders (CustomerId) INCLUDE (Total);"},
		{"repeated request: not again", 6, -1, "missing-index", 0, "", ""},
		{"columnstore scan", 7, 0, "residual-predicate-scan", 0, "", ""},
	})
}

// Real plans of the shared corpus, by file and node.
func TestAccessPathRulesOnRealPlans(t *testing.T) {
	dir := sharedtest.Require(t, "corpus/plans")
	cases := map[string][]accessCase{
		"planlab__results__01-implicit-conversion-slow.sqlplan": {
			{"N'…' literal against a varchar column (node 3)", 1, 3, "implicit-conversion", Error,
				"read 1,000,000 rows (actual) to return 1", "drop the N prefix: compare AccountCode with 'ACCT-00042000'"},
		},
		"perfstudio__tests__PlanViewer.Core.Tests__Plans__convert_implicit_plan.sqlplan": {
			{"nvarchar parameter against a varchar column (node 3)", 1, 3, "implicit-conversion", Error,
				"compare it with @d (nvarchar(40))", "declare @d as DisplayName's non-Unicode type"},
		},
		"supratimas__plans__set01__plans__plan121.sqlplan": {
			{"two converted columns of a 96-row lookup table: one info (node 6)", 8, 6, "implicit-conversion", Info,
				"dbo.Status.Status is implicitly converted to nvarchar(200) to compare it with the Unicode literal N'Active'; dbo.Status.Type", "compare Type with 'Failure'"},
		},
		"supratimas__plans__set01__plans__plan23.sqlplan": {
			{"join column converted in a Compute Scalar (Expr1044) and compared in the join (node 9)", 14, 9, "implicit-conversion", Info,
				"dbo.Status.Status is implicitly converted to nvarchar(200) to compare it with #FailureBugCollection.FailureStatus", "give dbo.Status.Status and #FailureBugCollection.FailureStatus the same data type"},
		},
		"perfstudio__tests__PlanViewer.Core.Tests__Plans__isnull_plan.sqlplan": {
			{"ISNULL on the column (node 3)", 1, 3, "non-sargable-predicate", Error,
				"read 17,142,169 rows (actual) to return 375", "as LastEditorDisplayName = N'Jeff Atwood'"},
		},
		"perfstudio__tests__PlanViewer.Core.Tests__Plans__leading_wildcard_like_plan.sqlplan": {
			{"leading wildcard (node 1)", 1, 1, "non-sargable-predicate", Error,
				"DisplayName LIKE N'%zzz", "ADD DisplayName_reversed AS REVERSE(DisplayName) PERSISTED"},
		},
		"perfstudio__tests__PlanViewer.Core.Tests__Plans__non_sargable_function_plan.sqlplan": {
			{"YEAR() keeping a third of the rows (node 4)", 1, 4, "non-sargable-predicate", Warning,
				"to return 5,413,518", "CreationDate >= '20130101' AND CreationDate < '20140101'"},
		},
		"planlab__results__04-missing-covering-index-slow.sqlplan": {
			{"literal on a status column: filtered index (node 3)", 1, 3, "residual-predicate-scan", Warning,
				"read 2,000,000 rows (actual) to return 75,086", "CREATE INDEX IX_Orders_OrderDate_Filtered ON dbo.Orders (OrderDate) INCLUDE (AmountMinor) WHERE Status = 'CANCELLED';"},
			{"its request is merged into the scan's finding", 1, -1, "missing-index", 0, "", ""},
		},
		"planlab__results__03-parameter-sniffing-slow.sqlplan": {
			{"a sniffed parameter, not a missing index (node 1)", 1, 1, "residual-predicate-scan", Info,
				"the optimizer expected 666,693 rows", "see row-estimate-skew"},
		},
		"supratimas__plans__set01__plans__plan113.sqlplan": {
			{"OR of equalities on one column seeks as an IN list (node 3)", 1, 3, "residual-predicate-scan", Error,
				"read 41,928,200 rows (estimated)", "CREATE INDEX IX_TEUs_TestPassId ON Reporting.TEUs (TestPassId);"},
		},
		"showplan-dotnet__tests__Showplan.Tests__plans__users-with-post-count-and-comment-count-math.sqlplan": {
			{"three scans served by one index: one finding (nodes 20, 24, 28)", 1, 20, "residual-predicate-scan", Warning,
				"the same index serves the scan at nodes 24 and 28 too", "CREATE INDEX IX_Votes_UserId ON dbo.Votes (UserId) INCLUDE (CreationDate);"},
			{"not again on node 24", 1, 24, "residual-predicate-scan", 0, "", ""},
		},
		"perfstudio__tests__PlanViewer.Core.Tests__Plans__row-count-spool-slow.sqlplan": {
			{"the NOT IN null check under an anti semi join (node 16)", 1, 16, "residual-predicate-scan", 0, "", ""},
		},
		"hqp__test_plans__stack overflow__How many upvotes do I have for each tag.sqlplan": {
			{"request with a long-running statement", 1, -1, "missing-index", Warning,
				"equality PostId and VoteTypeId", "CREATE INDEX IX_Votes_PostId_VoteTypeId ON dbo.Votes (PostId, VoteTypeId);"},
		},
		"perfstudio__tests__PlanViewer.Core.Tests__Plans__memory_grant_wait_plan.sqlplan": {
			{"low-impact request (10.1%)", 1, -1, "missing-index", Info, "impact 10.1%", "CREATE INDEX IX_Posts_PostTypeId_Score"},
		},
		"perfstudio__tests__PlanViewer.Core.Tests__Plans__row-count-spool-slow.sqlplan#mi": {
			{"temporary table name without tempdb's padding", 1, -1, "missing-index", Warning, "dbo.#OldUsers (impact 54.2%)", "ON dbo.[#OldUsers] (UserId);"},
		},
	}
	for file, cs := range cases {
		t.Run(file, func(t *testing.T) {
			name, _, _ := strings.Cut(file, "#")
			d, err := plan.ParseFile(filepath.Join(dir, name), plan.Options{})
			if err != nil {
				t.Fatal(err)
			}
			fs, err := Analyze(d, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkAccessCases(t, fs, cs)
		})
	}
}

// With catalog facts missing-index extends an index that has the keys,
// and says so when one already covers the request.
func TestMissingIndexWithCatalog(t *testing.T) {
	d, err := plan.ParseFile(filepath.Join("testdata", "access", "access-paths.sqlplan"), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	schema := func(ddl string) *catalog.Catalog {
		c, diags, err := catalog.ParseScript("schema.sql", strings.NewReader(
			"CREATE TABLE dbo.Orders (OrderId int NOT NULL CONSTRAINT PK_Orders PRIMARY KEY CLUSTERED, CustomerId int NOT NULL, "+
				"OrderDate datetime2 NOT NULL, Total money NOT NULL);\n"+ddl))
		if err != nil || len(diags) > 0 {
			t.Fatalf("schema: %v %v", err, diags)
		}
		return c
	}
	cases := []struct {
		name, ddl string
		want      Severity
		message   string
		fix       string
	}{
		{"no index on the keys", "", Warning, "impact 87.5%", "CREATE INDEX IX_Orders_CustomerId ON dbo.Orders (CustomerId) INCLUDE (Total);"},
		{"an index with the keys lacks the column", "CREATE INDEX IX_Orders_Customer ON dbo.Orders (CustomerId, OrderDate);", Warning,
			"impact 87.5%", "extend IX_Orders_Customer, which already has these keys, rather than adding a near-duplicate: CREATE INDEX IX_Orders_Customer ON dbo.Orders (CustomerId, OrderDate) INCLUDE (Total) WITH (DROP_EXISTING = ON);"},
		{"a unique index is rebuilt unique", "CREATE UNIQUE INDEX UX_Orders_Customer ON dbo.Orders (CustomerId, OrderId);", Warning,
			"", "CREATE UNIQUE INDEX UX_Orders_Customer ON dbo.Orders (CustomerId, OrderId) INCLUDE (Total) WITH (DROP_EXISTING = ON);"},
		{"the index exists", "CREATE INDEX IX_Orders_Customer ON dbo.Orders (CustomerId) INCLUDE (Total);", Info,
			"index IX_Orders_Customer already has these keys and columns", "recompile"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := analyze(t, d, schema(c.ddl), MissingIndex)
			var got []Finding
			for _, f := range fs {
				if f.StatementID == 5 {
					got = append(got, f)
				}
			}
			if len(got) != 1 || got[0].Severity != c.want || !strings.Contains(got[0].Message, c.message) || !strings.Contains(got[0].Fix, c.fix) {
				t.Fatalf("want one %s with %q / %q, got %+v", c.want, c.message, c.fix, got)
			}
			if c.want == Info {
				if _, ok := got[0].Evidence["create_index"]; ok {
					t.Errorf("an existing index must not be proposed again: %v", got[0].Evidence)
				}
			}
		})
	}
}

func TestMissingIndexWideIncludeAndImpact(t *testing.T) {
	request := func(impact float64, includes int) string {
		var cols strings.Builder
		for i := 0; i < includes; i++ {
			cols.WriteString(`<Column Name="[C` + string(rune('a'+i)) + `]" ColumnId="1"/>`)
		}
		inc := ""
		if includes > 0 {
			inc = `<ColumnGroup Usage="INCLUDE">` + cols.String() + `</ColumnGroup>`
		}
		return `<MissingIndexes><MissingIndexGroup Impact="` + trimFloat(impact) + `"><MissingIndex Database="[Shop]" Schema="[dbo]" Table="[Orders]">` +
			`<ColumnGroup Usage="EQUALITY"><Column Name="[CustomerId]" ColumnId="2"/></ColumnGroup>` + inc + `</MissingIndex></MissingIndexGroup></MissingIndexes>`
	}
	relop := op(0, "Clustered Index Scan", "Clustered Index Scan", 10, 50, "", `<IndexScan Ordered="0">`+fmt.Sprintf(workObj, "PK_Work", "Clustered")+`</IndexScan>`)
	cases := []struct {
		name     string
		impact   float64
		includes int
		want     Severity
		message  string
		fix      string
	}{
		{"wide INCLUDE list", 90, 10, Warning, "the INCLUDE list is wide (10 columns)", "the narrower CREATE INDEX IX_Orders_CustomerId ON dbo.Orders (CustomerId); seeks the same rows"},
		{"narrow INCLUDE list", 90, 3, Warning, "include 3 columns", "INCLUDE (Ca, Cb, Cc);"},
		{"low impact", 12, 0, Info, "impact 12%", "CREATE INDEX IX_Orders_CustomerId ON dbo.Orders (CustomerId);"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := showplan(t, stmt(`StatementSubTreeCost="50"`, "", request(c.impact, c.includes), relop))
			fs := analyze(t, d, nil, MissingIndex)
			if len(fs) != 1 || fs[0].Severity != c.want || !strings.Contains(fs[0].Message, c.message) || !strings.Contains(fs[0].Fix, c.fix) {
				t.Fatalf("want one %s with %q and fix %q, got %+v", c.want, c.message, c.fix, fs)
			}
		})
	}
}

// With catalog facts residual-predicate-scan does not propose an index the
// table already has.
func TestResidualScanWithCatalog(t *testing.T) {
	d, err := plan.ParseFile(filepath.Join("testdata", "access", "access-paths.sqlplan"), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, ddl string
		want      Severity
		message   string
		fix       string
	}{
		{"nothing on Status", "", Warning, "read 5,000,000 rows", "WHERE Status = (0);"},
		{"an index on Status covering the outputs", "CREATE INDEX IX_Work_Status ON dbo.Work (Status) INCLUDE (CreatedAt);", Info,
			"index IX_Work_Status already seeks on Status, but the plan does not use it", "find why IX_Work_Status is not chosen"},
		{"an index on Status without CreatedAt", "CREATE INDEX IX_Work_Status ON dbo.Work (Status);", Warning,
			"read 5,000,000 rows", "if other values of Status are queried too, CREATE INDEX IX_Work_Status ON dbo.Work (Status) INCLUDE (CreatedAt) WITH (DROP_EXISTING = ON);"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat, diags, err := catalog.ParseScript("schema.sql", strings.NewReader(
				"CREATE TABLE dbo.Work (WorkId bigint NOT NULL CONSTRAINT PK_Work PRIMARY KEY CLUSTERED, Status tinyint NOT NULL, CreatedAt datetime2 NOT NULL);\n"+c.ddl))
			if err != nil || len(diags) > 0 {
				t.Fatalf("schema: %v %v", err, diags)
			}
			var got []Finding
			for _, f := range analyze(t, d, cat, ResidualPredicateScan) {
				if f.StatementID == 1 {
					got = append(got, f)
				}
			}
			if len(got) != 1 || got[0].Severity != c.want || !strings.Contains(got[0].Message, c.message) || !strings.Contains(got[0].Fix, c.fix) {
				t.Fatalf("want one %s with %q / %q, got %+v", c.want, c.message, c.fix, got)
			}
		})
	}
}

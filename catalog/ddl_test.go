package catalog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// describeIndex renders an index compactly for comparison.
func describeIndex(ix *Index) string {
	var b strings.Builder
	b.WriteString(ix.Name + " " + ix.Type)
	if ix.Unique {
		b.WriteString(" unique")
	}
	if ix.PrimaryKey {
		b.WriteString(" pk")
	}
	if ix.Disabled {
		b.WriteString(" disabled")
	}
	keys := make([]string, len(ix.Keys))
	for i, k := range ix.Keys {
		keys[i] = k.Name
		if k.Descending {
			keys[i] += " DESC"
		}
	}
	b.WriteString(" (" + strings.Join(keys, ", ") + ")")
	if len(ix.Includes) > 0 {
		b.WriteString(" include (" + strings.Join(ix.Includes, ", ") + ")")
	}
	if ix.FilterDefinition != "" {
		b.WriteString(" where " + ix.FilterDefinition)
		switch {
		case ix.Filter != nil:
			b.WriteString(" => " + ix.Filter.String())
		case ix.FilterError != "":
			b.WriteString(" => error")
		}
	}
	if ix.Size != nil {
		fmt.Fprintf(&b, " size %d rows %d pages", ix.Size.Rows, ix.Size.UsedPages)
	}
	if s := ix.Statistics; s != nil {
		fmt.Fprintf(&b, " stats %s %d/%d rows %d modifications", s.LastUpdated, s.RowsSampled, s.Rows, s.ModificationCounter)
	}
	return b.String()
}

// describeColumn renders a column compactly for comparison.
func describeColumn(c *Column) string {
	s := c.Name + " " + c.Type
	if c.Computed {
		s = c.Name + " computed"
	}
	if !c.Nullable {
		s += " NOT NULL"
	}
	return fmt.Sprintf("%s %d", s, c.MaxLength)
}

func describeTable(t *Table) []string {
	out := []string{fmt.Sprintf("table %s.%s.%s", t.Database, t.Schema, t.Name)}
	for _, c := range t.Columns {
		out = append(out, "col "+describeColumn(c))
	}
	for _, ix := range t.Indexes {
		out = append(out, "index "+describeIndex(ix))
	}
	return out
}

func describeCatalog(c *Catalog) []string {
	var out []string
	for _, t := range c.Tables {
		out = append(out, describeTable(t)...)
	}
	return out
}

func parse(t *testing.T, script string) (*Catalog, []Diagnostic) {
	t.Helper()
	c, diags, err := ParseScript("test.sql", strings.NewReader(script))
	if err != nil {
		t.Fatalf("ParseScript: %v", err)
	}
	return c, diags
}

const queueScript = `/* Queue schema for the pending-work reader.
   /* nested: the old layout had no ClaimedAt */ still a comment */
SET ANSI_NULLS ON;
SET QUOTED_IDENTIFIER ON
GO
IF OBJECT_ID(N'dbo.Work', N'U') IS NOT NULL DROP TABLE dbo.Work;
GO
CREATE TABLE Work
(
    WorkId bigint PRIMARY KEY,
    Status tinyint NOT NULL,        -- 0 pending, 1 done
    CreatedAt datetime2(0) NOT NULL,
    CustomerId int NOT NULL,
    ClaimedAt datetime2(0) NULL,
    Payload nvarchar(max) NULL      -- the JSON document
)
go
CREATE INDEX IX_Work_Pending ON Work(CreatedAt, WorkId) INCLUDE(CustomerId) WHERE Status = 0
CREATE INDEX IX_Work_Unclaimed ON dbo.Work(CreatedAt) WHERE ClaimedAt IS NULL;
CREATE INDEX IX_Work_Status ON [dbo].[Work] ([Status])
  GO  
INSERT dbo.Work (WorkId, Status, CreatedAt, CustomerId) VALUES (1, 0, '2024-01-01', 10);
SELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE Status = 0 ORDER BY CreatedAt, WorkId;
EXEC sp_executesql N'CREATE INDEX IX_Hidden ON dbo.Work(Status)';
BEGIN TRAN; UPDATE dbo.Work SET Status = 1, ClaimedAt = SYSUTCDATETIME() WHERE WorkId = 1; COMMIT;
DECLARE @t TABLE (a int PRIMARY KEY, INDEX ix (a));
GO 5
`

func TestParseScriptQueue(t *testing.T) {
	c, diags := parse(t, queueScript)
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	want := []string{
		"table .dbo.Work",
		"col WorkId bigint NOT NULL 8",
		"col Status tinyint NOT NULL 1",
		"col CreatedAt datetime2(0) NOT NULL 6",
		"col CustomerId int NOT NULL 4",
		"col ClaimedAt datetime2(0) 6",
		"col Payload nvarchar(max) -1",
		"index PK__Work CLUSTERED unique pk (WorkId)",
		"index IX_Work_Pending NONCLUSTERED (CreatedAt, WorkId) include (CustomerId) where Status = 0 => Status = 0",
		"index IX_Work_Unclaimed NONCLUSTERED (CreatedAt) where ClaimedAt IS NULL => ClaimedAt IS NULL",
		"index IX_Work_Status NONCLUSTERED (Status)",
	}
	if got := describeCatalog(c); !reflect.DeepEqual(got, want) {
		t.Errorf("catalog:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c.Source != "test.sql" {
		t.Errorf("Source = %q", c.Source)
	}

	// The facts answer the rules' questions.
	work := c.FindTable("[Shop]", "[dbo]", "[Work]")
	if work == nil {
		t.Fatal("FindTable(Shop, dbo, Work) = nil")
	}
	pending := work.FindIndex("[IX_Work_Pending]")
	if ok, _ := pending.Filter.ImpliedBy([]Conjunct{{Column: "Status", Op: "=", Values: []string{"(0)"}}}); !ok {
		t.Error("Status = (0) does not imply the pending filter")
	}
	if ok, missing := pending.Filter.ImpliedBy([]Conjunct{{Column: "Status", Op: "=", Values: []string{"(1)"}}}); ok || len(missing) != 1 {
		t.Errorf("Status = (1) implies the pending filter (missing %v)", missing)
	}
	if !work.IndexContains(pending, "WorkId") || work.IndexContains(pending, "Status") {
		t.Error("IX_Work_Pending should hold WorkId and not Status")
	}
	unclaimed := work.FindIndex("IX_Work_Unclaimed")
	if !work.IndexContains(unclaimed, "WorkId") || work.IndexContains(unclaimed, "ClaimedAt") {
		t.Error("IX_Work_Unclaimed holds WorkId (clustered key) but not ClaimedAt")
	}
	if !work.FindColumn("Payload").IsWide() || work.FindColumn("CustomerId").IsWide() {
		t.Error("Payload is wide, CustomerId is not")
	}
	if got := len(work.FilteredIndexes()); got != 2 {
		t.Errorf("%d filtered indexes, want 2", got)
	}
}

func TestParseScriptStatements(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   []string
	}{
		{
			name: "SSMS generated script",
			script: `/****** Object:  Table [dbo].[Orders]    Script Date: 1/1/2024 ******/
SET ANSI_NULLS ON
GO
CREATE TABLE [dbo].[Orders](
	[OrderId] [int] IDENTITY(1,1) NOT NULL,
	[Status] [tinyint] NOT NULL,
	[Note] [nvarchar](max) NULL,
	[Total] [decimal](18, 2) NOT NULL CONSTRAINT [DF_Orders_Total] DEFAULT ((0)),
 CONSTRAINT [PK_Orders] PRIMARY KEY CLUSTERED 
(
	[OrderId] ASC
)WITH (PAD_INDEX = OFF, STATISTICS_NORECOMPUTE = OFF, IGNORE_DUP_KEY = OFF, ALLOW_ROW_LOCKS = ON, ALLOW_PAGE_LOCKS = ON, OPTIMIZE_FOR_SEQUENTIAL_KEY = OFF) ON [PRIMARY]
) ON [PRIMARY] TEXTIMAGE_ON [PRIMARY]
GO
SET ANSI_PADDING ON
GO
/****** Object:  Index [IX_Orders_Open]    Script Date: 1/1/2024 ******/
CREATE NONCLUSTERED INDEX [IX_Orders_Open] ON [dbo].[Orders]
(
	[Status] ASC,
	[OrderId] DESC
)
INCLUDE([Total]) 
WHERE ([Status]=(0) OR [Status]=(1))
WITH (STATISTICS_NORECOMPUTE = OFF, DROP_EXISTING = OFF, ONLINE = OFF, OPTIMIZE_FOR_SEQUENTIAL_KEY = OFF) ON [PRIMARY]
GO
ALTER TABLE [dbo].[Orders] ADD  CONSTRAINT [DF_Orders_Status]  DEFAULT ((0)) FOR [Status]
GO
ALTER TABLE [dbo].[Orders]  WITH CHECK ADD  CONSTRAINT [CK_Orders_Status] CHECK  (([Status]>=(0)))
GO
ALTER TABLE [dbo].[Orders] CHECK CONSTRAINT [CK_Orders_Status]
GO
`,
			want: []string{
				"table .dbo.Orders",
				"col OrderId int NOT NULL 4",
				"col Status tinyint NOT NULL 1",
				"col Note nvarchar(max) -1",
				"col Total decimal(18,2) NOT NULL 9",
				"index PK_Orders CLUSTERED unique pk (OrderId)",
				"index IX_Orders_Open NONCLUSTERED (Status, OrderId DESC) include (Total) where ([Status]=(0) OR [Status]=(1)) => Status IN (0, 1)",
			},
		},
		{
			name: "unqualified primary key beside a clustered unique constraint",
			script: `CREATE TABLE dbo.T (
	Id int NOT NULL,
	Code varchar(20) NOT NULL,
	Other int NULL UNIQUE,
	PRIMARY KEY (Id),
	UNIQUE CLUSTERED (Code)
);`,
			want: []string{
				"table .dbo.T",
				"col Id int NOT NULL 4",
				"col Code varchar(20) NOT NULL 20",
				"col Other int 4",
				"index UQ__T__Other NONCLUSTERED unique (Other)",
				"index PK__T NONCLUSTERED unique pk (Id)",
				"index UQ__T__Code CLUSTERED unique (Code)",
			},
		},
		{
			name: "inline indexes and computed columns",
			script: `CREATE TABLE q.Job (
	JobId int NOT NULL CONSTRAINT PK_Job PRIMARY KEY NONCLUSTERED,
	State tinyint NOT NULL INDEX IX_Job_State,
	Qty int NOT NULL, Price money NOT NULL,
	Total AS (Qty * Price) PERSISTED NOT NULL,
	Flag AS CASE WHEN Qty IS NOT NULL THEN 1 END,
	DueAt datetime NULL,
	INDEX IX_Job_Due UNIQUE NONCLUSTERED (DueAt DESC, JobId) INCLUDE (Qty) WHERE DueAt IS NOT NULL AND State IN (1, 2),
	INDEX CX_Job CLUSTERED (DueAt),
)`,
			want: []string{
				"table .q.Job",
				"col JobId int NOT NULL 4",
				"col State tinyint NOT NULL 1",
				"col Qty int NOT NULL 4",
				"col Price money NOT NULL 8",
				"col Total computed NOT NULL 0",
				"col Flag computed 0",
				"col DueAt datetime 8",
				"index PK_Job NONCLUSTERED unique pk (JobId)",
				"index IX_Job_State NONCLUSTERED (State)",
				"index IX_Job_Due NONCLUSTERED unique (DueAt DESC, JobId) include (Qty) where DueAt IS NOT NULL AND State IN (1, 2) => DueAt IS NOT NULL AND State IN (1, 2)",
				"index CX_Job CLUSTERED (DueAt)",
			},
		},
		{
			name: "temporary table from the filtered-index article",
			script: `CREATE TABLE #Work
(
    WorkId bigint NOT NULL PRIMARY KEY,
    Status tinyint NOT NULL
);
INSERT #Work VALUES (1,1),(2,0);
CREATE INDEX IX_Work_Pending
ON #Work(WorkId)
WHERE Status = 0;
ALTER TABLE #Work ADD CustomerId int NULL, CONSTRAINT UQ_Work_Customer UNIQUE (CustomerId)
DROP TABLE #Work;`,
			want: []string{
				"table tempdb.dbo.#Work",
				"col WorkId bigint NOT NULL 8",
				"col Status tinyint NOT NULL 1",
				"col CustomerId int 4",
				"index PK__#Work CLUSTERED unique pk (WorkId)",
				"index IX_Work_Pending NONCLUSTERED (WorkId) where Status = 0 => Status = 0",
				"index UQ_Work_Customer NONCLUSTERED unique (CustomerId)",
			},
		},
		{
			name: "qualified names and indexes on tables the script does not create",
			script: `CREATE INDEX IX_A ON Shop.Sales.Orders (A) ; CREATE INDEX IX_B ON Shop..Orders(B)
CREATE INDEX IX_C ON "Sales"."Orders" ("C");
create unique clustered index CX on [Sales].Orders ( [Id] asc )`,
			want: []string{
				"table Shop.Sales.Orders",
				"index IX_A NONCLUSTERED (A)",
				"table Shop.dbo.Orders",
				"index IX_B NONCLUSTERED (B)",
				"table .Sales.Orders",
				"index IX_C NONCLUSTERED (C)",
				"index CX CLUSTERED unique (Id)",
			},
		},
		{
			name: "columnstore indexes",
			script: `CREATE TABLE f (a int, b int);
CREATE TABLE g (a int);
CREATE COLUMNSTORE INDEX NCCI_f ON f (a, b) WHERE a > 0;
CREATE NONCLUSTERED COLUMNSTORE INDEX NCCI_f2 ON dbo.f (b);
CREATE CLUSTERED COLUMNSTORE INDEX CCI_g ON g ORDER (a) WITH (DROP_EXISTING = OFF);`,
			want: []string{
				"table .dbo.f", "col a int 4", "col b int 4",
				"index NCCI_f NONCLUSTERED COLUMNSTORE () include (a, b) where a > 0 => a > 0",
				"index NCCI_f2 NONCLUSTERED COLUMNSTORE () include (b)",
				"table .dbo.g", "col a int 4",
				"index CCI_g CLUSTERED COLUMNSTORE ()",
			},
		},
		{
			name: "ALTER TABLE and ALTER INDEX",
			script: `CREATE TABLE t (a int NOT NULL, b varchar(10) NULL)
ALTER TABLE t ADD c nvarchar(100) NULL, d int NOT NULL DEFAULT 0 WITH VALUES
ALTER TABLE t ALTER COLUMN b varchar(max) NOT NULL
ALTER TABLE dbo.t ADD CONSTRAINT PK_t PRIMARY KEY (a)
CREATE INDEX ix_b ON t (d) WHERE c IS NULL
ALTER INDEX ix_b ON t DISABLE
ALTER TABLE t DROP COLUMN c
ALTER TABLE t SWITCH TO t2`,
			want: []string{
				"table .dbo.t",
				"col a int NOT NULL 4",
				"col b varchar(max) NOT NULL -1",
				"col c nvarchar(100) 200",
				"col d int NOT NULL 4",
				"index PK_t CLUSTERED unique pk (a)",
				"index ix_b NONCLUSTERED disabled (d) where c IS NULL => c IS NULL",
			},
		},
		{
			name: "ALTER TABLE adds a nonclustered key when a clustered index exists",
			script: `CREATE TABLE t (a int NOT NULL, b int NOT NULL, INDEX cx CLUSTERED (b))
ALTER TABLE t ADD PRIMARY KEY (a)
ALTER INDEX ALL ON t DISABLE
ALTER INDEX ALL ON t REBUILD`,
			want: []string{
				"table .dbo.t", "col a int NOT NULL 4", "col b int NOT NULL 4",
				"index cx CLUSTERED (b)",
				"index PK__t NONCLUSTERED unique pk (a)",
			},
		},
		{
			name: "redefinitions replace",
			script: `CREATE TABLE t (a int, b int)
CREATE INDEX ix ON t (a)
CREATE UNIQUE INDEX ix ON t (b) INCLUDE (a) WITH (DROP_EXISTING = ON, ONLINE = ON)
CREATE INDEX ix2 ON t (a) WITH FILLFACTOR = 80, PAD_INDEX
CREATE INDEX ix2 ON t (b) WITH DROP_EXISTING
CREATE TABLE u (a int)
CREATE TABLE u (z int)`,
			want: []string{
				"table .dbo.t", "col a int 4", "col b int 4",
				"index ix NONCLUSTERED unique (b) include (a)",
				"index ix2 NONCLUSTERED (b)",
				"table .dbo.u", "col z int 4",
			},
		},
		{
			name: "modules are skipped to the end of their batch",
			script: `CREATE PROCEDURE dbo.Claim AS
BEGIN
	CREATE TABLE #scratch (a int);
	CREATE INDEX ix ON #scratch (a);
END
GO
CREATE OR ALTER VIEW v AS SELECT 1 AS a
GO
ALTER FUNCTION f() RETURNS TABLE AS RETURN (SELECT 1 AS a)
go
CREATE TYPE dbo.IdList AS TABLE (Id int PRIMARY KEY, INDEX ix (Id));
CREATE STATISTICS st ON dbo.kept (a) WHERE a > 0;
CREATE PRIMARY XML INDEX px ON dbo.Docs (Body);
CREATE TABLE kept (a int)`,
			want: []string{"table .dbo.kept", "col a int 4"},
		},
		{
			name: "types",
			script: `CREATE TABLE types (
	a varchar(8000), b decimal(18,2), c json, d xml, e double precision, f sysname, g dbo.Phone,
	h national character varying(10), i char, j float(10), k datetimeoffset(3), l [sys].[sysname],
	m xml(CONTENT dbo.Schema1), n rowversion, o varbinary(MAX), p text, q uniqueidentifier ROWGUIDCOL,
	r int SPARSE NULL, s nvarchar(20) COLLATE Latin1_General_CI_AS MASKED WITH (FUNCTION = 'partial(1,"x",0)') NULL,
	t numeric, u bit NOT NULL DEFAULT (0), v datetime2 DEFAULT SYSUTCDATETIME(), w int DEFAULT -1,
	x bigint DEFAULT NEXT VALUE FOR dbo.Seq, y int IDENTITY NULL, z varchar(10) DEFAULT 'a' + 'b'
)`,
			want: []string{
				"table .dbo.types",
				"col a varchar(8000) 8000", "col b decimal(18,2) 9", "col c json -1", "col d xml -1",
				"col e float 8", "col f sysname 256", "col g dbo.Phone 0", "col h nvarchar(10) 20",
				"col i char 1", "col j float(10) 4", "col k datetimeoffset(3) 9", "col l sysname 256",
				"col m xml(CONTENT dbo.Schema1) -1", "col n timestamp 8", "col o varbinary(max) -1",
				"col p text -1", "col q uniqueidentifier 16", "col r int 4", "col s nvarchar(20) 40",
				"col t numeric 9", "col u bit NOT NULL 1", "col v datetime2 8", "col w int 4",
				"col x bigint 8", "col y int 4", "col z varchar(10) 10",
			},
		},
		{
			name: "memory-optimized, temporal, graph and foreign keys",
			script: `CREATE TABLE dbo.Hot (
	Id int NOT NULL PRIMARY KEY NONCLUSTERED HASH WITH (BUCKET_COUNT = 1024),
	Ref int NOT NULL FOREIGN KEY REFERENCES dbo.Cold (Id) ON DELETE CASCADE ON UPDATE NO ACTION,
	Other int NULL REFERENCES Cold NOT FOR REPLICATION,
	ValidFrom datetime2 GENERATED ALWAYS AS ROW START HIDDEN NOT NULL,
	ValidTo datetime2 GENERATED ALWAYS AS ROW END HIDDEN NOT NULL,
	PERIOD FOR SYSTEM_TIME (ValidFrom, ValidTo),
	CONSTRAINT FK_Hot_Cold FOREIGN KEY (Ref, Other) REFERENCES dbo.Cold (A, B) ON DELETE SET NULL,
	CONSTRAINT CK_Hot CHECK NOT FOR REPLICATION (Ref > 0),
	INDEX IX_Hot_Ref NONCLUSTERED HASH (Ref) WITH (BUCKET_COUNT = 64)
) WITH (MEMORY_OPTIMIZED = ON, DURABILITY = SCHEMA_ONLY, SYSTEM_VERSIONING = ON);
CREATE TABLE Person (ID int PRIMARY KEY, Name varchar(100)) AS NODE;
CREATE TABLE Likes (Rating int, CONSTRAINT EC_Likes CONNECTION (Person TO Person)) AS EDGE;`,
			want: []string{
				"table .dbo.Hot",
				"col Id int NOT NULL 4", "col Ref int NOT NULL 4", "col Other int 4",
				"col ValidFrom datetime2 NOT NULL 8", "col ValidTo datetime2 NOT NULL 8",
				"index PK__Hot NONCLUSTERED HASH unique pk (Id)",
				"index IX_Hot_Ref NONCLUSTERED HASH (Ref)",
				"table .dbo.Person", "col ID int NOT NULL 4", "col Name varchar(100) 100",
				"index PK__Person CLUSTERED unique pk (ID)",
				"table .dbo.Likes", "col Rating int 4",
			},
		},
		{
			name: "a filter outside the grammar is kept with its error",
			script: `CREATE TABLE t (a int, b int)
CREATE INDEX ix ON t (a) WHERE a = 1 OR b = 2
SELECT 1`,
			want: []string{
				"table .dbo.t", "col a int 4", "col b int 4",
				"index ix NONCLUSTERED (a) where a = 1 OR b = 2 => error",
			},
		},
		{
			name: "a filter ends where the next statement starts",
			script: `CREATE TABLE t (a int, b int)
CREATE INDEX ix1 ON t (a) WHERE a IN (1, 2) AND b IS NOT NULL
UPDATE t SET a = 1
CREATE INDEX ix2 ON t (a) WHERE [b] = N'x;y' ON [PRIMARY]
CREATE INDEX ix3 ON t (a) WHERE b > 0 WITH (ONLINE = ON)
CREATE INDEX ix4 ON t (a) WHERE b <> 2 -- comment
GO`,
			want: []string{
				"table .dbo.t", "col a int 4", "col b int 4",
				"index ix1 NONCLUSTERED (a) where a IN (1, 2) AND b IS NOT NULL => a IN (1, 2) AND b IS NOT NULL",
				"index ix2 NONCLUSTERED (a) where [b] = N'x;y' => b = N'x;y'",
				"index ix3 NONCLUSTERED (a) where b > 0 => b > 0",
				"index ix4 NONCLUSTERED (a) where b <> 2 => b <> 2",
			},
		},
		{
			name: "identifiers",
			script: `CREATE TABLE [Order Details] ("Weird ""name""" int NOT NULL, [a]]b] int, Größe int,
	CONSTRAINT [PK Order Details] PRIMARY KEY ("Weird ""name"""))
CREATE INDEX [ix ]]] ON [Order Details] ([a]]b]) WHERE [a]]b] > 0`,
			want: []string{
				"table .dbo.Order Details",
				`col Weird "name" int NOT NULL 4`, "col a]b int 4", "col Größe int 4",
				`index PK Order Details CLUSTERED unique pk (Weird "name")`,
				"index ix ] NONCLUSTERED (a]b) where [a]]b] > 0 => [a]]b] > 0",
			},
		},
		{
			name:   "GO separators",
			script: "CREATE TABLE a (x int)\r\nGO\r\ncreate table b (x int)\ngo 10\nCREATE TABLE c (x int) -- GO inside a line is not a separator\nGo -- done\n\tGO\t\nCREATE TABLE d (x int)",
			want: []string{
				"table .dbo.a", "col x int 4", "table .dbo.b", "col x int 4",
				"table .dbo.c", "col x int 4", "table .dbo.d", "col x int 4",
			},
		},
		{
			name:   "no statements",
			script: "-- nothing here\nSELECT 1; /* CREATE TABLE x (a int) */ PRINT 'CREATE TABLE y (a int)'",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, diags := parse(t, tc.script)
			if len(diags) != 0 {
				t.Fatalf("diagnostics: %v", diags)
			}
			if got := describeCatalog(c); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("catalog:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestParseScriptDiagnostics(t *testing.T) {
	script := strings.Join([]string{
		/* 1 */ "CREATE TABLE t1 (a int, b int",
		/* 2 */ "GO",
		/* 3 */ "CREATE INDEX ON t2(a)",
		/* 4 */ "CREATE INDEX ix ON t2 a",
		/* 5 */ "CREATE TABLE t3 (a int NOTNULL)",
		/* 6 */ "CREATE TABLE t4 (a int, a int)",
		/* 7 */ "CREATE TABLE t5 (a int, INDEX ix5 (zz))",
		/* 8 */ "CREATE CLUSTERED INDEX cx ON t6(a) WHERE a = 1",
		/* 9 */ "CREATE TABLE t7 (a int PRIMARY KEY, b int PRIMARY KEY)",
		/* 10 */ "CREATE TABLE ok (a int, b int)",
		/* 11 */ "CREATE INDEX ix ON ok (a, nope)",
		/* 12 */ "CREATE INDEX ix ON ok (a) WHERE b = 1 AND c = 2",
		/* 13 */ "CREATE CLUSTERED INDEX cx1 ON ok (a); CREATE CLUSTERED INDEX cx2 ON ok (b)",
		/* 14 */ "CREATE TABLE t8 (a decimal(10 b int)",
		/* 15 */ "CREATE INDEX ix ON ok () ",
		/* 16 */ "CREATE INDEX ix ON ok (a) WHERE",
		/* 17 */ "CREATE TABLE a.b.c.d (x int)",
		/* 18 */ "ALTER TABLE ok ALTER COLUMN zz int",
		/* 19 */ "CREATE TABLE t9 (a int CONSTRAINT c1)",
		/* 20 */ "CREATE TABLE t10 (a int, PRIMARY KEY (a), PRIMARY KEY (a))",
		/* 21 */ "CREATE INDEX ix ON ok (a) WHERE b = 1 ; CREATE INDEX ix9 ON ok (a) INCLUDE (b c)",
		/* 22 */ "CREATE TABLE t11 (é int CHECK (é > 0), CONSTRAINT ck CHECK (é < 9)",
		/* 23 */ "SELECT 'unterminated",
	}, "\n")
	c, diags := parse(t, script)
	want := []string{
		`test.sql:2:1: CREATE TABLE dbo.t1: expected , or ) after the definition, found GO`,
		`test.sql:3:14: CREATE INDEX: expected the index name, found "ON"`,
		`test.sql:4:23: CREATE INDEX ix: expected ( and the key columns, found "a"`,
		`test.sql:5:24: CREATE TABLE dbo.t3: expected , or ) after the definition, found "NOTNULL"`,
		`test.sql:6:25: CREATE TABLE dbo.t4: column a is defined twice`,
		`test.sql:7:36: CREATE TABLE dbo.t5: zz is not a column of the table`,
		`test.sql:8:42: CREATE INDEX cx: a clustered index cannot be filtered`,
		`test.sql:9:43: CREATE TABLE dbo.t7: dbo.t7 already has primary key PK__t7`,
		`test.sql:11:27: CREATE INDEX ix: nope is not a column of dbo.ok (created at line 10)`,
		`test.sql:12:43: CREATE INDEX ix: c is not a column of dbo.ok (created at line 10)`,
		`test.sql:13:46: CREATE INDEX cx2: dbo.ok already has clustered index cx1`,
		`test.sql:14:31: CREATE TABLE dbo.t8: expected , or ) in the type of column a, found "b"`,
		`test.sql:15:24: CREATE INDEX ix: expected a column name in the key columns, found ")"`,
		`test.sql:17:1: CREATE INDEX ix: expected a filter predicate after WHERE, found "CREATE"`,
		`test.sql:17:14: CREATE TABLE: a name has at most three parts (database.schema.name)`,
		`test.sql:18:29: ALTER TABLE dbo.ok: zz is not a column of the table (created at line 10)`,
		`test.sql:19:37: CREATE TABLE dbo.t9: expected PRIMARY KEY, UNIQUE, CHECK, REFERENCES or DEFAULT after CONSTRAINT c1, found ")"`,
		`test.sql:20:43: CREATE TABLE dbo.t10: dbo.t10 already has primary key PK__t10`,
		`test.sql:21:79: CREATE INDEX ix9: expected , or ) in the INCLUDE columns, found "c"`,
		`test.sql:23:1: CREATE TABLE dbo.t11: expected , or ) after the definition, found "SELECT"`,
		`test.sql:23:8: unterminated string literal`,
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Statements with a diagnostic add nothing; the others still count.
	var tables []string
	for _, tb := range c.Tables {
		tables = append(tables, tb.Name)
	}
	if want := []string{"ok"}; !reflect.DeepEqual(tables, want) {
		t.Errorf("tables = %v, want %v", tables, want)
	}
	ok := c.Tables[0]
	if len(ok.Indexes) != 2 || ok.FindIndex("ix") == nil || ok.FindIndex("cx1") == nil {
		t.Errorf("ok indexes = %v, want ix (line 21) and cx1", describeTable(ok))
	}
}

func utf16LE(s string) []byte {
	var b bytes.Buffer
	b.Write([]byte{0xFF, 0xFE})
	for _, u := range utf16.Encode([]rune(s)) {
		_ = binary.Write(&b, binary.LittleEndian, u)
	}
	return b.Bytes()
}

func TestParseScriptEncodings(t *testing.T) {
	script := "CREATE TABLE Größe (a int)\nGO\nCREATE INDEX ix ON Größe (a) WHERE a = 1\n"
	for name, data := range map[string][]byte{
		"utf-8":          []byte(script),
		"utf-8 with BOM": append([]byte{0xEF, 0xBB, 0xBF}, script...),
		"utf-16le":       utf16LE(script),
	} {
		c, diags, err := ParseScript(name, bytes.NewReader(data))
		if err != nil || len(diags) != 0 {
			t.Fatalf("%s: %v %v", name, err, diags)
		}
		want := []string{"table .dbo.Größe", "col a int 4", "index ix NONCLUSTERED (a) where a = 1 => a = 1"}
		if got := describeCatalog(c); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v", name, got)
		}
	}
	// Positions count characters, not bytes.
	_, diags, _ := ParseScript("u.sql", bytes.NewReader(utf16LE("CREATE TABLE Größe (a int, ä)")))
	if len(diags) != 1 || diags[0].Line != 1 || diags[0].Column != 29 {
		t.Errorf("diagnostics = %v, want one at 1:29", diags)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, fmt.Errorf("disk on fire") }

func TestParseScriptReadError(t *testing.T) {
	_, _, err := ParseScript("broken.sql", failingReader{})
	if err == nil || !strings.Contains(err.Error(), "broken.sql") || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("error = %v", err)
	}
}

func FuzzParseScript(f *testing.F) {
	f.Add(queueScript)
	f.Add("CREATE TABLE t (a int PRIMARY KEY, b nvarchar(max), INDEX ix (a) INCLUDE (b) WHERE a > 0)\nGO\nALTER TABLE t ADD c int")
	f.Add("CREATE UNIQUE CLUSTERED INDEX cx ON db..t ([a] DESC) WITH (DROP_EXISTING = ON) ON ps(a)")
	f.Add("CREATE TABLE #w (x AS CASE WHEN y IS NULL THEN 1 END PERSISTED, y int DEFAULT -(1))")
	f.Add("CREATE PROCEDURE p AS CREATE TABLE x (a int)\nGO\nCREATE COLUMNSTORE INDEX n ON t (a)")
	f.Add("CREATE TABLE t (a int CONSTRAINT c REFERENCES u (a) ON DELETE SET NULL NOT FOR REPLICATION)")
	f.Add("create index i on t(a) where a in (1,2) and b is not null /* x */ go")
	f.Fuzz(func(t *testing.T, script string) {
		c, diags, err := ParseScript("fuzz.sql", strings.NewReader(script))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Count(script, "\n") + 1
		for _, d := range diags {
			if d.Line < 1 || d.Line > lines || d.Column < 1 || d.File != "fuzz.sql" || d.Message == "" {
				t.Fatalf("diagnostic out of range: %+v (%d lines)", d, lines)
			}
		}
		for _, tb := range c.Tables {
			if tb.Name == "" || tb.Schema == "" {
				t.Fatalf("table without a name: %+v", tb)
			}
			for _, ix := range tb.Indexes {
				if ix.Name == "" || ix.Type == "" {
					t.Fatalf("index without a name or type: %+v", ix)
				}
				if (ix.Filter != nil || ix.FilterError != "") != (ix.FilterDefinition != "") || ix.Filter != nil && ix.FilterError != "" {
					t.Fatalf("inconsistent filter: %+v", ix)
				}
				if ix.FilterDefinition != "" && utf8.ValidString(script) && ix.Filter != nil {
					if again, err := ParseFilter(ix.Filter.String()); err != nil || !reflect.DeepEqual(again, ix.Filter) {
						t.Fatalf("filter %q does not round-trip: %v", ix.Filter, err)
					}
				}
			}
		}
		// What a script yields survives the JSON file.
		var buf bytes.Buffer
		if err := Write(&buf, c); err != nil {
			t.Fatal(err)
		}
		if _, err := decodeJSON("fuzz.json", buf.Bytes()); err != nil {
			t.Fatalf("JSON of a parsed script does not load: %v\n%s", err, buf.String())
		}
	})
}

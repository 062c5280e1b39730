package sqlscript

import (
	"reflect"
	"strings"
	"testing"
)

type batchWant struct {
	text   string // Request().Text
	repeat int
	line   int // first line of the batch's code
}

func batchesOf(t *testing.T, src []byte) ([]batchWant, *Script) {
	t.Helper()
	s, err := Parse("t.sql", src)
	if s == nil {
		t.Fatalf("Parse: %v", err)
	}
	var got []batchWant
	for _, b := range s.Batches {
		got = append(got, batchWant{b.Request().Text, b.Repeat, s.PosAt(b.codeStart).Line})
	}
	return got, s
}

func TestBatches(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []batchWant
	}{
		{"single batch", "SELECT 1", []batchWant{{"SELECT 1", 1, 1}}},
		{"GO separates", "SELECT 1\nGO\nSELECT 2\n", []batchWant{{"SELECT 1", 1, 1}, {"SELECT 2", 1, 3}}},
		{"lower-case go and spaces", "SELECT 1\n  go  \nSELECT 2", []batchWant{{"SELECT 1", 1, 1}, {"SELECT 2", 1, 3}}},
		{"GO with count", "INSERT t DEFAULT VALUES\nGO 5\nSELECT 2", []batchWant{{"INSERT t DEFAULT VALUES", 5, 1}, {"SELECT 2", 1, 3}}},
		{"GO with comment", "SELECT 1\nGO -- done\nSELECT 2", []batchWant{{"SELECT 1", 1, 1}, {"SELECT 2", 1, 3}}},
		{"GO count and block comment", "SELECT 1\nGO 2 /* twice */\nSELECT 2", []batchWant{{"SELECT 1", 2, 1}, {"SELECT 2", 1, 3}}},
		{"GO at end of file", "SELECT 1\nGO", []batchWant{{"SELECT 1", 1, 1}}},
		{"GO at start of file", "GO\nSELECT 1", []batchWant{{"SELECT 1", 1, 2}}},
		{"empty batches are dropped", "GO\n\nGO\n-- only a comment\nGO\nSELECT 1", []batchWant{{"SELECT 1", 1, 6}}},
		{"GO in a string", "SELECT '\nGO\n'\nGO\nSELECT 2", []batchWant{{"SELECT '\nGO\n'", 1, 1}, {"SELECT 2", 1, 5}}},
		{"GO in a block comment", "SELECT 1 /*\nGO\n*/\nSELECT 2", []batchWant{{"SELECT 1 /*\nGO\n*/\nSELECT 2", 1, 1}}},
		{"GO in a line comment", "SELECT 1 -- GO\nSELECT 2", []batchWant{{"SELECT 1 -- GO\nSELECT 2", 1, 1}}},
		{"GO as bracketed identifier", "SELECT 1 AS\n[GO]\nFROM t", []batchWant{{"SELECT 1 AS\n[GO]\nFROM t", 1, 1}}},
		{"GO not at line start", "SELECT 1 GO\nSELECT 2", []batchWant{{"SELECT 1 GO\nSELECT 2", 1, 1}}},
		{"GOTO is not GO", "GOTO done\ndone:\nSELECT 1", []batchWant{{"GOTO done\ndone:\nSELECT 1", 1, 1}}},
		{"CRLF", "SELECT 1\r\nGO\r\nSELECT 2\r\nGO 3\r\n", []batchWant{{"SELECT 1", 1, 1}, {"SELECT 2", 3, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, s := batchesOf(t, []byte(tt.src))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("batches\n got %+v\nwant %+v\ndiagnostics %v", got, tt.want, s.Diagnostics)
			}
			for i, b := range s.Batches {
				if b.Index != i+1 {
					t.Errorf("batch %d has Index %d", i+1, b.Index)
				}
				if s.Text[b.Range.Start.Offset:b.Range.End.Offset] != b.Text {
					t.Errorf("batch %d: Range does not cover Text", b.Index)
				}
			}
		})
	}
}

func TestBatchesUTF16(t *testing.T) {
	src := utf16LE("-- größe\r\nSELECT N'ä'\r\nGO\r\nSELECT 2\r\n", true)
	got, s := batchesOf(t, src)
	want := []batchWant{{"SELECT N'ä'", 1, 2}, {"SELECT 2", 1, 4}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	st := s.Batches[0].Statements[0]
	if st.Range.Start != (Pos{Offset: 12, Line: 2, Column: 1}) || st.Range.End.Column != 12 {
		t.Errorf("statement range = %+v", st.Range)
	}
}

func TestBatchSeparatorDiagnostics(t *testing.T) {
	tests := []struct {
		name, src, want string
		severity        Severity
		batches         int
	}{
		{"text after GO", "SELECT 1\nGO x\nSELECT 2", "t.sql:2:1: GO is not a batch separator here: unexpected word \"x\" after GO", SeverityWarning, 1},
		{"semicolon after GO", "SELECT 1\nGO;\nSELECT 2", "unexpected operator \";\" after GO", SeverityWarning, 1},
		{"two counts", "SELECT 1\nGO 2 3\nSELECT 2", "unexpected number \"3\" after GO", SeverityWarning, 1},
		{"zero count", "SELECT 1\nGO 0\nSELECT 2", "t.sql:2:4: GO count 0 must be a whole number from 1 to 2147483647", SeverityError, 2},
		{"fractional count", "SELECT 1\nGO 1.5\nSELECT 2", "GO count 1.5 must be", SeverityError, 2},
		{"sqlcmd command", "  :setvar db q\nSELECT 1", "t.sql:1:3: sqlcmd command :setvar is not supported; the line is sent to the server as T-SQL", SeverityWarning, 1},
		{"huge count", "SELECT 1\nGO 99999999999\nSELECT 2", "GO count 99999999999 must be", SeverityError, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := Parse("t.sql", []byte(tt.src))
			if len(s.Batches) != tt.batches {
				t.Errorf("%d batches, want %d", len(s.Batches), tt.batches)
			}
			if len(s.Diagnostics) != 1 || !strings.Contains(s.Diagnostics[0].String(), tt.want) || s.Diagnostics[0].Severity != tt.severity {
				t.Fatalf("diagnostics = %v, want one %v containing %q", s.Diagnostics, tt.severity, tt.want)
			}
		})
	}
}

// statementsOf splits one batch and returns the statement texts.
func statementsOf(sql string) []string {
	toks := code(lex(sql))
	var out []string
	for _, sp := range splitStatements(toks) {
		out = append(out, sql[toks[sp.first].Start:toks[sp.last].End])
	}
	return out
}

func TestSplitStatements(t *testing.T) {
	tests := []struct {
		name string
		sql  string
		want []string
	}{
		{"semicolons", "SELECT 1; SELECT 2;", []string{"SELECT 1;", "SELECT 2;"}},
		{"stray semicolons", ";;SELECT 1;;", []string{"SELECT 1;"}},
		{"declare and select without semicolons", "DECLARE @s tinyint = 0\nSELECT TOP (20) WorkId FROM dbo.Work WHERE Status = @s",
			[]string{"DECLARE @s tinyint = 0", "SELECT TOP (20) WorkId FROM dbo.Work WHERE Status = @s"}},
		{"set nocount on then select", "SET NOCOUNT ON\nSELECT 1", []string{"SET NOCOUNT ON", "SELECT 1"}},
		{"CTE claim", "WITH q AS (SELECT TOP (20) WorkId, Status FROM dbo.Work WITH (UPDLOCK, READPAST, ROWLOCK) WHERE Status = 0 ORDER BY CreatedAt) UPDATE q SET Status = 1 OUTPUT inserted.WorkId;",
			[]string{"WITH q AS (SELECT TOP (20) WorkId, Status FROM dbo.Work WITH (UPDLOCK, READPAST, ROWLOCK) WHERE Status = 0 ORDER BY CreatedAt) UPDATE q SET Status = 1 OUTPUT inserted.WorkId;"}},
		{"CTE claim then select without semicolons", "DECLARE @ids TABLE (WorkId int)\n;WITH q AS (SELECT TOP (20) * FROM dbo.Work WITH (READPAST) WHERE Status = 0)\nUPDATE q SET Status = 1 OUTPUT inserted.WorkId INTO @ids\nSELECT WorkId FROM @ids",
			[]string{"DECLARE @ids TABLE (WorkId int)\n;", "WITH q AS (SELECT TOP (20) * FROM dbo.Work WITH (READPAST) WHERE Status = 0)\nUPDATE q SET Status = 1 OUTPUT inserted.WorkId INTO @ids", "SELECT WorkId FROM @ids"}},
		{"CTE with column list and two CTEs", "WITH a (x) AS (SELECT 1), b AS (SELECT x FROM a) SELECT * FROM b SELECT 2",
			[]string{"WITH a (x) AS (SELECT 1), b AS (SELECT x FROM a) SELECT * FROM b", "SELECT 2"}},
		{"CTE then delete", "WITH old AS (SELECT TOP (100) * FROM dbo.Work WHERE Status = 2) DELETE FROM old",
			[]string{"WITH old AS (SELECT TOP (100) * FROM dbo.Work WHERE Status = 2) DELETE FROM old"}},
		{"CTE then insert and merge", "WITH s AS (SELECT 1 AS id) INSERT INTO t (id) SELECT id FROM s WITH m AS (SELECT 1 AS id) MERGE t USING m ON t.id = m.id WHEN MATCHED THEN DELETE;",
			[]string{"WITH s AS (SELECT 1 AS id) INSERT INTO t (id) SELECT id FROM s", "WITH m AS (SELECT 1 AS id) MERGE t USING m ON t.id = m.id WHEN MATCHED THEN DELETE;"}},
		{"WITH XMLNAMESPACES", "SELECT 1 WITH XMLNAMESPACES ('u' AS p) SELECT 2", []string{"SELECT 1", "WITH XMLNAMESPACES ('u' AS p) SELECT 2"}},
		{"table hints and TOP WITH TIES", "SELECT TOP (5) WITH TIES a FROM t WITH (NOLOCK) ORDER BY a SELECT 2",
			[]string{"SELECT TOP (5) WITH TIES a FROM t WITH (NOLOCK) ORDER BY a", "SELECT 2"}},
		{"insert select", "INSERT INTO t (a) SELECT a FROM s SELECT @@ROWCOUNT", []string{"INSERT INTO t (a) SELECT a FROM s", "SELECT @@ROWCOUNT"}},
		{"insert with hint select", "INSERT INTO t WITH (TABLOCK) (a) SELECT a FROM s", []string{"INSERT INTO t WITH (TABLOCK) (a) SELECT a FROM s"}},
		{"insert values then select", "INSERT t (a) VALUES (1), (2) SELECT 1", []string{"INSERT t (a) VALUES (1), (2)", "SELECT 1"}},
		{"insert exec", "INSERT INTO #t EXEC dbo.p @a = 1 EXEC dbo.q", []string{"INSERT INTO #t EXEC dbo.p @a = 1", "EXEC dbo.q"}},
		{"insert output select", "INSERT INTO t (a) OUTPUT inserted.id INTO @ids SELECT a FROM s", []string{"INSERT INTO t (a) OUTPUT inserted.id INTO @ids SELECT a FROM s"}},
		{"insert default values", "INSERT t DEFAULT VALUES SELECT SCOPE_IDENTITY()", []string{"INSERT t DEFAULT VALUES", "SELECT SCOPE_IDENTITY()"}},
		{"union all", "SELECT 1 UNION ALL SELECT 2 UNION SELECT 3 EXCEPT SELECT 4 INTERSECT SELECT 5", []string{"SELECT 1 UNION ALL SELECT 2 UNION SELECT 3 EXCEPT SELECT 4 INTERSECT SELECT 5"}},
		{"insert select union", "INSERT t SELECT 1 UNION ALL SELECT 2 SELECT 3", []string{"INSERT t SELECT 1 UNION ALL SELECT 2", "SELECT 3"}},
		{"update set then set", "UPDATE dbo.Work SET Status = 1 WHERE WorkId = @id SET @n = @@ROWCOUNT",
			[]string{"UPDATE dbo.Work SET Status = 1 WHERE WorkId = @id", "SET @n = @@ROWCOUNT"}},
		{"update top with hints", "UPDATE TOP (1) dbo.Work WITH (UPDLOCK, READPAST) SET Status = 1 OUTPUT inserted.* WHERE Status = 0",
			[]string{"UPDATE TOP (1) dbo.Work WITH (UPDLOCK, READPAST) SET Status = 1 OUTPUT inserted.* WHERE Status = 0"}},
		{"update statistics", "UPDATE STATISTICS dbo.Work SET NOCOUNT ON", []string{"UPDATE STATISTICS dbo.Work", "SET NOCOUNT ON"}},
		{"update from join", "UPDATE w SET w.Status = 2 FROM dbo.Work w JOIN dbo.Done d ON d.id = w.id DELETE FROM dbo.Done",
			[]string{"UPDATE w SET w.Status = 2 FROM dbo.Work w JOIN dbo.Done d ON d.id = w.id", "DELETE FROM dbo.Done"}},
		{"delete output", "DELETE TOP (10) FROM q OUTPUT deleted.WorkId WHERE Status = 2 SELECT 1", []string{"DELETE TOP (10) FROM q OUTPUT deleted.WorkId WHERE Status = 2", "SELECT 1"}},
		{"merge", "MERGE INTO dbo.T WITH (HOLDLOCK) AS t USING (SELECT @id AS id) AS s ON t.id = s.id WHEN MATCHED AND t.x = 1 THEN UPDATE SET t.x = 2 WHEN NOT MATCHED BY TARGET THEN INSERT (id) VALUES (s.id) WHEN NOT MATCHED BY SOURCE THEN DELETE OUTPUT $action, inserted.id;",
			[]string{"MERGE INTO dbo.T WITH (HOLDLOCK) AS t USING (SELECT @id AS id) AS s ON t.id = s.id WHEN MATCHED AND t.x = 1 THEN UPDATE SET t.x = 2 WHEN NOT MATCHED BY TARGET THEN INSERT (id) VALUES (s.id) WHEN NOT MATCHED BY SOURCE THEN DELETE OUTPUT $action, inserted.id;"}},
		{"if else", "IF @x = 1 SELECT 1 ELSE SELECT 2", []string{"IF @x = 1", "SELECT 1", "SELECT 2"}},
		{"if exists subquery", "IF EXISTS (SELECT 1 FROM t WHERE a = 1) DELETE FROM t", []string{"IF EXISTS (SELECT 1 FROM t WHERE a = 1)", "DELETE FROM t"}},
		{"if not update()", "IF NOT UPDATE(Status) RETURN", []string{"IF NOT UPDATE(Status)", "RETURN"}},
		{"else if", "IF @a = 1 PRINT 'a' ELSE IF @a = 2 PRINT 'b' ELSE PRINT 'c'", []string{"IF @a = 1", "PRINT 'a'", "IF @a = 2", "PRINT 'b'", "PRINT 'c'"}},
		{"begin end blocks", "IF @x = 1\nBEGIN\n  UPDATE t SET a = 1\n  SELECT 1\nEND\nELSE\nBEGIN\n  SELECT 2\nEND",
			[]string{"IF @x = 1", "UPDATE t SET a = 1", "SELECT 1", "SELECT 2"}},
		{"while loop", "WHILE 1 = 1 BEGIN DELETE TOP (100) FROM t IF @@ROWCOUNT = 0 BREAK END",
			[]string{"WHILE 1 = 1", "DELETE TOP (100) FROM t", "IF @@ROWCOUNT = 0", "BREAK"}},
		{"case end inside block", "BEGIN SELECT CASE WHEN a = 1 THEN 'x' ELSE 'y' END AS c FROM t END",
			[]string{"SELECT CASE WHEN a = 1 THEN 'x' ELSE 'y' END AS c FROM t"}},
		{"nested case", "SELECT CASE WHEN a = 1 THEN CASE b WHEN 1 THEN 2 END ELSE 3 END FROM t SELECT 4",
			[]string{"SELECT CASE WHEN a = 1 THEN CASE b WHEN 1 THEN 2 END ELSE 3 END FROM t", "SELECT 4"}},
		{"begin tran", "BEGIN TRAN\nUPDATE t SET a = 1\nCOMMIT TRAN", []string{"BEGIN TRAN", "UPDATE t SET a = 1", "COMMIT TRAN"}},
		{"begin transaction with mark", "BEGIN TRANSACTION t1 WITH MARK 'm' SELECT 1 ROLLBACK", []string{"BEGIN TRANSACTION t1 WITH MARK 'm'", "SELECT 1", "ROLLBACK"}},
		{"try catch", "BEGIN TRY\n SELECT 1/0\nEND TRY\nBEGIN CATCH\n THROW;\nEND CATCH", []string{"SELECT 1/0", "THROW;"}},
		{"cursor", "DECLARE c CURSOR LOCAL FAST_FORWARD FOR SELECT id FROM t OPEN c FETCH NEXT FROM c INTO @id CLOSE c DEALLOCATE c",
			[]string{"DECLARE c CURSOR LOCAL FAST_FORWARD FOR SELECT id FROM t", "OPEN c", "FETCH NEXT FROM c INTO @id", "CLOSE c", "DEALLOCATE c"}},
		{"cursor for update of", "DECLARE c CURSOR FOR SELECT a FROM t FOR UPDATE OF a", []string{"DECLARE c CURSOR FOR SELECT a FROM t FOR UPDATE OF a"}},
		{"offset fetch", "SELECT a FROM t ORDER BY a OFFSET 10 ROWS FETCH NEXT 20 ROWS ONLY SELECT 2",
			[]string{"SELECT a FROM t ORDER BY a OFFSET 10 ROWS FETCH NEXT 20 ROWS ONLY", "SELECT 2"}},
		{"subqueries stay inside", "SELECT (SELECT 1), a FROM t WHERE a IN (SELECT b FROM u) AND EXISTS (SELECT 1)",
			[]string{"SELECT (SELECT 1), a FROM t WHERE a IN (SELECT b FROM u) AND EXISTS (SELECT 1)"}},
		{"set from subquery", "SET @n = (SELECT COUNT(*) FROM t) SELECT @n", []string{"SET @n = (SELECT COUNT(*) FROM t)", "SELECT @n"}},
		{"exec then select", "EXEC dbo.Claim @n = 20\nSELECT 1", []string{"EXEC dbo.Claim @n = 20", "SELECT 1"}},
		{"grant", "GRANT SELECT, INSERT, UPDATE, DELETE ON dbo.Work TO app GRANT EXECUTE ON dbo.p TO app",
			[]string{"GRANT SELECT, INSERT, UPDATE, DELETE ON dbo.Work TO app", "GRANT EXECUTE ON dbo.p TO app"}},
		{"create table and filtered index", "CREATE TABLE dbo.Work (WorkId int PRIMARY KEY, Status tinyint NOT NULL)\nCREATE INDEX IX_Work_Pending ON dbo.Work (CreatedAt) INCLUDE (Status) WHERE Status = 0 WITH (ONLINE = ON)\nSELECT 1",
			[]string{"CREATE TABLE dbo.Work (WorkId int PRIMARY KEY, Status tinyint NOT NULL)", "CREATE INDEX IX_Work_Pending ON dbo.Work (CreatedAt) INCLUDE (Status) WHERE Status = 0 WITH (ONLINE = ON)", "SELECT 1"}},
		{"alter table alter column and drop", "ALTER TABLE t ALTER COLUMN a int NOT NULL ALTER TABLE t DROP CONSTRAINT ck DROP TABLE u",
			[]string{"ALTER TABLE t ALTER COLUMN a int NOT NULL", "ALTER TABLE t DROP CONSTRAINT ck", "DROP TABLE u"}},
		{"foreign key actions", "ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (a) REFERENCES u (a) ON DELETE SET NULL ON UPDATE CASCADE SELECT 1",
			[]string{"ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (a) REFERENCES u (a) ON DELETE SET NULL ON UPDATE CASCADE", "SELECT 1"}},
		{"drop if exists", "DROP TABLE IF EXISTS #t CREATE TABLE #t (a int)", []string{"DROP TABLE IF EXISTS #t", "CREATE TABLE #t (a int)"}},
		{"alter database set", "ALTER DATABASE q SET PARAMETERIZATION FORCED SELECT 1", []string{"ALTER DATABASE q SET PARAMETERIZATION FORCED", "SELECT 1"}},
		{"create procedure takes the batch", "CREATE PROCEDURE dbo.p AS BEGIN SET NOCOUNT ON; SELECT 1; END",
			[]string{"CREATE PROCEDURE dbo.p AS BEGIN SET NOCOUNT ON; SELECT 1; END"}},
		{"create or alter view takes the batch", "CREATE OR ALTER VIEW v AS SELECT 1 AS a", []string{"CREATE OR ALTER VIEW v AS SELECT 1 AS a"}},
		{"raiserror with nowait", "RAISERROR('x', 0, 1) WITH NOWAIT SELECT 1", []string{"RAISERROR('x', 0, 1) WITH NOWAIT", "SELECT 1"}},
		{"waitfor and use", "USE q WAITFOR DELAY '00:00:01' PRINT 'x'", []string{"USE q", "WAITFOR DELAY '00:00:01'", "PRINT 'x'"}},
		{"keyword after a dot is a name", "SELECT t.[update], x.print FROM t", []string{"SELECT t.[update], x.print FROM t"}},
		{"comments between statements are not statements", "SELECT 1 -- one\n/* two */ SELECT 2", []string{"SELECT 1", "SELECT 2"}},
		{"unbalanced parenthesis", "SELECT (1 SELECT 2; SELECT 3", []string{"SELECT (1 SELECT 2;", "SELECT 3"}},
		{"labels join the next statement", "retry:\nDELETE TOP (10) FROM t\nIF @@ROWCOUNT > 0 GOTO retry\ndone: SELECT 1\nlast:",
			[]string{"retry:\nDELETE TOP (10) FROM t", "IF @@ROWCOUNT > 0", "GOTO retry", "done: SELECT 1", "last:"}},
		{"for xml, select into, option", "SELECT a INTO #t FROM t OPTION (RECOMPILE) SELECT (SELECT a FROM t FOR XML PATH('')) SELECT 3",
			[]string{"SELECT a INTO #t FROM t OPTION (RECOMPILE)", "SELECT (SELECT a FROM t FOR XML PATH(''))", "SELECT 3"}},
		{"end conversation", "END CONVERSATION @h SELECT 1", []string{"END CONVERSATION @h", "SELECT 1"}},
		{"empty", "", nil},
		{"only comments", "-- x\n/* y */", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := statementsOf(tt.sql)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("statements of %q\n got %q\nwant %q", tt.sql, got, tt.want)
			}
		})
	}
}

func TestStatementKeywordsAndRanges(t *testing.T) {
	src := "SET NOCOUNT ON;\r\n\tWITH q AS (SELECT 1 AS a)\r\n\tSELECT a FROM q;\r\nbegin tran\r\n"
	s, err := Parse("t.sql", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range s.Batches[0].Statements {
		got = append(got, st.Keyword+"@"+st.Range.Start.String()+"-"+st.Range.End.String())
		if s.Text[st.Range.Start.Offset:st.Range.End.Offset] != st.Text {
			t.Errorf("range of %q does not match its text", st.Text)
		}
	}
	want := []string{"SET@1:1-1:16", "WITH@2:2-3:18", "BEGIN@4:1-4:11"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestLabelKeyword(t *testing.T) {
	toks := code(lex("retry: DELETE FROM t; done: ;"))
	var got []string
	for _, sp := range splitStatements(toks) {
		got = append(got, sp.keyword)
	}
	if want := []string{"DELETE", "DONE"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keywords = %v, want %v", got, want)
	}
}

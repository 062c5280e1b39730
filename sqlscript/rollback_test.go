package sqlscript

import (
	"strings"
	"testing"
)

func TestNotRollbackable(t *testing.T) {
	tests := []struct {
		sql    string
		reason string // "" when allowed
	}{
		{"SELECT * FROM dbo.Work WHERE Status = 0", ""},
		{"WITH q AS (SELECT TOP (1) * FROM dbo.Work) UPDATE q SET Status = 1", ""},
		{"CREATE TABLE #t (a int)", ""},
		{"CREATE INDEX ix ON dbo.Work (Status) WHERE Status = 0", ""},
		{"ALTER TABLE dbo.Work ADD Note nvarchar(10) NULL", ""},
		{"DROP TABLE IF EXISTS dbo.Tmp", ""},
		{"TRUNCATE TABLE dbo.Tmp", ""},
		{"EXEC dbo.ClaimWork @n = 20", ""},
		{"EXEC sp_executesql N'SELECT 1'", ""},
		{"EXECUTE AS USER = 'app'", ""},
		{"GRANT EXECUTE ON dbo.p TO app", ""},
		{"CREATE DATABASE SCOPED CREDENTIAL c WITH IDENTITY = 'x'", ""},
		{"BACKUP DATABASE q TO DISK = 'q.bak'", "BACKUP is not allowed inside a transaction"},
		{"RESTORE DATABASE q FROM DISK = 'q.bak'", "RESTORE is not allowed"},
		{"CREATE DATABASE q", "CREATE DATABASE (database) is not allowed inside a transaction"},
		{"ALTER DATABASE q SET PARAMETERIZATION FORCED", "ALTER DATABASE (database)"},
		{"DROP DATABASE q", "DROP DATABASE"},
		{"DBCC FREEPROCCACHE", "DBCC commands"},
		{"KILL 52", "KILL ends another session"},
		{"SHUTDOWN WITH NOWAIT", "SHUTDOWN stops the server"},
		{"RECONFIGURE", "RECONFIGURE is not allowed"},
		{"CHECKPOINT", "CHECKPOINT is not transactional"},
		{"CREATE FULLTEXT CATALOG ftc", "CREATE FULLTEXT (full-text catalog or index)"},
		{"ALTER FULLTEXT INDEX ON t START FULL POPULATION", "ALTER FULLTEXT"},
		{"CREATE LOGIN app WITH PASSWORD = 'x'", "CREATE LOGIN (login)"},
		{"ALTER SERVER CONFIGURATION SET PROCESS AFFINITY CPU = AUTO", "ALTER SERVER (server-level object)"},
		{"CREATE OR ALTER EVENT SESSION s ON SERVER ADD EVENT x", "CREATE EVENT (event session)"},
		{"ALTER DATABASE AUDIT SPECIFICATION a WITH (STATE = ON)", "ALTER DATABASE AUDIT is not allowed"},
		{"BEGIN TRAN", "BEGIN TRANSACTION inside the script"},
		{"begin transaction t1", "BEGIN TRANSACTION"},
		{"COMMIT", "COMMIT inside the script would end the capture transaction"},
		{"ROLLBACK TRAN", "ROLLBACK inside the script"},
		{"SAVE TRANSACTION s1", "SAVE TRANSACTION"},
		{"SET IMPLICIT_TRANSACTIONS ON", "IMPLICIT_TRANSACTIONS"},
		{"EXEC xp_cmdshell 'dir'", "extended procedure xp_cmdshell acts outside the transaction"},
		{"EXEC master.dbo.xp_fixeddrives", "extended procedure xp_fixeddrives"},
		{"EXEC sp_configure 'show advanced options', 1", "sp_configure changes server configuration"},
		{"EXEC @rc = master..xp_regread 'x'", "extended procedure xp_regread"},
		{"INSERT INTO #d EXEC xp_fixeddrives", "extended procedure xp_fixeddrives"},
		{"EXEC ('BACKUP LOG q TO DISK = ''x''')", "dynamic SQL: BACKUP is not allowed"},
		{"EXEC (N'SELECT 1' + N'; COMMIT')", "dynamic SQL: COMMIT inside the script"},
		{"EXEC ('SELECT 1')", ""},
		{"EXEC (@sql)", "EXEC of dynamic SQL built from variables or expressions cannot be checked"},
		{"EXEC @proc", "EXEC of a procedure named by a variable cannot be checked"},
		{"EXEC sp_executesql @sql", "sp_executesql with a statement held in a variable cannot be checked"},
		{"EXEC sp_executesql @stmt = N'DBCC CHECKDB', N''", "dynamic SQL: DBCC commands"},
		{"EXEC sys.sp_executesql N'EXEC sp_executesql N''KILL 1'''", "dynamic SQL: dynamic SQL: KILL"},
		{"ALTER INDEX ix ON t REBUILD WITH (ONLINE = ON, RESUMABLE = ON)", "resumable index operation"},
	}
	for _, tt := range tests {
		st := &Statement{Text: tt.sql}
		reason, bad := st.NotRollbackable()
		switch {
		case tt.reason == "" && bad:
			t.Errorf("%q refused: %s", tt.sql, reason)
		case tt.reason != "" && !bad:
			t.Errorf("%q allowed, want refusal %q", tt.sql, tt.reason)
		case tt.reason != "" && !strings.Contains(reason, tt.reason):
			t.Errorf("%q: reason %q, want it to contain %q", tt.sql, reason, tt.reason)
		}
	}
}

func TestNotRollbackableDeepNesting(t *testing.T) {
	sql := "SELECT 1"
	for i := 0; i < 12; i++ {
		sql = "EXEC ('" + strings.ReplaceAll(sql, "'", "''") + "')"
	}
	reason, bad := (&Statement{Text: sql}).NotRollbackable()
	if !bad || !strings.Contains(reason, "nested too deeply") {
		t.Errorf("got %q %v", reason, bad)
	}
}

package catalog

import (
	"strings"

	"github.com/planlint/planlint/internal/tsql"
)

// reserved holds T-SQL's reserved keywords, which cannot be plain
// (unquoted) identifiers.
var reserved = wordSet(`ADD ALL ALTER AND ANY AS ASC AUTHORIZATION BACKUP BEGIN BETWEEN BREAK BROWSE BULK BY
CASCADE CASE CHECK CHECKPOINT CLOSE CLUSTERED COALESCE COLLATE COLUMN COMMIT COMPUTE CONSTRAINT CONTAINS
CONTAINSTABLE CONTINUE CONVERT CREATE CROSS CURRENT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP CURRENT_USER
CURSOR DATABASE DBCC DEALLOCATE DECLARE DEFAULT DELETE DENY DESC DISK DISTINCT DISTRIBUTED DOUBLE DROP DUMP
ELSE END ERRLVL ESCAPE EXCEPT EXEC EXECUTE EXISTS EXIT EXTERNAL FETCH FILE FILLFACTOR FOR FOREIGN FREETEXT
FREETEXTTABLE FROM FULL FUNCTION GOTO GRANT GROUP HAVING HOLDLOCK IDENTITY IDENTITY_INSERT IDENTITYCOL IF IN
INDEX INNER INSERT INTERSECT INTO IS JOIN KEY KILL LEFT LIKE LINENO LOAD MERGE NATIONAL NOCHECK NONCLUSTERED
NOT NULL NULLIF OF OFF OFFSETS ON OPEN OPENDATASOURCE OPENQUERY OPENROWSET OPENXML OPTION OR ORDER OUTER OVER
PERCENT PIVOT PLAN PRECISION PRIMARY PRINT PROC PROCEDURE PUBLIC RAISERROR READ READTEXT RECONFIGURE
REFERENCES REPLICATION RESTORE RESTRICT RETURN REVERT REVOKE RIGHT ROLLBACK ROWCOUNT ROWGUIDCOL RULE SAVE
SCHEMA SECURITYAUDIT SELECT SEMANTICKEYPHRASETABLE SEMANTICSIMILARITYDETAILSTABLE SEMANTICSIMILARITYTABLE
SESSION_USER SET SETUSER SHUTDOWN SOME STATISTICS SYSTEM_USER TABLE TABLESAMPLE TEXTSIZE THEN TO TOP TRAN
TRANSACTION TRIGGER TRUNCATE TRY_CONVERT TSEQUAL UNION UNIQUE UNPIVOT UPDATE UPDATETEXT USE USER VALUES
VARYING VIEW WAITFOR WHEN WHERE WHILE WITH WITHIN WRITETEXT`)

// statementStarts holds the keywords that begin a statement. In a script
// without semicolons they end the clause before them. WITH is absent: a
// common table expression must follow a semicolon.
var statementStarts = wordSet(`ALTER BACKUP BEGIN BREAK BULK CHECKPOINT CLOSE COMMIT CONTINUE CREATE DBCC
DEALLOCATE DECLARE DELETE DENY DROP ELSE END EXEC EXECUTE FETCH GOTO GRANT IF INSERT KILL MERGE OPEN PRINT
RAISERROR READTEXT RECONFIGURE RESTORE RETURN REVERT REVOKE ROLLBACK SAVE SELECT SET SETUSER SHUTDOWN TRUNCATE
UPDATE UPDATETEXT USE WAITFOR WHILE WRITETEXT`)

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

func isReserved(word string) bool { return reserved[strings.ToUpper(word)] }

// startsStatement reports whether t is a plain keyword that begins a
// statement.
func startsStatement(t token) bool {
	return t.kind == tokIdent && statementStarts[strings.ToUpper(t.text)]
}

// quoteName renders an identifier for T-SQL: as is when it is a regular
// identifier, otherwise in brackets with ] doubled.
func quoteName(name string) string {
	if isRegularIdent(name) && !isReserved(name) {
		return name
	}
	return "[" + strings.ReplaceAll(name, "]", "]]") + "]"
}

// isRegularIdent reports whether name lexes as one plain identifier (not
// a variable, which starts with @).
func isRegularIdent(name string) bool {
	toks := tsql.Lex(name)
	return len(toks) == 1 && toks[0].Kind == tsql.Word
}

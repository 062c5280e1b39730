package sqlscript

import (
	"strings"
	"testing"
)

// benchScript is a queue-table script of about 1 MiB: annotated claims,
// sp_executesql calls, plain batches and suppressions, separated by GO.
var benchScript = func() string {
	unit := `-- planlint-ignore PLC101 -- the claim scans on purpose
-- @Status tinyint = 0
-- @Take int = 20
WITH q AS (
	SELECT TOP (@Take) WorkId, Status
	FROM dbo.Work WITH (UPDLOCK, READPAST, ROWLOCK)
	WHERE Status = @Status
	ORDER BY CreatedAt
)
UPDATE q SET Status = 1 OUTPUT inserted.WorkId;
GO
EXEC sp_executesql N'SELECT WorkId FROM dbo.Work WHERE Status = @Status AND Note <> N''x''', N'@Status tinyint', @Status = 0
GO
SET NOCOUNT ON
DECLARE @n int = 0
IF EXISTS (SELECT 1 FROM dbo.Work WHERE Status = 2)
BEGIN
	DELETE TOP (100) FROM dbo.Work WHERE Status = 2
	SET @n = @@ROWCOUNT
END
ELSE
	PRINT 'nothing to purge'
GO
`
	return strings.Repeat(unit, (1<<20)/len(unit)+1)
}()

func BenchmarkParse(b *testing.B) {
	src := []byte(benchScript)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Parse("bench.sql", src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseUTF16(b *testing.B) {
	src := utf16LE(benchScript, true)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Parse("bench.sql", src); err != nil {
			b.Fatal(err)
		}
	}
}

const benchStatement = `SELECT TOP (20) w.WorkId, w.Payload
FROM dbo.Work AS w WITH (READPAST)
JOIN dbo.Kind AS k ON k.KindId = w.KindId
WHERE w.Status = 0 AND k.Name IN (N'mail', N'sms', N'push') AND w.CreatedAt >= '2024-01-01'
ORDER BY w.CreatedAt;`

func BenchmarkFingerprint(b *testing.B) {
	b.SetBytes(int64(len(benchStatement)))
	for b.Loop() {
		Fingerprint(benchStatement)
	}
}

func BenchmarkRedact(b *testing.B) {
	b.SetBytes(int64(len(benchStatement)))
	for b.Loop() {
		Redact(benchStatement)
	}
}

func BenchmarkLocate(b *testing.B) {
	// the last statement of a 1 MiB text, written with other line endings
	text := benchScript + benchStatement
	stmt := strings.ReplaceAll(benchStatement, "\n", "\r\n")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, _, ok := Locate(text, stmt, 0); !ok {
			b.Fatal("not found")
		}
	}
}

func BenchmarkNotRollbackable(b *testing.B) {
	st := &Statement{Text: benchStatement}
	for b.Loop() {
		st.NotRollbackable()
	}
}

package sqlscript

import (
	"regexp"
	"testing"
)

func TestFingerprintSame(t *testing.T) {
	base := "SELECT TOP (20) WorkId FROM dbo.Work WITH (READPAST) WHERE Status = 0 AND Kind IN (1, 2, 3) ORDER BY CreatedAt;"
	same := []string{
		base,
		"select top (20) workid\n  from [dbo].[Work] with (readpast)\n  where status = 0 and kind in (1,2,3)\n  order by createdat",
		"SELECT TOP (5) WorkId FROM dbo.Work WITH (READPAST) WHERE Status = 1 AND Kind IN (7) ORDER BY CreatedAt",
		"-- the claim\nSELECT /* hint */ TOP (20) WorkId FROM \"dbo\".\"Work\" WITH (READPAST) WHERE Status = -4 AND Kind IN (-1, 2.5, N'x') ORDER BY CreatedAt;;",
		"SELECT\tTOP(20)\tWorkId\r\nFROM\tdbo.Work\tWITH(READPAST)\r\nWHERE\tStatus=0\tAND\tKind\tIN(1,2,3)\r\nORDER\tBY\tCreatedAt",
	}
	want := Fingerprint(base)
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(want) {
		t.Fatalf("fingerprint %q is not 16 hex digits", want)
	}
	for _, s := range same {
		if got := Fingerprint(s); got != want {
			t.Errorf("Fingerprint(%q) = %s, want %s\nnormalized %q\n      base %q", s, got, want, normalize(s), normalize(base))
		}
	}
}

func TestFingerprintDifferent(t *testing.T) {
	base := "SELECT WorkId FROM dbo.Work WHERE Status = 0"
	different := []string{
		"SELECT WorkId FROM dbo.Work WHERE Kind = 0",
		"SELECT WorkId FROM dbo.Work WHERE Status = @Status",
		"SELECT WorkId FROM dbo.Work WHERE Status > 0",
		"SELECT WorkId FROM Work WHERE Status = 0",
		"SELECT WorkId FROM dbo.Work WHERE Status = 0 OPTION (RECOMPILE)",
		"SELECT WorkId FROM dbo.Work WHERE Status - 0",
		"SELECT WorkId FROM dbo.Work WHERE Status IN (SELECT 0)",
	}
	want := Fingerprint(base)
	for _, s := range different {
		if Fingerprint(s) == want {
			t.Errorf("Fingerprint(%q) equals that of %q", s, base)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT [A b] FROM T;", "select a b from t"},
		{"WHERE x = -1 AND y - 1 > 0", "where x = ? and y - ? > ?"},
		{"SELECT -$5, 0x1F, 'a''b', N'c', 1e5", "select ? , ? , ? , ? , ?"},
		{"WHERE a IN (1, -2, 'x', NULL) AND b NOT IN (@p, 1) AND c IN ()", "where a in ( ? ) and b not in ( @p , ? ) and c in ( )"},
		{"EXEC p @A = 1; ;", "exec p @a = ?"},
		{"SELECT @@ROWCOUNT -- x\n/* y */", "select @@rowcount"},
	}
	for _, tt := range tests {
		if got := normalize(tt.in); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT * FROM dbo.Work WHERE Status = 0 AND Note = N'secret' AND Code = 'x''y'",
			"SELECT * FROM dbo.Work WHERE Status = ? AND Note = N'?' AND Code = '?'"},
		{"UPDATE t SET b = 0xDEADBEEF, m = $12.50, f = -1.5e3 WHERE id = @id",
			"UPDATE t SET b = ?, m = ?, f = -? WHERE id = @id"},
		{"SELECT TOP (20) t1.c2, [col 3], @@ROWCOUNT FROM #t9 -- 42 stays in comments\r\n",
			"SELECT TOP (?) t1.c2, [col 3], @@ROWCOUNT FROM #t9 -- 42 stays in comments\r\n"},
		{"SELECT 'unterminated", "SELECT '?'"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

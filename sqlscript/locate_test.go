package sqlscript

import "testing"

func TestLocate(t *testing.T) {
	const crlf = "-- claim\r\nSET NOCOUNT ON;\r\nSELECT TOP (20) WorkId\r\n\tFROM dbo.Work\r\n\tWHERE Status = 0;\r\nSELECT 1;\r\nSELECT 1;"
	tests := []struct {
		name, text, stmt string
		from             int
		want             string // text[start:end]
		ok               bool
	}{
		{"LF statement in CRLF text", crlf, "SELECT TOP (20) WorkId\n\tFROM dbo.Work\n\tWHERE Status = 0;", 0,
			"SELECT TOP (20) WorkId\r\n\tFROM dbo.Work\r\n\tWHERE Status = 0;", true},
		{"spaces for tabs and line breaks", crlf, "SELECT TOP (20) WorkId FROM dbo.Work WHERE Status = 0", 0,
			"SELECT TOP (20) WorkId\r\n\tFROM dbo.Work\r\n\tWHERE Status = 0", true},
		{"surrounding whitespace and leading comment in the statement text", crlf, "\r\n  SET NOCOUNT ON;\r\n", 0, "SET NOCOUNT ON;", true},
		{"statement text with the leading comment", crlf, "-- claim\r\nSET NOCOUNT ON", 0, "-- claim\r\nSET NOCOUNT ON", true},
		{"repeated statement found from an offset", crlf, "SELECT 1;", 90, "SELECT 1;", true},
		{"not found", crlf, "SELECT 2", 0, "", false},
		{"empty statement", crlf, " \r\n", 0, "", false},
		{"from past the end", "abc", "abc", 10, "", false},
		{"negative from", "abc", "b", -3, "b", true},
		{"prefers matching word boundaries", "SELECT ab FROM t; SELECT a b FROM t", "SELECT a b", 0, "SELECT a b", true},
		{"falls back to whitespace-free match", "SELECT ab FROM t", "SELECT a b", 0, "SELECT ab", true},
		{"non-ASCII", "SELECT N'größe' AS ä", "N'größe'  AS\nä", 0, "N'größe' AS ä", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, end, ok := Locate(tt.text, tt.stmt, tt.from)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if ok && tt.text[start:end] != tt.want {
				t.Errorf("found %q, want %q", tt.text[start:end], tt.want)
			}
		})
	}
	// the second occurrence
	first, _, _ := Locate(crlf, "SELECT 1;", 0)
	second, _, ok := Locate(crlf, "SELECT 1;", first+1)
	if !ok || second <= first {
		t.Errorf("second occurrence at %d (first %d)", second, first)
	}
}

func TestPosAt(t *testing.T) {
	s := mustParse(t, "SELECT 1\r\nGO\r\n-- ä\r\nSELECT N'ü', 2")
	start, _, ok := Locate(s.Text, "2", 20)
	if !ok {
		t.Fatal("not found")
	}
	if p := s.PosAt(start); p.Line != 4 || p.Column != 14 {
		t.Errorf("PosAt = %v, want 4:14", p)
	}
	if r := s.RangeAt(0, 8); r.End.Line != 1 || r.End.Column != 9 {
		t.Errorf("RangeAt = %+v", r)
	}
}

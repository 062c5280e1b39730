package sqlscript

import (
	"strings"
	"testing"
	"unicode/utf16"
)

func utf16LE(s string, bom bool) []byte {
	var out []byte
	if bom {
		out = append(out, 0xFF, 0xFE)
	}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}

func utf16BE(s string) []byte {
	out := []byte{0xFE, 0xFF}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u>>8), byte(u))
	}
	return out
}

func TestDecodeSource(t *testing.T) {
	const text = "SELECT N'größe 😀'\r\nGO\r\n"
	tests := []struct {
		name    string
		src     []byte
		want    string
		wantErr string
	}{
		{"utf-8", []byte(text), text, ""},
		{"utf-8 with BOM", append([]byte{0xEF, 0xBB, 0xBF}, text...), text, ""},
		{"utf-16 LE with BOM", utf16LE(text, true), text, ""},
		{"utf-16 BE with BOM", utf16BE(text), text, ""},
		{"empty", nil, "", ""},
		{"utf-16 without BOM", utf16LE("SELECT 1", false), "", "1:2: NUL byte in a UTF-8 file"},
		{"latin-1", []byte("SELECT 'caf\xe9'\n"), "", "1:12: invalid UTF-8 (byte 0xE9)"},
		{"latin-1 on line 2", []byte("SELECT 1\nSELECT 'caf\xe9'"), "", "2:12: invalid UTF-8"},
		{"odd utf-16", append(utf16LE("AB", true), 'C'), "", "odd number of bytes (5 after the byte-order mark)"},
		{"unpaired surrogate", append(utf16LE("A\n", true), 0x00, 0xD8, 'B', 0), "", "2:1: invalid UTF-16 (unpaired surrogate 0xD800 at byte 6"},
		{"utf-16 with NUL", append(utf16LE("A", true), 0, 0), "", "1:2: NUL character in a UTF-16 file"},
		{"utf-32", []byte{0xFF, 0xFE, 0, 0, 'A', 0, 0, 0}, "", "UTF-32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeSource(tt.src)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLineIndex(t *testing.T) {
	const text = "ab\r\nçd😀x\ny\rz"
	idx := newLineIndex(text)
	tests := []struct {
		offset     int
		line, col  int
		wantOffset int
	}{
		{0, 1, 1, 0},
		{2, 1, 3, 2},   // the CR
		{3, 1, 4, 3},   // the LF of CRLF is still line 1
		{4, 2, 1, 4},   // ç
		{6, 2, 2, 6},   // d: ç is two bytes but one column
		{7, 2, 3, 7},   // the emoji
		{9, 2, 3, 9},   // inside the emoji: the emoji itself
		{11, 2, 4, 11}, // x
		{13, 3, 1, 13}, // y
		{15, 4, 1, 15}, // z after a lone CR
		{16, 4, 2, 16}, // end of text
		{99, 4, 2, 16}, // clamped
		{-5, 1, 1, 0},  // clamped
	}
	for _, tt := range tests {
		p := idx.pos(tt.offset)
		if p.Line != tt.line || p.Column != tt.col || p.Offset != tt.wantOffset {
			t.Errorf("pos(%d) = %+v, want line %d col %d offset %d", tt.offset, p, tt.line, tt.col, tt.wantOffset)
		}
	}
}

func TestParseUndecodable(t *testing.T) {
	s, err := Parse("bad.sql", []byte("SELECT '\xff'"))
	if s != nil || err == nil || !strings.HasPrefix(err.Error(), "bad.sql: 1:9: invalid UTF-8") {
		t.Fatalf("Parse = %v, %v; want no script and a located error", s, err)
	}
}

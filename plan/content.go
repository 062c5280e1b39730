package plan

import (
	"bytes"
	"unicode/utf8"
)

// contentKind says what the start of a document that is not XML looks
// like, without quoting it: the file may be anything a path points at (an
// environment, a key file), and messages reach shared reports.
func contentKind(b []byte) string {
	for _, m := range []struct{ magic, kind string }{
		{"\x89PNG", "a PNG image"}, {"%PDF", "a PDF document"}, {"PK\x03\x04", "a ZIP archive (an .xlsx or .docx is one)"},
		{"\x1f\x8b", "gzip-compressed data (decompress it first)"}, {"\x7fELF", "an executable"},
	} {
		if bytes.HasPrefix(b, []byte(m.magic)) {
			return m.kind
		}
	}
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(trimPartialRune(b)) {
		return "binary data"
	}
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return "binary data"
		}
	}
	switch t := bytes.TrimSpace(b); {
	case len(t) > 0 && (t[0] == '{' || t[0] == '['):
		return "what looks like JSON"
	case looksLikeSQL(t):
		return "what looks like T-SQL (planlint explain runs a query to capture its plan)"
	}
	return "text"
}

// trimPartialRune drops an incomplete UTF-8 sequence that a sample cut.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// looksLikeSQL reports whether b starts with a T-SQL statement keyword.
func looksLikeSQL(b []byte) bool {
	for _, kw := range []string{"SELECT", "WITH", "INSERT", "UPDATE", "DELETE", "MERGE", "EXEC", "DECLARE", "SET", "CREATE", "--", "/*"} {
		if len(b) >= len(kw) && bytes.EqualFold(b[:len(kw)], []byte(kw)) {
			rest := b[len(kw):]
			if kw == "--" || kw == "/*" || len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r' {
				return true
			}
		}
	}
	return false
}

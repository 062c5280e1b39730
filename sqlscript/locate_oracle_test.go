package sqlscript

import (
	"strings"
	"unicode/utf8"
)

// The Locate of before the compacted text kept an offset and a flag per
// byte; it is kept here as the oracle the new one is compared with.

// oracleCompacted is a text with its whitespace removed, remembering where each
// kept byte came from and which kept bytes followed whitespace.
type oracleCompacted struct {
	text   string
	offset []int  // offset[i]: offset in the original text of text[i]
	gap    []bool // gap[i]: whitespace came before text[i]
}

func oracleCompact(s string, from int) oracleCompacted {
	var c oracleCompacted
	var sb strings.Builder
	gap := false
	for i := from; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isSpace(r) {
			gap = true
			i += n
			continue
		}
		for k := 0; k < n; k++ {
			sb.WriteByte(s[i+k])
			c.offset = append(c.offset, i+k)
			c.gap = append(c.gap, gap && k == 0)
		}
		gap = false
		i += n
	}
	c.text = sb.String()
	return c
}

// Locate finds stmt (for example the StatementText of a plan, which is a
// substring of the text sent but may differ in whitespace and line endings)
// in text, starting at byte offset from. Whitespace is ignored in the
// comparison; among the matches, the first one that has whitespace exactly
// where stmt has it is preferred. start and end are the byte offsets of
// the first and just past the last non-space character matched.
func oracleLocate(text, stmt string, from int) (start, end int, ok bool) {
	if from < 0 {
		from = 0
	}
	if from > len(text) {
		return 0, 0, false
	}
	needle := oracleCompact(stmt, 0)
	if needle.text == "" {
		return 0, 0, false
	}
	hay := oracleCompact(text, from)
	first := -1
	for base := 0; ; {
		k := strings.Index(hay.text[base:], needle.text)
		if k < 0 {
			break
		}
		at := base + k
		if first < 0 {
			first = at
		}
		if oracleSameGaps(hay, needle, at) {
			first = at
			break
		}
		base = at + 1
	}
	if first < 0 {
		return 0, 0, false
	}
	last := first + len(needle.text) - 1
	return hay.offset[first], hay.offset[last] + 1, true
}

// oracleSameGaps reports whether hay, at position at, has whitespace exactly
// between the characters where needle has it.
func oracleSameGaps(hay, needle oracleCompacted, at int) bool {
	for i := 1; i < len(needle.text); i++ {
		if hay.gap[at+i] != needle.gap[i] {
			return false
		}
	}
	return true
}

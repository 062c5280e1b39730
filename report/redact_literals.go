package report

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// sqlTokenKind classifies the pieces of T-SQL text that redactSQL tells
// apart: it needs comments, and everything that may hide a comment marker.
type sqlTokenKind int

const (
	tokSpace   sqlTokenKind = iota
	tokComment              // -- to end of line, or /* */ (nested)
	tokLiteral              // 'x', N'x', 12, 1.5e3, 0x1F, $3.50
	tokName                 // word, [bracketed], "quoted", @variable, #temp
	tokOther                // punctuation and operators, one rune each
)

type sqlToken struct {
	kind sqlTokenKind
	text string
}

// sqlTokens splits T-SQL text into tokens; the texts joined give back the
// input. Unterminated strings, comments and brackets run to the end, so a
// cut literal is still masked. Double-quoted text is taken as a quoted
// identifier (QUOTED_IDENTIFIER ON, the default).
func sqlTokens(s string) []sqlToken {
	var out []sqlToken
	for i := 0; i < len(s); {
		kind, n := nextSQLToken(s[i:])
		out = append(out, sqlToken{kind: kind, text: s[i : i+n]})
		i += n
	}
	return out
}

func nextSQLToken(s string) (sqlTokenKind, int) {
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case unicode.IsSpace(r):
		n := size
		for n < len(s) {
			r2, sz := utf8.DecodeRuneInString(s[n:])
			if !unicode.IsSpace(r2) {
				break
			}
			n += sz
		}
		return tokSpace, n
	case strings.HasPrefix(s, "--"):
		if j := strings.IndexAny(s, "\r\n"); j >= 0 {
			return tokComment, j
		}
		return tokComment, len(s)
	case strings.HasPrefix(s, "/*"):
		return tokComment, blockCommentLen(s)
	case r == '[':
		return tokName, quotedLen(s, ']')
	case r == '"':
		return tokName, quotedLen(s, '"')
	case r == '\'':
		return tokLiteral, quotedLen(s, '\'')
	case (r == 'N' || r == 'n') && len(s) > 1 && s[1] == '\'':
		return tokLiteral, 1 + quotedLen(s[1:], '\'')
	case r == '0' && len(s) > 1 && (s[1] == 'x' || s[1] == 'X'):
		n := 2
		for n < len(s) && isHexDigit(s[n]) {
			n++
		}
		return tokLiteral, n
	case isDigit(r) || (r == '.' && len(s) > 1 && isDigit(rune(s[1]))):
		return tokLiteral, numberLen(s)
	case r == '$' && len(s) > 1 && (isDigit(rune(s[1])) || s[1] == '.' || s[1] == '-'):
		return tokLiteral, 1 + moneyLen(s[1:])
	case isNameStart(r):
		n := size
		for n < len(s) {
			r2, sz := utf8.DecodeRuneInString(s[n:])
			if !isNamePart(r2) {
				break
			}
			n += sz
		}
		return tokName, n
	}
	return tokOther, size
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }
func isHexDigit(b byte) bool {
	return isDigit(rune(b)) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F')
}
func isNameStart(r rune) bool { return r == '_' || r == '@' || r == '#' || unicode.IsLetter(r) }
func isNamePart(r rune) bool  { return isNameStart(r) || r == '$' || unicode.IsDigit(r) }
func isWordRune(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// quotedLen is the length of a token opened by s[0] and closed by close,
// where a doubled close stands for itself; the whole of s if unclosed.
func quotedLen(s string, close byte) int {
	for i := 1; i < len(s); i++ {
		if s[i] != close {
			continue
		}
		if i+1 < len(s) && s[i+1] == close {
			i++
			continue
		}
		return i + 1
	}
	return len(s)
}

// blockCommentLen is the length of a /* */ comment; T-SQL nests them.
func blockCommentLen(s string) int {
	depth := 0
	for i := 0; i+1 < len(s); i++ {
		switch {
		case s[i] == '/' && s[i+1] == '*':
			depth++
			i++
		case s[i] == '*' && s[i+1] == '/':
			depth--
			i++
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// numberLen is the length of a numeric literal: digits, an optional
// fraction and an optional exponent.
func numberLen(s string) int {
	n := 0
	for n < len(s) && isDigit(rune(s[n])) {
		n++
	}
	if n < len(s) && s[n] == '.' {
		n++
		for n < len(s) && isDigit(rune(s[n])) {
			n++
		}
	}
	if n < len(s) && (s[n] == 'e' || s[n] == 'E') {
		m := n + 1
		if m < len(s) && (s[m] == '+' || s[m] == '-') {
			m++
		}
		if m < len(s) && isDigit(rune(s[m])) {
			for m < len(s) && isDigit(rune(s[m])) {
				m++
			}
			n = m
		}
	}
	return n
}

func moneyLen(s string) int {
	n := 0
	if n < len(s) && s[n] == '-' {
		n++
	}
	return n + numberLen(s[n:])
}

// maskProse masks SQL literal forms inside prose: quoted strings ('x',
// N'x'), binary constants (0x1F), parenthesised numbers as SQL Server
// prints constants ("(0)" becomes "(?)") and numbers compared with an
// operator ("= 5"). Other numbers ("5,000,000 rows", "62%", "node 3") are
// prose and kept, as are apostrophes inside words. Occurrences of the keep
// strings are copied unchanged.
func maskProse(s string, keep []string) string {
	if s == "" {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		at, n := firstKept(s, keep)
		if at < 0 {
			maskProseSegment(&b, s)
			break
		}
		maskProseSegment(&b, s[:at])
		b.WriteString(s[at : at+n])
		s = s[at+n:]
	}
	return b.String()
}

// firstKept finds the earliest occurrence of any keep string (the longest
// at that place).
func firstKept(s string, keep []string) (at, n int) {
	at = -1
	for _, k := range keep {
		if k == "" {
			continue
		}
		if i := strings.Index(s, k); i >= 0 && (at < 0 || i < at || (i == at && len(k) > n)) {
			at, n = i, len(k)
		}
	}
	return at, n
}

func maskProseSegment(b *strings.Builder, s string) {
	prev := rune(-1) // the last rune written from s, -1 at the start
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		afterWord := prev >= 0 && (isWordRune(prev) || prev == '?') // a mask stands where a word was
		switch {
		case r == '\'' && !afterWord:
			if n, ok := closedQuote(s[i:]); ok {
				b.WriteString(Mask)
				i += n
				prev = '\''
				continue
			}
		case (r == 'N' || r == 'n') && !afterWord && i+1 < len(s) && s[i+1] == '\'':
			if n, ok := closedQuote(s[i+1:]); ok {
				b.WriteString(Mask)
				i += 1 + n
				prev = '\''
				continue
			}
		case r == '0' && !afterWord && i+2 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X') && isHexDigit(s[i+2]):
			n := 2
			for i+n < len(s) && isHexDigit(s[i+n]) {
				n++
			}
			if i+n >= len(s) || !isWordByte(s[i+n]) {
				b.WriteString(Mask)
				i += n
				prev = 'x'
				continue
			}
		case r == '(':
			if n := parenNumberLen(s[i:]); n > 0 {
				b.WriteString("(" + Mask + ")")
				i += n
				prev = ')'
				continue
			}
		case r == '=' || r == '<' || r == '>' || (r == '!' && i+1 < len(s) && strings.ContainsRune("=<>", rune(s[i+1]))):
			op := 1
			for i+op < len(s) && op < 2 && strings.ContainsRune("=<>", rune(s[i+op])) {
				op++
			}
			if lead, n := comparedNumberLen(s[i+op:]); n > 0 {
				b.WriteString(s[i : i+op+lead])
				b.WriteString(Mask)
				i += op + lead + n
				prev = '?'
				continue
			}
			b.WriteString(s[i : i+op])
			i += op
			prev = rune(s[i-1])
			continue
		}
		b.WriteRune(r)
		i += size
		prev = r
	}
}

func isWordByte(c byte) bool { return c == '_' || isDigit(rune(c)) || (c|0x20 >= 'a' && c|0x20 <= 'z') }

// closedQuote is the length of the quoted string that s starts with (s[0]
// is a single quote), if it is closed; a literal has no line breaks in
// prose.
func closedQuote(s string) (int, bool) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\n', '\r':
			return 0, false
		case '\'':
			if i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			return i + 1, true
		}
	}
	return 0, false
}

// parenNumberLen matches "(0)", "(-1.5)", "(1e3)" at the start of s and
// returns its length, or 0.
func parenNumberLen(s string) int {
	i := 1
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i >= len(s) || !(isDigit(rune(s[i])) || (s[i] == '.' && i+1 < len(s) && isDigit(rune(s[i+1])))) {
		return 0
	}
	i += numberLen(s[i:])
	if i < len(s) && s[i] == ')' {
		return i + 1
	}
	return 0
}

// comparedNumberLen matches optional spaces and a number that ends at a
// boundary (not "%", "×", a letter or a digit group), as in "= 5" or
// ">= -2.5". It returns the spaces' and the number's lengths.
func comparedNumberLen(s string) (lead, n int) {
	for lead < len(s) && s[lead] == ' ' {
		lead++
	}
	i := lead
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i >= len(s) || !isDigit(rune(s[i])) {
		return 0, 0
	}
	i += numberLen(s[i:])
	if i < len(s) {
		r, _ := utf8.DecodeRuneInString(s[i:])
		if r == '%' || r == '×' || r == ',' && i+1 < len(s) && isDigit(rune(s[i+1])) || isWordRune(r) {
			return 0, 0
		}
	}
	return lead, i - lead
}

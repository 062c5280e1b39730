package catalog

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenKind classifies a T-SQL token.
type tokenKind int

const (
	tokEOF    tokenKind = iota
	tokIdent            // plain identifier or keyword: Status, dbo, #Work, @p
	tokQuoted           // [bracketed] or "double-quoted" identifier
	tokString           // 'text' or N'text'
	tokNumber           // 12, 1.5, .5, 1., 1e3
	tokBinary           // 0x0A
	tokPunct            // operators and punctuation: ( ) , . ; = <> !< >= ...
	tokGo               // a GO batch separator line
	tokError            // unterminated string, identifier or comment
)

// token is one lexeme. text is the source as written; value is the
// identifier without quotes or the string without quotes and escapes.
type token struct {
	kind  tokenKind
	text  string
	value string
	pos   int  // byte offset of the first character
	end   int  // byte offset just past the token
	space bool // whitespace or a comment precedes the token
}

// is reports whether t is the plain (unquoted) keyword kw, in any case.
func (t token) is(kw string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.text, kw)
}

// isPunct reports whether t is the punctuation p.
func (t token) isPunct(p string) bool {
	return t.kind == tokPunct && t.text == p
}

// isName reports whether t can name an object or column: a quoted name
// that is not empty, or a plain one that is not a reserved keyword.
func (t token) isName() bool {
	return t.kind == tokQuoted && t.value != "" || t.kind == tokIdent && !isReserved(t.text)
}

// lexer splits T-SQL text into tokens. Comments (-- and nested /* */) and
// whitespace are dropped; GO lines become tokGo when batches is set.
type lexer struct {
	src     string
	pos     int
	batches bool
	// lineStart is true while only whitespace has been seen since the last
	// newline, so a GO here may be a batch separator.
	lineStart bool
}

// lex returns all tokens of src, ending with tokEOF or, on an unterminated
// construct, with tokError (whose text says what is unterminated).
func lex(src string, batches bool) []token {
	lx := &lexer{src: src, batches: batches, lineStart: true}
	toks := make([]token, 0, len(src)/4+2) // scripts average a token per 5 or 6 bytes
	for {
		t := lx.next()
		toks = append(toks, t)
		if t.kind == tokEOF || t.kind == tokError {
			return toks
		}
	}
}

func (lx *lexer) next() token {
	space, errTok := lx.skipSpace()
	if errTok != nil {
		return *errTok
	}
	start := lx.pos
	atLineStart := lx.lineStart
	lx.lineStart = false
	if lx.pos >= len(lx.src) {
		return token{kind: tokEOF, pos: start, end: start, space: space}
	}
	c := lx.src[lx.pos]
	r, size := utf8.DecodeRuneInString(lx.src[lx.pos:])
	t := token{pos: start, space: space}
	switch {
	case (c == 'N' || c == 'n') && lx.peekByte(1) == '\'':
		lx.pos++
		return lx.stringLit(t)
	case c == '\'':
		return lx.stringLit(t)
	case c == '[':
		return lx.quotedIdent(t, ']', "bracketed identifier")
	case c == '"':
		return lx.quotedIdent(t, '"', "double-quoted identifier")
	case c == '0' && (lx.peekByte(1) == 'x' || lx.peekByte(1) == 'X'):
		lx.pos += 2
		for lx.pos < len(lx.src) && isHex(lx.src[lx.pos]) {
			lx.pos++
		}
		t.kind = tokBinary
	case isDigit(c) || (c == '.' && isDigit(lx.peekByte(1))):
		lx.number()
		t.kind = tokNumber
	case isIdentStart(r):
		lx.pos += size
		for lx.pos < len(lx.src) {
			r, size := utf8.DecodeRuneInString(lx.src[lx.pos:])
			if !isIdentPart(r) {
				break
			}
			lx.pos += size
		}
		t.kind = tokIdent
		if lx.batches && atLineStart && strings.EqualFold(lx.src[start:lx.pos], "GO") && lx.restIsGoLine() {
			t.kind = tokGo
		}
	default:
		t.kind = tokPunct
		lx.pos += size
		if lx.pos < len(lx.src) {
			switch two := lx.src[start : lx.pos+1]; two {
			case "<>", "<=", ">=", "!=", "!<", "!>", "::":
				lx.pos++
			}
		}
	}
	t.end = lx.pos
	t.text = lx.src[start:lx.pos]
	t.value = t.text
	return t
}

// skipSpace skips whitespace and comments. It reports whether anything was
// skipped, or returns an error token for an unterminated block comment.
func (lx *lexer) skipSpace() (bool, *token) {
	skipped := false
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == '\n':
			lx.pos++
			lx.lineStart = true
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			lx.pos++
		case c == '-' && lx.peekByte(1) == '-':
			for lx.pos < len(lx.src) && lx.src[lx.pos] != '\n' {
				lx.pos++
			}
			lx.lineStart = false
		case c == '/' && lx.peekByte(1) == '*':
			start := lx.pos
			depth := 0
			for {
				if lx.pos >= len(lx.src) {
					return skipped, &token{kind: tokError, pos: start, end: lx.pos,
						text: "unterminated /* comment"}
				}
				switch {
				case strings.HasPrefix(lx.src[lx.pos:], "/*"):
					depth++
					lx.pos += 2
				case strings.HasPrefix(lx.src[lx.pos:], "*/"):
					depth--
					lx.pos += 2
				default:
					lx.pos++
				}
				if depth == 0 {
					break
				}
			}
			lx.lineStart = false
		default:
			r, size := utf8.DecodeRuneInString(lx.src[lx.pos:])
			if r == '\uFEFF' || (r != utf8.RuneError && unicode.IsSpace(r)) {
				lx.pos += size
				break
			}
			return skipped, nil
		}
		skipped = true
	}
	return skipped, nil
}

// restIsGoLine reports whether the rest of the line after a GO holds only
// an optional repeat count, whitespace and an optional -- comment.
func (lx *lexer) restIsGoLine() bool {
	rest := lx.src[lx.pos:]
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.Index(rest, "--"); i >= 0 {
		rest = rest[:i]
	}
	rest = strings.TrimSpace(rest)
	for i := 0; i < len(rest); i++ {
		if !isDigit(rest[i]) {
			return false
		}
	}
	// Consume the count so it does not become a token of the next batch.
	for lx.pos < len(lx.src) && (lx.src[lx.pos] == ' ' || lx.src[lx.pos] == '\t') {
		lx.pos++
	}
	for lx.pos < len(lx.src) && isDigit(lx.src[lx.pos]) {
		lx.pos++
	}
	return true
}

func (lx *lexer) stringLit(t token) token {
	lx.pos++ // opening quote
	var b strings.Builder
	for {
		if lx.pos >= len(lx.src) {
			return token{kind: tokError, pos: t.pos, end: lx.pos, text: "unterminated string literal"}
		}
		c := lx.src[lx.pos]
		lx.pos++
		if c == '\'' {
			if lx.peekByte(0) == '\'' {
				b.WriteByte('\'')
				lx.pos++
				continue
			}
			break
		}
		b.WriteByte(c)
	}
	t.kind = tokString
	t.end = lx.pos
	t.text = lx.src[t.pos:lx.pos]
	t.value = b.String()
	return t
}

func (lx *lexer) quotedIdent(t token, closer byte, what string) token {
	lx.pos++
	var b strings.Builder
	for {
		if lx.pos >= len(lx.src) {
			return token{kind: tokError, pos: t.pos, end: lx.pos, text: "unterminated " + what}
		}
		c := lx.src[lx.pos]
		lx.pos++
		if c == closer {
			if lx.peekByte(0) == closer {
				b.WriteByte(closer)
				lx.pos++
				continue
			}
			break
		}
		b.WriteByte(c)
	}
	t.kind = tokQuoted
	t.end = lx.pos
	t.text = lx.src[t.pos:lx.pos]
	t.value = b.String()
	return t
}

// number scans digits, an optional fraction and an optional exponent.
func (lx *lexer) number() {
	for lx.pos < len(lx.src) && isDigit(lx.src[lx.pos]) {
		lx.pos++
	}
	if lx.peekByte(0) == '.' {
		lx.pos++
		for lx.pos < len(lx.src) && isDigit(lx.src[lx.pos]) {
			lx.pos++
		}
	}
	if c := lx.peekByte(0); c == 'e' || c == 'E' {
		n := 1
		if s := lx.peekByte(1); s == '+' || s == '-' {
			n = 2
		}
		if isDigit(lx.peekByte(n)) {
			lx.pos += n
			for lx.pos < len(lx.src) && isDigit(lx.src[lx.pos]) {
				lx.pos++
			}
		}
	}
}

func (lx *lexer) peekByte(ahead int) byte {
	if lx.pos+ahead < len(lx.src) {
		return lx.src[lx.pos+ahead]
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isIdentStart(r rune) bool {
	return r == '_' || r == '@' || r == '#' || (r != utf8.RuneError && unicode.IsLetter(r))
}

func isIdentPart(r rune) bool {
	return isIdentStart(r) || r == '$' || (r != utf8.RuneError && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)))
}

// positions maps byte offsets of a text to 1-based lines and columns
// (columns count characters, not bytes).
type positions struct {
	src        string
	lineStarts []int
}

func newPositions(src string) *positions {
	p := &positions{src: src, lineStarts: []int{0}}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			p.lineStarts = append(p.lineStarts, i+1)
		}
	}
	return p
}

func (p *positions) lineCol(offset int) (line, col int) {
	if offset > len(p.src) {
		offset = len(p.src)
	}
	i := sort.Search(len(p.lineStarts), func(i int) bool { return p.lineStarts[i] > offset }) - 1
	return i + 1, utf8.RuneCountInString(p.src[p.lineStarts[i]:offset]) + 1
}

// joinTokens renders toks as written, with one space wherever the source
// had whitespace or a comment between two tokens.
func joinTokens(toks []token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && t.space {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
	}
	return b.String()
}

package sqlscript

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenKind classifies a T-SQL token.
type tokenKind int

const (
	tokSpace        tokenKind = iota // spaces, tabs, line breaks
	tokLineComment                   // -- to the end of the line
	tokBlockComment                  // /* ... */, nested
	tokWord                          // identifier or keyword, also #temp and $action
	tokQuotedIdent                   // [name] or "name"
	tokVariable                      // @name
	tokSysVariable                   // @@name
	tokString                        // 'text'
	tokNString                       // N'text'
	tokNumber                        // 12, 1.5, .5, 1e5
	tokMoney                         // $12.5
	tokBinary                        // 0x1F
	tokOperator                      // punctuation and operators, one or two characters
)

var tokenKindNames = [...]string{
	tokSpace: "whitespace", tokLineComment: "comment", tokBlockComment: "comment", tokWord: "word",
	tokQuotedIdent: "quoted identifier", tokVariable: "variable", tokSysVariable: "system variable",
	tokString: "string", tokNString: "Unicode string", tokNumber: "number", tokMoney: "money literal",
	tokBinary: "binary literal", tokOperator: "operator",
}

func (k tokenKind) String() string {
	if int(k) < len(tokenKindNames) {
		return tokenKindNames[k]
	}
	return "token"
}

// token is one lexeme of a text; Start and End are byte offsets.
type token struct {
	Kind       tokenKind
	Start, End int
	Text       string
	// Unterminated is set for a string, quoted identifier or block comment
	// that runs to the end of the text.
	Unterminated bool
}

func (t token) trivia() bool { return t.Kind <= tokBlockComment }
func (t token) comment() bool {
	return t.Kind == tokLineComment || t.Kind == tokBlockComment
}

// isWord reports whether t is the unquoted word w (compared case-insensitively).
func (t token) isWord(w string) bool { return t.Kind == tokWord && strings.EqualFold(t.Text, w) }

// isOp reports whether t is the operator or punctuation op.
func (t token) isOp(op string) bool { return t.Kind == tokOperator && t.Text == op }

func (t token) literal() bool {
	switch t.Kind {
	case tokString, tokNString, tokNumber, tokMoney, tokBinary:
		return true
	}
	return false
}

// upper returns the word in upper case ("" for other tokens).
func (t token) upper() string {
	if t.Kind != tokWord {
		return ""
	}
	return strings.ToUpper(t.Text)
}

// lex splits text into tokens, trivia included. It never fails: an
// unterminated string, identifier or comment runs to the end of the text and
// is marked Unterminated, and unknown characters become operator tokens.
func lex(text string) []token {
	l := lexer{text: text}
	toks := make([]token, 0, len(text)/4+1)
	for l.pos < len(text) {
		toks = append(toks, l.next(toks))
	}
	return toks
}

type lexer struct {
	text string
	pos  int
}

func (l *lexer) peek(off int) rune {
	i := l.pos
	for ; off > 0 && i < len(l.text); off-- {
		_, n := utf8.DecodeRuneInString(l.text[i:])
		i += n
	}
	if i >= len(l.text) {
		return -1
	}
	r, _ := utf8.DecodeRuneInString(l.text[i:])
	return r
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v' || unicode.IsSpace(r)
}
func isDigit(r rune) bool { return r >= '0' && r <= '9' }
func isHex(r rune) bool {
	return isDigit(r) || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F')
}
func isIdentStart(r rune) bool { return r == '_' || r == '#' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool {
	return r == '_' || r == '#' || r == '@' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

var twoCharOps = []string{"<>", "!=", "!<", "!>", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "::", "=>"}

func (l *lexer) next(prev []token) token {
	start := l.pos
	r := l.peek(0)
	tok := func(k tokenKind) token {
		return token{Kind: k, Start: start, End: l.pos, Text: l.text[start:l.pos]}
	}
	switch {
	case isSpace(r):
		for l.pos < len(l.text) && isSpace(l.peek(0)) {
			l.advance()
		}
		return tok(tokSpace)
	case r == '-' && l.peek(1) == '-':
		for l.pos < len(l.text) && l.text[l.pos] != '\n' && l.text[l.pos] != '\r' {
			l.pos++
		}
		return tok(tokLineComment)
	case r == '/' && l.peek(1) == '*':
		closed := l.blockComment()
		t := tok(tokBlockComment)
		t.Unterminated = !closed
		return t
	case r == '\'':
		closed := l.quoted('\'')
		t := tok(tokString)
		t.Unterminated = !closed
		return t
	case (r == 'N' || r == 'n') && l.peek(1) == '\'':
		l.pos++
		closed := l.quoted('\'')
		t := tok(tokNString)
		t.Unterminated = !closed
		return t
	case r == '[':
		closed := l.quoted(']')
		t := tok(tokQuotedIdent)
		t.Unterminated = !closed
		return t
	case r == '"':
		closed := l.quoted('"')
		t := tok(tokQuotedIdent)
		t.Unterminated = !closed
		return t
	case r == '@' && l.peek(1) == '@':
		l.pos += 2
		l.identRest()
		return tok(tokSysVariable)
	case r == '@' && isIdentPart(l.peek(1)):
		l.pos++
		l.identRest()
		return tok(tokVariable)
	case r == '0' && (l.peek(1) == 'x' || l.peek(1) == 'X'):
		l.pos += 2
		for isHex(l.peek(0)) {
			l.pos++
		}
		return tok(tokBinary)
	case isDigit(r) || (r == '.' && isDigit(l.peek(1)) && !adjacentName(prev, start)):
		return tok(l.number())
	case unicode.Is(unicode.Sc, r) && (isDigit(l.peek(1)) || (l.peek(1) == '.' && isDigit(l.peek(2)))):
		l.advance()
		l.number()
		return tok(tokMoney)
	case isIdentStart(r) || (r == '$' && unicode.IsLetter(l.peek(1))):
		l.advance()
		l.identRest()
		return tok(tokWord)
	}
	for _, op := range twoCharOps {
		if strings.HasPrefix(l.text[l.pos:], op) {
			l.pos += len(op)
			return tok(tokOperator)
		}
	}
	l.advance()
	return tok(tokOperator)
}

// adjacentName reports whether the token before offset is a name that ends
// exactly there, so that a following "." is a qualifier and not a number.
func adjacentName(prev []token, offset int) bool {
	if len(prev) == 0 {
		return false
	}
	p := prev[len(prev)-1]
	return p.End == offset && (p.Kind == tokWord || p.Kind == tokQuotedIdent || p.Kind == tokVariable || p.isOp(")"))
}

func (l *lexer) advance() {
	_, n := utf8.DecodeRuneInString(l.text[l.pos:])
	l.pos += n
}

func (l *lexer) identRest() {
	for l.pos < len(l.text) && isIdentPart(l.peek(0)) {
		l.advance()
	}
}

// quoted consumes a token opened by the character at l.pos and closed by
// closer, where a doubled closer stands for itself. It reports whether the
// closer was found.
func (l *lexer) quoted(closer byte) bool {
	l.pos++ // opener
	for l.pos < len(l.text) {
		if l.text[l.pos] == closer {
			if l.pos+1 < len(l.text) && l.text[l.pos+1] == closer {
				l.pos += 2
				continue
			}
			l.pos++
			return true
		}
		l.pos++
	}
	return false
}

// blockComment consumes a possibly nested /* */ comment.
func (l *lexer) blockComment() bool {
	depth := 0
	for l.pos < len(l.text) {
		switch {
		case strings.HasPrefix(l.text[l.pos:], "/*"):
			depth++
			l.pos += 2
		case strings.HasPrefix(l.text[l.pos:], "*/"):
			depth--
			l.pos += 2
			if depth == 0 {
				return true
			}
		default:
			l.pos++
		}
	}
	return false
}

// number consumes digits, a fraction and an exponent and returns tokNumber.
func (l *lexer) number() tokenKind {
	for isDigit(l.peek(0)) {
		l.pos++
	}
	if l.peek(0) == '.' {
		l.pos++
		for isDigit(l.peek(0)) {
			l.pos++
		}
	}
	if e := l.peek(0); e == 'e' || e == 'E' {
		switch s := l.peek(1); {
		case isDigit(s):
			l.pos++
		case (s == '+' || s == '-') && isDigit(l.peek(2)):
			l.pos += 2
		}
		for isDigit(l.peek(0)) {
			l.pos++
		}
	}
	return tokNumber
}

// unquote returns the content of a string, N-string or quoted identifier
// token with doubled closers collapsed; other tokens are returned as they are.
func unquote(t token) string {
	s := t.Text
	var closer string
	switch t.Kind {
	case tokNString:
		s = s[1:]
		closer = "'"
	case tokString:
		closer = "'"
	case tokQuotedIdent:
		closer = "]"
		if s[0] == '"' {
			closer = `"`
		}
	default:
		return s
	}
	s = s[1:]
	if !t.Unterminated && len(s) > 0 {
		s = s[:len(s)-1]
	}
	return strings.ReplaceAll(s, closer+closer, closer)
}

// code returns the tokens that are not trivia.
func code(toks []token) []token {
	out := make([]token, 0, len(toks))
	for _, t := range toks {
		if !t.trivia() {
			out = append(out, t)
		}
	}
	return out
}

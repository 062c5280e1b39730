// Package tsql splits T-SQL text into tokens, comments and white space
// included, the one lexer every package that reads T-SQL shares.
package tsql

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind classifies a T-SQL token.
type Kind uint8

const (
	Space        Kind = iota // spaces, tabs, line breaks
	LineComment              // -- to the end of the line
	BlockComment             // /* ... */, nested
	Word                     // identifier or keyword, also #temp and $action
	QuotedIdent              // [name] or "name"
	Variable                 // @name
	SysVariable              // @@name
	String                   // 'text'
	NString                  // N'text'
	Number                   // 12, 1.5, .5, 1e5
	Money                    // $12.5
	Binary                   // 0x1F
	Operator                 // punctuation and operators, one or two characters
)

var kindNames = [...]string{
	Space: "whitespace", LineComment: "comment", BlockComment: "comment", Word: "word",
	QuotedIdent: "quoted identifier", Variable: "variable", SysVariable: "system variable",
	String: "string", NString: "Unicode string", Number: "number", Money: "money literal",
	Binary: "binary literal", Operator: "operator",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "token"
}

// Token is one lexeme of a text; Start and End are byte offsets. Text is a
// substring of the scanned text, not a copy.
type Token struct {
	Kind Kind
	// Unterminated is set for a string, quoted identifier or block comment
	// that runs to the end of the text.
	Unterminated bool
	Start, End   int
	Text         string
}

// Trivia reports white space and comments.
func (t Token) Trivia() bool { return t.Kind <= BlockComment }

// Comment reports a line or block comment.
func (t Token) Comment() bool {
	return t.Kind == LineComment || t.Kind == BlockComment
}

// IsWord reports whether t is the unquoted word w (compared case-insensitively).
func (t Token) IsWord(w string) bool { return t.Kind == Word && strings.EqualFold(t.Text, w) }

// IsOp reports whether t is the operator or punctuation op.
func (t Token) IsOp(op string) bool { return t.Kind == Operator && t.Text == op }

// Literal reports a string, number, money or binary literal.
func (t Token) Literal() bool {
	switch t.Kind {
	case String, NString, Number, Money, Binary:
		return true
	}
	return false
}

// Upper returns the word in upper case ("" for other tokens).
func (t Token) Upper() string {
	if t.Kind != Word {
		return ""
	}
	return strings.ToUpper(t.Text)
}

// Lex splits text into tokens, trivia included. It never fails: an
// unterminated string, identifier or comment runs to the end of the text and
// is marked Unterminated, and unknown characters become operator tokens.
func Lex(text string) []Token {
	s := NewScanner(text)
	// a token per 8 bytes to start with: code averages one per 5 or 6,
	// comments and literals far fewer, and append grows the rest
	toks := make([]Token, 0, len(text)/8+1)
	for {
		t, ok := s.Next()
		if !ok {
			return toks
		}
		toks = append(toks, t)
	}
}

// Scanner returns the tokens of a text one at a time, as Lex would, without
// holding them all. A copy of a Scanner scans on independently, which makes
// looking ahead cheap.
type Scanner struct {
	l lexer
}

// NewScanner starts scanning text.
func NewScanner(text string) *Scanner { return &Scanner{l: lexer{text: text}} }

// NewScannerAt scans text[start:end] as if it were the whole text, with
// offsets in text. It starts lexing at start, so start should be where a
// token of text begins (or inside white space).
func NewScannerAt(text string, start, end int) *Scanner {
	return &Scanner{l: lexer{text: text[:end], pos: start}}
}

// NextCode returns the next token that is not trivia, or false at the end.
func (s *Scanner) NextCode() (Token, bool) {
	for {
		t, ok := s.Next()
		if !ok || !t.Trivia() {
			return t, ok
		}
	}
}

// Next returns the next token, or false at the end of the text.
func (s *Scanner) Next() (Token, bool) {
	if s.l.pos >= len(s.l.text) {
		return Token{}, false
	}
	t := s.l.next()
	s.l.prev, s.l.hasPrev = t, true
	return t, true
}

type lexer struct {
	text    string
	pos     int
	prev    Token // the token before the one being read
	hasPrev bool
}

func (l *lexer) peek(off int) rune {
	if off == 0 && l.pos < len(l.text) && l.text[l.pos] < utf8.RuneSelf {
		return rune(l.text[l.pos])
	}
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

// IsSpace reports a character T-SQL treats as white space.
func IsSpace(r rune) bool {
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

func (l *lexer) next() Token {
	start := l.pos
	r := l.peek(0)
	tok := func(k Kind) Token {
		return Token{Kind: k, Start: start, End: l.pos, Text: l.text[start:l.pos]}
	}
	switch {
	case IsSpace(r):
		for l.pos < len(l.text) && IsSpace(l.peek(0)) {
			l.advance()
		}
		return tok(Space)
	case r == '-' && l.peek(1) == '-':
		for l.pos < len(l.text) && l.text[l.pos] != '\n' && l.text[l.pos] != '\r' {
			l.pos++
		}
		return tok(LineComment)
	case r == '/' && l.peek(1) == '*':
		closed := l.blockComment()
		t := tok(BlockComment)
		t.Unterminated = !closed
		return t
	case r == '\'':
		closed := l.quoted('\'')
		t := tok(String)
		t.Unterminated = !closed
		return t
	case (r == 'N' || r == 'n') && l.peek(1) == '\'':
		l.pos++
		closed := l.quoted('\'')
		t := tok(NString)
		t.Unterminated = !closed
		return t
	case r == '[':
		closed := l.quoted(']')
		t := tok(QuotedIdent)
		t.Unterminated = !closed
		return t
	case r == '"':
		closed := l.quoted('"')
		t := tok(QuotedIdent)
		t.Unterminated = !closed
		return t
	case r == '@' && l.peek(1) == '@':
		l.pos += 2
		l.identRest()
		return tok(SysVariable)
	case r == '@' && isIdentPart(l.peek(1)):
		l.pos++
		l.identRest()
		return tok(Variable)
	case r == '0' && (l.peek(1) == 'x' || l.peek(1) == 'X'):
		l.pos += 2
		for isHex(l.peek(0)) {
			l.pos++
		}
		return tok(Binary)
	case isDigit(r) || (r == '.' && isDigit(l.peek(1)) && !l.adjacentName(start)):
		return tok(l.number())
	case unicode.Is(unicode.Sc, r) && (isDigit(l.peek(1)) || (l.peek(1) == '.' && isDigit(l.peek(2)))):
		l.advance()
		l.number()
		return tok(Money)
	case isIdentStart(r) || (r == '$' && unicode.IsLetter(l.peek(1))):
		l.advance()
		l.identRest()
		return tok(Word)
	}
	for _, op := range twoCharOps {
		if strings.HasPrefix(l.text[l.pos:], op) {
			l.pos += len(op)
			return tok(Operator)
		}
	}
	l.advance()
	return tok(Operator)
}

// adjacentName reports whether the token before offset is a name that ends
// exactly there, so that a following "." is a qualifier and not a number.
func (l *lexer) adjacentName(offset int) bool {
	if !l.hasPrev {
		return false
	}
	p := l.prev
	return p.End == offset && (p.Kind == Word || p.Kind == QuotedIdent || p.Kind == Variable || p.IsOp(")"))
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

// number consumes digits, a fraction and an exponent and returns Number.
func (l *lexer) number() Kind {
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
	return Number
}

// Unquote returns the content of a string, N-string or quoted identifier
// token with doubled closers collapsed; other tokens are returned as they are.
func Unquote(t Token) string {
	s := t.Text
	var closer string
	switch t.Kind {
	case NString:
		s = s[1:]
		closer = "'"
	case String:
		closer = "'"
	case QuotedIdent:
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

// Code returns the tokens that are not trivia (white space and comments).
func Code(toks []Token) []Token {
	out := make([]Token, 0, len(toks))
	for _, t := range toks {
		if !t.Trivia() {
			out = append(out, t)
		}
	}
	return out
}

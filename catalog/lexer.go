package catalog

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/planlint/planlint/internal/tsql"
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

// lex returns the code tokens of src, read with the shared T-SQL lexer,
// ending with tokEOF or, on an unterminated construct, with tokError (whose
// text says what is unterminated). Comments and whitespace are dropped; a
// GO line becomes tokGo when batches is set.
func lex(src string, batches bool) []token {
	// a first pass counts the tokens, so that the slice is allocated once
	// (lex serves filters and literals, which are short)
	n := 0
	for c := *newLexer(src, batches); !c.done; n++ {
		c.next()
	}
	l := newLexer(src, batches)
	toks := make([]token, 0, n)
	for !l.done {
		toks = append(toks, l.next())
	}
	return toks
}

// lexer returns the tokens lex would, one at a time.
type lexer struct {
	src       string
	sc        tsql.Scanner
	batches   bool
	space     bool // whitespace or a comment since the last token
	lineStart bool // only white space since the start or the last line break
	done      bool // the tokEOF or tokError token was returned
}

func newLexer(src string, batches bool) *lexer {
	return &lexer{src: src, sc: *tsql.NewScanner(src), batches: batches, lineStart: true}
}

// next returns the next token; after tokEOF or tokError, done is set.
func (l *lexer) next() token {
	for {
		r, ok := l.sc.Next()
		if !ok {
			l.done = true
			return token{kind: tokEOF, pos: len(l.src), end: len(l.src), space: l.space}
		}
		switch {
		case r.Kind == tsql.Space || r.IsOp("\uFEFF"):
			l.space = true
			l.lineStart = l.lineStart || strings.Contains(r.Text, "\n")
			continue
		case r.Comment():
			if r.Unterminated {
				l.done = true
				return token{kind: tokError, pos: r.Start, end: r.End, text: "unterminated /* comment"}
			}
			l.space, l.lineStart = true, false
			continue
		}
		t := token{pos: r.Start, end: r.End, text: r.Text, value: r.Text, space: l.space}
		switch r.Kind {
		case tsql.Word, tsql.Variable, tsql.SysVariable:
			t.kind = tokIdent
		case tsql.QuotedIdent:
			t.kind, t.value = tokQuoted, tsql.Unquote(r)
		case tsql.String, tsql.NString:
			t.kind, t.value = tokString, tsql.Unquote(r)
		case tsql.Number, tsql.Money:
			t.kind = tokNumber
		case tsql.Binary:
			t.kind = tokBinary
		default:
			t.kind = tokPunct
		}
		if r.Unterminated {
			what := "string literal"
			if r.Kind == tsql.QuotedIdent {
				what = map[bool]string{true: "bracketed identifier", false: "double-quoted identifier"}[r.Text[0] == '[']
			}
			l.done = true
			return token{kind: tokError, pos: r.Start, end: r.End, text: "unterminated " + what}
		}
		if l.batches && l.lineStart && r.IsWord("GO") {
			if rest, ok := goLine(l.sc); ok {
				t.kind = tokGo
				l.sc = rest
			}
		}
		l.space, l.lineStart = false, false
		return t
	}
}

// goLine reports whether the GO just read by sc is a batch separator: the
// rest of its line holds only an optional repeat count, white space and an
// optional -- comment. rest continues after the count, so it is consumed
// with the GO.
func goLine(sc tsql.Scanner) (rest tsql.Scanner, ok bool) {
	rest = sc
	counted := false
	for {
		r, more := sc.Next()
		switch {
		case !more, r.Kind == tsql.Space && strings.Contains(r.Text, "\n"), r.Kind == tsql.LineComment:
			return rest, true
		case r.Kind == tsql.Space:
		case r.Kind == tsql.Number && !counted && strings.Trim(r.Text, "0123456789") == "":
			counted = true
			rest = sc
		default:
			return rest, false
		}
	}
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

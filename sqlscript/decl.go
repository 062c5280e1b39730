package sqlscript

import (
	"fmt"
	"strings"
)

// ParamDecl is one parameter of an sp_executesql parameter list such as
// "@a int, @b nvarchar(50) OUTPUT".
type ParamDecl struct {
	Name     string   // with the @, as written
	Type     string   // as written, whitespace collapsed: "nvarchar(50)", "decimal(18, 2)"
	Default  *Literal // "= value" when given
	Output   bool     // OUT or OUTPUT
	ReadOnly bool     // READONLY (table-valued parameters)
}

// SyntaxError is an error at a position of the text being parsed.
type SyntaxError struct {
	Pos Pos
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s: %s", e.Pos, e.Msg) }

// offsetError is a parse error located by byte offsets in the parsed text.
type offsetError struct {
	Start, End int
	Msg        string
}

func (e *offsetError) Error() string { return e.Msg }

func errAt(t token, format string, args ...any) *offsetError {
	return &offsetError{Start: t.Start, End: t.End, Msg: fmt.Sprintf(format, args...)}
}

// syntaxError converts an offsetError in text to a SyntaxError.
func syntaxError(text string, e *offsetError) *SyntaxError {
	return &SyntaxError{Pos: newLineIndex(text).pos(e.Start), Msg: e.Msg}
}

// describe names a token for error messages.
func describe(t token) string {
	s := t.Text
	if len([]rune(s)) > 30 {
		s = string([]rune(s)[:30]) + "…"
	}
	return fmt.Sprintf("%s %q", t.Kind, s)
}

// ParseDeclarations parses an sp_executesql parameter list:
// "@name [AS] type [= default] [OUT|OUTPUT] [READONLY]", comma separated.
// An empty or blank list gives no declarations.
func ParseDeclarations(decl string) ([]ParamDecl, error) {
	decls, _, err := parseDeclList(decl, code(lex(decl)), false)
	if err != nil {
		return nil, syntaxError(decl, err)
	}
	return decls, nil
}

// parseDeclList parses declarations from the code tokens of src. With
// needValue every declaration must have "= value" (parameter annotations).
// It also returns the byte span of each declaration in src.
func parseDeclList(src string, toks []token, needValue bool) ([]ParamDecl, [][2]int, *offsetError) {
	var decls []ParamDecl
	var spans [][2]int
	seen := map[string]bool{}
	endTok := token{Start: len(src), End: len(src), Text: "end of text"}
	at := func(i int) token {
		if i < len(toks) {
			return toks[i]
		}
		return endTok
	}
	for _, t := range toks {
		if t.Unterminated {
			return nil, nil, errAt(t, "unterminated %s", t.Kind)
		}
	}
	i := 0
	for len(toks) > 0 {
		t := at(i)
		if t.Kind != tokVariable {
			return nil, nil, errAt(t, "expected a parameter name such as @id, found %s", describeOrEnd(t, i, toks))
		}
		d := ParamDecl{Name: t.Text}
		declStart := t.Start
		key := strings.ToLower(t.Text)
		if seen[key] {
			return nil, nil, errAt(t, "parameter %s is declared twice", t.Text)
		}
		seen[key] = true
		i++
		if at(i).IsWord("AS") {
			i++
		}
		typeStart, depth := i, 0
		for ; i < len(toks); i++ {
			c := toks[i]
			if c.Kind == tokVariable || depth == 0 && (c.IsOp(",") || c.IsOp("=") || c.IsWord("OUT") || c.IsWord("OUTPUT") || c.IsWord("READONLY")) {
				break
			}
			switch {
			case c.IsOp("("):
				depth++
			case c.IsOp(")"):
				depth--
			}
		}
		if typeStart == i {
			return nil, nil, errAt(at(i), "expected a data type after %s, found %s", d.Name, describeOrEnd(at(i), i, toks))
		}
		typeText := src[toks[typeStart].Start:toks[i-1].End]
		if _, err := parseSQLType(typeText); err != nil {
			return nil, nil, &offsetError{Start: toks[typeStart].Start, End: toks[i-1].End, Msg: fmt.Sprintf("parameter %s: %v", d.Name, err)}
		}
		d.Type = strings.Join(strings.Fields(typeText), " ")
		if at(i).IsOp("=") {
			eq := at(i)
			i++
			j := i
			for j < len(toks) && !toks[j].IsOp(",") && !toks[j].IsWord("OUT") && !toks[j].IsWord("OUTPUT") && !toks[j].IsWord("READONLY") &&
				!(j > i && toks[j].Kind == tokVariable) {
				j++
			}
			lit, ok := literalFromTokens(toks[i:j], src)
			if !ok || lit.Kind == LiteralVariable {
				if i == j {
					return nil, nil, errAt(eq, "expected a value after '=' for %s", d.Name)
				}
				return nil, nil, &offsetError{Start: toks[i].Start, End: toks[j-1].End,
					Msg: fmt.Sprintf("value of %s must be a literal (number, 'string', N'string', 0x…, NULL), found %q", d.Name, src[toks[i].Start:toks[j-1].End])}
			}
			d.Default = &lit
			i = j
		} else if needValue {
			return nil, nil, errAt(at(i), "expected '= value' after %s %s", d.Name, d.Type)
		}
		for {
			switch {
			case at(i).IsWord("OUT") || at(i).IsWord("OUTPUT"):
				d.Output = true
				i++
				continue
			case at(i).IsWord("READONLY"):
				d.ReadOnly = true
				i++
				continue
			}
			break
		}
		decls = append(decls, d)
		spans = append(spans, [2]int{declStart, toks[i-1].End})
		if i >= len(toks) {
			break
		}
		if !at(i).IsOp(",") {
			return nil, nil, errAt(at(i), "expected ',' or the end of the list after %s, found %s", d.Name, describe(at(i)))
		}
		i++
		if i >= len(toks) {
			return nil, nil, errAt(endTok, "expected a parameter after ','")
		}
	}
	return decls, spans, nil
}

func describeOrEnd(t token, i int, toks []token) string {
	if i >= len(toks) {
		return "the end of the text"
	}
	return describe(t)
}

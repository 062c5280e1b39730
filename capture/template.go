package capture

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/sqlscript"
)

// Template is a statement in the form forced parameterization compiles it:
// the output of sp_get_query_template and the statement's own literals as
// the parameter values.
type Template struct {
	Text        string // @templatetext, e.g. "select … where Status = @0"
	Declaration string // @parameters, e.g. "@0 int"
	// Params are the declared parameters in order, each with the literal
	// the statement has where the template has the parameter.
	Params []sqlscript.Param
}

// Request returns the template as an sp_executesql RPC, keeping the
// statements of the original request for reporting.
func (t *Template) Request(orig sqlscript.Request) sqlscript.Request {
	return sqlscript.Request{Kind: sqlscript.RPC, Text: t.Text, Declaration: t.Declaration,
		Params: append([]sqlscript.Param(nil), t.Params...), Statements: orig.Statements}
}

// AlignTemplate recovers the values of a query template's parameters by
// walking the statement and the template token by token: where the
// template has a declared parameter (@0, @1, …), the statement has a
// literal, possibly signed. Words and identifiers compare without regard to
// case or brackets, and semicolons are ignored. It fails, saying where,
// when the two do not line up or a value does not suit its parameter's
// type.
func AlignTemplate(statement, templateText, declaration string) (*Template, error) {
	decls, err := sqlscript.ParseDeclarations(declaration)
	if err != nil {
		return nil, fmt.Errorf("parameter list %q: %v", declaration, err)
	}
	declared := map[string]int{}
	for i, d := range decls {
		declared[strings.ToLower(d.Name)] = i
	}
	st := withoutSemicolons(sqlscript.CodeTokens(statement))
	tt := withoutSemicolons(sqlscript.CodeTokens(templateText))
	values := make([]*sqlscript.Literal, len(decls))
	i := 0
	for j := 0; j < len(tt); j++ {
		t := tt[j]
		if i >= len(st) {
			return nil, fmt.Errorf("the statement ends where the template has %q (template offset %d)", t.Text, t.Start)
		}
		s := st[i]
		d, isParam := declared[strings.ToLower(t.Text)]
		if !(t.Variable && isParam) {
			if !sameToken(t, s) {
				return nil, fmt.Errorf("the template has %q (offset %d) where the statement has %q (offset %d)", t.Text, t.Start, s.Text, s.Start)
			}
			i++
			continue
		}
		var lit sqlscript.Literal
		switch {
		case (s.Text == "-" || s.Text == "+") && i+1 < len(st) && isNumber(st[i+1].Literal):
			lit = sqlscript.Literal{Text: statement[s.Start:st[i+1].End], Kind: st[i+1].Literal.Kind}
			i += 2
		case s.Literal != nil:
			lit = *s.Literal
			i++
		default:
			return nil, fmt.Errorf("the template has parameter %s (offset %d) where the statement has %q (offset %d), not a literal", t.Text, t.Start, s.Text, s.Start)
		}
		if prev := values[d]; prev != nil && prev.Text != lit.Text {
			return nil, fmt.Errorf("parameter %s stands for both %s and %s in the statement", decls[d].Name, prev.Text, lit.Text)
		}
		values[d] = &lit
	}
	if i < len(st) {
		return nil, fmt.Errorf("the template ends where the statement has %q (offset %d)", st[i].Text, st[i].Start)
	}
	tpl := &Template{Text: templateText, Declaration: declaration}
	for k, d := range decls {
		if values[k] == nil {
			return nil, fmt.Errorf("parameter %s is declared but does not appear in the template", d.Name)
		}
		p := sqlscript.Param{Name: d.Name, Type: d.Type, Value: *values[k]}
		if _, err := p.GoValue(); err != nil {
			return nil, err
		}
		tpl.Params = append(tpl.Params, p)
	}
	return tpl, nil
}

func withoutSemicolons(toks []sqlscript.Token) []sqlscript.Token {
	out := toks[:0:0]
	for _, t := range toks {
		if t.Text != ";" {
			out = append(out, t)
		}
	}
	return out
}

func isNumber(l *sqlscript.Literal) bool {
	if l == nil {
		return false
	}
	switch l.Kind {
	case sqlscript.LiteralInteger, sqlscript.LiteralDecimal, sqlscript.LiteralFloat, sqlscript.LiteralMoney:
		return true
	}
	return false
}

// sameToken compares a template token with a statement token.
func sameToken(a, b sqlscript.Token) bool {
	switch {
	case a.Identifier != "" && b.Identifier != "":
		return strings.EqualFold(a.Identifier, b.Identifier)
	case a.Literal != nil && b.Literal != nil:
		if a.Literal.Kind != b.Literal.Kind {
			return false
		}
		if k := a.Literal.Kind; k == sqlscript.LiteralString || k == sqlscript.LiteralNString {
			return a.Literal.Str() == b.Literal.Str()
		}
		return strings.EqualFold(a.Literal.Text, b.Literal.Text)
	}
	return strings.EqualFold(a.Text, b.Text)
}

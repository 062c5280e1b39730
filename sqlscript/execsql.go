package sqlscript

import (
	"fmt"
	"sort"
	"strings"
)

// ExecuteSQL is a parsed EXEC sp_executesql call.
type ExecuteSQL struct {
	Procedure   string      // as written: "sp_executesql", "sys.sp_executesql", "[sys].[sp_executesql]"
	Statement   string      // the @stmt text, quotes unescaped
	Declaration string      // the @params text, quotes unescaped; "" when absent
	Decls       []ParamDecl // Declaration, parsed
	Args        []Argument  // the arguments after @params, as written
	// Params are the values sent: one per argument, in declaration order,
	// named and typed by the declarations.
	Params []Param
	// Statements are the statements of Statement, with ranges in the parsed
	// text (the script, for a call found by Parse).
	Statements []*Statement

	stmtMap offsetMap // offsets in Statement → offsets in the parsed text
}

// Argument is one argument of an sp_executesql call after the parameter
// list: "@Status = 0", "0", "@n = @n OUTPUT".
type Argument struct {
	Name   string // "" for a positional argument
	Value  Literal
	Output bool
	Range  Range
}

// Param is a parameter value sent with an RPC.
type Param struct {
	Name   string // with the @
	Type   string // declared type, as written
	Value  Literal
	Output bool
	// Range is where the parameter is written in the script (the argument
	// or the annotation); zero when only a command-line override gives it.
	Range Range
}

// GoValue converts the value for the parameter's declared type (see
// Literal.GoValue); errors name the parameter.
func (p Param) GoValue() (any, error) {
	v, err := p.Value.GoValue(p.Type)
	if err != nil {
		return nil, fmt.Errorf("parameter %s: %v", p.Name, err)
	}
	return v, nil
}

// offsetMap maps offsets in an unescaped string back to offsets in the text
// it was written in. Each segment starts at text offset from, written at src.
type offsetMap []struct{ from, src int }

func (m offsetMap) apply(i int) int {
	if len(m) == 0 {
		return i
	}
	k := sort.Search(len(m), func(k int) bool { return m[k].from > i }) - 1
	if k < 0 {
		k = 0
	}
	return m[k].src + i - m[k].from
}

// stringContent returns the unescaped content of a string token and the map
// from content offsets to offsets of the text holding the token.
func stringContent(t token) (string, offsetMap) {
	open := t.Start + 1
	if t.Kind == tokNString {
		open++
	}
	raw := t.Text[open-t.Start:]
	if !t.Unterminated && len(raw) > 0 {
		raw = raw[:len(raw)-1]
	}
	m := offsetMap{{0, open}}
	var sb strings.Builder
	for i := 0; i < len(raw); i++ {
		sb.WriteByte(raw[i])
		if raw[i] == '\'' && i+1 < len(raw) && raw[i+1] == '\'' {
			i++
			m = append(m, struct{ from, src int }{sb.Len(), open + i + 1})
		}
	}
	return sb.String(), m
}

// ParseExecuteSQL parses a single EXEC sp_executesql call, such as
//
//	EXEC sp_executesql N'SELECT ... WHERE Status = @Status', N'@Status tinyint', @Status = 0
//
// Errors give the line and column in sql. Argument values must be literals
// (numbers, strings, 0x…, NULL) or, for OUTPUT arguments, a variable.
func ParseExecuteSQL(sql string) (*ExecuteSQL, error) {
	idx := newLineIndex(sql)
	call, err := parseExecuteSQL(sql, code(lex(sql)), idx)
	if err != nil {
		return nil, &SyntaxError{Pos: idx.pos(err.Start), Msg: err.Msg}
	}
	return call, nil
}

// isExecuteSQLCall reports whether the code tokens start with EXEC[UTE]
// followed by a procedure name that resolves to sp_executesql.
func isExecuteSQLCall(toks []token) bool {
	if len(toks) < 2 || !(toks[0].IsWord("EXEC") || toks[0].IsWord("EXECUTE")) {
		return false
	}
	_, end, ok := procedureName(toks, 1)
	return ok && end > 1
}

// procedureName reads a possibly qualified name at toks[i] and reports
// whether it names sp_executesql (optionally sys., master.sys. or master..).
func procedureName(toks []token, i int) (parts []string, next int, ok bool) {
	for i < len(toks) {
		t := toks[i]
		switch {
		case t.Kind == tokWord || (t.Kind == tokQuotedIdent && !t.Unterminated):
			parts = append(parts, strings.ToLower(unquote(t)))
			i++
			if i < len(toks) && toks[i].IsOp(".") {
				i++
				for i < len(toks) && toks[i].IsOp(".") { // master..sp_executesql
					parts = append(parts, "")
					i++
				}
				continue
			}
		}
		break
	}
	n := len(parts)
	if n == 0 || parts[n-1] != "sp_executesql" {
		return parts, i, false
	}
	switch strings.Join(parts[:n-1], ".") {
	case "", "sys", "master.sys", "master.":
		return parts, i, true
	}
	return parts, i, false
}

// parseExecuteSQL parses the call in the code tokens toks of text; idx
// gives positions in text.
func parseExecuteSQL(text string, toks []token, idx *lineIndex) (*ExecuteSQL, *offsetError) {
	for _, t := range toks {
		if t.Unterminated {
			return nil, errAt(t, "unterminated %s", t.Kind)
		}
	}
	endTok := token{Start: len(text), End: len(text), Text: "end of text"}
	if len(toks) > 0 {
		endTok.Start, endTok.End = toks[len(toks)-1].End, toks[len(toks)-1].End
	}
	at := func(i int) token {
		if i < len(toks) {
			return toks[i]
		}
		return endTok
	}
	if len(toks) == 0 || !(toks[0].IsWord("EXEC") || toks[0].IsWord("EXECUTE")) {
		return nil, errAt(at(0), "expected EXEC sp_executesql, found %s", describeOrEnd(at(0), 0, toks))
	}
	_, i, ok := procedureName(toks, 1)
	if !ok {
		return nil, errAt(at(1), "expected sp_executesql after %s, found %s", toks[0].Text, describeOrEnd(at(1), 1, toks))
	}
	call := &ExecuteSQL{Procedure: text[toks[1].Start:toks[i-1].End]}

	// split the arguments at top-level commas
	type rawArg struct {
		name   token
		value  []token
		output bool
		start  token
		end    int
	}
	var args []rawArg
	for i < len(toks) && !toks[i].IsOp(";") {
		a := rawArg{start: toks[i]}
		if toks[i].Kind == tokVariable && at(i+1).IsOp("=") {
			a.name = toks[i]
			i += 2
		}
		j, depth := i, 0
		for ; j < len(toks); j++ {
			c := toks[j]
			if depth == 0 && (c.IsOp(",") || c.IsOp(";") || c.IsWord("OUTPUT") || c.IsWord("OUT")) {
				break
			}
			if depth == 0 && j > i && c.Kind == tokVariable && at(j+1).IsOp("=") {
				break // "@name =" starts the next argument: a comma is missing
			}
			if c.IsOp("(") {
				depth++
			} else if c.IsOp(")") {
				depth--
			}
		}
		a.value = toks[i:j]
		if len(a.value) == 0 {
			what := "an argument"
			if a.name.Text != "" {
				what = "a value for " + a.name.Text
			}
			return nil, errAt(at(j), "expected %s, found %s", what, describeOrEnd(at(j), j, toks))
		}
		a.end = toks[j-1].End
		if at(j).IsWord("OUTPUT") || at(j).IsWord("OUT") {
			a.output = true
			a.end = toks[j].End
			j++
		}
		args = append(args, a)
		i = j
		if at(i).IsOp(",") {
			if i+1 >= len(toks) || toks[i+1].IsOp(";") {
				return nil, errAt(at(i+1), "expected an argument after ','")
			}
			i++
			continue
		}
		if i < len(toks) && !toks[i].IsOp(";") {
			return nil, errAt(toks[i], "expected ',' between arguments, found %s", describe(toks[i]))
		}
	}
	if i < len(toks) {
		i++ // the semicolon
	}
	if i < len(toks) {
		return nil, errAt(toks[i], "unexpected %s after the sp_executesql call (the batch must be the call alone)", describe(toks[i]))
	}
	if len(args) == 0 {
		return nil, errAt(endTok, "sp_executesql needs a statement: EXEC sp_executesql N'…'")
	}

	// @stmt and @params, positional or named
	textArg := func(a rawArg, what string) (string, offsetMap, *offsetError) {
		if len(a.value) != 1 || (a.value[0].Kind != tokNString && a.value[0].Kind != tokString) || a.output {
			return "", nil, &offsetError{Start: a.value[0].Start, End: a.value[len(a.value)-1].End,
				Msg: fmt.Sprintf("%s must be a single string literal such as N'…', found %q", what, text[a.value[0].Start:a.end])}
		}
		s, m := stringContent(a.value[0])
		return s, m, nil
	}
	k := 0
	var haveStmt, haveParams bool
	var declMap offsetMap
	for ; k < len(args) && k < 2; k++ {
		a := args[k]
		name := strings.ToLower(a.name.Text)
		switch {
		case name == "@stmt" || (name == "" && k == 0):
			if haveStmt {
				return nil, errAt(a.start, "@stmt is given twice")
			}
			s, m, err := textArg(a, "the statement (@stmt)")
			if err != nil {
				return nil, err
			}
			call.Statement, call.stmtMap, haveStmt = s, m, true
			continue
		case name == "@params" || (name == "" && k == 1):
			if haveParams {
				return nil, errAt(a.start, "@params is given twice")
			}
			s, m, err := textArg(a, "the parameter list (@params)")
			if err != nil {
				return nil, err
			}
			call.Declaration, declMap, haveParams = s, m, true
			continue
		}
		break
	}
	if !haveStmt {
		return nil, errAt(args[0].start, "the first argument of sp_executesql must be the statement: N'…' or @stmt = N'…'")
	}
	if !haveParams && k < len(args) {
		return nil, errAt(args[k].start, "arguments need a parameter list: EXEC sp_executesql N'…', N'@name type', @name = value")
	}

	if haveParams {
		dtoks := code(lex(call.Declaration))
		decls, _, err := parseDeclList(call.Declaration, dtoks, false)
		if err != nil {
			return nil, &offsetError{Start: declMap.apply(err.Start), End: declMap.apply(err.End),
				Msg: "in the parameter list: " + err.Msg}
		}
		call.Decls = decls
	}

	// the values
	given := make([]int, len(call.Decls)) // index+1 in call.Args of each declaration's argument
	named := args[0].name.Text != "" || (k > 1 && args[1].name.Text != "")
	for n, a := range args[k:] {
		arg := Argument{Name: a.name.Text, Output: a.output, Range: idx.span(a.start.Start, a.end)}
		var d int
		switch {
		case a.name.Text == "":
			if named {
				return nil, errAt(a.start, "argument %d must be passed as '@name = value' because an earlier argument was", k+n+1)
			}
			if n >= len(call.Decls) {
				return nil, errAt(a.start, "too many arguments: the parameter list declares %d parameter(s)", len(call.Decls))
			}
			d = n
		default:
			named = true
			d = -1
			for x, decl := range call.Decls {
				if strings.EqualFold(decl.Name, a.name.Text) {
					d = x
				}
			}
			if d < 0 {
				return nil, errAt(a.name, "%s is not declared in the parameter list %q", a.name.Text, call.Declaration)
			}
			if given[d] != 0 {
				return nil, errAt(a.name, "%s is given twice", a.name.Text)
			}
		}
		decl := call.Decls[d]
		lit, ok := literalFromTokens(a.value, text)
		if !ok {
			v := a.value[0]
			msg := fmt.Sprintf("value for %s must be a literal (number, 'string', N'string', 0x…, NULL), found %q", decl.Name, text[v.Start:a.value[len(a.value)-1].End])
			switch {
			case v.IsWord("CAST") || v.IsWord("CONVERT") || v.IsWord("TRY_CAST") || v.IsWord("TRY_CONVERT"):
				msg = fmt.Sprintf("value for %s: %s(...) expressions are not supported; write the value as a literal of the declared type %s", decl.Name, strings.ToUpper(v.Text), decl.Type)
			case v.IsWord("DEFAULT"):
				msg = fmt.Sprintf("value for %s: DEFAULT is not supported by sp_executesql; give a literal value", decl.Name)
			}
			return nil, &offsetError{Start: v.Start, End: a.value[len(a.value)-1].End, Msg: msg}
		}
		if lit.Kind == LiteralVariable && !a.output {
			return nil, errAt(a.value[0], "value for %s is the variable %s, which this call alone cannot declare; give a literal (only an OUTPUT argument may name a variable)", decl.Name, lit.Text)
		}
		if a.output && !decl.Output {
			return nil, errAt(a.start, "%s is passed as OUTPUT but not declared OUTPUT in the parameter list", decl.Name)
		}
		if _, err := lit.GoValue(decl.Type); err != nil {
			return nil, &offsetError{Start: a.value[0].Start, End: a.value[len(a.value)-1].End, Msg: fmt.Sprintf("argument %s: %v", decl.Name, err)}
		}
		arg.Value = lit
		call.Args = append(call.Args, arg)
		given[d] = len(call.Args)
	}
	for d, decl := range call.Decls {
		switch {
		case given[d] != 0:
			v := call.Args[given[d]-1]
			call.Params = append(call.Params, Param{Name: decl.Name, Type: decl.Type, Value: v.Value, Output: v.Output, Range: v.Range})
		case decl.Default == nil:
			return nil, errAt(endTok, "parameter %s is declared but no value is supplied", decl.Name)
		}
	}

	splitWindow(newWindow(call.Statement, 0, len(call.Statement)), func(sp stmtSpan) {
		call.Statements = append(call.Statements, &Statement{
			Text:    call.Statement[sp.start:sp.end],
			Range:   idx.span(call.stmtMap.apply(sp.start), call.stmtMap.apply(sp.end)),
			Keyword: sp.keyword,
		})
	})
	return call, nil
}

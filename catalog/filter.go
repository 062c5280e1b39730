package catalog

import (
	"fmt"
	"strings"
)

// FilterSyntaxError says why a filter definition could not be parsed and
// where.
type FilterSyntaxError struct {
	Offset int    // byte offset of the offending part in the filter text
	Part   string // the offending part as written; empty at the end of the text
	Reason string
}

func (e *FilterSyntaxError) Error() string {
	if e.Part == "" {
		return fmt.Sprintf("at offset %d (end of filter): %s", e.Offset, e.Reason)
	}
	return fmt.Sprintf("at offset %d, %q: %s", e.Offset, e.Part, e.Reason)
}

// maxFilterNesting bounds parenthesis nesting, which bounds the cost of
// reading each "(" both ways and keeps the recursion shallow on hostile
// input.
const maxFilterNesting = 100

const allowedOps = "=, <>, !=, >, >=, !>, <, <=, !<, IN or IS [NOT] NULL"

// ParseFilter parses a filtered index's predicate, either as written in
// CREATE INDEX ("Status = 0", with or without WHERE) or as SQL Server
// stores it in sys.indexes.filter_definition ("([Status]=(0))"). The
// result is the AND of its conjuncts; an OR of equality tests on one
// column (how SQL Server stores IN) becomes one IN conjunct, and a
// CONVERT or CAST of a constant is kept whole as the value. Anything else
// outside the CREATE INDEX filter grammar is an error, never a guess.
func ParseFilter(text string) (*Filter, error) {
	p := &filterParser{src: text, toks: lex(text, false)}
	if last := p.toks[len(p.toks)-1]; last.kind == tokError {
		return nil, &FilterSyntaxError{Offset: last.pos, Part: clip(text[last.pos:]), Reason: last.text}
	}
	if p.cur().is("WHERE") {
		p.pos++
	}
	if p.cur().kind == tokEOF {
		return nil, &FilterSyntaxError{Offset: p.cur().pos, Reason: "empty filter: expected a comparison such as Status = 0"}
	}
	n, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.cur(); t.kind != tokEOF {
		return nil, p.errAt(t, "expected AND or the end of the filter")
	}
	f := &Filter{}
	if err := p.flatten(n, f); err != nil {
		return nil, err
	}
	return f, nil
}

// String renders the filter canonically: conjuncts joined by AND, column
// names bracketed only when needed. ParseFilter reads it back unchanged.
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	parts := make([]string, len(f.Conjuncts))
	for i, c := range f.Conjuncts {
		parts[i] = c.String()
	}
	return strings.Join(parts, " AND ")
}

// String renders the conjunct as T-SQL, e.g. "Status IN (0, 1)".
func (c Conjunct) String() string {
	col := quoteName(c.Column)
	switch c.Op {
	case "IS NULL", "IS NOT NULL":
		return col + " " + c.Op
	case "IN":
		return col + " IN (" + strings.Join(c.Values, ", ") + ")"
	}
	return col + " " + c.Op + " " + strings.Join(c.Values, ", ")
}

// boolNode is a parsed predicate: an AND or OR of children, or one
// comparison.
type boolNode struct {
	op         string // "AND", "OR", or "" for a comparison
	kids       []*boolNode
	cmp        Conjunct
	start, end int // source span
}

// operand is one side of a comparison: a column or a constant.
type operand struct {
	column     string // set for a column
	value      string // set for a constant, as written without parentheses
	start, end int
}

type filterParser struct {
	src   string
	toks  []token
	pos   int
	depth int
}

func (p *filterParser) cur() token { return p.toks[p.pos] }

func (p *filterParser) peek(ahead int) token {
	if i := p.pos + ahead; i < len(p.toks) {
		return p.toks[i]
	}
	return p.toks[len(p.toks)-1]
}

func (p *filterParser) advance() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *filterParser) errSpan(start, end int, reason string) *FilterSyntaxError {
	if end > len(p.src) {
		end = len(p.src)
	}
	if start > end {
		start = end
	}
	return &FilterSyntaxError{Offset: start, Part: clip(p.src[start:end]), Reason: reason}
}

func (p *filterParser) errAt(t token, reason string) *FilterSyntaxError {
	return p.errSpan(t.pos, t.end, reason)
}

func (p *filterParser) enter(t token) error {
	p.depth++
	if p.depth > maxFilterNesting {
		return p.errAt(t, fmt.Sprintf("parentheses nested deeper than %d levels", maxFilterNesting))
	}
	return nil
}

func (p *filterParser) parseOr() (*boolNode, error) {
	return p.parseChain("OR", p.parseAnd)
}

func (p *filterParser) parseAnd() (*boolNode, error) {
	return p.parseChain("AND", p.parsePrimary)
}

// parseChain parses item (kw item)*.
func (p *filterParser) parseChain(kw string, item func() (*boolNode, error)) (*boolNode, error) {
	first, err := item()
	if err != nil {
		return nil, err
	}
	if !p.cur().is(kw) {
		return first, nil
	}
	n := &boolNode{op: kw, kids: []*boolNode{first}, start: first.start}
	for p.cur().is(kw) {
		p.advance()
		k, err := item()
		if err != nil {
			return nil, err
		}
		n.kids = append(n.kids, k)
		n.end = k.end
	}
	return n, nil
}

// parsePrimary parses a comparison or a parenthesised predicate. A "(" may
// open either ("(0) = x" or "(x = 0)"), so the comparison is tried first.
func (p *filterParser) parsePrimary() (*boolNode, error) {
	t := p.cur()
	if t.is("NOT") {
		return nil, p.errAt(t, "NOT is not allowed in a filter; use the opposite comparison (<> for =, IS NOT NULL for IS NULL)")
	}
	if !t.isPunct("(") {
		return p.parseComparison()
	}
	if err := p.enter(t); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	save := p.pos
	n, cmpErr := p.parseComparison()
	if cmpErr == nil {
		return n, nil
	}
	p.pos = save
	p.advance()
	n, err := p.parseOr()
	if err == nil {
		c := p.cur()
		if c.isPunct(")") {
			p.advance()
			n.start, n.end = t.pos, c.end
			return n, nil
		}
		err = p.errAt(c, fmt.Sprintf("expected ) to close the ( at offset %d", t.pos))
	}
	// Report whichever reading got further into the text.
	if ce, ok := cmpErr.(*FilterSyntaxError); ok {
		if ge, ok := err.(*FilterSyntaxError); ok && ce.Offset > ge.Offset {
			return nil, cmpErr
		}
	}
	return nil, err
}

// parseComparison parses column op constant (either way round),
// column IN (constants) or column IS [NOT] NULL.
func (p *filterParser) parseComparison() (*boolNode, error) {
	left, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	t := p.cur()
	switch {
	case t.is("IS"):
		p.advance()
		op := "IS NULL"
		if p.cur().is("NOT") {
			p.advance()
			op = "IS NOT NULL"
		}
		if !p.cur().is("NULL") {
			return nil, p.errAt(p.cur(), "expected NULL after "+strings.TrimSuffix(op, " NULL"))
		}
		end := p.advance().end
		if left.column == "" {
			return nil, p.errSpan(left.start, end, op+" needs a column on its left")
		}
		return &boolNode{cmp: Conjunct{Column: left.column, Op: op}, start: left.start, end: end}, nil
	case t.is("IN"):
		if left.column == "" {
			return nil, p.errSpan(left.start, t.end, "IN needs a column on its left")
		}
		return p.parseInList(left)
	case t.is("NOT") && (p.peek(1).is("IN") || p.peek(1).is("LIKE") || p.peek(1).is("BETWEEN")):
		return nil, p.errSpan(t.pos, p.peek(1).end, "NOT "+strings.ToUpper(p.peek(1).text)+" is not allowed in a filter (allowed: "+allowedOps+")")
	case t.is("LIKE") || t.is("BETWEEN"):
		return nil, p.errAt(t, strings.ToUpper(t.text)+" is not allowed in a filter (allowed: "+allowedOps+")")
	case isArithmetic(t):
		return nil, p.errAt(t, "arithmetic is not allowed in a filter; compare a column with a constant")
	}
	op, ok := comparisonOp(t)
	if !ok {
		if t.kind == tokEOF {
			return nil, p.errSpan(t.pos, t.pos, "expected "+allowedOps)
		}
		return nil, p.errAt(t, "expected "+allowedOps)
	}
	p.advance()
	right, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	if a := p.cur(); isArithmetic(a) {
		return nil, p.errAt(a, "arithmetic is not allowed in a filter; compare a column with a constant")
	}
	switch {
	case left.column != "" && right.column != "":
		return nil, p.errSpan(left.start, right.end, "column-to-column comparisons are not allowed in a filter")
	case left.column == "" && right.column == "":
		return nil, p.errSpan(left.start, right.end, "a comparison in a filter needs a column on one side")
	case left.column == "":
		left, right = right, left
		op = flipOp(op)
	}
	return &boolNode{
		cmp:   Conjunct{Column: left.column, Op: op, Values: []string{right.value}},
		start: min(left.start, right.start), end: max(left.end, right.end),
	}, nil
}

func (p *filterParser) parseInList(col operand) (*boolNode, error) {
	p.advance() // IN
	if open := p.cur(); !open.isPunct("(") {
		return nil, p.errAt(open, "expected ( and a list of constants after IN")
	}
	p.advance()
	c := Conjunct{Column: col.column, Op: "IN"}
	if t := p.cur(); t.isPunct(")") {
		return nil, p.errAt(t, "an IN list needs at least one constant")
	}
	for {
		if t := p.cur(); t.is("SELECT") {
			return nil, p.errAt(t, "subqueries are not allowed in a filter")
		}
		v, err := p.parseOperand()
		if err != nil {
			return nil, err
		}
		if v.column != "" {
			return nil, p.errSpan(v.start, v.end, "an IN list in a filter holds constants only")
		}
		c.Values = append(c.Values, v.value)
		t := p.advance()
		if t.isPunct(")") {
			return &boolNode{cmp: c, start: col.start, end: t.end}, nil
		}
		if !t.isPunct(",") {
			return nil, p.errAt(t, "expected , or ) in the IN list")
		}
	}
}

// parseOperand parses a column name or a constant, in any number of
// parentheses.
func (p *filterParser) parseOperand() (operand, error) {
	t := p.cur()
	switch t.kind {
	case tokPunct:
		switch t.text {
		case "(":
			if err := p.enter(t); err != nil {
				return operand{}, err
			}
			defer func() { p.depth-- }()
			p.advance()
			o, err := p.parseOperand()
			if err != nil {
				return o, err
			}
			c := p.cur()
			if !c.isPunct(")") {
				return o, p.errAt(c, "expected )")
			}
			p.advance()
			o.start, o.end = t.pos, c.end
			return o, nil
		case "-", "+":
			return p.parseSigned()
		}
	case tokNumber, tokString, tokBinary:
		p.advance()
		return operand{value: t.text, start: t.pos, end: t.end}, nil
	case tokQuoted:
		return p.parseColumn()
	case tokIdent:
		if t.is("NULL") {
			p.advance()
			return operand{value: "NULL", start: t.pos, end: t.end}, nil
		}
		if p.peek(1).isPunct("(") {
			return p.parseFunction()
		}
		if strings.HasPrefix(t.text, "@") {
			return operand{}, p.errAt(t, "variables and parameters are not allowed in a filter")
		}
		if isReserved(t.text) {
			return operand{}, p.errAt(t, "expected a column name or a constant, found the keyword "+strings.ToUpper(t.text))
		}
		return p.parseColumn()
	case tokEOF:
		return operand{}, p.errSpan(t.pos, t.pos, "expected a column name or a constant")
	}
	return operand{}, p.errAt(t, "expected a column name or a constant")
}

func (p *filterParser) parseColumn() (operand, error) {
	t := p.advance()
	if strings.TrimSpace(t.value) == "" {
		return operand{}, p.errAt(t, "empty column name")
	}
	if p.cur().isPunct(".") {
		end := p.cur().end
		for p.cur().isPunct(".") || p.cur().kind == tokIdent || p.cur().kind == tokQuoted {
			end = p.advance().end
		}
		return operand{}, p.errSpan(t.pos, end, "a filter names columns without a table or schema")
	}
	return operand{column: t.value, start: t.pos, end: t.end}, nil
}

// parseSigned parses a sign and a number, which may be parenthesised:
// -1, -(1), (-1).
func (p *filterParser) parseSigned() (operand, error) {
	sign := p.advance()
	o, err := p.parseOperand()
	if err != nil {
		return o, err
	}
	if o.column != "" || !isNumberText(o.value) {
		return operand{}, p.errSpan(sign.pos, o.end, "expected a number after "+sign.text)
	}
	return operand{value: sign.text + o.value, start: sign.pos, end: o.end}, nil
}

// parseFunction accepts CONVERT, TRY_CONVERT, CAST and TRY_CAST of a
// constant (SQL Server stores such filters when the constant needed a
// conversion); any other call, and any conversion of a column, is an error.
func (p *filterParser) parseFunction() (operand, error) {
	name := p.cur()
	first := p.pos
	end := p.matchingParen(p.pos + 1)
	upper := strings.ToUpper(name.text)
	span := func() (int, int) { return name.pos, p.toks[end].end }
	if upper != "CONVERT" && upper != "TRY_CONVERT" && upper != "CAST" && upper != "TRY_CAST" {
		s, e := span()
		return operand{}, p.errSpan(s, e, "function calls are not allowed in a filter")
	}
	if err := p.enter(name); err != nil {
		return operand{}, err
	}
	defer func() { p.depth-- }()
	p.pos += 2 // name (
	var inner operand
	var err error
	if strings.HasSuffix(upper, "CONVERT") {
		if err := p.skipType(","); err != nil {
			return operand{}, err
		}
		p.advance() // ,
		if inner, err = p.parseOperand(); err != nil {
			return inner, err
		}
		if p.cur().isPunct(",") { // style
			p.advance()
			if st := p.cur(); st.kind != tokNumber {
				return operand{}, p.errAt(st, "expected a style number")
			}
			p.advance()
		}
	} else {
		if inner, err = p.parseOperand(); err != nil {
			return inner, err
		}
		if as := p.cur(); !as.is("AS") {
			return operand{}, p.errAt(as, "expected AS and a type in "+upper)
		}
		p.advance()
		if err := p.skipType(")"); err != nil {
			return operand{}, err
		}
	}
	if inner.column != "" {
		s, e := span()
		return operand{}, p.errSpan(s, e, upper+" of a column is not allowed in a filter (SQL Server error 10611); convert the constant instead")
	}
	c := p.cur()
	if !c.isPunct(")") {
		return operand{}, p.errAt(c, "expected ) to close "+upper)
	}
	p.advance()
	return operand{value: joinTokens(p.toks[first:p.pos]), start: name.pos, end: c.end}, nil
}

// skipType skips a data type such as datetime2(0) or [decimal](18,2) up to
// the stop punctuation at nesting level zero.
func (p *filterParser) skipType(stop string) error {
	start := p.cur()
	depth := 0
	for {
		t := p.cur()
		switch {
		case t.kind == tokEOF:
			return p.errSpan(t.pos, t.pos, "expected "+stop+" after the type")
		case depth == 0 && t.isPunct(stop):
			if t.pos == start.pos {
				return p.errAt(t, "expected a type")
			}
			return nil
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
			if depth < 0 {
				return p.errAt(t, "expected "+stop+" after the type")
			}
		}
		p.advance()
	}
}

// matchingParen returns the index of the token closing the "(" at open,
// or of the last token when it is not closed.
func (p *filterParser) matchingParen(open int) int {
	depth := 0
	for i := open; i < len(p.toks); i++ {
		switch {
		case p.toks[i].isPunct("("):
			depth++
		case p.toks[i].isPunct(")"):
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(p.toks) - 1
}

// flatten appends the conjuncts of n to f, turning OR groups into IN.
func (p *filterParser) flatten(n *boolNode, f *Filter) error {
	switch n.op {
	case "AND":
		for _, k := range n.kids {
			if err := p.flatten(k, f); err != nil {
				return err
			}
		}
		return nil
	case "OR":
		var branches []*boolNode
		collectOr(n, &branches)
		in := Conjunct{Op: "IN"}
		for _, b := range branches {
			if b.op != "" || (b.cmp.Op != "=" && b.cmp.Op != "IN") ||
				(in.Column != "" && !strings.EqualFold(in.Column, b.cmp.Column)) {
				return p.errSpan(n.start, n.end, "OR is allowed only between equality tests on one column (how SQL Server stores IN)")
			}
			if in.Column == "" {
				in.Column = b.cmp.Column
			}
			in.Values = append(in.Values, b.cmp.Values...)
		}
		f.Conjuncts = append(f.Conjuncts, in)
		return nil
	}
	f.Conjuncts = append(f.Conjuncts, n.cmp)
	return nil
}

func collectOr(n *boolNode, out *[]*boolNode) {
	if n.op != "OR" {
		*out = append(*out, n)
		return
	}
	for _, k := range n.kids {
		collectOr(k, out)
	}
}

func isArithmetic(t token) bool {
	return t.kind == tokPunct && len(t.text) == 1 && strings.Contains("+-*/%&|^~", t.text)
}

func comparisonOp(t token) (string, bool) {
	if t.kind != tokPunct {
		return "", false
	}
	switch t.text {
	case "=", "<>", "<", "<=", ">", ">=":
		return t.text, true
	case "!=":
		return "<>", true
	case "!>":
		return "<=", true
	case "!<":
		return ">=", true
	}
	return "", false
}

// flipOp returns the operator for the operands swapped: 5 < x is x > 5.
func flipOp(op string) string {
	switch op {
	case "<":
		return ">"
	case "<=":
		return ">="
	case ">":
		return "<"
	case ">=":
		return "<="
	}
	return op
}

// clip shortens s for quoting in a message.
func clip(s string) string {
	const limit = 80
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// isNumberText reports whether s is an unsigned numeric literal.
func isNumberText(s string) bool {
	toks := lex(s, false)
	return len(toks) == 2 && toks[0].kind == tokNumber && toks[0].text == s
}

package sqlscript

import (
	"fmt"
	"sort"
	"strings"

	"github.com/planlint/planlint/internal/tsql"
)

// Severity says whether a diagnostic stops the script from being sent.
type Severity int

// Severities.
const (
	SeverityWarning Severity = iota // worth showing; the script can still be sent
	SeverityError                   // the batch cannot be sent as written
)

func (s Severity) String() string {
	if s == SeverityError {
		return "error"
	}
	return "warning"
}

// Diagnostic is a problem found in a script.
type Diagnostic struct {
	Path     string
	Range    Range
	Severity Severity
	Message  string
}

// String renders the diagnostic as path:line:col: message.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s:%d:%d: %s", d.Path, d.Range.Start.Line, d.Range.Start.Column, d.Message)
}

// Errors is the error Parse returns when a script has error diagnostics.
type Errors []Diagnostic

func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, d := range e {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Script is a parsed .sql file.
type Script struct {
	Path         string
	Text         string // decoded text, without byte-order mark
	Batches      []*Batch
	Suppressions []Suppression // valid suppressions only
	Diagnostics  []Diagnostic  // warnings and errors, in file order

	idx         *lineIndex
	codeLine    []bool // codeLine[n]: line n holds code (a token other than whitespace or a comment)
	commentLine []bool // commentLine[n]: line n holds (part of) a comment
}

// Batch is a GO-separated part of a script that holds code.
type Batch struct {
	Index  int    // 1-based, counting batches that hold code
	Text   string // the text between the separators, comments included
	Range  Range
	Repeat int // GO n: how many times the batch runs (1 without a count)
	// Statements are the statements of the batch (for a batch that is an
	// sp_executesql call, that one EXEC statement; see Call.Statements).
	Statements []*Statement
	// Params are the parameter annotations of the batch's leading comments,
	// with command-line overrides applied.
	Params []Param
	// Call is set when the batch is a single EXEC sp_executesql call.
	Call *ExecuteSQL

	codeStart, codeEnd int // offsets of the batch's first and last code
	uses               map[string]bool
}

// Statement is one statement of a batch or of an sp_executesql statement.
type Statement struct {
	Text    string
	Range   Range  // in the script
	Keyword string // first word, upper case: "SELECT", "WITH", "BEGIN", ...
}

// RequestKind says how a batch is sent.
type RequestKind int

// Request kinds.
const (
	SQLBatch RequestKind = iota // a SQL batch (language event), parameterized by the server if at all
	RPC                         // an RPC to sp_executesql with a declaration and parameter values
)

func (k RequestKind) String() string {
	if k == RPC {
		return "rpc"
	}
	return "batch"
}

// Request is what the capture layer sends for a batch.
type Request struct {
	Kind        RequestKind
	Text        string       // the batch text, or the sp_executesql statement text
	Declaration string       // the parameter list (RPC only)
	Params      []Param      // the parameter values (RPC only)
	Statements  []*Statement // the statements the server will see in Text

	textMap offsetMap
}

// ScriptOffset maps a byte offset in r.Text (for example from Locate) to
// the offset in the script where that character is written.
func (r Request) ScriptOffset(i int) int { return r.textMap.apply(i) }

// Request returns what to send for the batch: the sp_executesql call as an
// RPC, the annotated batch as an RPC with the annotations as parameters, or
// else the batch text as a SQL batch.
func (b *Batch) Request() Request {
	switch {
	case b.Call != nil:
		return Request{Kind: RPC, Text: b.Call.Statement, Declaration: b.Call.Declaration,
			Params: append([]Param(nil), b.Call.Params...), Statements: b.Call.Statements, textMap: b.Call.stmtMap}
	case len(b.Params) > 0:
		return Request{Kind: RPC, Text: b.codeText(), Declaration: declarationOf(b.Params),
			Params: append([]Param(nil), b.Params...), Statements: b.Statements, textMap: offsetMap{{0, b.codeStart}}}
	}
	return Request{Kind: SQLBatch, Text: b.codeText(), Statements: b.Statements, textMap: offsetMap{{0, b.codeStart}}}
}

// codeText is the batch text from its first to its last code token.
func (b *Batch) codeText() string {
	off := b.Range.Start.Offset
	return b.Text[b.codeStart-off : b.codeEnd-off]
}

func declarationOf(params []Param) string {
	parts := make([]string, len(params))
	for i, p := range params {
		parts[i] = p.Name + " " + p.Type
		if p.Output {
			parts[i] += " OUTPUT"
		}
	}
	return strings.Join(parts, ", ")
}

// PosAt returns the position of a byte offset of s.Text.
func (s *Script) PosAt(offset int) Pos { return s.idx.pos(offset) }

// RangeAt returns the range of the byte offsets [start, end) of s.Text.
func (s *Script) RangeAt(start, end int) Range { return s.idx.span(start, end) }

// Parse reads a .sql file. src may be UTF-8 (with or without a byte-order
// mark) or UTF-16 with a byte-order mark. It returns an error without a
// script when src cannot be decoded; otherwise it returns the script and,
// when some diagnostics are errors, an Errors value holding them.
func Parse(path string, src []byte) (*Script, error) {
	text, err := decodeSource(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &Script{Path: path, Text: text, idx: newLineIndex(text)}
	// One pass over every token marks the lines, reports unterminated
	// constructs, reads the suppressions and finds the GO lines; statements
	// are then read batch by batch. No pass holds the tokens of the whole
	// text.
	s.codeLine, s.commentLine = make([]bool, len(s.idx.start)+2), make([]bool, len(s.idx.start)+2)
	sc := tsql.NewScanner(text)
	batches := batchSplitter{text: text, idx: s.idx}
	for {
		t, ok := sc.Next()
		if !ok {
			break
		}
		batches.see(t, sc)
		s.classifyLine(t)
		if t.Unterminated {
			s.diag(t.Start, t.End, SeverityError, "unterminated %s: it runs to the end of the file", t.Kind)
		}
		if t.Comment() {
			s.parseSuppression(t)
		}
	}
	spans, diags := batches.finish()
	for _, d := range diags {
		d.Path = path
		s.Diagnostics = append(s.Diagnostics, d)
	}
	for _, sp := range spans {
		s.addBatch(sp)
	}
	sortDiagnostics(s.Diagnostics)
	var errs Errors
	for _, d := range s.Diagnostics {
		if d.Severity == SeverityError {
			errs = append(errs, d)
		}
	}
	if len(errs) > 0 {
		return s, errs
	}
	return s, nil
}

func (s *Script) diag(start, end int, sev Severity, format string, args ...any) {
	s.Diagnostics = append(s.Diagnostics, Diagnostic{Path: s.Path, Range: s.idx.span(start, end), Severity: sev,
		Message: fmt.Sprintf(format, args...)})
}

func sortDiagnostics(ds []Diagnostic) {
	// stable: equal positions keep the order they were found in
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Range.Start.Offset < ds[j].Range.Start.Offset })
}

// classifyLine marks the lines a token other than white space covers as
// holding code or a comment.
func (s *Script) classifyLine(t token) {
	if t.Kind == tokSpace {
		return
	}
	mark := s.codeLine
	if t.Comment() {
		mark = s.commentLine
	}
	end := t.End
	if end > t.Start {
		end-- // a token ending in a line break does not reach the next line
	}
	for l := s.idx.line(t.Start); l <= s.idx.line(end); l++ {
		mark[l] = true
	}
}

// addBatch builds the batch of one GO-separated span, reading its tokens
// as it goes.
func (s *Script) addBatch(sp batchSpan) {
	var leading []token // the comments before the first code token
	sc := tsql.NewScannerAt(s.Text, sp.start, sp.end)
	for {
		t, ok := sc.Next()
		if !ok {
			return // no code
		}
		if !t.Trivia() {
			break
		}
		if t.Comment() {
			leading = append(leading, t)
		}
	}
	b := &Batch{
		Index:  len(s.Batches) + 1,
		Text:   s.Text[sp.start:sp.end],
		Range:  s.idx.span(sp.start, sp.end),
		Repeat: sp.repeat,
		uses:   map[string]bool{},
	}
	w := newWindow(s.Text, sp.start, sp.end)
	w.onToken = func(t token) {
		if t.Kind == tokVariable {
			b.uses[strings.ToLower(t.Text)] = true
		}
		b.codeEnd = t.End
	}
	first := w.at(0)
	b.codeStart = first.Start
	var declares []stmtSpan
	splitWindow(w, func(st stmtSpan) {
		b.Statements = append(b.Statements, &Statement{Text: s.Text[st.start:st.end], Range: s.idx.span(st.start, st.end), Keyword: st.keyword})
		if st.keyword == "DECLARE" {
			declares = append(declares, st)
		}
	})
	s.Batches = append(s.Batches, b)

	// Only a batch that starts with EXEC can be an sp_executesql call, and
	// the procedure name, a few tokens, says whether it is one; only a call
	// has its code tokens read again, whole, to parse it.
	var ctoks []token
	decided, isCall := false, false
	execCall := func() bool {
		if decided {
			return isCall
		}
		decided = true
		if !first.IsWord("EXEC") && !first.IsWord("EXECUTE") {
			return false
		}
		head := make([]token, 0, 64)
		sc := tsql.NewScannerAt(s.Text, sp.start, sp.end)
		for len(head) < cap(head) {
			t, ok := sc.NextCode()
			if !ok {
				break
			}
			head = append(head, t)
		}
		switch _, next, _ := procedureName(head, 1); {
		case len(head) < cap(head):
			ctoks = head // all of them
		case next < len(head) && !isExecuteSQLCall(head):
			return false // the name ends inside head: head decides as all the tokens would
		default:
			ctoks = code(tsql.Lex(s.Text[:sp.end][sp.start:]))
			for i := range ctoks {
				ctoks[i].Start += sp.start
				ctoks[i].End += sp.start
			}
		}
		isCall = isExecuteSQLCall(ctoks)
		return isCall
	}
	if len(b.Statements) == 1 && execCall() {
		call, err := parseExecuteSQL(s.Text, ctoks, s.idx)
		if err != nil {
			s.diag(err.Start, err.End, SeverityError, "sp_executesql call: %s", err.Msg)
		} else {
			b.Call = call
		}
	}

	params := s.parseAnnotations(leading)
	if len(params) == 0 {
		return
	}
	if execCall() {
		s.diag(params[0].Range.Start.Offset, params[len(params)-1].Range.End.Offset, SeverityWarning,
			"parameter annotations are ignored: the batch is an sp_executesql call, whose own parameters are sent")
		return
	}
	declared := s.declaredVariables(declares)
	for _, p := range params {
		key := strings.ToLower(p.Name)
		r := p.Range
		switch {
		case declared[key]:
			s.diag(r.Start.Offset, r.End.Offset, SeverityError,
				"%s is annotated as a parameter but also declared with DECLARE in the batch; remove one of them", p.Name)
		case !b.uses[key]:
			s.diag(r.Start.Offset, r.End.Offset, SeverityWarning, "annotation %s is not used in the batch", p.Name)
		}
	}
	b.Params = params
}

// declaredVariables returns the variables that DECLARE statements of a
// batch declare, reading their tokens again.
func (s *Script) declaredVariables(declares []stmtSpan) map[string]bool {
	out := map[string]bool{}
	for _, sp := range declares {
		depth := 0
		expect := true
		sc := tsql.NewScannerAt(s.Text, sp.start, sp.end)
		sc.NextCode() // the statement's first token
		for {
			t, ok := sc.NextCode()
			if !ok {
				break
			}
			switch {
			case t.IsOp("("):
				depth++
			case t.IsOp(")"):
				depth--
			case t.IsOp(",") && depth == 0:
				expect = true
				continue
			case t.Kind == tokVariable && expect:
				out[strings.ToLower(t.Text)] = true
			}
			expect = false
		}
	}
	return out
}

// parseAnnotations reads "@Name type = value" parameter annotations from the
// comments before a batch's first statement: one or more per line, in line
// comments or block comments. A comment line that starts with @name and a
// word but does not parse gives a warning.
func (s *Script) parseAnnotations(comments []token) []Param {
	var params []Param
	seen := map[string]bool{}
	for _, c := range comments {
		body, off := c.Text[2:], c.Start+2
		if c.Kind == tokBlockComment && !c.Unterminated {
			body = body[:len(body)-2]
		}
		for len(body) > 0 {
			n := strings.IndexAny(body, "\r\n")
			line := body
			if n >= 0 {
				line = body[:n]
			}
			s.annotationLine(line, off, seen, &params)
			if n < 0 {
				break
			}
			body, off = body[n+1:], off+n+1
		}
	}
	return params
}

func (s *Script) annotationLine(line string, off int, seen map[string]bool, params *[]Param) {
	trimmed := strings.TrimLeft(line, " \t*")
	off += len(line) - len(trimmed)
	sc := tsql.NewScanner(trimmed)
	first, _ := sc.NextCode()
	second, _ := sc.NextCode()
	if first.Start != 0 || first.Kind != tokVariable || second.Kind != tokWord {
		return // prose, not an annotation: its tokens are not needed
	}
	ctoks := code(lex(trimmed))
	decls, spans, err := parseDeclList(trimmed, ctoks, true)
	if err != nil {
		s.diag(off+err.Start, off+err.End, SeverityWarning,
			"comment looks like a parameter annotation but is not one (%s); write -- @Name type = value", err.Msg)
		return
	}
	for i, d := range decls {
		r := s.idx.span(off+spans[i][0], off+spans[i][1])
		key := strings.ToLower(d.Name)
		if seen[key] {
			s.diag(r.Start.Offset, r.End.Offset, SeverityError, "%s is annotated twice", d.Name)
			continue
		}
		seen[key] = true
		p := Param{Name: d.Name, Type: d.Type, Value: *d.Default, Output: d.Output, Range: r}
		if _, err := p.GoValue(); err != nil {
			s.diag(r.Start.Offset, r.End.Offset, SeverityError, "annotation %v", err)
			continue
		}
		*params = append(*params, p)
	}
}

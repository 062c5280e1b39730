package sqlscript

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/planlint/planlint/internal/tsql"
)

// batchSpan is a GO-separated region of a script: [start, end) in bytes.
type batchSpan struct {
	start, end int
	repeat     int
}

// batchSplitter splits a script at GO lines: a line holding only GO, an
// optional repeat count and an optional comment. GO inside a string, comment
// or quoted identifier is a single token of another kind and never matches.
// A batch ends where its GO line starts; the next begins on the line after.
// It sees the script's tokens one at a time, in the pass that reads them
// for other purposes too.
type batchSplitter struct {
	text  string
	idx   *lineIndex
	spans []batchSpan
	diags []Diagnostic
	start int   // where the current batch starts
	n     int   // tokens seen
	prev  token // the last token seen
}

// see handles token t; sc is the scanner that read it, positioned after
// it, and is not moved.
func (b *batchSplitter) see(t token, sc *tsql.Scanner) {
	lineStarts := b.n == 0 || b.prev.Kind == tokSpace && (b.n == 1 || hasLineBreak(b.prev.Text))
	b.n++
	b.prev = t
	if !lineStarts {
		return
	}
	if t.IsOp(":") {
		peek := *sc
		if next, ok := peek.Next(); ok && next.Kind == tokWord && next.Start == t.End {
			b.diags = append(b.diags, Diagnostic{Range: b.idx.span(t.Start, next.End), Severity: SeverityWarning,
				Message: fmt.Sprintf("sqlcmd command :%s is not supported; the line is sent to the server as T-SQL", next.Text)})
		}
		return
	}
	if !t.IsWord("GO") {
		return
	}
	repeat, lineEnd, problem, countTok := goLine(b.text, *sc)
	if problem != "" {
		b.diags = append(b.diags, Diagnostic{Range: b.idx.span(t.Start, lineEnd), Severity: SeverityWarning,
			Message: "GO is not a batch separator here: " + problem + " (a GO line holds only GO, a repeat count and a comment)"})
		return
	}
	if countTok != nil {
		n, err := strconv.Atoi(countTok.Text)
		if err != nil || n < 1 || n > 2147483647 || strings.ContainsAny(countTok.Text, ".eE") {
			b.diags = append(b.diags, Diagnostic{Range: b.idx.span(countTok.Start, countTok.End), Severity: SeverityError,
				Message: fmt.Sprintf("GO count %s must be a whole number from 1 to 2147483647", countTok.Text)})
			n = 1
		}
		repeat = n
	}
	b.spans = append(b.spans, batchSpan{start: b.start, end: lineStart(b.text, t.Start), repeat: repeat})
	b.start = lineEnd
}

// finish returns the batches and the diagnostics about GO and sqlcmd lines.
func (b *batchSplitter) finish() ([]batchSpan, []Diagnostic) {
	return append(b.spans, batchSpan{start: b.start, end: len(b.text), repeat: 1}), b.diags
}

func hasLineBreak(s string) bool { return strings.ContainsAny(s, "\r\n") }

// lineStart returns the offset where the line holding offset starts.
func lineStart(text string, offset int) int {
	return strings.LastIndexAny(text[:offset], "\r\n") + 1
}

// goLine checks the rest of the line after a GO token, read from sc (a
// copy, positioned after the GO). It returns the offset where the next line
// starts, the count token if any, and a description of anything that makes
// the line not a separator.
func goLine(text string, sc tsql.Scanner) (repeat, next int, problem string, count *token) {
	repeat = 1
	sawComment := false
	for j := 0; ; j++ {
		t, ok := sc.Next()
		if !ok {
			break
		}
		switch {
		case t.Kind == tokSpace:
			if k := strings.IndexAny(t.Text, "\r\n"); k >= 0 {
				end := t.Start + k + 1
				if t.Text[k] == '\r' && k+1 < len(t.Text) && t.Text[k+1] == '\n' {
					end++
				}
				return repeat, end, "", count
			}
		case t.Kind == tokLineComment:
			sawComment = true
		case t.Kind == tokBlockComment && !hasLineBreak(t.Text) && !t.Unterminated:
			sawComment = true
		case t.Kind == tokNumber && count == nil && !sawComment && j > 0:
			c := t
			count = &c
		default:
			return repeat, t.End, fmt.Sprintf("unexpected %s after GO", describe(t)), nil
		}
	}
	return repeat, len(text), "", count
}

// stmtSpan is a statement found by splitStatements: code tokens first..last,
// bytes [start, end).
type stmtSpan struct {
	first, last int
	start, end  int
	keyword     string
}

// objectTypes are the words that follow CREATE, ALTER or DROP when the
// keyword starts a statement of its own (and not ALTER COLUMN, DROP
// CONSTRAINT, ... inside ALTER TABLE).
var objectTypes = setOf("TABLE", "INDEX", "VIEW", "PROC", "PROCEDURE", "FUNCTION", "TRIGGER", "DATABASE",
	"SCHEMA", "LOGIN", "USER", "ROLE", "TYPE", "SEQUENCE", "SYNONYM", "STATISTICS", "ASSEMBLY", "CERTIFICATE",
	"FULLTEXT", "XML", "SERVER", "ENDPOINT", "EVENT", "PARTITION", "QUEUE", "SERVICE", "CONTRACT", "MESSAGE",
	"ROUTE", "CREDENTIAL", "AVAILABILITY", "RESOURCE", "WORKLOAD", "EXTERNAL", "MASTER", "SYMMETRIC",
	"ASYMMETRIC", "DEFAULT", "RULE", "APPLICATION", "SECURITY", "AUDIT", "UNIQUE", "CLUSTERED", "NONCLUSTERED",
	"SPATIAL", "OR", "AGGREGATE", "BROKER", "REMOTE", "SEARCH", "SELECTIVE", "PRIMARY", "COLUMNSTORE", "CRYPTOGRAPHIC",
	"DATABASE", "LANGUAGE", "LEDGER")

// statementStarters are the keywords that begin a statement unless the
// context makes them part of the current one.
var statementStarters = setOf("SELECT", "INSERT", "UPDATE", "DELETE", "MERGE", "WITH", "DECLARE", "SET",
	"EXEC", "EXECUTE", "IF", "WHILE", "BEGIN", "RETURN", "PRINT", "USE", "CREATE", "ALTER", "DROP", "TRUNCATE",
	"BACKUP", "RESTORE", "DBCC", "GRANT", "REVOKE", "DENY", "COMMIT", "ROLLBACK", "SAVE", "OPEN", "CLOSE",
	"FETCH", "DEALLOCATE", "RAISERROR", "THROW", "WAITFOR", "GOTO", "BREAK", "CONTINUE", "KILL", "SHUTDOWN",
	"RECONFIGURE", "CHECKPOINT", "READTEXT", "WRITETEXT", "UPDATETEXT", "BULK", "REVERT", "SETUSER",
	"END")

// continuingPrev are words after which a statement keyword always continues
// the statement: UNION SELECT, THEN UPDATE, ON DELETE, GRANT EXECUTE, ...
var continuingPrev = setOf("AS", "FOR", "THEN", "UNION", "ALL", "EXCEPT", "INTERSECT", "GRANT",
	"DENY", "REVOKE", "BULK", "WITH", "INTO", "AND", "OR", "NOT", "IF", "WHILE", "OF", "AFTER", "INSTEAD", "TO", "IS")

// bodyObjects are the objects whose CREATE/ALTER takes the whole batch.
var bodyObjects = setOf("PROC", "PROCEDURE", "FUNCTION", "TRIGGER", "VIEW", "RULE", "DEFAULT")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// splitStatements splits the code tokens of one batch into statements: at
// top-level semicolons and, heuristically, at statement keywords that cannot
// continue the current statement. BEGIN/END block markers, ELSE and the
// TRY/CATCH words are not part of any statement. A CREATE or ALTER of a
// procedure, function, trigger or view takes the whole batch.
func splitStatements(toks []token) []stmtSpan {
	var out []stmtSpan
	splitWindow(windowOf(toks), func(sp stmtSpan) { out = append(out, sp) })
	return out
}

// splitWindow is splitStatements reading the tokens from w, which it
// releases as it goes, and passing each statement to emit.
func splitWindow(w *codeWindow, emit func(stmtSpan)) {
	if !w.has(0) {
		return
	}
	if wholeBatch(w) {
		first := w.at(0)
		n := w.count()
		emit(stmtSpan{first: 0, last: n - 1, start: first.Start, end: w.at(n - 1).End, keyword: first.Upper()})
		return
	}
	s := splitter{w: w, cur: -1, emit: emit}
	for i := 0; w.has(i); i++ {
		i = s.step(i)
		w.release(i - 1)
	}
	s.end(w.count() - 1)
}

func wholeBatch(w *codeWindow) bool {
	i := 0
	switch {
	case w.at(0).IsWord("CREATE"):
		i = 1
		if w.at(i).IsWord("OR") && w.at(i+1).IsWord("ALTER") {
			i += 2
		}
	case w.at(0).IsWord("ALTER"):
		i = 1
	default:
		return false
	}
	return bodyObjects[keyword(w.at(i))]
}

type splitter struct {
	w     *codeWindow
	emit  func(stmtSpan)
	cur   int // first token of the current statement, -1 between statements
	from  int // offset of that token
	depth int // parenthesis depth

	verb         string // main verb; "WITH" while a CTE waits for its verb
	needSet      bool   // an UPDATE has not seen its SET yet
	insertSource bool   // an INSERT has seen its SELECT, VALUES or EXEC
	caseDepth    int
	keyword      string // the statement's keyword (after a label), upper case
	label        bool   // the statement so far is only a label ("retry:")
}

func (s *splitter) at(i int) token {
	if i >= 0 {
		return s.w.at(i)
	}
	return token{Kind: tokSpace}
}

func (s *splitter) start(i int) {
	s.cur, s.from = i, s.w.at(i).Start
	s.begin(i)
}

// begin resets the statement state for the keyword at toks[i].
func (s *splitter) begin(i int) {
	s.label = false
	s.verb, s.needSet, s.insertSource, s.caseDepth = "", false, false, 0
	t := s.w.at(i)
	s.keyword = keyword(t)
	if s.keyword == "" {
		s.keyword = t.Upper()
	}
	s.verb = s.keyword
	if s.keyword == "UPDATE" && !s.at(i+1).IsWord("STATISTICS") {
		s.needSet = true
	}
}

func (s *splitter) end(last int) {
	if s.cur >= 0 && last >= s.cur {
		s.emit(stmtSpan{first: s.cur, last: last, start: s.from, end: s.w.at(last).End, keyword: s.keyword})
	}
	s.cur = -1
	s.depth = 0
}

// step handles toks[i] and returns the index of the last token it consumed.
func (s *splitter) step(i int) int {
	t := s.w.at(i)
	if s.label && t.Kind != tokWord {
		s.label = false
	}
	switch {
	case t.IsOp(";"):
		s.end(i)
		return i
	case t.IsOp("("):
		s.ensure(i)
		s.depth++
		return i
	case t.IsOp(")"):
		s.ensure(i)
		if s.depth > 0 {
			s.depth--
		}
		return i
	}
	if t.Kind != tokWord {
		s.ensure(i)
		return i
	}
	kw := keyword(t)
	switch kw {
	case "CASE":
		s.ensure(i)
		s.caseDepth++
		return i
	case "END":
		if s.caseDepth > 0 {
			s.ensure(i)
			s.caseDepth--
			return i
		}
	}
	if s.depth > 0 {
		s.ensure(i)
		return i
	}
	next := s.at(i + 1)
	if next.IsOp(":") && next.Start == t.End {
		// a label belongs to the statement it precedes, as in plans
		s.end(i - 1)
		s.start(i)
		s.label = true
		return i + 1
	}
	switch {
	case kw == "BEGIN" && !(next.IsWord("TRAN") || next.IsWord("TRANSACTION") || next.IsWord("DISTRIBUTED") || next.IsWord("DIALOG") || next.IsWord("CONVERSATION")):
		s.end(i - 1)
		if next.IsWord("TRY") || next.IsWord("CATCH") || next.IsWord("ATOMIC") {
			return i + 1
		}
		return i
	case kw == "END" && !next.IsWord("CONVERSATION"):
		s.end(i - 1)
		if next.IsWord("TRY") || next.IsWord("CATCH") {
			return i + 1
		}
		return i
	case kw == "ELSE" && s.caseDepth == 0:
		s.end(i - 1)
		return i
	}
	if s.cur < 0 {
		s.start(i)
		return i
	}
	if s.label {
		s.begin(i)
		return i
	}
	if statementStarters[kw] && !s.continues(i, kw) {
		s.end(i - 1)
		s.start(i)
		return i
	}
	s.note(i, kw)
	return i
}

func (s *splitter) ensure(i int) {
	if s.cur < 0 {
		s.start(i)
	}
}

// continues decides whether the statement keyword toks[i] belongs to the
// current statement.
func (s *splitter) continues(i int, kw string) bool {
	prev, next := s.w.at(i-1), s.at(i+1)
	if prev.IsOp(".") || prev.IsOp(",") || prev.IsOp("::") || prev.IsOp("=") || continuingPrev[keyword(prev)] {
		return true
	}
	switch kw {
	case "SELECT":
		return s.verb == "WITH" || (s.verb == "INSERT" && !s.insertSource)
	case "INSERT", "MERGE":
		return s.verb == "WITH"
	case "DELETE":
		return s.verb == "WITH" || prev.IsWord("ON")
	case "UPDATE":
		return s.verb == "WITH" || next.IsOp("(") || prev.IsWord("ON")
	case "FETCH":
		return prev.IsWord("ROWS") || prev.IsWord("ROW")
	case "EXEC", "EXECUTE":
		return s.verb == "INSERT" && !s.insertSource
	case "SET":
		return s.needSet || s.verb == "ALTER" || prev.IsWord("UPDATE") || prev.IsWord("DELETE")
	case "WITH":
		return !s.startsCTE(i)
	case "IF":
		return next.IsWord("EXISTS") && (s.verb == "DROP" || s.verb == "ALTER")
	case "ALTER", "DROP":
		return s.verb == "ALTER" && !objectTypes[keyword(next)]
	}
	return false
}

// note updates the statement state for a keyword that continues it.
func (s *splitter) note(i int, kw string) {
	switch kw {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "MERGE":
		if s.verb == "WITH" {
			s.verb = kw
			s.needSet = kw == "UPDATE"
			return
		}
		if kw == "SELECT" && s.verb == "INSERT" {
			s.insertSource = true
		}
	case "EXEC", "EXECUTE", "VALUES":
		if s.verb == "INSERT" {
			s.insertSource = true
		}
	case "SET":
		s.needSet = false
	}
}

// startsCTE reports whether WITH at toks[i] opens a common table expression
// ("WITH name [(columns)] AS (" or "WITH XMLNAMESPACES (") rather than a
// hint or option (WITH (NOLOCK), WITH TIES, WITH ROLLUP, ...).
func (s *splitter) startsCTE(i int) bool {
	name := s.at(i + 1)
	if name.IsWord("XMLNAMESPACES") {
		return true
	}
	if name.Kind != tokWord && name.Kind != tokQuotedIdent {
		return false
	}
	j := i + 2
	if s.at(j).IsOp("(") {
		depth := 0
		end := -1
		s.w.scan(j, func(k int, t token) bool {
			if t.IsOp("(") {
				depth++
			} else if t.IsOp(")") {
				depth--
				if depth == 0 {
					end = k
					return false
				}
			}
			return true
		})
		if end < 0 {
			return false // no closing parenthesis: nothing follows it
		}
		j = end + 1
	}
	return s.at(j).IsWord("AS") && s.at(j+1).IsOp("(")
}

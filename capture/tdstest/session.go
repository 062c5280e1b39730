package tdstest

import (
	"strings"
	"unicode"
)

// SetOptions are the session SET options that decide whether a filtered
// index can be used (and that are part of the plan cache key).
type SetOptions struct {
	AnsiNulls            bool
	AnsiPadding          bool
	AnsiWarnings         bool
	ArithAbort           bool
	ConcatNullYieldsNull bool
	NumericRoundAbort    bool
	QuotedIdentifier     bool
}

// ODBCDefaults are the options SQL Server applies to a login with fODBC set
// (go-mssqldb always sets it): all ON except ARITHABORT and NUMERIC_ROUNDABORT.
var ODBCDefaults = SetOptions{
	AnsiNulls:            true,
	AnsiPadding:          true,
	AnsiWarnings:         true,
	ConcatNullYieldsNull: true,
	QuotedIdentifier:     true,
}

// Get returns an option by its T-SQL name (case-insensitive), as
// SESSIONPROPERTY would, and whether the name is known.
func (o SetOptions) Get(name string) (on, ok bool) {
	p := o.field(strings.ToUpper(name))
	if p == nil {
		return false, false
	}
	return *p, true
}

func (o *SetOptions) field(upper string) *bool {
	switch upper {
	case "ANSI_NULLS":
		return &o.AnsiNulls
	case "ANSI_PADDING":
		return &o.AnsiPadding
	case "ANSI_WARNINGS":
		return &o.AnsiWarnings
	case "ARITHABORT":
		return &o.ArithAbort
	case "CONCAT_NULL_YIELDS_NULL":
		return &o.ConcatNullYieldsNull
	case "NUMERIC_ROUNDABORT":
		return &o.NumericRoundAbort
	case "QUOTED_IDENTIFIER":
		return &o.QuotedIdentifier
	}
	return nil
}

// Session is the state of one connection. Requests carry a snapshot of it
// taken when they arrived (after any RESETCONNECTION they asked for).
type Session struct {
	Conn          int // connection number, from 1
	User          string
	AppName       string
	HostName      string
	PacketSize    int
	Encryption    string // how the connection is encrypted: one of the Encryption* modes
	Database      string
	ShowplanXML   bool
	StatisticsXML bool
	NoCount       bool
	XactAbort     bool
	Options       SetOptions
	TranCount     int
}

// sessionStmt is one statement of a batch the server runs itself.
type sessionStmt struct {
	kind    stmtKind
	options []string // upper-case option names for SET
	on      bool
	name    string // database for USE; SHOWPLAN_XML, _ALL or _TEXT for stmtShowplan
	text    string // the statement as written, for a showplan document
}

type stmtKind int

const (
	stmtSet stmtKind = iota
	stmtShowplan
	stmtStatisticsXML
	stmtBegin
	stmtCommit
	stmtRollback
	stmtRollbackIfTran
	stmtUse
	stmtSelectOne
	stmtSetOther // a SET of an option the session does not track
)

// sessionOptionNames are the options SET may name in a session batch.
var sessionOptionNames = map[string]bool{
	"ANSI_NULLS": true, "ANSI_PADDING": true, "ANSI_WARNINGS": true, "ARITHABORT": true,
	"CONCAT_NULL_YIELDS_NULL": true, "NUMERIC_ROUNDABORT": true, "QUOTED_IDENTIFIER": true,
	"NOCOUNT": true, "XACT_ABORT": true,
}

// otherSetOptions are SET options clients send at connect time (tedious's
// initial batch, ODBC drivers) that the server accepts without tracking,
// with the kind of value each takes.
var otherSetOptions = map[string]string{
	"ANSI_NULL_DFLT_ON": "onoff", "ANSI_NULL_DFLT_OFF": "onoff", "CURSOR_CLOSE_ON_COMMIT": "onoff",
	"IMPLICIT_TRANSACTIONS": "onoff", "ANSI_DEFAULTS": "onoff", "FMTONLY": "onoff",
	"DATEFIRST": "value", "DATEFORMAT": "value", "LANGUAGE": "value", "TEXTSIZE": "value",
	"LOCK_TIMEOUT": "value", "ROWCOUNT": "value", "DEADLOCK_PRIORITY": "value",
	"TRANSACTION": "isolation",
}

// lexKind is the kind of a lexical token.
type lexKind int

const (
	lexWord lexKind = iota
	lexDelimited
	lexString
	lexNumber
	lexPunct
)

// lexToken is a word, literal or punctuation mark of a batch.
type lexToken struct {
	kind lexKind
	up   string // upper-cased text of words and punctuation; empty otherwise
	text string // text as typed, without [] or "" delimiters
	pos  int    // rune offsets of the token in the batch
	end  int
}

// lexBatch splits T-SQL into tokens, dropping comments; string literals
// become single tokens, so words inside them or inside comments are never
// taken for statements. ok is false for an unterminated comment, string or
// delimited identifier.
func lexBatch(sql string) ([]lexToken, bool) {
	var toks []lexToken
	rs := []rune(sql)
	isWordRune := func(r rune) bool {
		return r == '_' || r == '@' || r == '#' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '-' && i+1 < len(rs) && rs[i+1] == '-':
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
		case r == '/' && i+1 < len(rs) && rs[i+1] == '*':
			depth := 0
			for i < len(rs) {
				if rs[i] == '/' && i+1 < len(rs) && rs[i+1] == '*' {
					depth++
					i += 2
				} else if rs[i] == '*' && i+1 < len(rs) && rs[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
			if depth != 0 {
				return nil, false
			}
		case r == '\'' || (r == 'N' || r == 'n') && i+1 < len(rs) && rs[i+1] == '\'':
			j := i + 1
			if r != '\'' {
				j++
			}
			var b strings.Builder
			for ; j < len(rs); j++ {
				if rs[j] == '\'' {
					if j+1 < len(rs) && rs[j+1] == '\'' {
						b.WriteRune('\'')
						j++
						continue
					}
					break
				}
				b.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, false
			}
			toks = append(toks, lexToken{kind: lexString, text: b.String(), pos: i, end: j + 1})
			i = j + 1
		case r == '[' || r == '"':
			end := ']'
			if r == '"' {
				end = '"'
			}
			j := i + 1
			var b strings.Builder
			for ; j < len(rs); j++ {
				if rs[j] == end {
					if j+1 < len(rs) && rs[j+1] == end {
						b.WriteRune(end)
						j++
						continue
					}
					break
				}
				b.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, false
			}
			toks = append(toks, lexToken{kind: lexDelimited, text: b.String(), pos: i, end: j + 1})
			i = j + 1
		case isWordRune(r):
			j := i
			for j < len(rs) && isWordRune(rs[j]) {
				j++
			}
			word := string(rs[i:j])
			kind := lexWord
			if unicode.IsDigit(r) {
				kind = lexNumber
			}
			toks = append(toks, lexToken{kind: kind, up: strings.ToUpper(word), text: word, pos: i, end: j})
			i = j
		default:
			toks = append(toks, lexToken{kind: lexPunct, up: string(r), text: string(r), pos: i, end: i + 1})
			i++
		}
	}
	return toks, true
}

// parseSessionBatch recognises batches made only of statements the server
// runs itself. ok is false when anything else is present.
func parseSessionBatch(sql string) (stmts []sessionStmt, ok bool) {
	toks, ok := lexBatch(sql)
	if !ok {
		return nil, false
	}
	return parseSessionTokens(sql, toks)
}

func parseSessionTokens(sql string, toks []lexToken) (stmts []sessionStmt, ok bool) {
	rs := []rune(sql)
	p := &stmtParser{toks: toks}
	for {
		for p.accept(";") {
		}
		if p.done() {
			return stmts, len(stmts) > 0
		}
		start := p.pos
		st, ok := p.statement()
		if !ok {
			return nil, false
		}
		st.text = string(rs[toks[start].pos:toks[p.pos-1].end])
		stmts = append(stmts, st)
	}
}

// showplanSet finds a SET SHOWPLAN_XML|ALL|TEXT ON|OFF statement among the
// tokens (outside strings and comments) and reports which option it sets.
func showplanSet(toks []lexToken) (option string, found bool) {
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].up == "SET" && isShowplanOption(toks[i+1].up) && (toks[i+2].up == "ON" || toks[i+2].up == "OFF") {
			return toks[i+1].up, true
		}
	}
	return "", false
}

func isShowplanOption(up string) bool {
	return up == "SHOWPLAN_XML" || up == "SHOWPLAN_ALL" || up == "SHOWPLAN_TEXT"
}

// showplanAlone reports whether the tokens are exactly one SET SHOWPLAN_*
// ON|OFF, with optional semicolons.
func showplanAlone(toks []lexToken) bool {
	for len(toks) > 0 && toks[len(toks)-1].up == ";" {
		toks = toks[:len(toks)-1]
	}
	for len(toks) > 0 && toks[0].up == ";" {
		toks = toks[1:]
	}
	return len(toks) == 3 && toks[0].up == "SET" && isShowplanOption(toks[1].up) &&
		(toks[2].up == "ON" || toks[2].up == "OFF")
}

// embeddedSets finds the SET statements of session options in a batch the
// handler answers, in order, so that the recorded session state follows
// them: SET option[, option…] ON|OFF and SET STATISTICS XML ON|OFF. An
// UPDATE's SET clause never matches (its column is followed by =).
func embeddedSets(toks []lexToken) []sessionStmt {
	var out []sessionStmt
	for i := 0; i < len(toks); i++ {
		if toks[i].up != "SET" {
			continue
		}
		p := &stmtParser{toks: toks, pos: i + 1}
		if st, ok := p.set(); ok && (st.kind == stmtSet || st.kind == stmtStatisticsXML) {
			out = append(out, st)
			i = p.pos - 1
		}
	}
	return out
}

type stmtParser struct {
	toks []lexToken
	pos  int
}

func (p *stmtParser) done() bool { return p.pos >= len(p.toks) }

func (p *stmtParser) peek() string {
	if p.done() || (p.toks[p.pos].kind != lexWord && p.toks[p.pos].kind != lexPunct && p.toks[p.pos].kind != lexNumber) {
		return ""
	}
	return p.toks[p.pos].up
}

func (p *stmtParser) accept(tok string) bool {
	if p.peek() == tok {
		p.pos++
		return true
	}
	return false
}

func (p *stmtParser) onOff() (bool, bool) {
	switch {
	case p.accept("ON"):
		return true, true
	case p.accept("OFF"):
		return false, true
	}
	return false, false
}

// tranWord accepts an optional TRAN/TRANSACTION/WORK keyword.
func (p *stmtParser) tranWord() {
	_ = p.accept("TRAN") || p.accept("TRANSACTION") || p.accept("WORK")
}

func (p *stmtParser) statement() (sessionStmt, bool) {
	switch {
	case p.accept("SET"):
		return p.set()
	case p.accept("BEGIN"):
		if p.accept("TRAN") || p.accept("TRANSACTION") {
			return sessionStmt{kind: stmtBegin}, true
		}
	case p.accept("COMMIT"):
		p.tranWord()
		return sessionStmt{kind: stmtCommit}, true
	case p.accept("ROLLBACK"):
		p.tranWord()
		return sessionStmt{kind: stmtRollback}, true
	case p.accept("IF"):
		if p.accept("@@TRANCOUNT") && p.accept(">") && p.accept("0") && p.accept("ROLLBACK") {
			p.tranWord()
			return sessionStmt{kind: stmtRollbackIfTran}, true
		}
	case p.accept("USE"):
		if p.done() {
			return sessionStmt{}, false
		}
		t := p.toks[p.pos]
		if t.kind != lexDelimited && (t.kind != lexWord || !isWord(t.text)) {
			return sessionStmt{}, false
		}
		p.pos++
		return sessionStmt{kind: stmtUse, name: t.text}, true
	case p.accept("SELECT"):
		if p.accept("1") {
			return sessionStmt{kind: stmtSelectOne}, true
		}
	}
	return sessionStmt{}, false
}

func isWord(s string) bool {
	r := []rune(s)
	return len(r) > 0 && (r[0] == '_' || unicode.IsLetter(r[0]))
}

func (p *stmtParser) set() (sessionStmt, bool) {
	if opt := p.peek(); isShowplanOption(opt) {
		p.pos++
		on, ok := p.onOff()
		return sessionStmt{kind: stmtShowplan, name: opt, on: on}, ok
	}
	if p.accept("STATISTICS") {
		if !p.accept("XML") {
			return sessionStmt{}, false
		}
		on, ok := p.onOff()
		return sessionStmt{kind: stmtStatisticsXML, on: on}, ok
	}
	if kind, ok := otherSetOptions[p.peek()]; ok {
		p.pos++
		st := sessionStmt{kind: stmtSetOther}
		switch kind {
		case "onoff":
			st.on, ok = p.onOff()
			return st, ok
		case "value":
			if p.done() || (p.toks[p.pos].kind != lexWord && p.toks[p.pos].kind != lexNumber && p.toks[p.pos].kind != lexString) {
				return sessionStmt{}, false
			}
			p.pos++
			return st, true
		}
		if !p.accept("ISOLATION") || !p.accept("LEVEL") {
			return sessionStmt{}, false
		}
		switch {
		case p.accept("READ"):
			ok = p.accept("COMMITTED") || p.accept("UNCOMMITTED")
		case p.accept("REPEATABLE"):
			ok = p.accept("READ")
		default:
			ok = p.accept("SNAPSHOT") || p.accept("SERIALIZABLE")
		}
		return st, ok
	}
	st := sessionStmt{kind: stmtSet}
	for {
		name := p.peek()
		if !sessionOptionNames[name] {
			return sessionStmt{}, false
		}
		p.pos++
		st.options = append(st.options, name)
		if !p.accept(",") {
			break
		}
	}
	on, ok := p.onOff()
	st.on = on
	return st, ok
}

package tdstest

import (
	"encoding/xml"
	"fmt"
	"strings"
)

// batch answers the SQL batches the server runs itself, writing the reply
// to w: SET SHOWPLAN_* (alone, or error 1067), batches made only of session
// statements, and under SHOWPLAN_XML ON batches of session statements (the
// SET and USE statements run, the others return their plan). Otherwise
// answered is false, the handler answers, and after is the session state
// the batch leaves behind: its SET statements run whatever else it holds.
func (c *conn) batch(w *writer, req *Request) (answered bool, after Session) {
	after = c.sess
	toks, ok := lexBatch(req.SQL)
	if !ok {
		return false, after
	}
	server := c.srv.cfg.ServerName
	if opt, found := showplanSet(toks); found {
		if !showplanAlone(toks) {
			w.message(tokenError, ErrShowplanNotAlone(), server)
			w.done(tokenDone, doneError, CmdNone, 0)
			return true, after
		}
		st, _ := (&stmtParser{toks: toks[skipSemicolons(toks):], pos: 1}).set()
		if opt != "SHOWPLAN_XML" && st.on {
			c.srv.markUnhandled(req.Seq)
			w.message(tokenError, errShowplanNotEmulated(opt), server)
			w.done(tokenDone, doneError, CmdNone, 0)
			return true, after
		}
	}
	stmts, ok := parseSessionTokens(req.SQL, toks)
	if !ok {
		for _, st := range embeddedSets(toks) {
			applySet(&after, st)
		}
		return false, after
	}
	if c.sess.ShowplanXML && !(len(stmts) == 1 && stmts[0].kind == stmtShowplan) {
		c.showplanSessionBatch(w, stmts)
		return true, c.sess
	}
	c.sessionBatch(w, stmts)
	return true, c.sess
}

func skipSemicolons(toks []lexToken) int {
	i := 0
	for i < len(toks) && toks[i].up == ";" {
		i++
	}
	return i
}

// applySet applies a SET statement to a session.
func applySet(s *Session, st sessionStmt) {
	switch st.kind {
	case stmtSet:
		for _, name := range st.options {
			switch name {
			case "NOCOUNT":
				s.NoCount = st.on
			case "XACT_ABORT":
				s.XactAbort = st.on
			default:
				*s.Options.field(name) = st.on
			}
		}
	case stmtShowplan:
		if st.name == "SHOWPLAN_XML" {
			s.ShowplanXML = st.on
		}
	case stmtStatisticsXML:
		s.StatisticsXML = st.on
	}
}

// sessionBatch runs a batch made only of session statements.
func (c *conn) sessionBatch(w *writer, stmts []sessionStmt) {
	server := c.srv.cfg.ServerName
	s := c.sess
	var dones doneList
	fail := func(m Message) {
		w.message(tokenError, m, server)
		dones.add(w, doneError, CmdNone, 0, s.TranCount > 0)
	}
	for _, st := range stmts {
		cmd := CmdSetOff
		if st.on {
			cmd = CmdSetOn
		}
		switch st.kind {
		case stmtSet, stmtShowplan, stmtStatisticsXML, stmtSetOther:
			applySet(&s, st)
			dones.add(w, 0, cmd, 0, s.TranCount > 0)
		case stmtBegin:
			c.begin(w, &s)
			dones.add(w, 0, CmdBeginTran, 0, true)
		case stmtCommit:
			if s.TranCount == 0 {
				fail(errNoBeginCommit())
				continue
			}
			c.commit(w, &s)
			dones.add(w, 0, CmdEndTran, 0, s.TranCount > 0)
		case stmtRollback:
			if s.TranCount == 0 {
				fail(errNoBeginRollback())
				continue
			}
			c.rollback(w, &s)
			dones.add(w, 0, CmdAbortTran, 0, false)
		case stmtRollbackIfTran:
			if s.TranCount > 0 {
				c.rollback(w, &s)
			}
			dones.add(w, 0, CmdAbortTran, 0, false)
		case stmtUse:
			if !c.use(w, &s, st.name) {
				fail(errNoDatabase(st.name))
				continue
			}
			dones.add(w, 0, CmdNone, 0, s.TranCount > 0)
		case stmtSelectOne:
			rs := NewResultSet(Int("").NotNull().Expression()).Row(1)
			rs.writeMetadata(w)
			_ = rs.writeRows(w)
			status := doneCount
			if s.NoCount {
				status = 0
			}
			dones.add(w, status, CmdSelect, 1, s.TranCount > 0)
		}
	}
	dones.finish(w)
	c.setSession(s)
}

// use switches database, writing the ENVCHANGE and INFO 5701; false if the
// database does not exist.
func (c *conn) use(w *writer, s *Session, db string) bool {
	if !c.srv.databaseExists(db) {
		return false
	}
	w.envChangeStrings(envDatabase, db, s.Database)
	w.message(tokenInfo, changedDatabase(db), c.srv.cfg.ServerName)
	s.Database = db
	return true
}

// showplanSessionBatch answers a batch of session statements under
// SHOWPLAN_XML ON as SQL Server does: SET and USE run, nothing else does
// (no row for SELECT 1, no transaction for BEGIN TRAN), and the batch
// returns one showplan document listing its statements.
func (c *conn) showplanSessionBatch(w *writer, stmts []sessionStmt) {
	s := c.sess
	for _, st := range stmts {
		switch st.kind {
		case stmtSet, stmtShowplan, stmtStatisticsXML:
			applySet(&s, st)
		case stmtUse:
			if !c.use(w, &s, st.name) {
				w.message(tokenError, errNoDatabase(st.name), c.srv.cfg.ServerName)
				w.done(tokenDone, doneError, CmdNone, 0)
				c.setSession(s)
				return
			}
		}
	}
	rs := ShowplanResultSet(sessionPlan(stmts))
	rs.writeMetadata(w)
	_ = rs.writeRows(w)
	status := doneCount
	if s.NoCount {
		status = 0
	}
	inXact := uint16(0)
	if s.TranCount > 0 {
		inXact = doneInXact
	}
	w.done(tokenDone, status|inXact, CmdSelect, 1)
	c.setSession(s)
}

// sessionPlan is the showplan document of a batch of session statements:
// one StmtSimple per statement, with the StatementType SQL Server gives it.
func sessionPlan(stmts []sessionStmt) string {
	var b strings.Builder
	b.WriteString(`<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.564" Build="16.0.4237.2">`)
	b.WriteString(`<BatchSequence><Batch><Statements>`)
	for i, st := range stmts {
		var text strings.Builder
		_ = xml.EscapeText(&text, []byte(st.text))
		fmt.Fprintf(&b, `<StmtSimple StatementText="%s" StatementId="%d" StatementCompId="%d" StatementType="%s" RetrievedFromCache="true"/>`,
			text.String(), i+1, i+1, statementType(st.kind))
	}
	b.WriteString(`</Statements></Batch></BatchSequence></ShowPlanXML>`)
	return b.String()
}

func statementType(k stmtKind) string {
	switch k {
	case stmtBegin:
		return "BEGIN TRANSACTION"
	case stmtCommit:
		return "COMMIT TRANSACTION"
	case stmtRollback:
		return "ROLLBACK TRANSACTION"
	case stmtRollbackIfTran:
		return "COND"
	case stmtUse:
		return "USE DATABASE"
	case stmtSelectOne:
		return "SELECT WITHOUT QUERY"
	}
	return "SET ON/OFF"
}

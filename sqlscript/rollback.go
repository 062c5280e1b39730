package sqlscript

import (
	"strings"
)

// serverObjects are objects that live at server level (or are not
// transactional) and so must not be created, altered or dropped by a
// statement that is meant to be rolled back.
var serverObjects = map[string]string{
	"DATABASE":      "database",
	"LOGIN":         "login",
	"SERVER":        "server-level object",
	"ENDPOINT":      "endpoint",
	"AVAILABILITY":  "availability group",
	"EVENT":         "event session",
	"RESOURCE":      "Resource Governor object",
	"WORKLOAD":      "Resource Governor workload group",
	"CREDENTIAL":    "credential",
	"FULLTEXT":      "full-text catalog or index",
	"CRYPTOGRAPHIC": "cryptographic provider",
}

// NotRollbackable reports whether the statement must not be run inside the
// always-rolled-back transaction used to capture an actual plan, and why:
// it cannot run in a transaction (BACKUP, RESTORE, database and full-text
// DDL, ...), is not undone by a rollback (KILL, SHUTDOWN, RECONFIGURE,
// server objects), controls the transaction itself (BEGIN TRAN, COMMIT,
// ROLLBACK, SAVE TRAN), or executes code that cannot be checked here
// (extended procedures, sp_configure, dynamic SQL from a variable).
// Ordinary table DDL and DML are transactional and allowed.
func (s *Statement) NotRollbackable() (reason string, bad bool) {
	return notRollbackable(code(lex(s.Text)), 0)
}

func notRollbackable(toks []token, nesting int) (string, bool) {
	// look at every statement keyword, so that IF ... BACKUP and
	// BEGIN ... COMMIT inside a single statement text are found too
	for _, sp := range splitStatements(toks) {
		if r, bad := statementNotRollbackable(toks[sp.first:sp.last+1], nesting); bad {
			return r, true
		}
	}
	return "", false
}

func statementNotRollbackable(toks []token, nesting int) (string, bool) {
	word := func(i int) string {
		if i < len(toks) {
			return toks[i].Upper()
		}
		return ""
	}
	kw := word(0)
	switch kw {
	case "BACKUP":
		return "BACKUP is not allowed inside a transaction", true
	case "RESTORE":
		return "RESTORE is not allowed inside a transaction", true
	case "DBCC":
		return "DBCC commands are not transactional and some cannot run inside a transaction", true
	case "KILL":
		return "KILL ends another session and cannot be rolled back", true
	case "SHUTDOWN":
		return "SHUTDOWN stops the server", true
	case "RECONFIGURE":
		return "RECONFIGURE is not allowed inside a transaction", true
	case "CHECKPOINT":
		return "CHECKPOINT is not transactional", true
	case "COMMIT", "ROLLBACK":
		return kw + " inside the script would end the capture transaction", true
	case "SAVE":
		return "SAVE TRANSACTION inside the script interferes with the capture transaction", true
	case "BEGIN":
		switch word(1) {
		case "TRAN", "TRANSACTION", "DISTRIBUTED":
			return "BEGIN TRANSACTION inside the script interferes with the capture transaction", true
		}
	case "SET":
		if word(1) == "IMPLICIT_TRANSACTIONS" {
			return "SET IMPLICIT_TRANSACTIONS changes transaction handling for the capture", true
		}
	case "CREATE", "ALTER", "DROP":
		i := 1
		if kw == "CREATE" && word(1) == "OR" && word(2) == "ALTER" {
			i = 3
		}
		obj := word(i)
		if obj == "DATABASE" && word(i+1) == "SCOPED" && word(i+2) == "CREDENTIAL" {
			break // a database-scoped credential is an ordinary database object
		}
		if obj == "DATABASE" && (word(i+1) == "AUDIT" || word(i+1) == "ENCRYPTION") {
			return kw + " DATABASE " + word(i+1) + " is not allowed inside a user transaction", true
		}
		if what, ok := serverObjects[obj]; ok {
			return kw + " " + obj + " (" + what + ") is not allowed inside a transaction or is not undone by a rollback", true
		}
		if kw == "ALTER" && obj == "INDEX" && hasWords(toks, "RESUMABLE") {
			return "a resumable index operation cannot run inside a user transaction", true
		}
	case "EXEC", "EXECUTE":
		return execNotRollbackable(toks, nesting)
	}
	// INSERT ... EXEC: check the executed code as well
	for i, t := range toks {
		if i > 0 && (t.IsWord("EXEC") || t.IsWord("EXECUTE")) && !toks[i-1].IsOp(",") && !toks[i-1].IsWord("GRANT") &&
			!toks[i-1].IsWord("DENY") && !toks[i-1].IsWord("REVOKE") && !toks[i-1].IsWord("WITH") {
			return execNotRollbackable(toks[i:], nesting)
		}
	}
	return "", false
}

// execNotRollbackable checks EXEC[UTE] ...: extended procedures and
// sp_configure are refused, EXEC of a string or sp_executesql with a literal
// statement is checked recursively, and dynamic SQL held in a variable is
// refused because it cannot be checked.
func execNotRollbackable(toks []token, nesting int) (string, bool) {
	i := 1
	if len(toks) > 2 && toks[1].Kind == tokVariable && toks[2].IsOp("=") {
		i = 3 // EXEC @rc = proc
	}
	if i >= len(toks) {
		return "", false
	}
	if toks[i].IsOp("(") { // EXEC ('...' + ...)
		var sql strings.Builder
		for _, t := range toks[i+1:] {
			switch {
			case t.IsOp(")"):
				return checkDynamic(sql.String(), nesting)
			case t.Kind == tokString || t.Kind == tokNString:
				sql.WriteString(unquote(t))
			case t.IsOp("+"):
			default:
				return "EXEC of dynamic SQL built from variables or expressions cannot be checked", true
			}
		}
		return "", false
	}
	if toks[i].Kind == tokVariable {
		return "EXEC of a procedure named by a variable cannot be checked", true
	}
	parts, next, isExecSQL := procedureName(toks, i)
	if len(parts) == 0 {
		return "", false
	}
	name := parts[len(parts)-1]
	switch {
	case strings.HasPrefix(name, "xp_"):
		return "extended procedure " + name + " acts outside the transaction", true
	case name == "sp_configure":
		return "sp_configure changes server configuration", true
	case isExecSQL:
		if next < len(toks) {
			s := toks[next]
			if s.Kind == tokVariable && next+2 < len(toks) && toks[next+1].IsOp("=") { // @stmt = N'...'
				s = toks[next+2]
			}
			if s.Kind == tokString || s.Kind == tokNString {
				return checkDynamic(unquote(s), nesting)
			}
			return "sp_executesql with a statement held in a variable cannot be checked", true
		}
	}
	return "", false
}

func checkDynamic(sql string, nesting int) (string, bool) {
	if nesting >= 8 {
		return "dynamic SQL nested too deeply to check", true
	}
	if r, bad := notRollbackable(code(lex(sql)), nesting+1); bad {
		return "dynamic SQL: " + r, true
	}
	return "", false
}

func hasWords(toks []token, w string) bool {
	for _, t := range toks {
		if t.IsWord(w) {
			return true
		}
	}
	return false
}

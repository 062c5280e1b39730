package rules

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
)

// SetOptions reports session options under which filtered indexes and
// indexed views cannot be used, and writes to such tables fail.
var SetOptions = &Rule{
	Code:     "PL105",
	Name:     "set-options",
	Severity: Error,
	Summary:  "The statement was compiled with SET options that disable filtered indexes",
	Doc: Doc{
		Problem: "Filtered indexes, indexed views and indexes on computed columns need ANSI_NULLS, ANSI_PADDING, ANSI_WARNINGS, " +
			"CONCAT_NULL_YIELDS_NULL, QUOTED_IDENTIFIER and ARITHABORT ON and NUMERIC_ROUNDABORT OFF. Under other options " +
			"the optimizer ignores those indexes for every statement, and INSERT, UPDATE, DELETE or MERGE that touch such a " +
			"table fail with error 1934 (\"... failed because the following SET options have incorrect settings\"). The " +
			"classic case: an index works in an administrator's session but the application's writes fail (sqlcmd without " +
			"-I runs QUOTED_IDENTIFIER OFF; DB-Library clients run everything OFF).",
		Evidence: "`StmtSimple/StatementSetOptions` carries the seven options as booleans. ARITHABORT OFF alone is what " +
			"ADO.NET, JDBC, ODBC and go-mssqldb send; it is harmless while ANSI_WARNINGS is ON (that implies ARITHABORT at " +
			"compatibility level 90 and above), so planlint does not flag it — but it does give the application a " +
			"different plan-cache entry than SSMS (ARITHABORT ON), which `planlint compare` points out. The statements of " +
			"one batch or module compiled with the same options give one finding, on the first of them, with the count. " +
			"A write is an error when the plan maintains a filtered index or indexed view (`Object/@Filtered`, " +
			"`IndexKind=\"ViewClustered\"`; a write plan lists every index it maintains) or the catalog shows one on the " +
			"written table; table variables cannot have filtered indexes. A statement using a table with a filtered index, " +
			"indexed view or index on a computed column (in the plan or the catalog) is a warning, since the optimizer must " +
			"ignore those indexes; without any of them the finding is info. The module is the procedure an actual plan's " +
			"`StoredProc` runs, or the `CREATE PROCEDURE/FUNCTION/TRIGGER` heading a cached plan's batch.",
		Example: "```xml\n<StatementSetOptions ANSI_NULLS=\"1\" ANSI_PADDING=\"1\" ANSI_WARNINGS=\"0\" ARITHABORT=\"0\"\n" +
			"  CONCAT_NULL_YIELDS_NULL=\"1\" NUMERIC_ROUNDABORT=\"0\" QUOTED_IDENTIFIER=\"1\"/>\n```",
		Fix: "For an ad hoc batch, set the options on the connection (`SET ANSI_WARNINGS ON; SET QUOTED_IDENTIFIER ON; ...`) or " +
			"fix the client driver settings (sqlcmd needs `-I` for QUOTED_IDENTIFIER ON). Inside a stored procedure, " +
			"function or trigger, QUOTED_IDENTIFIER and ANSI_NULLS are stored with the module when it is created, so a SET " +
			"on the connection changes nothing: re-create the module with `SET QUOTED_IDENTIFIER ON; SET ANSI_NULLS ON;` " +
			"before its `CREATE OR ALTER`. The other options come from the calling session or a SET at the top of the body.",
		FalseAlarms: "Statements on tables without filtered indexes, indexed views or computed-column indexes lose nothing; " +
			"the finding is then info (an index added later would be ignored, and writes to its table would fail).",
	},
	Run:   runSetOptions,
	facts: setOptionsFactsOf,
}

// badSetOptions lists the options with a value that disables filtered
// indexes. ARITHABORT OFF counts only when ANSI_WARNINGS is OFF too.
func badSetOptions(s *plan.SetOptions) []string {
	if s == nil {
		return nil
	}
	var bad []string
	off := func(v *bool) bool { return v != nil && !*v }
	for _, o := range s.List() {
		switch o.Name {
		case "NUMERIC_ROUNDABORT":
			if o.Value != nil && *o.Value {
				bad = append(bad, o.Name+" ON")
			}
		case "ARITHABORT":
			if off(o.Value) && off(s.ANSIWarnings) {
				bad = append(bad, o.Name+" OFF")
			}
		default:
			if off(o.Value) {
				bad = append(bad, o.Name+" OFF")
			}
		}
	}
	return bad
}

// moduleHeader matches the CREATE or ALTER of a module at the start of a
// statement's text, after comments: cached plans of a procedure carry it on
// the first statement.
var moduleHeader = regexp.MustCompile(`(?is)^(?:\s+|--[^\n]*\n|/\*.*?\*/)*(?:CREATE|ALTER)\s+(?:OR\s+ALTER\s+)?(PROC|PROCEDURE|FUNCTION|TRIGGER)\s+((?:\[[^\]]+\]|[^\s(.;]+)(?:\s*\.\s*(?:\[[^\]]+\]|[^\s(.;]+))*)`)

// moduleOfText names the module whose CREATE or ALTER starts text.
func moduleOfText(text string) (name, kind string) {
	m := moduleHeader.FindStringSubmatch(text)
	if m == nil {
		return "", ""
	}
	kind = strings.ToUpper(m[1])
	if kind == "PROC" {
		kind = "PROCEDURE"
	}
	return strings.Join(strings.Fields(m[2]), ""), kind
}

// statementModule names the procedure, function or trigger a statement
// belongs to: the module an EXEC in an actual plan runs (StoredProc), or the
// module whose CREATE heads the batch of a cached plan; "" for none.
func statementModule(p *Pass, s *plan.Statement) (name, kind string) {
	for child, a := s, s.Parent; a != nil; child, a = a, a.Parent {
		for i, c := range a.Children {
			if c != child || i >= len(a.ChildBranch) {
				continue
			}
			switch a.ChildBranch[i] {
			case "proc":
				return a.ProcName, "PROCEDURE"
			case "udf":
				return a.ProcName, "FUNCTION"
			}
		}
	}
	return p.batchModule(s.Batch)
}

// setOptionsGroupKey groups the statements of a batch and module compiled
// with the same bad options.
func setOptionsGroupKey(batch int, f setOptionsFacts) string {
	return fmt.Sprintf("%d\x00%s\x00%s", batch, f.key, f.mod)
}

// setOptionsFacts is what a statement compiled with bad SET options shows
// the rule: the options, its module and what it touches that they break.
type setOptionsFacts struct {
	bad       []string
	key       string
	mod, kind string
	exposure  setOptionsExposure
}

func setOptionsFactsOf(p *Pass) any {
	bad := badSetOptions(p.Statement.SetOptions)
	if len(bad) == 0 {
		return nil
	}
	mod, kind := statementModule(p, p.Statement)
	return setOptionsFacts{bad: bad, key: strings.Join(bad, ","), mod: mod, kind: kind,
		exposure: exposure(p.Catalog, []*plan.Statement{p.Statement})}
}

// tableVariable reports a table variable, which cannot have a filtered
// index.
func tableVariable(o plan.ObjectRef) bool { return strings.HasPrefix(o.Table, "@") }

// setOptionsExposure is what a group of statements touches that the
// options break: filtered indexes maintained by writes (error 1934), and
// filtered indexes, indexed views and computed-column indexes on the tables
// they use (which the optimizer must ignore).
type setOptionsExposure struct {
	writes          []string // tables written
	failingWrites   []string // writes to tables with a filtered index or indexed view
	filteredTargets []string // those filtered indexes / indexed views
	unusable        []string // filtered indexes, indexed views, computed-column indexes on tables used
}

func exposure(cat *catalog.Catalog, stmts []*plan.Statement) setOptionsExposure {
	var e setOptionsExposure
	for _, s := range stmts {
		for _, q := range s.Plans() {
			for _, n := range q.Nodes {
				write := isWrite(n)
				for _, o := range n.Objects() {
					if o.Table == "" {
						continue
					}
					name := o.TableName(false)
					var special []string
					if (o.Filtered || strings.HasPrefix(o.IndexKind, "View")) && o.Index != "" && !tableVariable(o) {
						special = append(special, objectName(o))
					}
					if t := findTable(cat, o); t != nil && !tableVariable(o) {
						for _, ix := range t.FilteredIndexes() {
							special = append(special, t.Schema+"."+t.Name+"."+ix.Name)
						}
						for _, ix := range t.Indexes {
							for _, c := range indexColumnNames(ix) {
								if col := t.FindColumn(c); col != nil && col.Computed {
									e.unusable = append(e.unusable, t.Schema+"."+t.Name+"."+ix.Name)
								}
							}
						}
					}
					e.unusable = append(e.unusable, special...)
					if write {
						e.writes = append(e.writes, name)
						if len(special) > 0 {
							e.failingWrites = append(e.failingWrites, name)
							e.filteredTargets = append(e.filteredTargets, special...)
						}
					}
				}
			}
		}
	}
	e.unique()
	return e
}

// add appends the exposure of another statement.
func (e *setOptionsExposure) add(o setOptionsExposure) {
	e.writes = append(e.writes, o.writes...)
	e.failingWrites = append(e.failingWrites, o.failingWrites...)
	e.filteredTargets = append(e.filteredTargets, o.filteredTargets...)
	e.unusable = append(e.unusable, o.unusable...)
}

// unique drops repeated names, keeping the first.
func (e *setOptionsExposure) unique() {
	e.writes = uniqueFold(e.writes)
	e.failingWrites = uniqueFold(e.failingWrites)
	e.filteredTargets = uniqueFold(e.filteredTargets)
	e.unusable = uniqueFold(e.unusable)
}

func indexColumnNames(ix *catalog.Index) []string {
	var out []string
	for _, k := range ix.Keys {
		out = append(out, k.Name)
	}
	return append(out, ix.Includes...)
}

func runSetOptions(p *Pass) {
	if len(badSetOptions(p.Statement.SetOptions)) == 0 {
		return
	}
	p.across(reportSetOptions)
}

// reportSetOptions reports the statements of the batch and module compiled
// with the same bad options once, on the first of them.
func reportSetOptions(p *Pass, fs *facts) {
	byOrdinal := fs.index("ordinal", func(all []fact) any {
		m := map[int]setOptionsFacts{}
		for _, f := range all {
			m[f.Ordinal] = f.Value.(setOptionsFacts)
		}
		return m
	}).(map[int]setOptionsFacts)
	groups := fs.index("group", func(all []fact) any {
		m := map[string][]fact{}
		for _, f := range all {
			k := setOptionsGroupKey(f.Batch, f.Value.(setOptionsFacts))
			m[k] = append(m[k], f)
		}
		return m
	}).(map[string][]fact)
	self := byOrdinal[p.Statement.Ordinal]
	group := groups[setOptionsGroupKey(p.Statement.Batch, self)]
	if len(group) == 0 || group[0].Ordinal != p.Statement.Ordinal {
		return // reported once, on the group's first statement
	}
	var e setOptionsExposure
	for _, f := range group {
		e.add(f.Value.(setOptionsFacts).exposure)
	}
	e.unique()
	bad, mod, kind := self.bad, self.mod, self.kind
	ev := map[string]any{"options": bad, "statements": len(group)}
	var ids []int
	for _, s := range group {
		ids = append(ids, s.ID)
	}
	ev["statement_ids"] = ids
	where := fmt.Sprintf("%d statements of batch %d", len(group), p.Statement.Batch)
	if len(group) == 1 {
		where = "the statement"
	}
	if mod != "" {
		ev["module"] = mod
		where = fmt.Sprintf("%d %s of %s %s", len(group), plural(len(group), "statement"), strings.ToLower(kind), mod)
	}
	if len(e.writes) > 0 {
		ev["writes"] = e.writes
	}
	sev := Info
	var msg string
	switch {
	case len(e.failingWrites) > 0:
		sev = Error
		ev["filtered_indexes"] = e.filteredTargets
		msg = fmt.Sprintf("%s %s compiled with %s while writing to %s, which has filtered or indexed-view %s %s: the write fails with error 1934",
			where, wereWas(len(group)), quoteList(bad), quoteList(e.failingWrites), plural(len(e.filteredTargets), "index"), quoteList(e.filteredTargets))
	case len(e.unusable) > 0:
		sev = Warning
		ev["unusable_indexes"] = e.unusable
		msg = fmt.Sprintf("%s %s compiled with %s: the optimizer must ignore %s (filtered, indexed-view or computed-column %s)",
			where, wereWas(len(group)), quoteList(bad), quoteList(e.unusable), plural(len(e.unusable), "index"))
	default:
		msg = fmt.Sprintf("%s %s compiled with %s; no filtered index, indexed view or computed-column index is in the plan",
			where, wereWas(len(group)), quoteList(bad))
		if p.Catalog != nil {
			msg += " or on the tables it uses"
		}
		msg += ", so nothing is lost here, but such an index added later would be ignored, and writes to its table would fail with error 1934"
	}
	p.Report(Finding{Severity: sev, Message: msg, Evidence: ev, Fix: setOptionsFix(bad, mod, kind)})
}

func wereWas(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// setOptionsFix says where to set each option: QUOTED_IDENTIFIER and
// ANSI_NULLS of a module are fixed when it is created; the others come from
// the session.
func setOptionsFix(bad []string, mod, kind string) string {
	var atCreate, session []string
	for _, b := range bad {
		name := strings.Fields(b)[0]
		value := "ON"
		if strings.HasSuffix(b, "ON") {
			value = "OFF"
		}
		set := "SET " + name + " " + value
		if mod != "" && (name == "QUOTED_IDENTIFIER" || name == "ANSI_NULLS") {
			atCreate = append(atCreate, set)
		} else {
			session = append(session, set)
		}
	}
	var parts []string
	if len(atCreate) > 0 {
		parts = append(parts, fmt.Sprintf("re-create %s %s with %s in the script that creates it (%s stores the setting at CREATE time, "+
			"so a SET on the connection does not change it): %s; then CREATE OR ALTER %s %s ...",
			strings.ToLower(kind), mod, quoteList(atCreate), strings.ToLower(kind), strings.Join(atCreate, "; "), kind, mod))
	}
	if len(session) > 0 {
		where := "on the connection (or in the client driver settings) before running the statement"
		if mod != "" {
			where = "on the connection that calls " + mod + ", or at the top of its body"
		}
		parts = append(parts, strings.Join(session, "; ")+" "+where)
	}
	return strings.Join(parts, "; and ")
}

func init() { register(SetOptions) }

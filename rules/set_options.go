package rules

import (
	"fmt"
	"strings"

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
			"different plan-cache entry than SSMS (ARITHABORT ON), which `planlint compare` points out. A write is an " +
			"error when the catalog shows a filtered index on the written table (or the plan maintains one); without " +
			"catalog facts a write is a warning.",
		Example: "```xml\n<StatementSetOptions ANSI_NULLS=\"1\" ANSI_PADDING=\"1\" ANSI_WARNINGS=\"0\" ARITHABORT=\"0\"\n" +
			"  CONCAT_NULL_YIELDS_NULL=\"1\" NUMERIC_ROUNDABORT=\"0\" QUOTED_IDENTIFIER=\"1\"/>\n```",
		Fix: "Set the options on the connection (`SET ANSI_WARNINGS ON; SET QUOTED_IDENTIFIER ON; ...`) or fix the client " +
			"driver settings; for stored procedures, QUOTED_IDENTIFIER and ANSI_NULLS are fixed when the procedure is " +
			"created, so re-create it with the right options.",
		FalseAlarms: "Statements on tables without filtered indexes, indexed views or computed-column indexes are unaffected; " +
			"the finding is then a portability warning.",
	},
	Run: runSetOptions,
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

func runSetOptions(p *Pass) {
	bad := badSetOptions(p.Statement.SetOptions)
	if len(bad) == 0 {
		return
	}
	ev := map[string]any{"options": bad}
	var writes []string
	var filteredTargets []string
	for _, q := range p.Plans() {
		for _, n := range q.Nodes {
			if !isWrite(n) {
				continue
			}
			for _, o := range n.Objects() {
				name := o.TableName(false)
				if !containsFold(writes, name) {
					writes = append(writes, name)
				}
				if o.Filtered && o.Index != "" {
					filteredTargets = append(filteredTargets, objectName(o))
				}
				if t := findTable(p.Catalog, o); t != nil {
					for _, ix := range t.FilteredIndexes() {
						filteredTargets = append(filteredTargets, t.Schema+"."+t.Name+"."+ix.Name)
					}
				}
			}
		}
	}
	filteredTargets = uniqueFold(filteredTargets)
	sev := Warning
	msg := fmt.Sprintf("compiled with %s: filtered indexes, indexed views and indexes on computed columns cannot be used", quoteList(bad))
	switch {
	case len(filteredTargets) > 0:
		sev = Error
		ev["filtered_indexes"] = filteredTargets
		msg = fmt.Sprintf("compiled with %s while writing to %s, which has filtered %s %s: the write fails with error 1934",
			quoteList(bad), quoteList(writes), plural(len(filteredTargets), "index"), quoteList(filteredTargets))
	case len(writes) > 0:
		msg += fmt.Sprintf("; the write to %s fails with error 1934 if the table has a filtered index or an indexed view", quoteList(writes))
	}
	if len(writes) > 0 {
		ev["writes"] = writes
	}
	names := make([]string, len(bad))
	for i, b := range bad {
		names[i] = strings.Fields(b)[0]
		if strings.HasSuffix(b, "OFF") {
			names[i] = "SET " + names[i] + " ON"
		} else {
			names[i] = "SET " + names[i] + " OFF"
		}
	}
	p.Report(Finding{Severity: sev, Message: msg, Evidence: ev,
		Fix: strings.Join(names, "; ") + " on the connection (or in the client driver settings) before running the statement"})
}

func init() { register(SetOptions) }

package rules

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
)

// MissingIndex reports the plan's MissingIndexGroup requests with a ready
// CREATE INDEX, once per file for identical requests.
var MissingIndex = &Rule{
	Code:     "PL304",
	Name:     "missing-index",
	Severity: Error,
	Summary:  "SQL Server asked for an index while compiling the statement",
	After:    []string{"residual-predicate-scan", "row-goal", "nested-loops-repetition", "eager-index-spool"},
	Params: []Param{
		{"low_impact", 20, "requests with a lower estimated impact (percent) are info"},
		{"min_cost", 1, "in an estimated plan, a statement estimated to cost less than this keeps its requests at info"},
		{"min_elapsed_ms", 100, "in an actual plan, a statement that took less than this (ms, elapsed and CPU) keeps its requests at info"},
		{"error_impact", 80, "impact (percent) at or above which a request on a long-running statement is an error"},
		{"error_elapsed_ms", 1000, "an actual time (ms, elapsed or CPU) at or above which a high-impact request is an error"},
		{"wide_include", 8, "an INCLUDE list longer than this is called wide and a narrower index is suggested"},
	},
	Doc: Doc{
		Problem: "While optimizing a statement SQL Server noticed that an index it did not have would have made the plan " +
			"cheaper, and wrote the request into the plan. The request is a strong hint, not a design: the optimizer lists " +
			"equality columns in table order, never considers sort order, and asks for every selected column in INCLUDE.",
		Evidence: "`QueryPlan/MissingIndexes/MissingIndexGroup` with its `Impact` (estimated cost reduction, percent) and " +
			"`MissingIndex/ColumnGroup` (`EQUALITY`, `INEQUALITY`, `INCLUDE`). Identical requests in several statements " +
			"of one file are reported once, on the first statement, with the others counted. With catalog facts an existing " +
			"index with the same leading keys is extended instead (`DROP_EXISTING`), and a request the table already " +
			"satisfies is reported as such, without DDL. When `residual-predicate-scan` reports the scan the request is " +
			"about, the request is merged into that finding. Severity: below `low_impact` or on a trivial statement " +
			"(an actual plan that took under `min_elapsed_ms` of elapsed and CPU time, an estimated plan costing under `min_cost`) info; otherwise warning; error when the impact is " +
			"at least `error_impact` and the statement actually ran for `error_elapsed_ms` or more.",
		Example: "```xml\n<MissingIndexGroup Impact=\"98.2\"><MissingIndex Database=\"[Shop]\" Schema=\"[dbo]\" Table=\"[Orders]\">\n" +
			"  <ColumnGroup Usage=\"EQUALITY\"><Column Name=\"[CustomerId]\"/></ColumnGroup>\n" +
			"  <ColumnGroup Usage=\"INCLUDE\"><Column Name=\"[Total]\"/></ColumnGroup></MissingIndex></MissingIndexGroup>\n```\n" +
			"→ `CREATE INDEX IX_Orders_CustomerId ON dbo.Orders (CustomerId) INCLUDE (Total);`",
		Fix: "Review the printed CREATE INDEX: equality columns first (put the most selective, or the one other queries " +
			"also filter on, first), then the inequality column, INCLUDE the rest. Prefer extending an index that already " +
			"has the keys over adding a near-duplicate. For a very wide INCLUDE list consider the narrower index on the " +
			"keys alone and accept key lookups for the few rows it finds.",
		FalseAlarms: "Requests on trivial statements and low-impact requests are info. The optimizer does not weigh the " +
			"cost of maintaining the index on writes, nor the indexes other queries need: check `sys.dm_db_index_usage_stats` " +
			"before adding an index to a write-heavy table.",
		References: []string{"https://learn.microsoft.com/sql/relational-databases/indexes/tune-nonclustered-missing-index-suggestions"},
	},
	Run:   runMissingIndex,
	facts: missingIndexFacts,
}

// missingIndexKey identifies a request: the table and its column groups,
// case-insensitive, equality and include columns as sets.
func missingIndexKey(mi plan.MissingIndex) string {
	set := func(cols []string) string {
		c := make([]string, len(cols))
		for i, s := range cols {
			c[i] = strings.ToLower(s)
		}
		sort.Strings(c)
		return strings.Join(c, ",")
	}
	ineq := make([]string, len(mi.Inequality))
	for i, s := range mi.Inequality {
		ineq[i] = strings.ToLower(s)
	}
	return strings.ToLower(mi.Database+"."+schemaOr(mi.Schema)+"."+mi.Table) + "|" + set(mi.Equality) + "|" + strings.Join(ineq, ",") + "|" + set(mi.Include)
}

// statementRequests lists the distinct requests of a statement's plans.
func statementRequests(s *plan.Statement) []requestAt {
	var out []requestAt
	seen := map[string]bool{}
	for _, q := range s.Plans() {
		for _, g := range q.MissingIndexes {
			for _, mi := range g.Indexes {
				k := missingIndexKey(mi)
				if seen[k] {
					continue
				}
				seen[k] = true
				out = append(out, requestAt{Key: k, Index: mi, Impact: g.Impact, Plan: q})
			}
		}
	}
	return out
}

type requestAt struct {
	Key    string
	Index  plan.MissingIndex
	Impact float64
	Plan   plan.LabeledPlan
}

func runMissingIndex(p *Pass) {
	merged := map[string]bool{}
	for _, f := range p.Prior("residual-predicate-scan") {
		if k, ok := f.Evidence["missing_index_request"].(string); ok {
			merged[k] = true
		}
	}
	proposed := proposedIndexes(p, "row-goal", "nested-loops-repetition", "eager-index-spool")
	for _, r := range statementRequests(p.Statement) {
		keys := append(append([]string(nil), r.Index.Equality...), r.Index.Inequality...)
		if proposed[indexKey(r.Index.Table, keys)] {
			continue // an operator finding already proposes this index, with its time
		}
		if merged[r.Key] || systemObject(r.Index.Database, r.Index.Schema) {
			continue
		}
		m := prepareMissingIndex(p, r)
		p.across(func(p *Pass, fs *facts) {
			others, first := sameRequestElsewhere(p, fs, m.key)
			if first { // else reported on the first statement that carries it
				p.Report(m.finding(others))
			}
		})
	}
}

// missingIndexFacts are the keys of a statement's requests.
func missingIndexFacts(p *Pass) any {
	var keys []string
	for _, r := range statementRequests(p.Statement) {
		keys = append(keys, r.Key)
	}
	if keys == nil {
		return nil
	}
	return keys
}

// proposedIndexes collects the indexes (table and key columns) that the
// given rules' findings on this statement propose.
func proposedIndexes(p *Pass, rules ...string) map[string]bool {
	out := map[string]bool{}
	for _, r := range rules {
		for _, f := range p.Prior(r) {
			table, _ := f.Evidence["table"].(string)
			keys, _ := f.Evidence["key_columns"].([]string)
			if table != "" && len(keys) > 0 {
				out[indexKey(table, keys)] = true
			}
		}
	}
	return out
}

func indexKey(table string, keys []string) string {
	return strings.ToLower(table + "(" + strings.Join(keys, ",") + ")")
}

// sameRequestElsewhere lists the other statements of the file with the
// same request, and whether this statement is the first to carry it.
func sameRequestElsewhere(p *Pass, fs *facts, key string) (others []fact, first bool) {
	type carriers struct {
		facts []fact
		least int // the lowest ordinal among them
	}
	byKey := fs.index("key", func(all []fact) any {
		m := map[string]*carriers{}
		for _, f := range all {
			for _, k := range f.Value.([]string) {
				c := m[k]
				if c == nil {
					c = &carriers{least: f.Ordinal}
					m[k] = c
				}
				c.facts = append(c.facts, f)
				c.least = min(c.least, f.Ordinal)
			}
		}
		return m
	}).(map[string]*carriers)
	c := byKey[key]
	if c == nil {
		return nil, true
	}
	if c.least < p.Statement.Ordinal {
		return nil, false
	}
	for _, f := range c.facts {
		if f.Ordinal != p.Statement.Ordinal {
			others = append(others, f)
		}
	}
	return others, true
}

// missingIndexReport is a request's finding but for the other statements
// that repeat it, which only the whole file tells.
type missingIndexReport struct {
	key        string
	head, tail string // the message before and after the repeats
	f          Finding
}

// finding completes the report with the statements that repeat the request.
func (m missingIndexReport) finding(others []fact) Finding {
	f := m.f
	f.Evidence = make(map[string]any, len(m.f.Evidence)+1)
	for k, v := range m.f.Evidence {
		f.Evidence[k] = v
	}
	f.Message = m.head
	if len(others) > 0 {
		var ids []string
		var ords []int
		for _, s := range others {
			ids = append(ids, strconv.Itoa(s.ID))
			ords = append(ords, s.Ordinal)
		}
		f.Evidence["also_requested_by_statements"] = ords
		f.Message += fmt.Sprintf("; the same request appears in %d other %s of this file (statement %s)", len(others), plural(len(others), "statement"), strings.Join(ids, ", "))
	}
	f.Message += m.tail
	return f
}

func prepareMissingIndex(p *Pass, r requestAt) missingIndexReport {
	mi := r.Index
	mi.Table = tempTableName(mi.Table)
	o := plan.ObjectRef{Database: mi.Database, Schema: mi.Schema, Table: mi.Table}
	keys := append(append([]string{}, mi.Equality...), mi.Inequality...)
	ev := map[string]any{
		"impact":             round(r.Impact, 1),
		"object":             objectEvidence(o),
		"equality_columns":   append([]string{}, mi.Equality...),
		"inequality_columns": append([]string{}, mi.Inequality...),
	}
	if r.Plan.Label != "" {
		ev["cursor_operation"] = r.Plan.Label
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SQL Server's missing-index request on %s (impact %s%%): ", o.TableName(false), trimFloat(r.Impact))
	var groups []string
	if len(mi.Equality) > 0 {
		groups = append(groups, "equality "+quoteList(mi.Equality))
	}
	if len(mi.Inequality) > 0 {
		groups = append(groups, "inequality "+quoteList(mi.Inequality))
	}
	if len(mi.Include) > 0 {
		groups = append(groups, fmt.Sprintf("include %d %s", len(mi.Include), plural(len(mi.Include), "column")))
	}
	b.WriteString(strings.Join(groups, "; "))
	m := missingIndexReport{key: r.Key, head: b.String()}
	var tail strings.Builder

	sev := missingIndexSeverity(p, r.Impact, r.Plan.QueryPlan)
	x := indexDDL{Schema: mi.Schema, Table: mi.Table, Keys: keys, Include: append([]string{}, mi.Include...)}
	fix := x.String()
	if t := findTable(p.Catalog, o); t != nil {
		if ix, missing := existingWithKeys(t, mi); ix != nil {
			ev["existing_index"] = ix.Name
			if len(missing) == 0 {
				fmt.Fprintf(&tail, "; index %s already has these keys and columns, so the plan was compiled before it existed or does not use it", ix.Name)
				m.tail = tail.String()
				m.f = Finding{Severity: Info, Evidence: ev,
					Fix: "recompile the statement (sp_recompile on its module, or OPTION (RECOMPILE) to test) and check why " + ix.Name + " is not chosen"}
				return m
			}
			x = extendIndex(t, ix, missing)
			fix = fmt.Sprintf("extend %s, which already has these keys, rather than adding a near-duplicate: %s", ix.Name, x.String())
		}
	}
	if w := int(p.Param("wide_include")); len(mi.Include) > w {
		narrow := indexDDL{Schema: mi.Schema, Table: mi.Table, Keys: keys}
		ev["narrow_index"] = narrow.String()
		fmt.Fprintf(&tail, "; the INCLUDE list is wide (%d columns)", len(mi.Include))
		fix += fmt.Sprintf(" The INCLUDE list copies %d columns into the index; the narrower %s seeks the same rows and looks the rest up", len(mi.Include), narrow.String())
	}
	x.addEvidence(ev)
	m.tail = tail.String()
	m.f = Finding{Severity: sev, Fix: fix, Evidence: ev}
	return m
}

// missingIndexSeverity grades a request by its impact and by what the
// statement cost.
func missingIndexSeverity(p *Pass, impact float64, q *plan.QueryPlan) Severity {
	if impact < p.Param("low_impact") {
		return Info
	}
	elapsed := -1.0
	if q.QueryTime != nil {
		elapsed = maxf(q.QueryTime.ElapsedTimeMs, q.QueryTime.CPUTimeMs)
	}
	if impact >= p.Param("error_impact") && elapsed >= p.Param("error_elapsed_ms") {
		return Error
	}
	// An actual plan's time says whether the statement matters; an
	// estimated plan has only its cost.
	if elapsed >= 0 && elapsed < p.Param("min_elapsed_ms") || elapsed < 0 && p.Statement.SubtreeCost < p.Param("min_cost") {
		return Info
	}
	return Warning
}

// tempTableName strips the padding and suffix SQL Server appends to a
// local temporary table's name in tempdb (#Work_____…_00000000000C).
func tempTableName(name string) string {
	if strings.HasPrefix(name, "#") && !strings.HasPrefix(name, "##") {
		if i := strings.Index(name, "___"); i > 0 {
			return name[:i]
		}
	}
	return name
}

// existingWithKeys finds an index of the table whose leading keys are the
// request's equality columns (any order) followed by its inequality
// columns, and the requested columns it lacks.
func existingWithKeys(t *catalog.Table, mi plan.MissingIndex) (*catalog.Index, []string) {
	var best *catalog.Index
	var bestMissing []string
	for _, ix := range t.Indexes {
		if ix.Disabled || strings.Contains(strings.ToUpper(ix.Type), "COLUMNSTORE") || ix.FilterDefinition != "" {
			continue
		}
		nEq, nIneq := len(mi.Equality), len(mi.Inequality)
		if len(ix.Keys) < nEq+nIneq {
			continue
		}
		var lead []string
		for _, k := range ix.Keys[:nEq] {
			lead = append(lead, k.Name)
		}
		if !sameSetFold(lead, mi.Equality) {
			continue
		}
		ok := true
		for i, c := range mi.Inequality {
			if !strings.EqualFold(ix.Keys[nEq+i].Name, c) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		var missing []string
		for _, c := range mi.Include {
			if !t.IndexContains(ix, c) {
				missing = append(missing, c)
			}
		}
		if best == nil || len(missing) < len(bestMissing) {
			best, bestMissing = ix, missing
		}
	}
	return best, bestMissing
}

// extendIndex rebuilds ix with the missing columns added to its INCLUDE.
func extendIndex(t *catalog.Table, ix *catalog.Index, missing []string) indexDDL {
	x := indexDDL{Schema: t.Schema, Table: t.Name, Name: ix.Name, Unique: ix.Unique, Where: ix.FilterDefinition, DropExisting: true, Desc: map[string]bool{}}
	for _, k := range ix.Keys {
		x.Keys = append(x.Keys, k.Name)
		x.Desc[k.Name] = k.Descending
	}
	x.Include = uniqueFold(append(append([]string{}, ix.Includes...), missing...))
	return x
}

func init() { register(MissingIndex) }

package rules

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// FilteredIndexParameterized ties an unused filtered index to the
// parameter or variable that stopped the optimizer from matching it.
var FilteredIndexParameterized = &Rule{
	Code:     "PL201",
	Name:     "filtered-index-parameterized",
	Severity: Error,
	Summary:  "A filtered index was not matched because its filter column is compared with a parameter or variable",
	Catalog:  true,
	Params: []Param{
		{"error_table_rows", 1000000, "an error when the replacement access reads a table of at least this many rows"},
	},
	Doc: Doc{
		Problem: "A filtered index such as `WHERE Status = 0` serves the pending-work query only when the optimizer can prove " +
			"the query wants no other rows. `Status = @Status` cannot be proven: the cached plan must also work for " +
			"`@Status = 1`. The same happens when forced parameterization turns the literal `0` into `@0`, and with local " +
			"variables, whose values are not sniffed. The index is silently ignored and the plan scans the table, which is " +
			"cheap while the table is small and ruinous once it holds millions of finished rows.",
		Evidence: "For every filtered index (from the catalog facts) on a table the plan reads but not through that index, " +
			"planlint looks for a comparison of a filter column with a parameter in the plan's seek, residual and filter " +
			"predicates, substitutes the parameter's compiled value and checks that the filter would then be implied. It " +
			"reports the index, its filter, the predicate, the parameter with its type and compiled value, and the " +
			"parameterization: StatementParameterizationType (1 user/sp_executesql, 2 simple, 3 forced), ParameterizedText, " +
			"the database's `is_parameterization_forced`; a parameter without a compiled value is a local variable. It works " +
			"with or without the plan's UnmatchedIndexes element (plans from the plan cache may lack it).",
		Example: "```sql\n-- filter: WHERE Status = 0\nEXEC sp_executesql N'SELECT TOP (20) WorkId FROM dbo.Work WHERE Status = @Status ORDER BY CreatedAt',\n" +
			"                   N'@Status tinyint', @Status = 0;\n```\nClustered Index Scan of PK_Work with predicate `[Status]=[@Status]`.",
		Fix: "In this order: (1) a dedicated query with the literal predicate (`WHERE Status = 0`) for pending work; (2) " +
			"`OPTION (RECOMPILE)` on the statement when a compile per execution is acceptable (parameter and variable values " +
			"are then embedded before optimization); (3) never an index hint (error 8622). When forced parameterization is " +
			"the cause, a TEMPLATE plan guide with `OPTION (PARAMETERIZATION SIMPLE)` for the query shape is the targeted fix " +
			"(`sp_get_query_template`, then `sp_create_plan_guide`); statements with `OPTION (RECOMPILE)` are exempt too.",
		FalseAlarms: "A statement that really must run for several status values cannot use a filtered index on one value; " +
			"suppress it with a reason, or give it an unfiltered index.",
	},
	Run: runFilteredIndexParameterized,
}

var autoParam = regexp.MustCompile(`^@\d+$`)

type paramCause struct {
	kind string // "forced", "simple", "auto", "variable", "parameter"
	text string
}

func classifyParameter(p *Pass, prm *plan.Parameter, name string, db *catalog.Database) paramCause {
	st := p.Statement
	switch {
	case prm != nil && !prm.HasCompiled:
		return paramCause{"variable", "the local variable " + name + ", whose value is not sniffed at compile time"}
	case autoParam.MatchString(name) && (st.ParameterizationType == plan.ParamForced || db != nil && db.ParameterizationForced):
		return paramCause{"forced", name + ", which forced parameterization substituted for the literal"}
	case autoParam.MatchString(name) && st.ParameterizationType == plan.ParamSimple:
		return paramCause{"simple", name + ", which simple parameterization substituted for the literal"}
	case autoParam.MatchString(name):
		return paramCause{"auto", name + ", which auto-parameterization substituted for a literal"}
	case st.ParameterizationType == plan.ParamUser:
		return paramCause{"parameter", "the parameter " + name + " (sp_executesql, a prepared statement or a procedure)"}
	}
	return paramCause{"parameter", "the parameter " + name}
}

func findParameter(q *plan.QueryPlan, name string) *plan.Parameter {
	for i := range q.Parameters {
		if strings.EqualFold(q.Parameters[i].Name, name) {
			return &q.Parameters[i]
		}
	}
	return nil
}

func listsUnmatched(q *plan.QueryPlan, table plan.ObjectRef, index string) bool {
	for _, o := range q.UnmatchedIndexes {
		if o.SameTable(table) && strings.EqualFold(o.Index, index) {
			return true
		}
	}
	return false
}

// mainAccess is the operator that reads the table instead, preferring the
// most expensive read.
func mainAccess(ta tableAccess) *plan.RelOp {
	var best *plan.RelOp
	for _, n := range ta.Nodes {
		if n.Access == nil || isWrite(n) {
			continue
		}
		if best == nil || n.SubtreeCost > best.SubtreeCost {
			best = n
		}
	}
	return best
}

// literalConjuncts returns the plan's literal comparisons on the table as
// catalog conjuncts (outside ORs, without conversions on the column).
func literalConjuncts(cs []comparison) []catalog.Conjunct {
	var out []catalog.Conjunct
	for _, c := range cs {
		if c.ColumnConverted {
			continue
		}
		if cj, ok := c.conjunct(); ok {
			out = append(out, cj)
		}
	}
	return out
}

func runFilteredIndexParameterized(p *Pass) {
	unusedFilteredIndexes(p, nil, checkParameterizedFilter)
}

// unusedFilteredIndexes calls check for every filtered index (with a parsed
// filter) of the catalog's tables the plan reads that the plan does not
// use, with the plan's comparisons on that table; keep (nil: every one)
// selects the table accesses.
func unusedFilteredIndexes(p *Pass, keep func(tableAccess) bool,
	check func(p *Pass, q plan.LabeledPlan, ta tableAccess, t *catalog.Table, ix *catalog.Index, tc []comparison)) {
	for _, q := range p.Plans() {
		comps := comparisons(q.QueryPlan)
		for _, ta := range accessedTables(q.QueryPlan) {
			t := findTable(p.Catalog, ta.Object)
			if t == nil || keep != nil && !keep(ta) {
				continue
			}
			tc := onTable(comps, ta.Object)
			for _, ix := range t.FilteredIndexes() {
				if ix.Filter == nil || readsIndex(q.QueryPlan, ta.Object, ix.Name) {
					continue
				}
				check(p, q, ta, t, ix, tc)
			}
		}
	}
}

func checkParameterizedFilter(p *Pass, q plan.LabeledPlan, ta tableAccess, t *catalog.Table, ix *catalog.Index, tc []comparison) {
	unmatched := listsUnmatched(q.QueryPlan, ta.Object, ix.Name)
	preds := literalConjuncts(tc)
	var hit *comparison
	var hitParam *plan.Parameter
	for _, cj := range ix.Filter.Conjuncts {
		for _, c := range onColumn(tc, cj.Column) {
			name := c.parameter()
			if name == "" || c.InOr {
				continue
			}
			prm := findParameter(q.QueryPlan, name)
			if prm != nil && prm.HasCompiled {
				if sub, ok := c.substituted(prm.CompiledValue); ok {
					preds = append(preds, sub)
				}
			}
			if hit == nil {
				cc := c
				hit, hitParam = &cc, prm
			}
		}
	}
	if hit == nil {
		return
	}
	implied, _ := ix.Filter.ImpliedBy(preds)
	compiledKnown := hitParam != nil && hitParam.HasCompiled
	if !unmatched && !(compiledKnown && implied) {
		return
	}
	db := databaseOf(p.Catalog, ta.Object)
	name := hit.parameter()
	cause := classifyParameter(p, hitParam, name, db)
	filter := ix.FilterDefinition

	ev := map[string]any{
		"index":                     ix.Name,
		"table":                     t.Schema + "." + t.Name,
		"filter":                    filter,
		"predicate":                 hit.text(),
		"parameter":                 name,
		"cause":                     cause.kind,
		"parameterization_type":     p.Statement.ParameterizationType.String(),
		"unmatched_indexes_element": unmatched,
	}
	if hitParam != nil {
		ev["data_type"] = hitParam.DataType
		if hitParam.HasCompiled {
			ev["compiled_value"] = hitParam.CompiledValue
		}
		if hitParam.HasRuntime {
			ev["runtime_value"] = hitParam.RuntimeValue
		}
	}
	if p.Statement.ParameterizedText != "" {
		ev["parameterized_text"] = p.Statement.ParameterizedText
	}
	if db != nil {
		ev["database_parameterization_forced"] = db.ParameterizationForced
	}
	if q.Label != "" {
		ev["cursor_operation"] = q.Label
	}

	var b strings.Builder
	fmt.Fprintf(&b, "filtered index %s on %s.%s (WHERE %s) was not used because %s is compared with %s",
		ix.Name, t.Schema, t.Name, filter, hit.Column.Column, cause.text)
	if hitParam != nil && hitParam.HasCompiled {
		fmt.Fprintf(&b, " [%s, compiled value %s]", hitParam.DataType, hitParam.CompiledValue)
		if !implied {
			b.WriteString(", a value outside the filter")
		}
	}
	b.WriteString(": a reusable plan must be correct for every value")
	sev := Warning
	var node *int
	if alt := mainAccess(ta); alt != nil {
		node = Node(alt.NodeID)
		read := alt.TableCardinality
		readKind := "table rows"
		if alt.RunTime != nil && alt.RunTime.HasRowsRead {
			read, readKind = float64(alt.RunTime.ActualRowsRead), "rows read"
		}
		ev["replacement_node_id"] = alt.NodeID
		ev["replacement_operator"] = alt.DisplayName()
		fmt.Fprintf(&b, "; the plan reads %s with %s (node %d)", objectName(alt.Access.Object()), alt.DisplayName(), alt.NodeID)
		if read > 0 {
			ev[strings.ReplaceAll(readKind, " ", "_")] = read
			fmt.Fprintf(&b, " over %s %s", units.Count(read), readKind)
		}
		if read >= p.Param("error_table_rows") && !strings.Contains(alt.PhysicalOp, "Seek") {
			sev = Error
		}
	}
	describeSizes(&b, ev, t, ix, mainAccess(ta))
	if cause.kind == "forced" {
		b.WriteString("; forced parameterization is the cause")
	}
	p.Report(Finding{Severity: sev, NodeID: node, Message: b.String(), Evidence: ev, Fix: parameterizedFix(p, q.QueryPlan, cause, hit, ix)})
}

// describeSizes adds what the catalog knows of the filtered index's size
// and of the index the plan reads instead.
func describeSizes(b *strings.Builder, ev map[string]any, t *catalog.Table, ix *catalog.Index, alt *plan.RelOp) {
	if ix.Size == nil {
		return
	}
	ev["index_rows"], ev["index_pages"] = ix.Size.Rows, ix.Size.UsedPages
	fmt.Fprintf(b, "; %s holds %s rows in %s pages", ix.Name, units.Count(float64(ix.Size.Rows)), units.Count(float64(ix.Size.UsedPages)))
	if alt == nil {
		return
	}
	other := t.FindIndex(alt.Access.Object().Index)
	if other == nil || other == ix || other.Size == nil {
		return
	}
	ev["replacement_pages"] = other.Size.UsedPages
	fmt.Fprintf(b, " against %s pages in %s", units.Count(float64(other.Size.UsedPages)), other.Name)
}

func parameterizedFix(p *Pass, q *plan.QueryPlan, cause paramCause, hit *comparison, ix *catalog.Index) string {
	literal := ix.FilterDefinition
	if ix.Filter != nil {
		literal = ix.Filter.String()
	}
	recompile := "add OPTION (RECOMPILE) to this statement if a compile per execution is acceptable"
	if q.CompileCPUMs > 0 {
		recompile += fmt.Sprintf(" (this plan took %s ms of compile CPU)", units.Count(q.CompileCPUMs))
	}
	switch cause.kind {
	case "forced":
		return fmt.Sprintf("1) a dedicated query with the literal predicate WHERE %s, exempted from forced parameterization by a TEMPLATE plan guide "+
			"with OPTION (PARAMETERIZATION SIMPLE) for this query shape (sp_get_query_template, then sp_create_plan_guide ... N'TEMPLATE' ... "+
			"N'OPTION (PARAMETERIZATION SIMPLE)'); 2) %s (statements with RECOMPILE are exempt from forced parameterization); "+
			"3) not an index hint: it fails with error 8622", literal, recompile)
	case "variable":
		return fmt.Sprintf("1) a dedicated query with the literal predicate WHERE %s instead of the variable %s; 2) %s (it sniffs the "+
			"variable's current value); 3) not an index hint: it fails with error 8622", literal, hit.parameter(), recompile)
	}
	return fmt.Sprintf("1) a dedicated query with the literal predicate WHERE %s for pending work, not %s; 2) %s; "+
		"3) not an index hint: it fails with error 8622", literal, hit.text(), recompile)
}

func init() { register(FilteredIndexParameterized) }

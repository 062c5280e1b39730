package rules

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// PlanVariance compares the runtime figures of the plans of one query
// (plan cache, Query Store) and of the executions of one plan.
var PlanVariance = &Rule{
	Code:     "PL415",
	Name:     "plan-variance",
	Severity: Error,
	Summary:  "One query runs with plans (or executions) whose cost differs by an order of magnitude",
	Params: []Param{
		{"min_executions", 10, "executions a plan needs over the period before its figures are compared"},
		{"min_factor", 10, "average duration or logical reads per execution of the worst plan against the best from which plans are compared"},
		{"warn_ms", 10000, "elapsed time the worst plan took beyond what the best plan would have taken, over the period, from which it is a warning"},
		{"error_ms", 600000, "that excess elapsed time from which it is an error"},
		{"spread_factor", 10, "one plan: largest logical reads of one execution against the average from which its executions are compared"},
		{"spread_warn_ms", 1000, "one plan: longest execution from which a spread is a warning"},
	},
	Doc: Doc{
		Problem: "During an incident the question is often not what is wrong with a plan but why the same query is fast " +
			"one hour and slow the next. The server keeps several plans of one query — after a recompile, for other SET " +
			"options, as Parameter Sensitive Plan variants — and each plan serves many parameter values. When one plan " +
			"costs ten times more per execution than another plan of the same query, the workers are paying for the " +
			"wrong plan; when one plan's executions range from a few reads to millions, its parameterized predicate " +
			"selects very different row counts for different values and one shape cannot suit them all. The queue " +
			"poll is the usual case: a seek and lookups that suit 200 pending rows, a scan compiled during a backlog or " +
			"for the finished rows. It is a rule of its own rather than part of parameter-sensitivity (PL408), which " +
			"reads the compiled and runtime values of one actual plan: plans of one query also differ when they were " +
			"compiled for the same value (statistics updated, a recompile during a backlog, other SET options), the " +
			"input is the server's runtime figures rather than a plan, and the fixes — forcing a plan, evicting one — " +
			"act on the set of plans. The message says which cause the plans show.",
		Evidence: "`planlint cache` groups the pulled statements by `query_hash` and database, `planlint querystore` by " +
			"`query_id` (a PSP variant with its parent query). For each group with at least two plans of " +
			"`min_executions` or more, planlint compares the average duration and logical reads per execution of the " +
			"best and worst plan (`sys.dm_exec_query_stats` totals divided by `execution_count`; Query Store's " +
			"`avg_duration` and `avg_logical_io_reads` weighted by `count_executions` over `--since`). From `min_factor` " +
			"it reports the worst plan with every plan's figures, each plan's compiled parameter values (its " +
			"`ParameterList`), the access paths that differ, and whether the plans were compiled for different values " +
			"(parameter sensitivity) or for the same ones (statistics or settings changed between compiles). Severity " +
			"is graded by the elapsed time the worst plan took beyond what the best would have taken: a warning from " +
			"`warn_ms`, an error from `error_ms`, info below. A plan on its own is reported (warning at most) when its " +
			"largest logical reads of one execution are `spread_factor` times its average (`max_logical_reads`, " +
			"Query Store's `max_logical_io_reads`, with `stdev_logical_io_reads` and `stdev_duration` pooled over " +
			"the intervals) and it compares a parameter in a predicate; logical reads are used because blocking and a " +
			"cold cache change durations, not reads.",
		Example: "```text\nquery 7, plan 12: Index Seek IX_Work_Status + Key Lookup, compiled for @Status = (0)\n" +
			"         5,000 executions, avg 1.2 ms, 4,510 reads\nquery 7, plan 15: Clustered Index Scan PK_Work, compiled for @Status = (1)\n" +
			"           800 executions, avg 850 ms, 62,000 reads\n```",
		Fix: "Chosen from the evidence. In Query Store, force the plan with the best figures " +
			"(`EXEC sys.sp_query_store_force_plan @query_id = 7, @plan_id = 12;`, after unforcing a forced worse plan); " +
			"when the plans were compiled for different parameter values, every value then runs that plan, so prefer " +
			"a dedicated statement for the values that need their own plan (a literal `WHERE Status = 0` poll, which can " +
			"also use a filtered index), `OPTIMIZE FOR (@Status = 0)` with the best plan's compiled value, or " +
			"`OPTION (RECOMPILE)` when a compile is cheap next to an execution. From the plan cache, where nothing can be " +
			"forced, the same statement changes apply, and `DBCC FREEPROCCACHE (plan_handle)` evicts the bad plan as a " +
			"stopgap. Query Store forces a plan only for its own query, so a plan of one Parameter Sensitive Plan variant " +
			"cannot be forced on another: then `OPTION (USE HINT ('DISABLE_PARAMETER_SENSITIVE_PLAN_OPTIMIZATION'))` " +
			"gives the statement one plan again.",
		FalseAlarms: "Plans with fewer than `min_executions` executions are not compared (a first, cold execution is " +
			"slow). When the worse plan also returns at least a third as many times more rows per execution as it costs " +
			"more (`avg_rows`), the values select more work rather than a worse plan, and nothing is reported. Durations " +
			"include waits: a plan that ran during blocking looks slow, which is why logical reads are compared too and " +
			"the evidence carries both; when the durations differ but the reads and CPU per execution are within 2×, the " +
			"slower plan waited (blocking, I/O, a memory grant) rather than worked, and nothing is reported; nor is a plan " +
			"that reads more pages but is not slower on average. The plan " +
			"cache keeps only plans still cached, so an evicted plan is not compared; both commands pull the other plans " +
			"of the queries they list, up to `--top` of them, and `planlint querystore --query-id N` reads every plan of " +
			"one query. A PSP dispatcher plan has no executions of its own and is skipped.",
		References: []string{
			"https://learn.microsoft.com/en-us/sql/relational-databases/system-catalog-views/sys-query-store-runtime-stats-transact-sql",
			"https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-exec-query-stats-transact-sql",
			"https://learn.microsoft.com/en-us/sql/relational-databases/system-stored-procedures/sp-query-store-force-plan-transact-sql",
		},
	},
	RunQuery: runPlanVariance,
}

func init() { register(PlanVariance) }

// Floors keep a near-zero best plan from making any ratio huge.
const (
	varianceMinDurationMs = 0.05
	varianceMinReads      = 1
	// varianceSameWork: plans whose reads and CPU per execution are within
	// this factor do the same work, whatever their durations.
	varianceSameWork = 2
)

func runPlanVariance(p *QueryPass) {
	q := p.Query
	minExec := int64(math.Ceil(p.Param("min_executions")))
	var eligible []int
	for i, pl := range q.Plans {
		if pl.Runtime.Executions < minExec || strings.EqualFold(pl.PlanType, "Dispatcher Plan") {
			continue
		}
		eligible = append(eligible, i)
	}
	reported := map[int]bool{}
	if len(eligible) >= 2 {
		if worst, ok := reportPlanSpread(p, eligible); ok {
			reported[worst] = true
		}
	}
	for _, i := range eligible {
		if !reported[i] {
			reportExecutionSpread(p, i)
		}
	}
}

// varianceMeasure is one figure plans are compared by.
type varianceMeasure struct {
	name  string // as in messages, with its verb
	key   string // evidence key
	value func(PlanRuntime) float64
	floor float64
}

var varianceMeasures = []varianceMeasure{
	{"average duration differs", "avg_duration_ms", func(r PlanRuntime) float64 { return r.AvgDurationMs }, varianceMinDurationMs},
	{"average logical reads differ", "avg_logical_reads", func(r PlanRuntime) float64 { return r.AvgLogicalReads }, varianceMinReads},
}

// reportPlanSpread compares the best and worst of the eligible plans and
// reports the worst; it returns the worst plan's index when it reported.
func reportPlanSpread(p *QueryPass, eligible []int) (int, bool) {
	q := p.Query
	var m *varianceMeasure
	best, worst, factor := -1, -1, 0.0
	for k := range varianceMeasures {
		vm := &varianceMeasures[k]
		b, w := eligible[0], eligible[0]
		for _, i := range eligible[1:] {
			v := vm.value(q.Plans[i].Runtime)
			if v < vm.value(q.Plans[b].Runtime) {
				b = i
			}
			if v > vm.value(q.Plans[w].Runtime) {
				w = i
			}
		}
		f := vm.value(q.Plans[w].Runtime) / math.Max(vm.value(q.Plans[b].Runtime), vm.floor)
		if f > factor {
			m, best, worst, factor = vm, b, w, f
		}
	}
	if m == nil || factor < p.Param("min_factor") || best == worst {
		return 0, false
	}
	bp, wp := &q.Plans[best], &q.Plans[worst]
	if m.key == "avg_duration_ms" {
		reads := wp.Runtime.AvgLogicalReads / math.Max(bp.Runtime.AvgLogicalReads, varianceMinReads)
		cpu := wp.Runtime.AvgCPUMs / math.Max(bp.Runtime.AvgCPUMs, varianceMinDurationMs)
		if reads < varianceSameWork && cpu < varianceSameWork {
			return 0, false // the same work: the slower plan waited (blocking, I/O, a grant)
		}
	}
	var rowsFactor float64
	if bp.Runtime.AvgRows != nil && wp.Runtime.AvgRows != nil {
		rowsFactor = math.Max(*wp.Runtime.AvgRows, 1) / math.Max(*bp.Runtime.AvgRows, 1)
		if rowsFactor*3 >= factor {
			return 0, false // the values select that much more work
		}
	}
	excessMs := (wp.Runtime.AvgDurationMs - bp.Runtime.AvgDurationMs) * float64(wp.Runtime.Executions)
	if excessMs <= 0 {
		return 0, false // more reads but no slower: cached pages, not a worse plan to move away from
	}
	sev := Info
	switch {
	case excessMs >= p.Param("error_ms"):
		sev = Error
	case excessMs >= p.Param("warn_ms"):
		sev = Warning
	}
	bv, wv := compiledValues(bp.Document), compiledValues(wp.Document)
	both := bp.Document != nil && wp.Document != nil
	differ := both && differentValues(bv, wv)
	same := both && sameValues(bv, wv)
	var onlyW, onlyB []string
	if both {
		ba, wa := accessPaths(bp.Document), accessPaths(wp.Document)
		onlyW, onlyB = setDiff(wa, ba), setDiff(ba, wa)
	}

	var msg strings.Builder
	fmt.Fprintf(&msg, "%s has %d plans whose %s %s×: %s averaged %s over %s executions, %s averaged %s over %s executions",
		queryLabel(q), len(q.Plans), m.name, units.Count(factor), planLabel(q, worst), runtimeText(wp.Runtime), units.Count(float64(wp.Runtime.Executions)),
		planLabel(q, best), runtimeText(bp.Runtime), units.Count(float64(bp.Runtime.Executions)))
	switch {
	case len(onlyW) > 0 && len(onlyB) > 0:
		fmt.Fprintf(&msg, "; %s uses %s where %s uses %s", planLabel(q, worst), strings.Join(onlyW, ", "), planLabel(q, best), strings.Join(onlyB, ", "))
	case len(onlyW) > 0:
		fmt.Fprintf(&msg, "; %s adds %s", planLabel(q, worst), strings.Join(onlyW, ", "))
	case len(onlyB) > 0:
		fmt.Fprintf(&msg, "; %s lacks %s", planLabel(q, worst), strings.Join(onlyB, ", "))
	case both:
		msg.WriteString("; both plans read the same objects the same way, so they differ in joins, order or estimates")
	}
	switch {
	case !both:
		for _, i := range []int{worst, best} {
			if q.Plans[i].Document == nil {
				fmt.Fprintf(&msg, "; the server no longer has the text of %s, so its operators and compiled values are unknown", planLabel(q, i))
			}
		}
	case differ:
		fmt.Fprintf(&msg, "; %s was compiled for %s and %s for %s: parameter sensitivity, the first value each plan was compiled for decides what every later value gets",
			planLabel(q, worst), valuesText(wv), planLabel(q, best), valuesText(bv))
	case same && len(wv) > 0:
		fmt.Fprintf(&msg, "; both were compiled for %s, so the difference comes from what changed between the compiles (statistics, the rows in the table, SET options or settings), not from the parameter value", valuesText(wv))
	case same:
		msg.WriteString("; neither plan has parameters, so the difference comes from what changed between the compiles (statistics, the rows in the table, SET options or settings)")
	default:
		fmt.Fprintf(&msg, "; the plans do not have the same parameters (%s: %s; %s: %s): they come from statements written or parameterized differently", planLabel(q, worst), valuesText(wv), planLabel(q, best), valuesText(bv))
	}
	fmt.Fprintf(&msg, "; %s took %s more elapsed time than %s would have", planLabel(q, worst), units.Ms(excessMs), planLabel(q, best))

	ev := map[string]any{"source": q.Source.String(), "factor": round(factor, 1), "measure": m.key,
		"worst_plan": planLabel(q, worst), "best_plan": planLabel(q, best), "excess_elapsed_ms": round(excessMs, 1),
		"plans": planEvidence(q)}
	if both {
		ev["compiled_for_different_values"] = differ
	}
	if q.QueryID != 0 {
		ev["query_id"] = q.QueryID
	}
	if q.QueryHash != "" {
		ev["query_hash"] = q.QueryHash
	}
	if rowsFactor > 0 {
		ev["rows_factor"] = round(rowsFactor, 2)
	}
	if len(onlyW) > 0 {
		ev["worst_plan_only"] = onlyW
	}
	if len(onlyB) > 0 {
		ev["best_plan_only"] = onlyB
	}
	fix := planSpreadFix(q, best, worst, bv, wv, both, same, differ)
	ev["identifiers"] = identifiers(q, fix)
	p.Report(worst, Finding{Severity: sev, Message: msg.String(), Evidence: ev, Fix: fix})
	return worst, true
}

// planSpreadFix chooses the fix from the evidence: forcing in Query Store,
// statement changes when the plans were compiled for different values.
func planSpreadFix(q *Query, best, worst int, bv, wv []plan.Parameter, both, same, differ bool) string {
	bp, wp := &q.Plans[best], &q.Plans[worst]
	var parts []string
	add := func(format string, args ...any) {
		parts = append(parts, fmt.Sprintf("%d) ", len(parts)+1)+fmt.Sprintf(format, args...))
	}
	if f := filteredIndexFinding(wp.Findings); f != nil {
		idx, _ := f.Evidence["index"].(string)
		filter, _ := f.Evidence["filter"].(string)
		add("a dedicated statement with the literal predicate WHERE %s for the values that filtered index %s serves: %s is parameterized and cannot use it (see filtered-index-parameterized)", filter, idx, planLabel(q, worst))
	}
	force := ""
	variants := q.Source == SourceQueryStore && bp.QueryID != 0 && wp.QueryID != 0 && bp.QueryID != wp.QueryID
	if variants {
		// A plan is forced for its own query: a variant's plan cannot be
		// forced on another variant.
		add("%s and %s belong to different Parameter Sensitive Plan variants of query %d (queries %d and %d), and Query Store forces a plan only for its own variant; when the variants' cardinality ranges send values to the worse plan, OPTION (USE HINT ('DISABLE_PARAMETER_SENSITIVE_PLAN_OPTIMIZATION')) on the statement gives it one plan again, which can then be forced",
			planLabel(q, worst), planLabel(q, best), q.QueryID, wp.QueryID, bp.QueryID)
	}
	if q.Source == SourceQueryStore && bp.PlanID != 0 && !variants {
		qid := bp.QueryID
		if qid == 0 {
			qid = q.QueryID
		}
		force = fmt.Sprintf("EXEC sys.sp_query_store_force_plan @query_id = %d, @plan_id = %d;", qid, bp.PlanID)
		if wp.Forced {
			force = fmt.Sprintf("EXEC sys.sp_query_store_unforce_plan @query_id = %d, @plan_id = %d; then ", nonZero(wp.QueryID, q.QueryID), wp.PlanID) + force
		}
		why := fmt.Sprintf("%s had the lowest figures, %s per execution over %s executions", planLabel(q, best), runtimeText(bp.Runtime), units.Count(float64(bp.Runtime.Executions)))
		switch {
		case bp.Forced:
			force = fmt.Sprintf("%s is already forced yet %s ran: read sys.query_store_plan.last_force_failure_reason_desc for plan %d and fix what makes forcing fail", planLabel(q, best), planLabel(q, worst), bp.PlanID)
		case differ:
			force = fmt.Sprintf("as a stopgap, force %s of query %d: %s (%s); every value then runs it, including %s that %s was compiled for, so watch those executions after forcing", planLabel(q, best), qid, force, why, valuesText(wv), planLabel(q, worst))
		case same:
			force = fmt.Sprintf("force %s of query %d: %s (%s; both plans were compiled for the same values, so it suits them)", planLabel(q, best), qid, force, why)
		default:
			force = fmt.Sprintf("force %s of query %d: %s (%s)", planLabel(q, best), qid, force, why)
		}
		if !differ {
			add("%s", force)
			force = ""
		}
	}
	if differ {
		if force != "" {
			add("%s", force)
		}
		if ddl, rule, i := suggestedIndex(q); ddl != "" {
			add("an index that gives every value one cheap plan, as %s on %s suggests: %s", rule, planLabel(q, i), ddl)
		}
		if opt := optimizeFor(bv); opt != "" {
			add("OPTION (OPTIMIZE FOR (%s)) on the statement, the values %s was compiled for, if they are the typical ones", opt, planLabel(q, best))
		}
		add("%s", recompileAdvice(wp))
		if filteredIndexFinding(wp.Findings) == nil {
			add("a dedicated statement for the values that need their own plan (for a status or type column, a literal predicate per value, which can also use a filtered index)")
		}
	} else if !both && q.Source == SourceQueryStore {
		add("a plan's text is missing: read the query's plans with planlint querystore --query-id %d to compare their compiled values and operators", q.QueryID)
	} else if !both {
		add("a plan's text is missing (evicted): capture the statement again to compare the plans' compiled values and operators")
	} else if q.Source == SourcePlanCache && same {
		add("UPDATE STATISTICS on the tables %s reads, then let the statement compile again: the plans were compiled for the same values, so the estimates changed between the compiles", planLabel(q, worst))
	} else if q.Source == SourcePlanCache {
		add("compare the two plans (planlint compare) to see which statement each comes from and why their estimates differ")
	} else {
		add("compare the plans' estimates and statistics (planlint querystore --query-id %d) to see what changed between the compiles", q.QueryID)
	}
	if q.Source == SourcePlanCache && wp.PlanHandle != "" {
		add("as a stopgap, DBCC FREEPROCCACHE (%s) evicts %s so that the next execution compiles again (with the values it brings); with Query Store on, force the better plan instead", wp.PlanHandle, planLabel(q, worst))
	}
	return strings.Join(parts, "; ")
}

func nonZero(a, b int64) int64 {
	if a != 0 {
		return a
	}
	return b
}

// recompileAdvice weighs OPTION (RECOMPILE) against the plan's compile
// CPU and the average CPU per execution.
func recompileAdvice(pl *QueryPlanRun) string {
	s := MainStatement(pl.Document)
	if s == nil || s.QueryPlan.CompileCPUMs <= 0 {
		return "OPTION (RECOMPILE) on the statement, if a compile per execution is acceptable"
	}
	c := s.QueryPlan.CompileCPUMs
	if pl.Runtime.AvgCPUMs > 0 && c > pl.Runtime.AvgCPUMs {
		return fmt.Sprintf("OPTION (RECOMPILE) only if its compile (%s ms of CPU) is acceptable next to the %s ms of CPU an execution takes", units.Count(c), units.Count(pl.Runtime.AvgCPUMs))
	}
	return fmt.Sprintf("OPTION (RECOMPILE) on the statement: a compile took %s ms of CPU, less than an execution (%s ms average)", units.Count(c), units.Count(pl.Runtime.AvgCPUMs))
}

// suggestedIndex is the first index DDL a statement rule suggested on a
// plan of the query, with the rule and the plan.
// The most severe finding's wins; the DDL loses its final semicolon.
func suggestedIndex(q *Query, only ...int) (ddl, rule string, plan int) {
	var best Severity
	for i := range q.Plans {
		if len(only) > 0 && i != only[0] {
			continue
		}
		for _, f := range q.Plans[i].Findings {
			for _, k := range []string{"suggested_index", "create_index"} {
				if d, ok := f.Evidence[k].(string); ok && d != "" && f.Severity > best {
					ddl, rule, plan, best = strings.TrimSuffix(strings.TrimSpace(d), ";"), f.Rule, i, f.Severity
				}
			}
		}
	}
	return ddl, rule, plan
}

func filteredIndexFinding(fs []Finding) *Finding {
	for i := range fs {
		if fs[i].Rule == "filtered-index-parameterized" {
			return &fs[i]
		}
	}
	return nil
}

// reportExecutionSpread reports one plan whose executions differ by an
// order of magnitude in logical reads, when it compares a parameter.
func reportExecutionSpread(p *QueryPass, i int) {
	q := p.Query
	pl := &q.Plans[i]
	rt := pl.Runtime
	if rt.MaxLogicalReads == nil || rt.AvgLogicalReads <= 0 {
		return
	}
	spread := *rt.MaxLogicalReads / math.Max(rt.AvgLogicalReads, varianceMinReads)
	if spread < p.Param("spread_factor") {
		return
	}
	s := MainStatement(pl.Document)
	if s == nil {
		return
	}
	names, uses := variableUses(s.QueryPlan)
	var params []plan.Parameter
	var node *plan.RelOp
	for _, name := range names {
		if prm := findParameter(s.QueryPlan, name); prm != nil && prm.HasCompiled {
			params = append(params, *prm)
			if node == nil {
				node = uses[strings.ToLower(name)][0]
			}
		}
	}
	if len(params) == 0 {
		return // no parameterized predicate: the spread has another cause
	}
	sev := Info
	if rt.MaxDurationMs != nil && *rt.MaxDurationMs >= p.Param("spread_warn_ms") {
		sev = Warning
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "the executions of %s differ %s× in logical reads: average %s, largest %s", planLabel(q, i), units.Count(spread), units.Count(rt.AvgLogicalReads), units.Count(*rt.MaxLogicalReads))
	if rt.MinLogicalReads != nil {
		fmt.Fprintf(&msg, ", smallest %s", units.Count(*rt.MinLogicalReads))
	}
	if rt.StdevReads != nil {
		fmt.Fprintf(&msg, ", standard deviation %s", units.Count(*rt.StdevReads))
	}
	fmt.Fprintf(&msg, " over %s executions", units.Count(float64(rt.Executions)))
	if rt.MaxDurationMs != nil {
		fmt.Fprintf(&msg, "; the longest took %s (average %s)", units.Ms(*rt.MaxDurationMs), units.Ms(rt.AvgDurationMs))
	}
	fmt.Fprintf(&msg, "; the plan was compiled for %s and compares %s in %s (node %d): the rows it selects differ by orders of magnitude between executions (other values, or the same value while the data changes, as in a backlog), and one plan serves them all",
		valuesText(params), params[0].Name, operatorText(node), node.NodeID)
	ev := map[string]any{"source": q.Source.String(), "plan": planLabel(q, i), "spread_factor": round(spread, 1),
		"executions": rt.Executions, "avg_logical_reads": round(rt.AvgLogicalReads, 1), "max_logical_reads": round(*rt.MaxLogicalReads, 1),
		"avg_duration_ms": round(rt.AvgDurationMs, 3), "compiled_values": valuesMap(params)}
	for k, v := range map[string]*float64{"min_logical_reads": rt.MinLogicalReads, "stdev_logical_reads": rt.StdevReads,
		"max_duration_ms": rt.MaxDurationMs, "stdev_duration_ms": rt.StdevDurationMs} {
		if v != nil {
			ev[k] = round(*v, 3)
		}
	}
	var fix []string
	add := func(format string, args ...any) {
		fix = append(fix, fmt.Sprintf("%d) ", len(fix)+1)+fmt.Sprintf(format, args...))
	}
	if ddl, rule, _ := suggestedIndex(q, i); ddl != "" {
		add("an index with which the plan's cost no longer grows with the rows the value selects, as %s suggests: %s", rule, ddl)
	}
	add("%s", recompileAdvice(pl))
	add("a dedicated statement for the values of %s that select many rows (for a status or type column, a literal predicate per value)", params[0].Name)
	if opt := optimizeFor(params); opt != "" {
		add("OPTION (OPTIMIZE FOR (%s)) if the compiled values are the typical ones and the rare large values may run slower", opt)
	}
	psp := fmt.Sprintf("%d) on SQL Server 2022+ at compatibility level 160, parameter-sensitive plan optimization keeps up to three plans by the cardinality of an equality predicate", len(fix)+1)
	if s.CEModelVersion > 0 && s.CEModelVersion < 160 {
		psp += fmt.Sprintf(" (this plan was compiled under cardinality model %d)", s.CEModelVersion)
	}
	fix = append(fix, psp)
	ev["identifiers"] = identifiers(q, "")
	p.Report(i, Finding{Severity: sev, Message: msg.String(), Evidence: ev, Fix: strings.Join(fix, "; ")})
}

// serverStatements are the statements of a fix that name Query Store ids
// or a plan handle.
var serverStatements = regexp.MustCompile(`EXEC sys\.sp_query_store_(?:un)?force_plan @query_id = \d+, @plan_id = \d+;|DBCC FREEPROCCACHE \(0x[0-9A-Fa-f]+\)`)

// identifiers are the names the server gives the query and its plans
// (query ids, query and plan hashes, plan handles) as the message and
// fix write them, with the fix's statements that use them. They identify
// plans, not data, so shared reports keep them: a masked plan id makes
// the fix useless.
func identifiers(q *Query, fix string) []string {
	ids := []string{queryLabel(q)}
	if q.QueryHash != "" {
		ids = append(ids, q.QueryHash)
	}
	for i := range q.Plans {
		ids = append(ids, planLabel(q, i))
	}
	return append(ids, serverStatements.FindAllString(fix, -1)...)
}

func operatorText(n *plan.RelOp) string {
	if o := n.Access.Object(); o.Table != "" {
		return n.DisplayName() + " " + objectName(o)
	}
	return n.DisplayName()
}

// queryLabel names the query as its source does.
func queryLabel(q *Query) string {
	if q.QueryID != 0 {
		return fmt.Sprintf("query %d", q.QueryID)
	}
	if q.QueryHash != "" {
		return "query_hash " + q.QueryHash
	}
	return "the query"
}

// planLabel names plan i of the query as its source does.
func planLabel(q *Query, i int) string {
	pl := &q.Plans[i]
	switch {
	case pl.PlanID != 0:
		return fmt.Sprintf("plan %d", pl.PlanID)
	case pl.QueryPlanHash != "":
		// the same plan cached more than once (other SET options, another
		// user's schema) is numbered as the report names it
		n := 1
		for j := 0; j < i; j++ {
			if q.Plans[j].QueryPlanHash == pl.QueryPlanHash {
				n++
			}
		}
		if n > 1 {
			return fmt.Sprintf("plan %s #%d", pl.QueryPlanHash, n)
		}
		return "plan " + pl.QueryPlanHash
	}
	return fmt.Sprintf("plan #%d", i+1)
}

// runtimeText is "850 ms, 62,000 reads" per execution.
func runtimeText(r PlanRuntime) string {
	return fmt.Sprintf("%s and %s reads", msExact(r.AvgDurationMs), units.Count(r.AvgLogicalReads))
}

// msExact renders a small average with its decimals ("0.15 ms").
func msExact(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2f ms", v)
	}
	return units.Ms(v)
}

// compiledValues are the parameters of the plan's main statement with a
// compiled value, in plan order.
func compiledValues(doc *plan.Document) []plan.Parameter {
	s := MainStatement(doc)
	if s == nil {
		return nil
	}
	var out []plan.Parameter
	for _, p := range s.QueryPlan.Parameters {
		if p.HasCompiled {
			out = append(out, p)
		}
	}
	return out
}

func differentValues(a, b []plan.Parameter) bool {
	for _, x := range a {
		for _, y := range b {
			if strings.EqualFold(x.Name, y.Name) && x.CompiledValue != y.CompiledValue {
				return true
			}
		}
	}
	return false
}

// sameValues reports whether both plans have the same parameters with the
// same compiled values (or both none).
func sameValues(a, b []plan.Parameter) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			if strings.EqualFold(x.Name, y.Name) && x.CompiledValue == y.CompiledValue {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func valuesText(ps []plan.Parameter) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Name + " = " + p.CompiledValue
	}
	if len(parts) == 0 {
		return "no parameter values"
	}
	return strings.Join(parts, ", ")
}

func valuesMap(ps []plan.Parameter) map[string]any {
	m := map[string]any{}
	for _, p := range ps {
		m[p.Name] = p.CompiledValue
	}
	return m
}

// optimizeFor is the OPTIMIZE FOR list of the compiled values: "@Status =
// 0"; "" when a value is not a literal one can write there.
func optimizeFor(ps []plan.Parameter) string {
	var parts []string
	for _, p := range ps {
		v := strings.TrimSpace(p.CompiledValue)
		for strings.HasPrefix(v, "(") && strings.HasSuffix(v, ")") {
			v = strings.TrimSpace(v[1 : len(v)-1])
		}
		if v == "" {
			return ""
		}
		parts = append(parts, p.Name+" = "+v)
	}
	return strings.Join(parts, ", ")
}

// accessPaths lists the plan's reads of tables and indexes, and its joins
// and sorts, once each in plan order: "Clustered Index Scan
// dbo.Work.PK_Work".
func accessPaths(doc *plan.Document) []string {
	s := MainStatement(doc)
	if s == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range s.QueryPlan.Nodes {
		var label string
		switch {
		case n.Access != nil && n.Access.Object().Table != "" && !isWrite(n):
			label = operatorText(n)
		case n.PhysicalOp == "Nested Loops" || n.PhysicalOp == "Hash Match" || n.PhysicalOp == "Merge Join" || n.PhysicalOp == "Sort":
			label = n.DisplayName()
		default:
			continue
		}
		if !seen[label] {
			seen[label] = true
			out = append(out, label)
		}
	}
	return out
}

// setDiff is a without the elements of b, in a's order.
func setDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !containsFold(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// planEvidence lists every plan of the query with its figures, best first
// by average duration.
func planEvidence(q *Query) []map[string]any {
	idx := make([]int, len(q.Plans))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return q.Plans[idx[a]].Runtime.AvgDurationMs < q.Plans[idx[b]].Runtime.AvgDurationMs
	})
	var out []map[string]any
	for _, i := range idx {
		pl := &q.Plans[i]
		rt := pl.Runtime
		e := map[string]any{"plan": planLabel(q, i), "executions": rt.Executions, "avg_duration_ms": round(rt.AvgDurationMs, 3),
			"avg_cpu_ms": round(rt.AvgCPUMs, 3), "avg_logical_reads": round(rt.AvgLogicalReads, 1)}
		if pl.PlanID != 0 {
			e["plan_id"] = pl.PlanID
			e["query_id"] = pl.QueryID
			e["forced"] = pl.Forced
		}
		if pl.QueryPlanHash != "" {
			e["query_plan_hash"] = pl.QueryPlanHash
		}
		if pl.PlanType != "" {
			e["plan_type"] = pl.PlanType
		}
		for k, v := range map[string]*float64{"max_duration_ms": rt.MaxDurationMs, "stdev_duration_ms": rt.StdevDurationMs,
			"max_logical_reads": rt.MaxLogicalReads, "avg_rows": rt.AvgRows} {
			if v != nil {
				e[k] = round(*v, 3)
			}
		}
		if vs := compiledValues(pl.Document); len(vs) > 0 {
			e["compiled_values"] = valuesMap(vs)
		}
		if a := accessPaths(pl.Document); len(a) > 0 {
			e["operators"] = a
		}
		if pl.Document == nil {
			e["no_plan"] = true
		}
		out = append(out, e)
	}
	return out
}

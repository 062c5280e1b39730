package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// SerialPlan reports statements costly enough to run in parallel whose plan
// is serial for a reason the plan names and the user can change.
var SerialPlan = &Rule{
	Code:     "PL404",
	Name:     "serial-plan",
	Severity: Warning,
	Summary:  "A statement above the cost threshold for parallelism was forced to a serial plan",
	Params: []Param{
		{"warn_elapsed_ms", 1000, "an actual elapsed time from this many milliseconds, mostly on CPU, makes it a warning"},
		{"cpu_share", 0.5, "the share of elapsed time spent on CPU from which a serial plan is CPU-bound (parallelism could help)"},
		{"warn_cost", 100, "in estimated plans, an estimated cost from this makes it a warning"},
	},
	Doc: Doc{
		Problem: "A statement whose estimated cost is above the server's cost threshold for parallelism (5 by default) " +
			"would be considered for a parallel plan. Some constructs forbid that: a scalar T-SQL UDF, a table variable " +
			"being modified, some intrinsic functions, a `MAXDOP 1` hint or setting, a cursor type. A long CPU-bound " +
			"statement then runs on one core while others stay idle.",
		Evidence: "`QueryPlan/@NonParallelPlanReason` on a statement whose `StatementSubTreeCost` is at or above the cost " +
			"threshold (the catalog fact `cost_threshold_for_parallelism` when known, else 5) and whose optimization level " +
			"is not TRIVIAL. Actual plans grade it by `QueryTimeStats`: CPU-bound and long is a warning. `MaxDOPSetToOne` " +
			"with a `MAXDOP 1` hint in the text names the hint; without one the setting comes from the server, the database " +
			"(`MAXDOP` scoped configuration) or Resource Governor: often deliberate, so it is reported only where it " +
			"measurably hurts (warning level), and as one root cause: once, on the document's first such statement, " +
			"with the count of the others.",
		Example: "`NonParallelPlanReason=\"TableVariableTransactionsDoNotSupportParallelNestedTransaction\"` on an " +
			"`INSERT @t SELECT ...`: the insert into the table variable keeps the whole SELECT serial. " +
			"`NonParallelPlanReason=\"MaxDOPSetToOne\"` with `OPTION (MAXDOP 1)` on a statement of cost 3,119 whose " +
			"`QueryTimeStats` show 6.6 s elapsed and 5.7 s of CPU: one core did all the work.",
		Fix: "Depends on the reason; the finding names it: rewrite scalar UDFs as inline table-valued functions (or rely on " +
			"SQL Server 2019 scalar UDF inlining where it applies), use a `#temp` table instead of a table variable that is " +
			"written to, compute non-parallelizable intrinsics (`OBJECT_NAME`, `ERROR_*`, `CONTEXT_INFO`, ...) into a " +
			"variable first, remove or raise `MAXDOP 1`, use a STATIC or KEYSET cursor or a set-based statement.",
		FalseAlarms: "When another rule reports an error on one of the statement's operators (a scan an index would " +
			"avoid, a misestimate), that is the root cause of the cost: the serial plan is then info and says so. " +
			"Silent under the cost threshold, on TRIVIAL plans, and where the reason is not the query's: " +
			"`EstimatedDOPIsOne` (one scheduler available) and edition limits (`NoParallelPlansInDesktopOrExpressEdition`, " +
			"`NoParallelCreateIndexInNonEnterpriseEdition`). A deliberate `MAXDOP 1` (OLTP servers, SharePoint) is a choice: " +
			"suppress it with that reason.",
	},
	// After every rule: a serial plan whose cost another finding explains
	// (a scan an index would avoid) is that finding's consequence.
	After: []string{"*"},
	Run:   runSerialPlan,
	facts: maxdopSettingFacts,
}

// serialReason explains one NonParallelPlanReason value and its fix.
type serialReason struct {
	why, fix string
}

var serialReasons = map[string]serialReason{
	"MaxDOPSetToOne": {"max degree of parallelism is 1",
		"remove or raise the MAXDOP 1 hint, or the server's 'max degree of parallelism', the database's MAXDOP scoped configuration or the Resource Governor workload group's MAX_DOP"},
	"TSQLUserDefinedFunctionsNotParallelizable": {"a scalar T-SQL user-defined function is called",
		"rewrite the scalar UDF as an inline table-valued function used through CROSS APPLY, or make it inlineable for SQL Server 2019 scalar UDF inlining (compatibility level 150)"},
	"CLRUserDefinedFunctionRequiresDataAccess": {"a CLR user-defined function reads data",
		"move the CLR function's data access into the query, or mark the function DataAccessKind.None if it does not read data"},
	"TableVariableTransactionsDoNotSupportParallelNestedTransaction": {"the statement modifies a table variable",
		"insert into a #temp table instead of the table variable (a SELECT into a #temp table can run in parallel)"},
	"DMLQueryReturnsOutputToClient": {"the DML statement returns OUTPUT rows to the client",
		"OUTPUT ... INTO a #temp table and select from it afterwards"},
	"NonParallelizableIntrinsicFunction": {"a non-parallelizable intrinsic function is called",
		"compute the function (OBJECT_NAME, ERROR_*, CONTEXT_INFO, @@TRANCOUNT, ...) into a variable before the statement and use the variable"},
	"NoParallelDynamicCursor":            {"a dynamic cursor cannot use a parallel plan", "declare the cursor STATIC or KEYSET, or replace it with a set-based statement"},
	"NoParallelFastForwardCursor":        {"a fast-forward cursor cannot use a parallel plan", "declare the cursor STATIC or KEYSET, or replace it with a set-based statement"},
	"NoParallelCursorFetchByBookmark":    {"a cursor fetches by bookmark", "declare the cursor STATIC, or replace it with a set-based statement"},
	"NoParallelWithRemoteQuery":          {"part of the query runs on a linked server", "copy the remote rows into a #temp table first (OPENQUERY), then run the costly part locally"},
	"UpdatingWritebackVariable":          {"the statement assigns to a variable (SELECT @v = ...)", "return the rows into a #temp table or compute the value with a set-based aggregate"},
	"NoParallelForMemoryOptimizedTables": {"it reads a memory-optimized table through interop", "none inside this statement: move the costly part to a disk-based #temp table or a natively compiled module"},
	"ParallelismDisabledByTraceFlag":     {"a trace flag disables parallelism", "remove the trace flag (QUERYTRACEON or DBCC TRACEON) that disables parallel plans"},
	"CouldNotGenerateValidParallelPlan": {"the optimizer could not build a valid parallel plan (older versions report scalar UDFs, table variable writes and other blockers this way)",
		"look for scalar UDFs, table variable modifications, system functions or cursor options in the statement and remove them from the costly part"},
}

// notTheQuerys are reasons the statement cannot change: the edition, the
// hardware, an upgrade in progress.
var notTheQuerys = map[string]bool{
	"EstimatedDOPIsOne":                           true,
	"NoParallelPlansInDesktopOrExpressEdition":    true,
	"NoParallelCreateIndexInNonEnterpriseEdition": true,
	"NoParallelPlansDuringUpgrade":                true,
	"NoParallelForPDWCompilation":                 true,
	"NoParallelForCloudDBReplication":             true,
}

func runSerialPlan(p *Pass) {
	st := p.Statement
	q := st.QueryPlan
	if !serialCandidate(p, st) {
		return
	}
	reason := q.NonParallelPlanReason
	threshold, source := costThreshold(p)
	info, known := serialReasons[reason]
	if !known {
		info = serialReason{"the plan says " + reason, "remove the construct that prevents parallelism (" + reason + ")"}
	}
	ev := map[string]any{"reason": reason, "statement_cost": round(st.SubtreeCost, 3), "cost_threshold": threshold}
	var b strings.Builder
	fmt.Fprintf(&b, "the plan is serial because %s (NonParallelPlanReason %s), although its estimated cost %s is above the cost threshold for parallelism (%s, %s)",
		info.why, reason, costText(st.SubtreeCost), strconv.FormatFloat(threshold, 'g', -1, 64), source)
	fix := info.fix
	measured, timing := serialSeverity(p, st)
	sev := measured
	explained := explainedElsewhere(p)
	if explained != "" {
		sev = Info
	}
	setting := false
	if reason == "MaxDOPSetToOne" {
		if m := maxdopHint.FindStringSubmatch(st.Text); m != nil {
			ev["hint"] = "MAXDOP " + m[1]
			b.WriteString("; the statement has OPTION (MAXDOP " + m[1] + ")")
			fix = "remove the MAXDOP " + m[1] + " hint or raise it, if the hint is not there on purpose"
		} else {
			// A setting outside the statement, often deliberate: reported
			// only where it measurably hurts, once for every statement of
			// the file it affects (on the first, as info when another
			// finding explains that statement's cost and others share the
			// setting; not at all when it is the only one).
			if measured < Warning {
				return
			}
			setting = true
			b.WriteString("; the statement has no MAXDOP hint, so the setting comes from the server, the database or Resource Governor")
			fix = "if MAXDOP 1 is not deliberate: sp_configure 'max degree of parallelism' (e.g. the number of cores per NUMA node, at most 8), ALTER DATABASE SCOPED CONFIGURATION SET MAXDOP, or the workload group's MAX_DOP"
		}
	}
	head := b.String()
	b.Reset()
	if qt := q.QueryTime; qt != nil {
		ev["elapsed_ms"], ev["cpu_ms"] = qt.ElapsedTimeMs, qt.CPUTimeMs
		fmt.Fprintf(&b, "; it ran %s with %s of CPU%s", units.Ms(qt.ElapsedTimeMs), units.Ms(qt.CPUTimeMs), timing)
		if qt.HasUDF && qt.UDFElapsedTimeMs > 0 {
			ev["udf_elapsed_ms"] = qt.UDFElapsedTimeMs
			fmt.Fprintf(&b, ", %s of it in user-defined functions", units.Ms(qt.UDFElapsedTimeMs))
		}
	}
	if explained != "" {
		ev["deferred_to"] = explained
		fmt.Fprintf(&b, "; fix the %s finding on this statement first: parallelism would only spread that cost over more cores", explained)
	}
	tail := b.String()
	if !setting {
		p.Report(Finding{Severity: sev, Message: head + tail, Fix: fix, Evidence: ev})
		return
	}
	p.across(func(p *Pass, fs *facts) {
		all := fs.all
		if len(all) == 0 || all[0].Ordinal != p.Statement.Ordinal {
			return // reported on the file's first such statement
		}
		if explained != "" && len(all) <= 1 {
			return // the only such statement, and its cost has another cause
		}
		msg := head
		if others := len(all) - 1; others > 0 {
			ev["other_statements"] = others
			msg += fmt.Sprintf("; the same setting keeps %d other costly %s of this plan serial", others, plural(others, "statement"))
		}
		p.Report(Finding{Severity: sev, Message: msg + tail, Fix: fix, Evidence: ev})
	})
}

// maxdopSettingFacts marks a statement kept serial by a MAXDOP setting (no
// hint) at warning level: one root cause for every such statement.
func maxdopSettingFacts(p *Pass) any {
	s := p.Statement
	if !serialCandidate(p, s) || s.QueryPlan.NonParallelPlanReason != "MaxDOPSetToOne" || maxdopHint.MatchString(s.Text) {
		return nil
	}
	if sev, _ := serialSeverity(p, s); sev < Warning {
		return nil
	}
	return true
}

// explainedElsewhere names a rule that reported an error on one of the
// statement's operators (a scan an index would avoid, a misestimate): its
// cause likely makes the plan as costly as it is. Findings about the grant,
// the compile or thread skew do not explain the cost.
func explainedElsewhere(p *Pass) string {
	for _, f := range p.Prior("") {
		switch f.Rule {
		case p.Rule.Name, MemoryGrant.Name, OptimizerEarlyAbort.Name, CompileCost.Name, ParallelThreadSkew.Name:
			continue
		}
		if f.Severity == Error && f.NodeID != nil {
			return f.Rule
		}
	}
	return ""
}

// serialSeverity grades a serial plan: a warning when it ran long and
// mostly on CPU, or, in an estimated plan, when its cost is high.
func serialSeverity(p *Pass, st *plan.Statement) (Severity, string) {
	if qt := st.QueryPlan.QueryTime; qt != nil {
		if qt.ElapsedTimeMs >= p.Param("warn_elapsed_ms") && qt.CPUTimeMs >= p.Param("cpu_share")*qt.ElapsedTimeMs {
			return Warning, ", CPU-bound on one core"
		}
		return Info, ""
	}
	if !st.IsActual() && st.SubtreeCost >= p.Param("warn_cost") {
		return Warning, ""
	}
	return Info, ""
}

// serialCandidate reports a non-trivial serial statement above the cost
// threshold whose NonParallelPlanReason is the query's or its settings'.
func serialCandidate(p *Pass, st *plan.Statement) bool {
	q := st.QueryPlan
	if q == nil || q.NonParallelPlanReason == "" || notTheQuerys[q.NonParallelPlanReason] || q.DegreeOfParallelism > 1 {
		return false
	}
	if strings.EqualFold(st.OptmLevel, "TRIVIAL") {
		return false
	}
	threshold, _ := costThreshold(p)
	return st.SubtreeCost >= threshold
}

func init() { register(SerialPlan) }

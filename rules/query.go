package rules

import (
	"fmt"
	"time"

	"github.com/planlint/planlint/plan"
)

// QuerySource says where the figures of a Query come from.
type QuerySource int

// Query sources.
const (
	SourcePlanCache  QuerySource = iota + 1 // sys.dm_exec_query_stats: figures since the plan was cached
	SourceQueryStore                        // sys.query_store_runtime_stats: figures over a period
)

func (s QuerySource) String() string {
	switch s {
	case SourcePlanCache:
		return "plan cache"
	case SourceQueryStore:
		return "Query Store"
	}
	return fmt.Sprintf("QuerySource(%d)", int(s))
}

// Query is one query as the server tracks it — the plans of one query_hash
// in one database (plan cache) or of one query_id and its Parameter
// Sensitive Plan variants (Query Store) — with the runtime figures the
// server kept for each plan. It is the input of the rules that compare
// executions rather than read one plan (Rule.RunQuery), as a
// golang.org/x/tools/go/analysis pass reads a package rather than a file.
type Query struct {
	Source QuerySource
	// QueryID is the Query Store query (the parent query of PSP
	// variants); 0 for the plan cache.
	QueryID   int64
	QueryHash string // 0x…
	Database  string
	Plans     []QueryPlanRun
}

// QueryPlanRun is one plan of a Query with its runtime figures.
type QueryPlanRun struct {
	// Name is the report entry the plan's findings go to.
	Name string
	// QueryID is the plan's own Query Store query (a PSP variant's
	// query differs from Query.QueryID); PlanID its plan. Both 0 for the
	// plan cache.
	QueryID, PlanID int64
	QueryPlanHash   string // 0x…
	PlanHandle      string // plan cache: 0x…, for DBCC FREEPROCCACHE
	// Forced: Query Store forces this plan.
	Forced bool
	// PlanType is Query Store's plan_type_desc ("Compiled Plan",
	// "Dispatcher Plan", "Query Variant Plan"; empty before SQL Server 2022).
	PlanType string
	// Document is the plan, nil when the server no longer has it.
	Document *plan.Document
	// Findings are the statement rules' findings on Document, so that a
	// query rule can point to the finding that explains a plan.
	Findings []Finding
	Runtime  PlanRuntime
}

// PlanRuntime are a plan's figures per execution. A nil figure is one the
// server does not keep.
type PlanRuntime struct {
	Executions      int64
	AvgDurationMs   float64
	AvgCPUMs        float64
	AvgLogicalReads float64
	MinDurationMs   *float64
	MaxDurationMs   *float64
	StdevDurationMs *float64 // Query Store only
	MaxCPUMs        *float64
	MinLogicalReads *float64
	MaxLogicalReads *float64
	StdevReads      *float64 // Query Store only
	AvgRows         *float64
	LastExecution   time.Time // UTC; zero when unknown
	Compiled        time.Time // UTC; zero when unknown
}

// QueryFinding is a finding of a query rule on one plan of the query.
type QueryFinding struct {
	// Plan is the index in Query.Plans of the plan the finding is about.
	Plan int
	Finding
}

// QueryPass carries what a query rule sees.
type QueryPass struct {
	Rule  *Rule
	Query *Query

	params   map[string]float64
	findings []QueryFinding
}

// Param returns the configured value of one of the rule's parameters.
func (p *QueryPass) Param(name string) float64 {
	return (&Pass{Rule: p.Rule, params: p.params}).Param(name)
}

// Report records a finding about plan i (an index into Query.Plans):
// rule, code and the plan's main statement are filled in.
func (p *QueryPass) Report(i int, f Finding) {
	f.Rule = p.Rule.Name
	f.Code = p.Rule.Code
	if f.Severity == 0 {
		f.Severity = p.Rule.Severity
	}
	f.Batch = 1
	if s := MainStatement(p.Query.Plans[i].Document); s != nil {
		f.Batch, f.StatementID, f.Ordinal = s.Batch, s.ID, s.Ordinal
	}
	p.findings = append(p.findings, QueryFinding{Plan: i, Finding: f})
}

// MainStatement is the statement a pulled plan's runtime figures belong to:
// the first with a query plan, nil when there is none.
func MainStatement(doc *plan.Document) *plan.Statement {
	if doc == nil {
		return nil
	}
	for _, s := range doc.Statements() {
		if s.QueryPlan != nil {
			return s
		}
	}
	return nil
}

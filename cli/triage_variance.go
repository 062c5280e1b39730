package cli

import (
	"fmt"
	"strconv"

	"github.com/planlint/planlint/capture"
	"github.com/planlint/planlint/report"
	"github.com/planlint/planlint/rules"
)

// queryGroups gathers the pulled statements into the queries the server
// tracks, in the order of their first statement: the plan cache's
// statements by query_hash and database, Query Store's plans by query_id
// (a Parameter Sensitive Plan variant with its parent query). A statement
// without a query hash is a query of its own. It sorts nothing and judges
// nothing: the rules compare the plans.
func queryGroups(tr *triaged) []*rules.Query {
	var out []*rules.Query
	byKey := map[string]*rules.Query{}
	for i, f := range tr.files {
		p := tr.pulled[f]
		q := &rules.Query{Database: p.Database}
		key := "#" + strconv.Itoa(i)
		switch {
		case p.Store != nil:
			q.Source, q.QueryID, q.QueryHash = rules.SourceQueryStore, p.Store.QueryID, p.Store.QueryHash
			if p.Store.ParentQueryID != 0 {
				q.QueryID = p.Store.ParentQueryID
			}
			key = fmt.Sprintf("query %d", q.QueryID)
		case p.Cache != nil:
			q.Source, q.QueryHash = rules.SourcePlanCache, p.Cache.QueryHash
			if capture.KnownQueryHash(q.QueryHash) {
				key = q.QueryHash + "\x00" + p.Database
			}
		default:
			continue
		}
		if g := byKey[key]; g != nil {
			q = g
		} else {
			byKey[key] = q
			out = append(out, q)
		}
		q.Plans = append(q.Plans, planRun(f, p))
	}
	return out
}

// planRun converts a pulled statement for the query rules: figures per
// execution in milliseconds and pages.
func planRun(f *report.File, p *capture.Pulled) rules.QueryPlanRun {
	r := p.Runtime
	n := float64(r.Executions)
	per := func(total float64) float64 {
		if n <= 0 {
			return 0
		}
		return total / n
	}
	msOf := func(us *float64) *float64 {
		if us == nil {
			return nil
		}
		v := *us / 1000
		return &v
	}
	run := rules.QueryPlanRun{Name: p.Name, Document: p.Doc, Findings: ruleFindings(f), Runtime: rules.PlanRuntime{
		Executions: r.Executions, AvgDurationMs: per(r.DurationMicros) / 1000, AvgCPUMs: per(r.CPUMicros) / 1000,
		AvgLogicalReads: per(r.LogicalReads), MinDurationMs: msOf(r.MinDurationMicros), MaxDurationMs: msOf(r.MaxDurationMicros),
		StdevDurationMs: msOf(r.StdevDurationMicros), MaxCPUMs: msOf(r.MaxCPUMicros), MinLogicalReads: r.MinLogicalReads,
		MaxLogicalReads: r.MaxLogicalReads, StdevReads: r.StdevLogicalReads, AvgRows: r.AvgRows,
		LastExecution: r.LastExecution, Compiled: r.Compiled,
	}}
	switch {
	case p.Store != nil:
		s := p.Store
		run.QueryID, run.PlanID, run.QueryPlanHash, run.Forced, run.PlanType = s.QueryID, s.PlanID, s.QueryPlanHash, s.Forced, s.PlanType
	case p.Cache != nil:
		run.QueryPlanHash, run.PlanHandle = p.Cache.QueryPlanHash, p.Cache.PlanHandle
	}
	return run
}

// analyseQueries runs the query rules on every query of the pull and adds
// their findings to the entry of the plan each is about.
func (t *triageRun) analyseQueries(tr *triaged) error {
	byName := map[string]*report.File{}
	for _, f := range tr.files {
		byName[f.Path] = f
	}
	cfg := t.inv.rulesConfig()
	for _, q := range queryGroups(tr) {
		fs, err := rules.AnalyzeQuery(q, cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", q.Plans[0].Name, err) // a rule failed: a planlint bug
		}
		for _, qf := range fs {
			f := byName[q.Plans[qf.Plan].Name]
			f.Findings = append(f.Findings, report.Wrap([]rules.Finding{qf.Finding})...)
		}
	}
	return nil
}

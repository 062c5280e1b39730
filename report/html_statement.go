package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/planlint/planlint/plan"
)

// htmlIndex is one entry of a statement's index panel: the DDL and where
// it comes from.
type htmlIndex struct {
	Source string // "PL102 key-lookup" or "optimizer's missing-index suggestion, impact 87%"
	Target string // finding DOM id, when a finding proposes it
	DDL    string
}

// htmlStatementProperties are the statement-level facts shown above its
// plan, in reading order, rendered from the statement's properties (the
// model JSON and --tree print); a fact the panel needs goes there first.
// The panel gives figures exactly (ms, KB), as the details panels do.
func htmlStatementProperties(s *Statement) []htmlDetail {
	p := s.Properties
	if p == nil {
		return nil
	}
	var d []htmlDetail
	add := func(name, value string) {
		if value != "" {
			d = append(d, htmlDetail{Name: name, Value: value})
		}
	}
	ms := func(v float64) string { return FormatCount(v) + " ms" }
	kb := func(v float64) string { return FormatCount(v) + " KB" }
	add("Optimization", p.OptimizationLevel)
	add("Early abort", p.EarlyAbortReason)
	if p.CEModelVersion > 0 {
		add("CE version", strconv.Itoa(p.CEModelVersion))
	}
	switch {
	case p.EffectiveDegreeOfParallelism > 0:
		add("DOP", fmt.Sprintf("%d (effective %d)", p.DegreeOfParallelism, p.EffectiveDegreeOfParallelism))
	case p.DegreeOfParallelism > 0:
		add("DOP", strconv.Itoa(p.DegreeOfParallelism))
	}
	add("Serial because", p.NonParallelPlanReason)
	if qt := p.QueryTime; qt != nil {
		add("Elapsed / CPU", ms(qt.ElapsedMs)+" / "+ms(qt.CPUMs))
	}
	if g := p.MemoryGrant; g != nil {
		add("Memory grant", memoryGrantText(g, kb))
	} else if p.MemoryGrantKB > 0 {
		add("Memory grant", kb(p.MemoryGrantKB))
	}
	if c := p.Compile; c != nil {
		if c.TimeMs > 0 || c.CPUMs > 0 {
			v := ms(c.TimeMs)
			if c.CPUMs > 0 {
				v += " (CPU " + ms(c.CPUMs) + ")"
			}
			if c.MemoryKB > 0 {
				v += ", " + kb(c.MemoryKB)
			}
			add("Compile", v)
		}
		if c.CachedPlanSizeKB > 0 {
			add("Cached plan", kb(c.CachedPlanSizeKB))
		}
	}
	if t := p.Threads; t != nil && t.UsedThreads > 0 {
		add("Threads", fmt.Sprintf("%d in %d %s", t.UsedThreads, t.Branches, pluralWord(t.Branches, "branch", "branches")))
	}
	if len(p.Waits) > 0 {
		var parts []string
		for i, w := range p.Waits {
			if i == 5 {
				parts = append(parts, fmt.Sprintf("%d more", len(p.Waits)-5))
				break
			}
			parts = append(parts, w.Type+" "+ms(w.TimeMs))
		}
		add("Waits", strings.Join(parts, ", "))
	}
	var flags []string
	for _, tf := range p.TraceFlags {
		flags = append(flags, strconv.Itoa(tf))
	}
	add("Trace flags", strings.Join(flags, ", "))
	add("Statement warnings", strings.ReplaceAll(strings.Join(p.Warnings, "; "), "\n", "; "))
	add("Plan guide", p.PlanGuide)
	add("Query hash", p.QueryHash)
	return d
}

// memoryGrantText is the memory grant line: what an estimated plan would
// ask for (desired), or what an actual plan was requested, granted and
// used. An estimated plan has no grant: it is not "granted 0 KB".
func memoryGrantText(g *MemoryGrantStats, kb func(float64) string) string {
	if g.GrantedKB == nil {
		if g.DesiredKB > 0 {
			return "desired " + kb(g.DesiredKB)
		}
		return ""
	}
	v := "granted " + kb(*g.GrantedKB)
	if g.RequestedKB > 0 && g.RequestedKB != *g.GrantedKB {
		v = "requested " + kb(g.RequestedKB) + ", " + v
	}
	if *g.MaxUsedKB > 0 || *g.GrantedKB > 0 {
		v += ", used " + kb(*g.MaxUsedKB)
	}
	if *g.GrantWaitS > 0 {
		v += fmt.Sprintf(", waited %s s", FormatCount(*g.GrantWaitS))
	}
	return v
}

// statementIndexes are the index DDL proposals of a statement: those its
// findings carry (evidence key create_index) and the optimizer's
// missing-index suggestions in the plan that no finding already covers.
func statementIndexes(s *Statement, findings []*htmlFinding, evidence map[*htmlFinding]map[string]any) []htmlIndex {
	var out []htmlIndex
	seen := map[string]bool{}
	for _, hx := range findings {
		ddl, _ := evidence[hx]["create_index"].(string)
		if ddl == "" || seen[ddl] {
			continue
		}
		seen[ddl] = true
		out = append(out, htmlIndex{Source: hx.Code + " " + hx.Rule, Target: hx.ID, DDL: ddl})
	}
	if s.Source == nil || s.Source.QueryPlan == nil {
		return out
	}
	for _, g := range s.Source.QueryPlan.MissingIndexes {
		for _, mi := range g.Indexes {
			ddl := missingIndexDDL(mi)
			if seen[ddl] {
				continue
			}
			seen[ddl] = true
			out = append(out, htmlIndex{Source: fmt.Sprintf("the optimizer's missing-index suggestion, estimated impact %s%%", strconv.FormatFloat(g.Impact, 'f', 0, 64)), DDL: ddl})
		}
	}
	return out
}

// missingIndexDDL writes a MissingIndex element as the CREATE INDEX it
// suggests: equality columns, then inequality columns, then INCLUDE.
func missingIndexDDL(mi plan.MissingIndex) string {
	keys := append(append([]string(nil), mi.Equality...), mi.Inequality...)
	name := "IX_" + mi.Table
	for _, k := range keys {
		name += "_" + k
	}
	if len(name) > 128 {
		name = name[:128]
	}
	quote := func(cols []string) string {
		q := make([]string, len(cols))
		for i, c := range cols {
			q[i] = bracket(c)
		}
		return strings.Join(q, ", ")
	}
	table := bracket(mi.Table)
	if mi.Schema != "" {
		table = bracket(mi.Schema) + "." + table
	}
	if mi.Database != "" {
		table = bracket(mi.Database) + "." + table
	}
	ddl := fmt.Sprintf("CREATE INDEX %s ON %s (%s)", bracket(name), table, quote(keys))
	if len(mi.Include) > 0 {
		ddl += " INCLUDE (" + quote(mi.Include) + ")"
	}
	return ddl + ";"
}

func bracket(name string) string { return "[" + strings.ReplaceAll(name, "]", "]]") + "]" }

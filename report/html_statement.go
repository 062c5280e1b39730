package report

import (
	"fmt"
	"sort"
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

// htmlStatementProperties are the statement-level facts shown above its plan,
// in reading order. Each is read from the plan model; add new ones here.
func htmlStatementProperties(s *Statement) []htmlDetail {
	var d []htmlDetail
	add := func(name, value string) {
		if value != "" {
			d = append(d, htmlDetail{Name: name, Value: value})
		}
	}
	ms := func(v float64) string { return FormatCount(v) + " ms" }
	kb := func(v float64) string { return FormatCount(v) + " KB" }
	src := s.Source
	if src == nil {
		return nil
	}
	add("Optimization", src.OptmLevel)
	add("Early abort", src.OptmEarlyAbortReason)
	if src.CEModelVersion > 0 {
		add("CE version", strconv.Itoa(src.CEModelVersion))
	}
	q := src.QueryPlan
	if q == nil {
		return d
	}
	switch {
	case q.EffectiveDOP > 0 && q.EffectiveDOP != q.DegreeOfParallelism:
		add("DOP", fmt.Sprintf("%d (effective %d)", q.DegreeOfParallelism, q.EffectiveDOP))
	case q.DegreeOfParallelism > 0:
		add("DOP", strconv.Itoa(q.DegreeOfParallelism))
	}
	add("Serial because", q.NonParallelPlanReason)
	if qt := q.QueryTime; qt != nil {
		add("Elapsed / CPU", ms(qt.ElapsedTimeMs)+" / "+ms(qt.CPUTimeMs))
	}
	if g := q.MemoryGrant; g != nil {
		v := "granted " + kb(g.GrantedKB)
		if g.RequestedKB > 0 && g.RequestedKB != g.GrantedKB {
			v = "requested " + kb(g.RequestedKB) + ", " + v
		}
		if g.MaxUsedKB > 0 || g.GrantedKB > 0 {
			v += ", used " + kb(g.MaxUsedKB)
		}
		if g.GrantWaitTimeS > 0 {
			v += fmt.Sprintf(", waited %s s", FormatCount(g.GrantWaitTimeS))
		}
		add("Memory grant", v)
	} else if q.MemoryGrantKB > 0 {
		add("Memory grant", kb(q.MemoryGrantKB))
	}
	if q.CompileTimeMs > 0 || q.CompileCPUMs > 0 {
		v := ms(q.CompileTimeMs)
		if q.CompileCPUMs > 0 {
			v += " (CPU " + ms(q.CompileCPUMs) + ")"
		}
		if q.CompileMemoryKB > 0 {
			v += ", " + kb(q.CompileMemoryKB)
		}
		add("Compile", v)
	}
	if q.CachedPlanSizeKB > 0 {
		add("Cached plan", kb(q.CachedPlanSizeKB))
	}
	if t := q.ThreadStat; t != nil && t.UsedThreads > 0 {
		add("Threads", fmt.Sprintf("%d in %d %s", t.UsedThreads, t.Branches, map[bool]string{true: "branch", false: "branches"}[t.Branches == 1]))
	}
	if len(q.Waits) > 0 {
		waits := append([]plan.Wait(nil), q.Waits...)
		sort.SliceStable(waits, func(i, j int) bool { return waits[i].TimeMs > waits[j].TimeMs })
		var parts []string
		for i, w := range waits {
			if i == 5 {
				parts = append(parts, fmt.Sprintf("%d more", len(waits)-5))
				break
			}
			parts = append(parts, w.Type+" "+ms(w.TimeMs))
		}
		add("Waits", strings.Join(parts, ", "))
	}
	var flags []string
	for _, tf := range q.TraceFlags {
		flags = append(flags, strconv.Itoa(tf.Value))
	}
	add("Trace flags", strings.Join(flags, ", "))
	add("Statement warnings", strings.ReplaceAll(warningsText(q.Warnings), "\n", "; "))
	add("Plan guide", src.PlanGuideName)
	add("Query hash", src.QueryHash)
	return d
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

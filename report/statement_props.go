package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// StatementProperties are the statement's optimizer and runtime properties
// as the plan states them, for every renderer (JSON, --tree, HTML).
type StatementProperties struct {
	OptimizationLevel string `json:"optimization_level,omitempty"`
	EarlyAbortReason  string `json:"early_abort_reason,omitempty"`
	CEModelVersion    int    `json:"ce_model_version,omitempty"`
	// DegreeOfParallelism is QueryPlan/@DegreeOfParallelism (0 or 1: serial).
	DegreeOfParallelism int `json:"degree_of_parallelism"`
	// EffectiveDegreeOfParallelism is QueryPlan/@EffectiveDegreeOfParallelism
	// (SQL Server 2022: the DOP the plan ran with), when the plan states it.
	EffectiveDegreeOfParallelism int               `json:"effective_degree_of_parallelism,omitempty"`
	NonParallelPlanReason        string            `json:"non_parallel_plan_reason,omitempty"`
	Compile                      *CompileStats     `json:"compile,omitempty"`
	MemoryGrant                  *MemoryGrantStats `json:"memory_grant,omitempty"`
	// MemoryGrantKB is QueryPlan/@MemoryGrant of plans without
	// MemoryGrantInfo (SQL Server 2005 and 2008).
	MemoryGrantKB float64         `json:"memory_grant_kb,omitempty"`
	QueryTime     *QueryTimeStats `json:"query_time,omitempty"`
	// Waits are WaitStats, longest first (actual plans from SQL Server 2016 SP1).
	Waits   []WaitStat   `json:"waits,omitempty"`
	Threads *ThreadStats `json:"threads,omitempty"`
	// TraceFlags are the values of QueryPlan/TraceFlags/TraceFlag, in plan order.
	TraceFlags []int `json:"trace_flags,omitempty"`
	// Warnings are the plan's statement-level warnings (QueryPlan/Warnings),
	// one line each.
	Warnings  []string `json:"warnings,omitempty"`
	PlanGuide string   `json:"plan_guide,omitempty"`
	QueryHash string   `json:"query_hash,omitempty"`
}

// CompileStats are the compile figures of QueryPlan.
type CompileStats struct {
	CPUMs              float64 `json:"cpu_ms"`
	TimeMs             float64 `json:"time_ms"`
	MemoryKB           float64 `json:"memory_kb"`
	MaxCompileMemoryKB float64 `json:"max_compile_memory_kb,omitempty"`
	CachedPlanSizeKB   float64 `json:"cached_plan_size_kb,omitempty"`
}

// MemoryGrantStats is MemoryGrantInfo in KB (wait in seconds). Granted, used
// and wait are known only in actual plans.
type MemoryGrantStats struct {
	DesiredKB        float64  `json:"desired_kb"`
	RequestedKB      float64  `json:"requested_kb,omitempty"`
	GrantedKB        *float64 `json:"granted_kb,omitempty"`
	MaxUsedKB        *float64 `json:"max_used_kb,omitempty"`
	GrantWaitS       *float64 `json:"grant_wait_s,omitempty"`
	MaxQueryMemoryKB float64  `json:"max_query_memory_kb,omitempty"`
	Feedback         string   `json:"feedback,omitempty"`
}

// QueryTimeStats is QueryTimeStats in milliseconds.
type QueryTimeStats struct {
	CPUMs        float64  `json:"cpu_ms"`
	ElapsedMs    float64  `json:"elapsed_ms"`
	UDFCPUMs     *float64 `json:"udf_cpu_ms,omitempty"`
	UDFElapsedMs *float64 `json:"udf_elapsed_ms,omitempty"`
}

// WaitStat is one WaitStats/Wait.
type WaitStat struct {
	Type   string  `json:"type"`
	TimeMs float64 `json:"time_ms"`
	Count  float64 `json:"count"`
}

// ThreadStats is ThreadStat.
type ThreadStats struct {
	Branches        int `json:"branches"`
	UsedThreads     int `json:"used_threads,omitempty"`
	ReservedThreads int `json:"reserved_threads,omitempty"`
}

// statementProperties reads the properties of a statement; nil when it has
// none (a statement without plan or optimizer attributes).
func statementProperties(s *plan.Statement) *StatementProperties {
	p := &StatementProperties{OptimizationLevel: s.OptmLevel, EarlyAbortReason: s.OptmEarlyAbortReason, CEModelVersion: s.CEModelVersion,
		PlanGuide: s.PlanGuideName, QueryHash: s.QueryHash}
	q := s.QueryPlan
	if q == nil {
		if p.OptimizationLevel == "" && p.EarlyAbortReason == "" && p.CEModelVersion == 0 && p.PlanGuide == "" && p.QueryHash == "" {
			return nil
		}
		return p
	}
	p.DegreeOfParallelism = q.DegreeOfParallelism
	if q.EffectiveDOP > 0 && q.EffectiveDOP != q.DegreeOfParallelism {
		p.EffectiveDegreeOfParallelism = q.EffectiveDOP
	}
	p.NonParallelPlanReason = q.NonParallelPlanReason
	for _, tf := range q.TraceFlags {
		p.TraceFlags = append(p.TraceFlags, tf.Value)
	}
	p.Warnings = warningLines(q.Warnings)
	if q.MemoryGrant == nil {
		p.MemoryGrantKB = q.MemoryGrantKB
	}
	if q.CompileCPUMs > 0 || q.CompileTimeMs > 0 || q.CompileMemoryKB > 0 || q.CachedPlanSizeKB > 0 {
		p.Compile = &CompileStats{CPUMs: q.CompileCPUMs, TimeMs: q.CompileTimeMs, MemoryKB: q.CompileMemoryKB, CachedPlanSizeKB: q.CachedPlanSizeKB}
		if q.Hardware != nil {
			p.Compile.MaxCompileMemoryKB = q.Hardware.MaxCompileMemoryKB
		}
	}
	if g := q.MemoryGrant; g != nil {
		m := &MemoryGrantStats{DesiredKB: max(g.DesiredKB, g.SerialDesiredKB), RequestedKB: g.RequestedKB, MaxQueryMemoryKB: g.MaxQueryMemoryKB, Feedback: g.FeedbackAdjusted}
		if s.IsActual() {
			granted, used, wait := g.GrantedKB, g.MaxUsedKB, g.GrantWaitTimeS
			m.GrantedKB, m.MaxUsedKB, m.GrantWaitS = &granted, &used, &wait
		}
		p.MemoryGrant = m
	}
	if t := q.QueryTime; t != nil {
		p.QueryTime = &QueryTimeStats{CPUMs: t.CPUTimeMs, ElapsedMs: t.ElapsedTimeMs}
		if t.HasUDF {
			cpu, el := t.UDFCPUTimeMs, t.UDFElapsedTimeMs
			p.QueryTime.UDFCPUMs, p.QueryTime.UDFElapsedMs = &cpu, &el
		}
	}
	for _, w := range q.Waits {
		p.Waits = append(p.Waits, WaitStat{Type: w.Type, TimeMs: w.TimeMs, Count: w.Count})
	}
	sort.SliceStable(p.Waits, func(i, j int) bool { return p.Waits[i].TimeMs > p.Waits[j].TimeMs })
	if t := q.ThreadStat; t != nil {
		p.Threads = &ThreadStats{Branches: t.Branches, UsedThreads: t.UsedThreads}
		for _, r := range t.Reservations {
			p.Threads.ReservedThreads += r.ReservedThreads
		}
	}
	return p
}

// propertyLines renders the properties as short lines for the operator
// tree's statement header.
func propertyLines(p *StatementProperties) []string {
	if p == nil {
		return nil
	}
	var lines, parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	flush := func() {
		if len(parts) > 0 {
			lines = append(lines, strings.Join(parts, " · "))
			parts = nil
		}
	}
	if p.OptimizationLevel != "" {
		opt := "optimization " + p.OptimizationLevel
		if p.EarlyAbortReason != "" {
			opt += " (" + p.EarlyAbortReason + ")"
		}
		add("%s", opt)
	}
	if p.CEModelVersion > 0 {
		add("CE %d", p.CEModelVersion)
	}
	if p.DegreeOfParallelism > 1 {
		add("DOP %d", p.DegreeOfParallelism)
	} else if p.NonParallelPlanReason != "" {
		add("serial: %s", p.NonParallelPlanReason)
	}
	if t := p.Threads; t != nil {
		th := fmt.Sprintf("threads: %d %s", t.Branches, pluralWord(t.Branches, "branch", "branches"))
		if t.UsedThreads > 0 {
			th += fmt.Sprintf(", %d used", t.UsedThreads)
		}
		if t.ReservedThreads > 0 {
			th += fmt.Sprintf(", %d reserved", t.ReservedThreads)
		}
		add("%s", th)
	}
	if c := p.Compile; c != nil {
		add("compile %s CPU, %s, %s", units.Ms(c.CPUMs), units.Ms(c.TimeMs), units.KB(c.MemoryKB))
	}
	flush()
	if m := p.MemoryGrant; m != nil && (m.DesiredKB > 0 || m.GrantedKB != nil && *m.GrantedKB > 0) {
		g := "memory grant: desired " + units.KB(m.DesiredKB)
		if m.GrantedKB != nil {
			g += ", granted " + units.KB(*m.GrantedKB) + ", used " + units.KB(*m.MaxUsedKB)
			if *m.GrantedKB > 0 {
				g += fmt.Sprintf(" (%.0f%%)", 100**m.MaxUsedKB / *m.GrantedKB)
			}
			if *m.GrantWaitS > 0 {
				g += ", waited " + strconv.FormatFloat(*m.GrantWaitS, 'f', -1, 64) + " s"
			}
		}
		if m.Feedback != "" {
			g += ", feedback " + m.Feedback
		}
		add("%s", g)
	}
	if t := p.QueryTime; t != nil {
		qt := fmt.Sprintf("time: %s elapsed, %s CPU", units.Ms(t.ElapsedMs), units.Ms(t.CPUMs))
		if t.UDFCPUMs != nil {
			qt += fmt.Sprintf(", UDF %s elapsed, %s CPU", units.Ms(*t.UDFElapsedMs), units.Ms(*t.UDFCPUMs))
		}
		add("%s", qt)
	}
	flush()
	if len(p.Waits) > 0 {
		var ws []string
		for i, w := range p.Waits {
			if i == 5 {
				break
			}
			ws = append(ws, w.Type+" "+units.Ms(w.TimeMs))
		}
		lines = append(lines, "waits: "+strings.Join(ws, ", "))
	}
	return lines
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

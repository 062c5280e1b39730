// Package report renders analysis results. Renderers format what they are
// given; they never compute findings.
package report

import (
	"time"

	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/rules"
)

// SchemaVersion is the version of the JSON report layout.
const SchemaVersion = 1

// Report is the result of one planlint run.
type Report struct {
	Tool    string  `json:"tool"`
	Version string  `json:"version"`
	Files   []*File `json:"files"`
	// SuppressedBy names the configuration file whose suppress entries
	// moved findings to the files' Suppressed lists, for summaries.
	SuppressedBy string `json:"-"`
}

// File is one analysed input: a plan file, or a .sql file captured live.
type File struct {
	Path string `json:"path"`
	// Error is set when the input could not be analysed.
	Error      *string      `json:"error"`
	Statements []*Statement `json:"statements"`
	Findings   []*Finding   `json:"findings"`
	// Suppressed are the findings a suppress entry of the configuration
	// file matched, each with its Suppression; they count nowhere else.
	Suppressed []*Finding `json:"suppressed,omitempty"`
	// Plans are kept for renderers that draw operators (tree, html, dot);
	// nil when not requested.
	Plans []*plan.Document `json:"-"`
	// Config marks the entry for the configuration file itself, which
	// carries the unused-suppression findings of its suppress entries; it
	// is not an input and summaries do not count it.
	Config bool `json:"-"`
}

// Statement summarises one statement of a plan.
type Statement struct {
	Batch       int `json:"batch"`
	StatementID int `json:"statement_id"`
	// Ordinal is the statement's 1-based position in the file; findings
	// carry it, since a plan can repeat a StatementId.
	Ordinal int    `json:"ordinal"`
	Element string `json:"element"`
	Type    string `json:"type"`
	// Kind is "estimated" or "actual".
	Kind                 string          `json:"kind"`
	Nodes                int             `json:"nodes"`
	Cost                 float64         `json:"cost"`
	Text                 string          `json:"text,omitempty"`
	ParameterizationType string          `json:"parameterization_type,omitempty"`
	SetOptions           map[string]bool `json:"set_options,omitempty"`
	Location             *Location       `json:"location,omitempty"`
	// Capture says how a live capture produced the plan.
	Capture *Capture `json:"capture,omitempty"`
	// Runtime are the figures the plan cache or Query Store keeps for the
	// statement; nil for plans from files and live captures.
	Runtime *Runtime `json:"runtime,omitempty"`
	// Operators are the runtime figures per operator on actual plans.
	Operators []*OperatorRuntime `json:"operators,omitempty"`
	// Properties are the statement's optimizer and runtime properties.
	Properties *StatementProperties `json:"properties,omitempty"`
	// Source is the statement's place in the plan model, for renderers.
	Source *plan.Statement `json:"-"`
}

// Capture describes how a live plan was obtained.
type Capture struct {
	// Method is how the plan was produced, e.g. "showplan_xml batch",
	// "showplan_xml rpc sp_executesql", "statistics_xml rpc sp_executesql".
	Method     string          `json:"method"`
	Database   string          `json:"database,omitempty"`
	SetOptions map[string]bool `json:"set_options,omitempty"`
	// ParameterizationForced is the database's setting, when read.
	ParameterizationForced *bool  `json:"parameterization_forced,omitempty"`
	Note                   string `json:"note,omitempty"`
}

// Runtime are a statement's runtime figures from the plan cache or Query
// Store. A nil pointer is a figure the source or server version does not
// keep.
type Runtime struct {
	// Source is "plan_cache" or "query_store".
	Source          string   `json:"source"`
	Database        string   `json:"database,omitempty"`
	Executions      int64    `json:"executions"`
	CPUMs           float64  `json:"cpu_ms"`
	AvgCPUMs        float64  `json:"avg_cpu_ms"`
	MaxCPUMs        *float64 `json:"max_cpu_ms,omitempty"`
	DurationMs      float64  `json:"duration_ms"`
	AvgDurationMs   float64  `json:"avg_duration_ms"`
	MaxDurationMs   *float64 `json:"max_duration_ms,omitempty"`
	LogicalReads    float64  `json:"logical_reads"`
	AvgLogicalReads float64  `json:"avg_logical_reads"`
	// MaxLogicalReads is the most pages one execution read; the
	// standard deviations per execution come from Query Store.
	MaxLogicalReads   *float64 `json:"max_logical_reads,omitempty"`
	StdevDurationMs   *float64 `json:"stdev_duration_ms,omitempty"`
	StdevLogicalReads *float64 `json:"stdev_logical_reads,omitempty"`
	AvgRows           *float64 `json:"avg_rows,omitempty"`
	MinRows           *int64   `json:"min_rows,omitempty"`
	MaxRows           *int64   `json:"max_rows,omitempty"`
	// SpilledPages are the 8 KB pages spilled to tempdb (plan cache).
	SpilledPages *int64 `json:"spilled_pages,omitempty"`
	// MaxGrantKB is the largest memory grant of one execution (plan
	// cache); Query Store keeps MaxUsedMemoryKB instead.
	MaxGrantKB      *int64     `json:"max_grant_kb,omitempty"`
	MaxUsedMemoryKB *int64     `json:"max_used_memory_kb,omitempty"`
	LastExecution   *time.Time `json:"last_execution,omitempty"`
	Compiled        *time.Time `json:"compiled,omitempty"`
	// Plan cache identity.
	QueryHash     string `json:"query_hash,omitempty"`
	QueryPlanHash string `json:"query_plan_hash,omitempty"`
	PlanHandle    string `json:"plan_handle,omitempty"`
	// Query Store identity and forcing.
	QueryID       int64  `json:"query_id,omitempty"`
	PlanID        int64  `json:"plan_id,omitempty"`
	Forced        *bool  `json:"is_forced_plan,omitempty"`
	PlanType      string `json:"plan_type,omitempty"`
	ParentQueryID int64  `json:"parent_query_id,omitempty"`
	// LastForceFailure is last_force_failure_reason_desc, empty for none.
	LastForceFailure  string `json:"last_force_failure_reason,omitempty"`
	ForceFailureCount int64  `json:"force_failure_count,omitempty"`
}

// Runtime sources.
const (
	SourcePlanCache  = "plan_cache"
	SourceQueryStore = "query_store"
)

// Runtime returns the runtime figures of the file's statements, nil when
// none has them.
func (f *File) Runtime() *Runtime {
	for _, s := range f.Statements {
		if s.Runtime != nil {
			return s.Runtime
		}
	}
	return nil
}

// Location is a range in a source file (1-based lines and columns).
type Location struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	StartCol  int    `json:"start_column"`
	EndLine   int    `json:"end_line"`
	EndCol    int    `json:"end_column"`
}

// Finding is a rule finding with where it lands in the source.
type Finding struct {
	rules.Finding
	Location *Location `json:"location,omitempty"`
	// Fingerprint is the operator fingerprint (SARIF's
	// primaryLocationLineHash) and StatementFingerprint the normalised
	// statement's; set by SetFingerprints, for suppress entries to copy.
	Fingerprint          string `json:"fingerprint,omitempty"`
	StatementFingerprint string `json:"statement_fingerprint,omitempty"`
	// Suppression is set on the findings of File.Suppressed.
	Suppression *Suppression `json:"suppression,omitempty"`
	// OperatorName is the node's operator as SSMS names it ("Key Lookup
	// (Clustered)"), for renderers when the plan is not kept.
	OperatorName string `json:"-"`
}

// Suppression says what suppressed a finding.
type Suppression struct {
	// Kind is "config": a suppress entry of the configuration file.
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
	// Location is the entry in the configuration file.
	Location *Location `json:"location,omitempty"`
}

// SuppressedCount counts the suppressed findings over all files.
func (r *Report) SuppressedCount() int {
	n := 0
	for _, f := range r.Files {
		n += len(f.Suppressed)
	}
	return n
}

// SetFingerprints sets every finding's Fingerprint and
// StatementFingerprint, with paths relative to base as in SARIF.
func SetFingerprints(r *Report, base string) {
	for _, f := range r.Files {
		if len(f.Findings)+len(f.Suppressed) == 0 {
			continue
		}
		texts := statementTexts(f)
		for _, xs := range [][]*Finding{f.Findings, f.Suppressed} {
			for _, x := range xs {
				x.Fingerprint = findingFingerprints(f, x, base, texts)[0]
				if s := f.StatementOf(x); s != nil && s.Text != "" {
					x.StatementFingerprint = texts[s].text // sqlscript.Fingerprint(s.Text)
				}
			}
		}
	}
}

// Summarize builds the statement summaries of a document.
func Summarize(doc *plan.Document) []*Statement {
	kind := "estimated"
	if doc.IsActual() {
		kind = "actual"
	}
	var out []*Statement
	for _, s := range doc.Statements() {
		out = append(out, SummarizeStatement(s, kind))
	}
	return out
}

// SummarizeStatement summarises one statement; kind is the document's.
func SummarizeStatement(s *plan.Statement, kind string) *Statement {
	st := &Statement{
		Batch:       s.Batch,
		StatementID: s.ID,
		Ordinal:     s.Ordinal,
		Element:     s.Kind,
		Type:        s.Type,
		Kind:        kind,
		Nodes:       s.NodeCount(),
		Cost:        s.SubtreeCost,
		Text:        s.Text,
		Properties:  statementProperties(s),
		Source:      s,
		Operators:   operatorRuntimes(s),
	}
	if s.ParameterizationType != plan.ParamUnknown {
		st.ParameterizationType = s.ParameterizationType.String()
	}
	if s.SetOptions != nil {
		st.SetOptions = map[string]bool{}
		for _, o := range s.SetOptions.List() {
			if o.Value != nil {
				st.SetOptions[o.Name] = *o.Value
			}
		}
	}
	return st
}

// StatementOf is the statement a finding is about: the one with its
// ordinal, or with its batch and StatementId when the finding has none.
func (f *File) StatementOf(x *Finding) *Statement {
	if x.Ordinal > 0 {
		return indexOf(f).byOrdinal[x.Ordinal]
	}
	return statementOf(f, x.Batch, x.StatementID)
}

// Counts returns the number of findings per severity over all files.
func (r *Report) Counts() (errors, warnings, infos int) {
	for _, f := range r.Files {
		e, w, i := severityCounts(f.Findings)
		errors, warnings, infos = errors+e, warnings+w, infos+i
	}
	return
}

// severityCounts counts findings per severity.
func severityCounts(xs []*Finding) (errors, warnings, infos int) {
	for _, x := range xs {
		switch x.Severity {
		case rules.Error:
			errors++
		case rules.Warning:
			warnings++
		case rules.Info:
			infos++
		}
	}
	return
}

// Inputs counts the inputs of the run: the files, less the
// configuration file's entry.
func (r *Report) Inputs() int {
	n := 0
	for _, f := range r.Files {
		if !f.Config {
			n++
		}
	}
	return n
}

// Failed counts the inputs that could not be analysed.
func (r *Report) Failed() int {
	n := 0
	for _, f := range r.Files {
		if f.Error != nil {
			n++
		}
	}
	return n
}

// Max returns the highest finding severity (0 when there is none).
func (r *Report) Max() rules.Severity {
	var m rules.Severity
	for _, f := range r.Files {
		for _, x := range f.Findings {
			if x.Severity > m {
				m = x.Severity
			}
		}
	}
	return m
}

// Wrap turns rule findings into report findings without locations.
func Wrap(fs []rules.Finding) []*Finding {
	out := make([]*Finding, len(fs))
	for i := range fs {
		out[i] = &Finding{Finding: fs[i]}
	}
	return out
}

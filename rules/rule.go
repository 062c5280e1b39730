// Package rules holds planlint's analyzers. Each rule is a value with a
// stable code, a kebab-case name, a default severity, a doc page and a run
// function that reports findings through a Pass. Rules are pure functions of
// a plan statement plus optional catalog facts.
package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
)

// Severity orders findings; the zero value is not a valid severity.
type Severity int

// Severities, lowest first.
const (
	Info Severity = iota + 1
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// MarshalText renders the severity as "error", "warning" or "info".
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses "error", "warning" or "info".
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeverity parses a severity name (case-insensitive; "note" is an
// alias of info as in SARIF).
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "error":
		return Error, nil
	case "warning", "warn":
		return Warning, nil
	case "info", "note":
		return Info, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want error, warning or info)", s)
}

// Rule is one analyzer.
type Rule struct {
	Code     string   // stable code, e.g. "PL102"; never reused
	Name     string   // kebab-case name used in JSON, config and suppressions
	Severity Severity // the highest severity the rule reports by default
	Summary  string   // one line
	// Catalog reports whether the rule needs catalog facts; without them it
	// does not run.
	Catalog bool
	Params  []Param
	Doc     Doc
	// After names the rules (by name) whose findings on the same statement
	// this rule reads through Pass.Prior, so that one root cause gives one
	// finding; "*" means after every rule that does not itself say "*".
	// Like analysis.Analyzer.Requires, it orders the run, nothing else.
	After []string
	// Run analyses one statement. It is nil for rules reported by the
	// driver rather than from a plan (unused-suppression), and for rules
	// that judge a whole query.
	Run func(*Pass)
	// RunQuery analyses several plans of one query with their runtime
	// figures (plan cache, Query Store); nil for statement rules.
	RunQuery func(*QueryPass)
	// facts is what a statement shows a rule that decides across the
	// statements of a file (see Pass.across): small values, not the plan;
	// nil when the statement shows nothing.
	facts func(*Pass) any
}

// Param is a tunable threshold of a rule.
type Param struct {
	Name    string
	Default float64
	Help    string
}

// Doc is a rule's documentation, in Markdown fragments.
type Doc struct {
	Problem     string // why it hurts
	Evidence    string // how the plan shows it
	Example     string // T-SQL and plan excerpt
	Fix         string
	FalseAlarms string // when it is not a problem / when to suppress
	References  []string
}

// Finding is one problem found in a plan.
type Finding struct {
	Rule        string   `json:"rule"`
	Code        string   `json:"code"`
	Severity    Severity `json:"severity"`
	Batch       int      `json:"batch"`
	StatementID int      `json:"statement_id"`
	// Ordinal is the statement's position in its document (plan.Statement.Ordinal):
	// it tells statements apart when a plan repeats a StatementId.
	Ordinal int  `json:"statement_ordinal"`
	NodeID  *int `json:"node_id"`
	// Operator names the node's operator and object, e.g. "Key Lookup
	// dbo.Work.PK_Work"; it identifies the node across plans.
	Operator string `json:"operator,omitempty"`
	Message  string `json:"message"`
	Fix      string `json:"fix,omitempty"`
	// Evidence holds the figures behind the finding (JSON-friendly values).
	Evidence map[string]any `json:"evidence,omitempty"`
}

// CursorOperation is the cursor operation whose plan holds the finding's
// node ("" for a statement's own plan).
func (f Finding) CursorOperation() string {
	label, _ := f.Evidence["cursor_operation"].(string)
	return label
}

// Node returns a pointer to id, for Finding.NodeID.
func Node(id int) *int { return &id }

// Pass carries what a rule sees for one statement.
type Pass struct {
	Rule      *Rule
	Document  *plan.Document
	Statement *plan.Statement
	// Catalog is nil when no catalog facts are known.
	Catalog *catalog.Catalog

	params   map[string]float64
	findings []Finding
	prior    []Finding // findings of the rules run before on this statement
	stream   *Stream   // the file's stream, when the rules see it statement by statement
}

// Prior returns the findings that rule (by name) reported on this statement,
// or those of every rule run before when rule is "". A rule may only read
// the rules it lists in After (or any, with "*"); others may not have run.
func (p *Pass) Prior(rule string) []Finding {
	var out []Finding
	for _, f := range p.prior {
		if rule == "" || f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// Param returns the configured value of one of the rule's parameters.
func (p *Pass) Param(name string) float64 {
	if v, ok := p.params[name]; ok {
		return v
	}
	for _, d := range p.Rule.Params {
		if d.Name == name {
			return d.Default
		}
	}
	panic(fmt.Sprintf("rule %s has no parameter %q", p.Rule.Name, name))
}

// Report records a finding; rule, code, batch and statement are filled in.
func (p *Pass) Report(f Finding) {
	f.Rule = p.Rule.Name
	f.Code = p.Rule.Code
	f.Batch = p.Statement.Batch
	f.StatementID = p.Statement.ID
	f.Ordinal = p.Statement.Ordinal
	if f.Severity == 0 {
		f.Severity = p.Rule.Severity
	}
	if f.NodeID != nil && f.Operator == "" {
		f.Operator = operatorLabel(p.Statement, *f.NodeID)
	}
	p.findings = append(p.findings, f)
}

// Plans returns the statement's plans (its QueryPlan and cursor operations).
func (p *Pass) Plans() []plan.LabeledPlan { return p.Statement.Plans() }

// operatorLabel describes the statement's node with the given id.
func operatorLabel(s *plan.Statement, id int) string {
	for _, q := range s.Plans() {
		if n := q.Node(id); n != nil {
			if o := n.Access.Object(); o.Table != "" {
				return n.DisplayName() + " " + objectName(o)
			}
			return n.DisplayName()
		}
	}
	return ""
}

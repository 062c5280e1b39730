package rules

import (
	"fmt"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
)

// Config adjusts which rules run and how findings are graded.
type Config struct {
	// Severity overrides the severity of every finding of a rule (by name).
	Severity map[string]Severity
	// Off disables rules by name.
	Off map[string]bool
	// Params overrides rule parameters: rule name → parameter → value.
	Params map[string]map[string]float64
}

// Lookup finds a rule by code or name (case-insensitive).
func Lookup(ref string) *Rule {
	for _, r := range All() {
		if strings.EqualFold(r.Code, ref) || strings.EqualFold(r.Name, ref) {
			return r
		}
	}
	return nil
}

// Validate checks that every rule and parameter the config names exists.
func (c *Config) Validate() error {
	if c == nil {
		return nil
	}
	for name := range c.Severity {
		if Lookup(name) == nil {
			return fmt.Errorf("unknown rule %q", name)
		}
	}
	for name := range c.Off {
		if Lookup(name) == nil {
			return fmt.Errorf("unknown rule %q", name)
		}
	}
	for name, ps := range c.Params {
		r := Lookup(name)
		if r == nil {
			return fmt.Errorf("unknown rule %q", name)
		}
		for p := range ps {
			if !r.hasParam(p) {
				return fmt.Errorf("rule %s has no parameter %q (it has: %s)", r.Name, p, r.paramNames())
			}
		}
	}
	return nil
}

func (r *Rule) hasParam(name string) bool {
	for _, p := range r.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

func (r *Rule) paramNames() string {
	if len(r.Params) == 0 {
		return "none"
	}
	names := make([]string, len(r.Params))
	for i, p := range r.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// configFor returns the settings that apply to r, resolving names and codes.
func (c *Config) configFor(r *Rule) (off bool, sev Severity, params map[string]float64) {
	if c == nil {
		return false, 0, nil
	}
	match := func(k string) bool { return strings.EqualFold(k, r.Name) || strings.EqualFold(k, r.Code) }
	for k, v := range c.Off {
		if v && match(k) {
			off = true
		}
	}
	for k, v := range c.Severity {
		if match(k) {
			sev = v
		}
	}
	for k, v := range c.Params {
		if match(k) {
			params = v
		}
	}
	return off, sev, params
}

// Grade applies the config's severity override and "off" to findings of
// rule r reported outside the engine (the driver's own findings).
func (c *Config) Grade(r *Rule, fs []Finding) []Finding {
	off, sev, _ := c.configFor(r)
	if off {
		return nil
	}
	if sev != 0 {
		for i := range fs {
			fs[i].Severity = sev
		}
	}
	return fs
}

// RuleError is a rule that failed (a bug in planlint, not in the plan).
type RuleError struct {
	Rule  string
	Value any
	Stack string
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("internal error in rule %s: %v", e.Rule, e.Value)
}

// AnalyzeStatement runs every enabled rule on one statement (not its nested
// statements) and returns the findings in a stable order. Rules that look
// across statements read doc (nil: the statement alone); Analyze and Stream
// read each statement's facts once for a whole file.
func AnalyzeStatement(doc *plan.Document, stmt *plan.Statement, cat *catalog.Catalog, cfg *Config) ([]Finding, error) {
	return analyzeStatement(doc, stmt, cat, cfg, nil)
}

func analyzeStatement(doc *plan.Document, stmt *plan.Statement, cat *catalog.Catalog, cfg *Config, st *Stream) ([]Finding, error) {
	var out []Finding
	for _, r := range runOrder() {
		off, sev, params := cfg.configFor(r)
		if off || r.Run == nil || (r.Catalog && cat == nil) {
			continue
		}
		if st != nil {
			st.current = sev
		}
		p := &Pass{Rule: r, Document: doc, Statement: stmt, Catalog: cat, params: params, prior: out, stream: st}
		if _, err := guard(r, func() any { r.Run(p); return nil }); err != nil {
			return out, err
		}
		out = append(out, graded(p.findings, sev)...)
	}
	SortFindings(out)
	return out, nil
}

func run(r *Rule, doc *plan.Document, stmt *plan.Statement, cat *catalog.Catalog, params map[string]float64) (fs []Finding, err error) {
	return runAfter(r, doc, stmt, cat, params, nil)
}

func runAfter(r *Rule, doc *plan.Document, stmt *plan.Statement, cat *catalog.Catalog, params map[string]float64, prior []Finding) (fs []Finding, err error) {
	p := &Pass{Rule: r, Document: doc, Statement: stmt, Catalog: cat, params: params, prior: prior}
	_, err = guard(r, func() any { r.Run(p); return nil })
	return p.findings, err
}

// Analyze runs every enabled rule on every statement of the document and
// returns the findings statement by statement.
func Analyze(doc *plan.Document, cat *catalog.Catalog, cfg *Config) ([]Finding, error) {
	st := NewStream(doc, cat, cfg)
	stmts := doc.Statements()
	per := make([][]Finding, len(stmts))
	flat := func() []Finding {
		var out []Finding
		for _, fs := range per {
			out = append(out, fs...)
		}
		return out
	}
	for i, s := range stmts {
		fs, err := st.Statement(s)
		per[i] = fs
		if err != nil {
			return flat(), err
		}
	}
	late, err := st.Finish()
	for _, l := range late {
		per[l.Statement] = append(per[l.Statement], l.Finding)
	}
	for _, fs := range per {
		SortFindings(fs)
	}
	return flat(), err
}

// AnalyzeQuery runs every enabled query rule on one query and returns the
// findings in rule order.
func AnalyzeQuery(q *Query, cfg *Config) ([]QueryFinding, error) {
	var out []QueryFinding
	for _, r := range runOrder() {
		off, sev, params := cfg.configFor(r)
		if off || r.RunQuery == nil {
			continue
		}
		fs, err := runQuery(r, q, params)
		if err != nil {
			return out, err
		}
		if sev != 0 {
			for i := range fs {
				fs[i].Severity = sev
			}
		}
		out = append(out, fs...)
	}
	return out, nil
}

func runQuery(r *Rule, q *Query, params map[string]float64) (fs []QueryFinding, err error) {
	p := &QueryPass{Rule: r, Query: q, params: params}
	defer func() {
		if v := recover(); v != nil {
			err = &RuleError{Rule: r.Name, Value: v, Stack: string(debug.Stack())}
		}
	}()
	r.RunQuery(p)
	return p.findings, nil
}

// SortFindings orders findings by batch, statement, node (statement-level
// first), then rule code, keeping the rule's own order otherwise.
func SortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return Less(fs[i], fs[j]) })
}

// Less orders findings by batch, statement, node (statement-level first)
// and rule code.
func Less(a, b Finding) bool {
	if a.Batch != b.Batch {
		return a.Batch < b.Batch
	}
	if a.StatementID != b.StatementID {
		return a.StatementID < b.StatementID
	}
	an, bn := -1, -1
	if a.NodeID != nil {
		an = *a.NodeID
	}
	if b.NodeID != nil {
		bn = *b.NodeID
	}
	if an != bn {
		return an < bn
	}
	return a.Code < b.Code
}

// Max returns the highest severity among the findings (0 when none).
func Max(fs []Finding) Severity {
	var m Severity
	for _, f := range fs {
		if f.Severity > m {
			m = f.Severity
		}
	}
	return m
}

package rules

import (
	"runtime/debug"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
)

// A few rules decide across the statements of a file: SET options once per
// batch and module, a missing-index request once per file with its repeats
// counted, a MAXDOP setting once per file. Such a rule states what each
// statement shows it (Rule.facts: small values, never the plan) and makes
// its decision with Pass.across over the facts of every statement. With the
// whole document at hand the decision is made at once; a Stream, which sees
// the statements one at a time, makes it after the last one, so that a plan
// too large to hold gets the same findings as a document.

// fact is what one statement shows a rule that looks across statements.
type fact struct {
	Batch, ID, Ordinal int
	Value              any
}

// facts are the facts of every statement of a file for one rule, in
// document order, with the indexes the rule builds over them once for all
// its decisions (so that a file of n statements costs n, not n², lookups).
type facts struct {
	all     []fact
	indexes map[string]any
}

// index returns the index named name, building it on first use.
func (fs *facts) index(name string, build func([]fact) any) any {
	if v, ok := fs.indexes[name]; ok {
		return v
	}
	if fs.indexes == nil {
		fs.indexes = map[string]any{}
	}
	v := build(fs.all)
	fs.indexes[name] = v
	return v
}

// deferred is a decision that waits for the facts of the whole file.
type deferred struct {
	pass   *Pass // the statement reduced to its identity
	seq    int   // the statement's position in the stream
	sev    Severity
	decide func(p *Pass, fs *facts)
}

// Stream analyses the statements of one file one at a time, in document
// order, keeping across statements only the rules' facts, and reports the
// findings that need the whole file at Finish.
type Stream struct {
	doc     *plan.Document // the whole document, when there is one
	catalog *catalog.Catalog
	config  *Config
	facts   map[*Rule]*facts
	modules map[int]moduleName // batch → the module its first statement creates
	waiting []deferred
	seen    int      // statements analysed so far
	current Severity // the severity override of the rule being run
}

type moduleName struct{ name, kind string }

// NewStream starts the analysis of one file. doc is the whole document when
// the caller has it (Pass.Document), else nil.
func NewStream(doc *plan.Document, cat *catalog.Catalog, cfg *Config) *Stream {
	return &Stream{doc: doc, catalog: cat, config: cfg, facts: map[*Rule]*facts{}, modules: map[int]moduleName{}}
}

// Statement analyses one statement (not its nested statements: pass each)
// and returns its findings but those decided across statements, which
// Finish returns.
func (st *Stream) Statement(s *plan.Statement) ([]Finding, error) {
	if _, ok := st.modules[s.Batch]; !ok && s.Parent == nil {
		name, kind := moduleOfText(s.Text)
		st.modules[s.Batch] = moduleName{name, kind}
	}
	for _, r := range runOrder() {
		off, _, params := st.config.configFor(r)
		if off || r.Run == nil || r.facts == nil || (r.Catalog && st.catalog == nil) {
			continue
		}
		p := &Pass{Rule: r, Document: st.doc, Statement: s, Catalog: st.catalog, params: params, stream: st}
		v, err := guard(r, func() any { return r.facts(p) })
		if err != nil {
			return nil, err
		}
		if v != nil {
			fs := st.facts[r]
			if fs == nil {
				fs = &facts{}
				st.facts[r] = fs
			}
			fs.all = append(fs.all, fact{s.Batch, s.ID, s.Ordinal, v})
		}
	}
	fs, err := analyzeStatement(st.doc, s, st.catalog, st.config, st)
	st.seen++
	return fs, err
}

// Late is a finding decided at Finish, with the position of its statement
// among those given to Statement (0 for the first).
type Late struct {
	Statement int
	Finding   Finding
}

// Finish makes the decisions that needed every statement and returns their
// findings, in the order of the statements they are about.
func (st *Stream) Finish() ([]Late, error) {
	var out []Late
	for _, d := range st.waiting {
		fs := st.facts[d.pass.Rule]
		if fs == nil {
			fs = &facts{}
		}
		if _, err := guard(d.pass.Rule, func() any { d.decide(d.pass, fs); return nil }); err != nil {
			return out, err
		}
		for _, f := range graded(d.pass.findings, d.sev) {
			out = append(out, Late{Statement: d.seq, Finding: f})
		}
	}
	st.waiting = nil
	return out, nil
}

// across calls decide with the facts of every statement of the file that
// has facts for the rule, in document order: at once when the pass has the
// whole document (or no stream: then the document's statements, or the
// statement alone), else when the stream finishes. decide reports on the
// pass it is given; it must not hold the plan, since a streamed statement
// is then reduced to its identity (batch, id, ordinal).
func (p *Pass) across(decide func(p *Pass, fs *facts)) {
	if st := p.stream; st != nil {
		id := &plan.Statement{Batch: p.Statement.Batch, ID: p.Statement.ID, Ordinal: p.Statement.Ordinal, Kind: p.Statement.Kind}
		st.waiting = append(st.waiting, deferred{
			pass:   &Pass{Rule: p.Rule, Statement: id, Catalog: p.Catalog, params: p.params},
			seq:    st.seen,
			sev:    st.current,
			decide: decide,
		})
		return
	}
	stmts := []*plan.Statement{p.Statement}
	if p.Document != nil {
		stmts = p.Document.Statements()
	}
	fs := &facts{}
	for _, s := range stmts {
		q := *p
		q.Statement = s
		if v := p.Rule.facts(&q); v != nil {
			fs.all = append(fs.all, fact{s.Batch, s.ID, s.Ordinal, v})
		}
	}
	decide(p, fs)
}

// batchModule names the module (procedure, function, trigger) whose CREATE
// heads a batch of a cached plan, "" for none.
func (p *Pass) batchModule(batch int) (name, kind string) {
	if p.stream != nil {
		m := p.stream.modules[batch]
		return m.name, m.kind
	}
	if p.Document == nil {
		return "", ""
	}
	for _, b := range p.Document.Batches {
		if b.Index == batch && len(b.Statements) > 0 {
			return moduleOfText(b.Statements[0].Text)
		}
	}
	return "", ""
}

// guard runs f, turning a panic into the rule's RuleError.
func guard(r *Rule, f func() any) (v any, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = &RuleError{Rule: r.Name, Value: x, Stack: string(debug.Stack())}
		}
	}()
	return f(), nil
}

// graded applies a configured severity override.
func graded(fs []Finding, sev Severity) []Finding {
	if sev != 0 {
		for i := range fs {
			fs[i].Severity = sev
		}
	}
	return fs
}

package report

import (
	"encoding/json"
	"strings"

	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/sqlscript"
)

// Mask replaces every redacted value.
const Mask = "?"

// Redacted returns a copy of r for sharing: literals in statement text and
// predicates, parameter compiled and runtime values, and SQL literal forms
// in messages, fixes, evidence and input errors are replaced by Mask. Index
// filter definitions and suggested index DDL are schema, not data, and are
// kept. Plan documents (and each Statement.Source) are copied with their
// values masked; r itself is not modified. Prose numbers ("5,000,000 rows",
// "62%", "node 3") are kept.
func Redacted(r *Report) *Report {
	if r == nil {
		return nil
	}
	out := &Report{Tool: r.Tool, Version: r.Version, SuppressedBy: r.SuppressedBy}
	if r.Files != nil {
		out.Files = make([]*File, len(r.Files))
	}
	for i, f := range r.Files {
		out.Files[i] = redactFile(f)
	}
	return out
}

func redactFile(f *File) *File {
	if f == nil {
		return nil
	}
	nf := &File{Path: f.Path, Config: f.Config}
	if f.Error != nil {
		e := maskProse(*f.Error, nil)
		nf.Error = &e
	}
	pc := planCopier{statements: map[*plan.Statement]*plan.Statement{}}
	for _, d := range f.Plans {
		nf.Plans = append(nf.Plans, pc.document(d))
	}
	if f.Statements != nil {
		nf.Statements = make([]*Statement, len(f.Statements))
	}
	for i, s := range f.Statements {
		nf.Statements[i] = pc.summary(s)
	}
	keep := schemaTexts(f.Findings)
	if f.Findings != nil {
		nf.Findings = make([]*Finding, len(f.Findings))
	}
	for i, x := range f.Findings {
		nf.Findings[i] = redactFinding(x, keep)
	}
	for _, x := range f.Suppressed {
		nf.Suppressed = append(nf.Suppressed, redactFinding(x, keep))
	}
	return nf
}

func redactFinding(x *Finding, keep []string) *Finding {
	if x == nil {
		return nil
	}
	nx := *x
	if x.NodeID != nil {
		id := *x.NodeID
		nx.NodeID = &id
	}
	nx.Message = maskProse(x.Message, keep)
	nx.Fix = maskProse(x.Fix, keep)
	if x.Evidence != nil {
		nx.Evidence = redactEvidence("", x.Evidence).(map[string]any)
	}
	if x.Location != nil {
		l := *x.Location
		nx.Location = &l
	}
	return &nx
}

// Evidence keys, by what their values hold.
var (
	// valueKeys hold parameter or column values: masked whole.
	valueKeys = map[string]bool{"compiled_value": true, "runtime_value": true, "value": true, "values": true}
	// sqlKeys hold SQL text: literals masked.
	sqlKeys = map[string]bool{"predicate": true, "residual_predicate": true, "seek_predicate": true, "conversion": true,
		"parameterized_text": true, "statement_text": true, "text": true, "expression": true}
	// schemaKeys hold index definitions: kept, and kept where messages
	// quote them.
	// identifiers (plan-variance) name the server's queries and plans.
	schemaKeys = map[string]bool{"filter": true, "suggested_index": true, "identifiers": true,
		"create_index": true, "unfiltered_index": true, "narrow_index": true, "converted_to": true, "column_type": true}
)

// redactEvidence copies an evidence value, masking strings by the key they
// sit under (list elements inherit their list's key). Values of other
// types than JSON's are converted through JSON first.
func redactEvidence(key string, v any) any {
	switch t := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, json.Number:
		return v
	case string:
		switch {
		case valueKeys[key]:
			if t == "" {
				return t
			}
			return Mask
		case sqlKeys[key]:
			return redactSQL(t)
		case schemaKeys[key]:
			return t
		}
		return maskProse(t, nil)
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = redactEvidence(k, e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = redactEvidence(key, e)
		}
		return s
	case []string:
		s := make([]string, len(t))
		for i, e := range t {
			s[i] = redactEvidence(key, e).(string)
		}
		return s
	case []map[string]any:
		s := make([]map[string]any, len(t))
		for i, e := range t {
			s[i] = redactEvidence(key, e).(map[string]any)
		}
		return s
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return Mask // not representable in any output; nothing to keep
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return Mask
	}
	return redactEvidence(key, generic)
}

// schemaTexts collects the schema strings (index filters, suggested DDL)
// named in the findings' evidence, longest first so that a longer text
// wins over a text it contains.
func schemaTexts(fs []*Finding) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch t := v.(type) {
		case string:
			if schemaKeys[key] && len(t) >= 3 && !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		case map[string]any:
			for k, e := range t {
				walk(k, e)
			}
		case []any:
			for _, e := range t {
				walk(key, e)
			}
		case []string:
			for _, e := range t {
				walk(key, e)
			}
		case []map[string]any:
			for _, e := range t {
				walk(key, e)
			}
		}
	}
	for _, x := range fs {
		if x != nil {
			walk("", x.Evidence)
		}
	}
	// Longest first; ties in first-seen order keep the result stable.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// planCopier copies plan statements with their values masked, remembering
// each copy so that Statement.Source points into the copied documents.
type planCopier struct {
	statements map[*plan.Statement]*plan.Statement
}

func (c *planCopier) document(d *plan.Document) *plan.Document {
	if d == nil {
		return nil
	}
	nd := &plan.Document{Version: d.Version, Build: d.Build, Batches: make([]*plan.Batch, len(d.Batches))}
	for i, b := range d.Batches {
		if b == nil {
			continue
		}
		nb := &plan.Batch{Index: b.Index, Statements: make([]*plan.Statement, len(b.Statements))}
		for j, s := range b.Statements {
			nb.Statements[j] = c.statement(s, nil)
		}
		nd.Batches[i] = nb
	}
	return nd
}

// summary copies a statement summary; its Source becomes the masked copy.
func (c *planCopier) summary(s *Statement) *Statement {
	if s == nil {
		return nil
	}
	ns := *s
	ns.Text = redactSQL(s.Text)
	if s.SetOptions != nil {
		ns.SetOptions = make(map[string]bool, len(s.SetOptions))
		for k, v := range s.SetOptions {
			ns.SetOptions[k] = v
		}
	}
	if s.Location != nil {
		l := *s.Location
		ns.Location = &l
	}
	if s.Capture != nil {
		cp := *s.Capture
		cp.Note = maskProse(cp.Note, nil)
		ns.Capture = &cp
	}
	if s.Source != nil {
		ns.Source = c.statement(s.Source, nil)
		// The properties carry the plan's warnings, conversions included:
		// read them again from the masked copy.
		ns.Properties = statementProperties(ns.Source)
	} else if p := s.Properties; p != nil && len(p.Warnings) > 0 {
		np := *p
		np.Warnings = make([]string, len(p.Warnings))
		for i, w := range p.Warnings {
			np.Warnings[i] = maskProse(w, nil)
		}
		ns.Properties = &np
	}
	return &ns
}

// statement copies s and its nested statements. A statement met for the
// first time outside a document gets a nil Parent rather than a pointer to
// the unmasked original.
func (c *planCopier) statement(s *plan.Statement, parent *plan.Statement) *plan.Statement {
	if s == nil {
		return nil
	}
	if ns, ok := c.statements[s]; ok {
		return ns
	}
	ns := *s
	c.statements[s] = &ns
	ns.Parent = parent
	ns.Text = redactSQL(s.Text)
	ns.ParameterizedText = redactSQL(s.ParameterizedText)
	ns.QueryPlan = copyQueryPlan(s.QueryPlan)
	if s.Cursor != nil {
		cur := *s.Cursor
		cur.Operations = make([]*plan.CursorOperation, len(s.Cursor.Operations))
		for i, op := range s.Cursor.Operations {
			if op == nil {
				continue
			}
			nop := *op
			nop.QueryPlan = copyQueryPlan(op.QueryPlan)
			cur.Operations[i] = &nop
		}
		ns.Cursor = &cur
	}
	if s.SetOptions != nil {
		so := *s.SetOptions
		ns.SetOptions = &so
	}
	if s.Children != nil {
		ns.Children = make([]*plan.Statement, len(s.Children))
		for i, ch := range s.Children {
			ns.Children[i] = c.statement(ch, &ns)
		}
	}
	return &ns
}

func copyQueryPlan(q *plan.QueryPlan) *plan.QueryPlan {
	if q == nil {
		return nil
	}
	nq := *q
	if q.Parameters != nil {
		nq.Parameters = make([]plan.Parameter, len(q.Parameters))
		for i, p := range q.Parameters {
			if p.CompiledValue != "" {
				p.CompiledValue = Mask
			}
			if p.RuntimeValue != "" {
				p.RuntimeValue = Mask
			}
			nq.Parameters[i] = p
		}
	}
	nq.Warnings = copyWarnings(q.Warnings)
	ops := map[*plan.RelOp]*plan.RelOp{}
	nq.Root = copyRelOp(q.Root, nil, ops)
	if q.Nodes != nil {
		nq.Nodes = make([]*plan.RelOp, 0, len(q.Nodes))
		for _, n := range q.Nodes {
			nn, ok := ops[n]
			if !ok {
				nn = copyRelOp(n, nil, ops)
			}
			nq.Nodes = append(nq.Nodes, nn)
		}
	}
	return &nq
}

func copyRelOp(n, parent *plan.RelOp, ops map[*plan.RelOp]*plan.RelOp) *plan.RelOp {
	if n == nil {
		return nil
	}
	nn := *n
	ops[n] = &nn
	nn.Parent = parent
	nn.Predicate = redactScalar(n.Predicate)
	nn.Warnings = copyWarnings(n.Warnings)
	if n.Access != nil {
		a := *n.Access
		a.Predicate = redactScalar(n.Access.Predicate)
		a.SetPredicate = redactScalar(n.Access.SetPredicate)
		if n.Access.SeekPredicates != nil {
			a.SeekPredicates = make([]plan.SeekPredicate, len(n.Access.SeekPredicates))
			for i, sp := range n.Access.SeekPredicates {
				keys := make([]plan.SeekKey, len(sp.Keys))
				for j, k := range sp.Keys {
					vals := make([]*plan.Scalar, len(k.Values))
					for v, x := range k.Values {
						vals[v] = redactScalar(x)
					}
					k.Values = vals
					keys[j] = k
				}
				a.SeekPredicates[i] = plan.SeekPredicate{Keys: keys}
			}
		}
		nn.Access = &a
	}
	if n.Top != nil {
		t := *n.Top
		t.RowsText = redactSQL(t.RowsText)
		nn.Top = &t
	}
	if n.Children != nil {
		nn.Children = make([]*plan.RelOp, len(n.Children))
		for i, ch := range n.Children {
			nn.Children[i] = copyRelOp(ch, &nn, ops)
		}
	}
	return &nn
}

func copyWarnings(w *plan.Warnings) *plan.Warnings {
	if w == nil {
		return nil
	}
	nw := *w
	if w.Converts != nil {
		nw.Converts = make([]plan.PlanAffectingConvert, len(w.Converts))
		for i, c := range w.Converts {
			c.Expression = redactSQL(c.Expression)
			nw.Converts[i] = c
		}
	}
	return &nw
}

func redactScalar(s *plan.Scalar) *plan.Scalar {
	if s == nil {
		return nil
	}
	ns := *s
	ns.Text = redactSQL(s.Text)
	if s.Kind == plan.ScalarConst {
		ns.Value = redactSQL(s.Value)
	}
	if s.Args != nil {
		ns.Args = make([]*plan.Scalar, len(s.Args))
		for i, a := range s.Args {
			ns.Args[i] = redactScalar(a)
		}
	}
	return &ns
}

// redactSQL masks the literals of a T-SQL text with sqlscript.Redact;
// comments, which it keeps, are prose and get maskProse. The text is split
// at comments first, with one tokenizer, so that an unterminated comment is
// a comment on every pass and redacting twice changes nothing.
func redactSQL(sql string) string {
	if sql == "" {
		return sql
	}
	if !strings.Contains(sql, "--") && !strings.Contains(sql, "/*") {
		return sqlscript.Redact(sql)
	}
	var b, code strings.Builder
	b.Grow(len(sql))
	flush := func() {
		if code.Len() > 0 {
			b.WriteString(sqlscript.Redact(code.String()))
			code.Reset()
		}
	}
	for _, t := range sqlTokens(sql) {
		if t.kind == tokComment {
			flush()
			b.WriteString(maskProse(t.text, nil))
		} else {
			code.WriteString(t.text)
		}
	}
	flush()
	return b.String()
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/microsoft/go-mssqldb/msdsn"

	"github.com/planlint/planlint/capture"
	"github.com/planlint/planlint/compare"
	"github.com/planlint/planlint/report"
	"github.com/planlint/planlint/sqlscript"
)

// compareSpec is the B side of explain --compare-with: what changes from
// the A capture.
type compareSpec struct {
	params     []sqlscript.ParamOverride
	paramText  []string // as given, for labels
	database   string
	connection string
}

// parseCompareSpec reads the --compare-with parts: @Name=value (a
// parameter value for B), database=NAME (B in another database of the same
// server) and connection=DSN (B on another server). Together they form
// the B side.
func parseCompareSpec(parts []string) (*compareSpec, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	c := &compareSpec{}
	for i, part := range parts {
		p := strings.TrimSpace(part)
		if strings.HasPrefix(p, "@") {
			o, err := sqlscript.ParseParamOverride(p)
			if err != nil {
				return nil, fmt.Errorf("--compare-with %q: %v", part, strings.TrimPrefix(err.Error(), "--param "))
			}
			for _, prev := range c.params {
				if strings.EqualFold(prev.Name, o.Name) {
					return nil, fmt.Errorf("--compare-with %q: %s is given twice", part, o.Name)
				}
			}
			c.params = append(c.params, o)
			c.paramText = append(c.paramText, o.Name+"="+o.Value.Text)
			continue
		}
		key, value, ok := strings.Cut(p, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		value = strings.TrimSpace(value)
		var dst *string
		switch {
		case !ok:
		case key == "database":
			dst = &c.database
		case key == "connection":
			dst = &c.connection
		}
		if dst == nil {
			return nil, fmt.Errorf("--compare-with %s: want @Name=value, database=NAME or connection=DSN", partName(i, key, ok))
		}
		if value == "" {
			return nil, fmt.Errorf("--compare-with %s=: the value is empty", key)
		}
		if *dst != "" {
			return nil, fmt.Errorf("--compare-with %s= is given twice; the B side is one database on one server", key)
		}
		*dst = value
	}
	return c, nil
}

// partName names an unrecognised part without echoing its value, which
// may be a connection string with a password: by its key when that is a
// plain word, else by position.
func partName(i int, key string, hasValue bool) string {
	plain := key != "" && len(key) <= 30 && strings.IndexFunc(key, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '_' || r == '-')
	}) < 0
	if hasValue && plain {
		return key + "=…"
	}
	return fmt.Sprintf("part %d", i+1)
}

// sameSession reports whether B is captured on A's session (only
// parameter values differ).
func (c *compareSpec) sameSession() bool { return c.database == "" && c.connection == "" }

// options derives the B connection from A's. database= overrides the
// database; connection= replaces the server, keeping A's login and
// password only when the connection string names none.
func (c *compareSpec) options(a capture.Options) (capture.Options, error) {
	b := a
	if c.connection != "" {
		b.ConnectionString, b.Server = c.connection, ""
		if p, err := msdsn.Parse(c.connection); err == nil {
			if p.User != "" {
				b.User = ""
			}
			if p.Password != "" {
				b.Password = ""
			}
			if p.Database != "" {
				b.Database = ""
			}
		}
	}
	if c.database != "" {
		b.Database = c.database
	}
	if _, err := b.Resolve(); err != nil {
		return b, usageError("--compare-with: %v", err)
	}
	return b, nil
}

// scripts re-reads the scripts with A's --param overrides and then B's.
func (c *compareSpec) scripts(scripts []*sqlscript.Script, aParams []string) ([]*sqlscript.Script, error) {
	var overrides []sqlscript.ParamOverride
	for _, p := range aParams {
		o, err := sqlscript.ParseParamOverride(p)
		if err != nil {
			return nil, usageError("%v", err)
		}
		overrides = append(overrides, o)
	}
	for i, o := range c.params {
		found := false
		for _, s := range scripts {
			found = found || s.HasParam(o.Name)
		}
		if !found {
			return nil, usageError("--compare-with %s: no batch of the given files annotates or passes a parameter of that name", c.paramText[i])
		}
	}
	out := make([]*sqlscript.Script, len(scripts))
	for i, s := range scripts {
		b, err := sqlscript.Parse(s.Path, []byte(s.Text))
		if b == nil {
			return nil, &exitError{code: ExitError, err: err}
		}
		var mine []sqlscript.ParamOverride
		for _, o := range append(append([]sqlscript.ParamOverride(nil), overrides...), c.params...) {
			if b.HasParam(o.Name) {
				mine = append(mine, o)
			}
		}
		if err := b.ApplyOverrides(mine); err != nil {
			return nil, usageError("--compare-with: %v", err)
		}
		out[i] = b
	}
	return out, nil
}

// label names the B side for people.
func (c *compareSpec) label(sess *capture.Session) string {
	parts := []string{"database " + sess.Info.Database}
	if c.connection != "" {
		parts[0] += " on " + sess.Connection().Redacted
	}
	return strings.Join(append(parts, c.paramText...), "; ")
}

// comparedPair is one captured document on both sides.
type comparedPair struct {
	a, b savedPlan
}

func (p savedPlan) key() string { return fmt.Sprintf("%s\x00%d\x00%d", p.script, p.batch, p.doc) }

func (p savedPlan) place() string {
	s := fmt.Sprintf("%s batch %d", p.script, p.batch)
	if p.docs > 1 {
		s += fmt.Sprintf(" document %d of %d", p.doc, p.docs)
	}
	return s
}

// compareWithB captures the scripts again as B, prints the A report and
// then each A document compared with its B counterpart. The run exits 1
// when B gains a finding at or above --fail-on, and 2 when B could not be
// captured.
func compareWithB(ctx context.Context, env *Env, r *invocation, spec *compareSpec, bOpts capture.Options, opts explainOptions,
	aSess *capture.Session, bScripts []*sqlscript.Script, aSaved []savedPlan, rep *report.Report, progress *progress) error {
	var bErrs []string
	var bSaved []savedPlan
	bSess := aSess
	if ctx.Err() == nil && !spec.sameSession() {
		s, err := capture.Open(ctx, bOpts, opts.session)
		if err != nil {
			bErrs = append(bErrs, err.Error())
			bSess = nil
		} else {
			defer s.Close()
			bSess = s
			progress.printf("connected to %s (SQL Server %s), database %s for B\n", s.Connection().Redacted, s.Info.ProductVersion, s.Info.Database)
		}
	}
	bLabel := "B"
	if bSess != nil && ctx.Err() == nil {
		bLabel = spec.label(bSess)
		for _, s := range bScripts {
			progress.printf("capturing B (%s)\n", bLabel)
			file, plans, err := explainScript(ctx, bSess, s, opts, progress)
			bSaved = append(bSaved, plans...)
			if file.Error != nil {
				bErrs = append(bErrs, fmt.Sprintf("%s: %s", s.Path, *file.Error))
			}
			var ce *capture.Error
			if err != nil && !errors.As(err, &ce) {
				return &exitError{code: ExitError, err: fmt.Errorf("side B of %s: %w", s.Path, err)} // a rule failed: a planlint bug
			}
			if ce != nil && (ce.Kind == capture.ErrCanceled || ce.Kind == capture.ErrConnectionLost) {
				break
			}
		}
	} else if ctx.Err() != nil {
		bErrs = append(bErrs, "interrupted before B was captured")
	}
	for _, e := range bErrs {
		diagf(env.Stderr, "", "B (%s): %s", bLabel, e)
	}

	byKey := map[string]savedPlan{}
	for _, p := range bSaved {
		byKey[p.key()] = p
	}
	aLabel := "database " + aSess.Info.Database
	var pairs []comparedPair
	var missing []string
	paired := map[string]bool{}
	for _, a := range aSaved {
		b, ok := byKey[a.key()]
		if !ok {
			missing = append(missing, a.place()+" has no B plan")
			continue
		}
		paired[a.key()] = true
		pairs = append(pairs, comparedPair{a, b})
	}
	for _, b := range bSaved {
		if !paired[b.key()] {
			missing = append(missing, b.place()+" has no A plan")
		}
	}
	var results []*compare.Result
	for _, p := range pairs {
		results = append(results, compare.Documents(
			compare.Side{Name: fmt.Sprintf("%s (%s)", p.a.place(), aLabel), Document: p.a.plan, Findings: p.a.findings},
			compare.Side{Name: fmt.Sprintf("%s (%s)", p.b.place(), bLabel), Document: p.b.plan, Findings: p.b.findings}))
	}
	comparisons := []json.RawMessage{}
	for _, res := range results {
		raw, err := comparisonJSON(res)
		if err != nil {
			return &exitError{code: ExitError, err: err}
		}
		comparisons = append(comparisons, raw)
	}
	bInfo := map[string]any{"label": bLabel, "parameters": append([]string{}, spec.paramText...)}
	if bSess != nil {
		bInfo["database"] = bSess.Info.Database
		if spec.connection != "" {
			bInfo["connection"] = bSess.Connection().Redacted
		}
	}
	notCompared := append([]string{}, missing...)
	extra := extraOutput{
		json: map[string]any{"b": bInfo, "comparisons": comparisons, "not_compared": notCompared},
		text: func(w io.Writer) error {
			for _, res := range results {
				fmt.Fprintln(w)
				if err := report.CompareText(w, res, report.TextOptions{Color: r.colored}); err != nil {
					return err
				}
			}
			for _, m := range missing {
				fmt.Fprintf(w, "\nnot compared: %s\n", m)
			}
			return nil
		},
	}
	err := finishWithExtras(r, func() error { return r.finish(rep) }, extra)
	var ee *exitError
	switch {
	case errors.As(err, &ee) && (ee.code == ExitError || ee.err != nil):
		return err
	case len(bErrs) > 0:
		return &exitError{code: ExitError}
	case err != nil:
		return err
	case r.out.writeBaseline != "":
		return nil
	}
	for _, res := range results {
		if res.Worst() >= r.threshold {
			return &exitError{code: ExitFindings}
		}
	}
	return nil
}

package sqlscript

import (
	"fmt"
	"sort"
	"strings"
)

// ParamOverride is a command-line parameter value: --param @Status=0.
type ParamOverride struct {
	Name  string // with the @
	Value Literal
}

// ParseParamOverride parses "@Name=value" (the @ may be left out). The value
// is a T-SQL literal (42, -1.5, 'text', N'text', 0x1F, NULL); any other text,
// such as 2024-01-01 or ready, is taken as the string it spells, so that
// shell users need not quote it twice.
func ParseParamOverride(s string) (ParamOverride, error) {
	eq := strings.IndexByte(s, '=')
	if eq < 0 {
		return ParamOverride{}, fmt.Errorf("--param %q: expected @name=value", s)
	}
	name, value := strings.TrimSpace(s[:eq]), strings.TrimSpace(s[eq+1:])
	if !strings.HasPrefix(name, "@") {
		name = "@" + name
	}
	if nt := lex(name); len(nt) != 1 || nt[0].Kind != tokVariable {
		return ParamOverride{}, fmt.Errorf("--param %q: %q is not a parameter name such as @Status", s, name)
	}
	if value == "" {
		return ParamOverride{}, fmt.Errorf("--param %q: missing value after '=' (write '' for an empty string, NULL for null)", s)
	}
	vt := lex(value)
	if t := vt[0]; t.Unterminated && (t.Kind == tokString || t.Kind == tokNString) {
		return ParamOverride{}, fmt.Errorf("--param %q: unterminated string %s", s, value)
	}
	if lit, ok := literalFromTokens(code(vt), value); ok && lit.Text == value {
		if lit.Kind == LiteralVariable {
			return ParamOverride{}, fmt.Errorf("--param %q: the value must be a literal, not the variable %s", s, value)
		}
		return ParamOverride{Name: name, Value: lit}, nil
	}
	return ParamOverride{Name: name, Value: Literal{Text: "N'" + strings.ReplaceAll(value, "'", "''") + "'", Kind: LiteralNString}}, nil
}

// hasParam reports whether the batch sends a parameter of that name, or
// declares one in its sp_executesql parameter list.
func (b *Batch) hasParam(name string) bool {
	if b.Call != nil {
		for _, d := range b.Call.Decls {
			if strings.EqualFold(d.Name, name) {
				return true
			}
		}
		return false
	}
	for _, p := range b.Params {
		if strings.EqualFold(p.Name, name) {
			return true
		}
	}
	return false
}

// ApplyOverride replaces the value of an annotated or sp_executesql
// parameter of the batch (a declared sp_executesql parameter that relied on
// its default gets the value). It fails when the batch has no such
// parameter or the value does not suit its type.
func (b *Batch) ApplyOverride(o ParamOverride) error {
	if b.Call != nil {
		for d, decl := range b.Call.Decls {
			if !strings.EqualFold(decl.Name, o.Name) {
				continue
			}
			p := Param{Name: decl.Name, Type: decl.Type, Value: o.Value, Output: decl.Output}
			if _, err := p.GoValue(); err != nil {
				return fmt.Errorf("batch %d: --param %s: %v", b.Index, o.Name, err)
			}
			for i := range b.Call.Params {
				if strings.EqualFold(b.Call.Params[i].Name, decl.Name) {
					b.Call.Params[i].Value = o.Value
					return nil
				}
			}
			b.Call.Params = append(b.Call.Params, p)
			order := func(name string) int {
				for k, dd := range b.Call.Decls {
					if strings.EqualFold(dd.Name, name) {
						return k
					}
				}
				return d
			}
			sort.SliceStable(b.Call.Params, func(i, j int) bool { return order(b.Call.Params[i].Name) < order(b.Call.Params[j].Name) })
			return nil
		}
		return fmt.Errorf("batch %d: --param %s: the sp_executesql call declares no such parameter (its list is %q)", b.Index, o.Name, b.Call.Declaration)
	}
	for i := range b.Params {
		if strings.EqualFold(b.Params[i].Name, o.Name) {
			p := b.Params[i]
			p.Value = o.Value
			if _, err := p.GoValue(); err != nil {
				return fmt.Errorf("batch %d: --param %s: %v", b.Index, o.Name, err)
			}
			b.Params[i].Value = o.Value
			return nil
		}
	}
	if b.uses[strings.ToLower(o.Name)] {
		return fmt.Errorf("batch %d: --param %s: the batch uses %s but does not annotate it; add a comment such as \"-- %s <type> = <value>\" above its first statement", b.Index, o.Name, o.Name, o.Name)
	}
	return fmt.Errorf("batch %d: --param %s: the batch has no such parameter", b.Index, o.Name)
}

// ApplyOverrides applies each override to every batch that has the
// parameter. It fails when a parameter is in no batch or a value does not
// suit a parameter's type.
func (s *Script) ApplyOverrides(overrides []ParamOverride) error {
	for _, o := range overrides {
		found := false
		for _, b := range s.Batches {
			if !b.hasParam(o.Name) {
				continue
			}
			found = true
			if err := b.ApplyOverride(o); err != nil {
				return fmt.Errorf("%s: %w", s.Path, err)
			}
		}
		if found {
			continue
		}
		for _, b := range s.Batches {
			if b.uses[strings.ToLower(o.Name)] {
				return fmt.Errorf("%s: %w", s.Path, b.ApplyOverride(o))
			}
		}
		return fmt.Errorf("%s: --param %s: no batch has an annotated or sp_executesql parameter of that name", s.Path, o.Name)
	}
	return nil
}

package config

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/planlint/planlint/rules"
)

// Suppression is one entry of the suppress list: findings of Rules in
// files matched by Paths (and, when set, on the operator with fingerprint
// Operator and the statement with fingerprint Statement) are suppressed,
// for Reason. Every condition given must hold.
type Suppression struct {
	// Rules are rule names (codes are resolved at load).
	Rules []string
	// Paths are globs relative to the config file's directory, cleaned as
	// exclude globs are; nil means every input, including standard input
	// and plans from the plan cache or Query Store.
	Paths []string
	// Operator is the finding's operator fingerprint (lower-case hex, as
	// JSON's "fingerprint" and SARIF's primaryLocationLineHash); "" for
	// any.
	Operator string
	// Statement is the normalised statement fingerprint (lower-case hex,
	// as JSON's "statement_fingerprint"); "" for any.
	Statement string
	// Reason says why; never empty.
	Reason string
	// Line and Column are where the entry starts in the file.
	Line, Column int
}

// suppressKeys are the keys of a suppress entry, in documentation order.
var suppressKeys = []string{"rule", "paths", "operator", "statement", "reason"}

// Fingerprint lengths in hex digits: the operator fingerprint is SARIF's
// 128-bit partial fingerprint, the statement fingerprint 64 bits.
const (
	operatorFingerprintLen  = 32
	statementFingerprintLen = 16
)

func (p *parser) suppress(c *Config, n *yaml.Node) {
	if isNull(n) {
		return
	}
	seq := resolve(n)
	if seq.Kind != yaml.SequenceNode {
		p.errorf(n, "suppress: expected a list of entries (rule, paths, reason); got %s", describe(n))
		return
	}
	for i, item := range seq.Content {
		where := fmt.Sprintf("suppress[%d]", i+1)
		m := resolve(item)
		if m.Kind != yaml.MappingNode {
			p.errorf(item, "%s: expected a mapping with keys %s; got %s", where, strings.Join(suppressKeys, ", "), describe(item))
			continue
		}
		s := Suppression{Line: item.Line, Column: item.Column}
		ok, hasRule, hasReason := true, false, false
		for _, kv := range p.pairs(where+": ", m) {
			switch kv.name {
			case "rule":
				hasRule = true
				ok = p.suppressRules(&s, where+".rule", kv.value) && ok
			case "paths":
				ok = p.suppressPaths(&s, where+".paths", kv.value) && ok
			case "operator":
				ok = p.fingerprint(&s.Operator, where+".operator", kv.value, operatorFingerprintLen,
					`the "fingerprint" of a finding in --format json, or partialFingerprints.primaryLocationLineHash in SARIF`) && ok
			case "statement":
				ok = p.fingerprint(&s.Statement, where+".statement", kv.value, statementFingerprintLen,
					`the "statement_fingerprint" of a finding in --format json`) && ok
			case "reason":
				hasReason = true
				r, isStr := stringValue(kv.value)
				r = strings.Join(strings.Fields(r), " ")
				if !isStr || r == "" {
					p.errorf(kv.value, "%s.reason: expected why the findings are accepted (a non-empty string); got %s", where, describe(kv.value))
					ok = false
					continue
				}
				s.Reason = r
			default:
				msg := fmt.Sprintf("%s: unknown key %q", where, kv.name)
				if sug := closest(kv.name, suppressKeys); sug != "" {
					msg += fmt.Sprintf("; did you mean %q?", sug)
				}
				p.errorf(kv.key, "%s (an entry takes %s)", msg, strings.Join(suppressKeys, ", "))
				ok = false
			}
		}
		if !hasRule {
			p.errorf(item, "%s: no rule (write rule: NAME or CODE, or a list of them)", where)
			ok = false
		}
		if !hasReason {
			p.errorf(item, "%s: no reason (write reason: why these findings are accepted)", where)
			ok = false
		}
		if ok && s.Paths == nil && s.Operator == "" && s.Statement == "" {
			p.errorf(item, "%s: names no paths, operator or statement, so it would silence %s everywhere; "+
				"narrow it, or turn the rule off under rules:", where, strings.Join(s.Rules, ", "))
			ok = false
		}
		if ok {
			c.Suppress = append(c.Suppress, s)
		}
	}
}

// oneOrList returns the items of a value that is one scalar or a list of
// them; an empty list is an error that says what was expected.
func (p *parser) oneOrList(n *yaml.Node, where, want, hint string) ([]*yaml.Node, bool) {
	v := resolve(n)
	if v.Kind != yaml.SequenceNode {
		return []*yaml.Node{n}, true
	}
	if len(v.Content) == 0 {
		p.errorf(n, "%s: expected %s; got an empty list%s", where, want, hint)
		return nil, false
	}
	return v.Content, true
}

// suppressRules reads rule: a name or code, or a list of them.
func (p *parser) suppressRules(s *Suppression, where string, n *yaml.Node) bool {
	items, ok := p.oneOrList(n, where, "a rule name or code, or a list of them", "")
	if !ok {
		return false
	}
	for _, item := range items {
		ref, isStr := stringValue(item)
		if !isStr || strings.TrimSpace(ref) == "" {
			p.errorf(item, "%s: expected a rule name or code; got %s", where, describe(item))
			ok = false
			continue
		}
		r := rules.Lookup(strings.TrimSpace(ref))
		if r == nil {
			p.errorf(item, "%s: %s", where, unknownRule(strings.TrimSpace(ref)))
			ok = false
			continue
		}
		if !slices.Contains(s.Rules, r.Name) {
			s.Rules = append(s.Rules, r.Name)
		}
	}
	return ok
}

// suppressPaths reads paths: a glob or a list of globs.
func (p *parser) suppressPaths(s *Suppression, where string, n *yaml.Node) bool {
	items, ok := p.oneOrList(n, where, "a path glob or a list of them", " (leave paths out to match every input)")
	if !ok {
		return false
	}
	for i, item := range items {
		w := where
		if len(items) > 1 || resolve(n).Kind == yaml.SequenceNode {
			w = fmt.Sprintf("%s[%d]", where, i+1)
		}
		g, isStr := stringValue(item)
		if !isStr {
			p.errorf(item, "%s: expected a path glob (a string); got %s", w, describe(item))
			ok = false
			continue
		}
		glob, _, err := compileGlob(g)
		if err != nil {
			p.errorf(item, "%s: %v", w, err)
			ok = false
			continue
		}
		s.Paths = append(s.Paths, glob)
	}
	return ok
}

// fingerprint reads a hex fingerprint of n digits into dst.
func (p *parser) fingerprint(dst *string, where string, v *yaml.Node, n int, from string) bool {
	s, isStr := stringValue(v)
	s = strings.ToLower(strings.TrimSpace(s))
	if !isStr || len(s) != n || strings.Trim(s, "0123456789abcdef") != "" {
		p.errorf(v, "%s: expected %d hexadecimal digits (%s); got %s", where, n, from, describe(v))
		return false
	}
	*dst = s
	return true
}

// SuppressionMatchesPath reports whether a path is in the entry's paths:
// relative paths are taken from WorkDir, and a glob that matches a
// directory matches everything below it, as for exclude. An entry without
// paths matches every path; "" (standard input, a plan from the plan cache
// or Query Store) is matched only by an entry without paths.
func (c *Config) SuppressionMatchesPath(s *Suppression, p string) bool {
	if s.Paths == nil {
		return true
	}
	if p == "" {
		return false
	}
	segs, ok := c.relSegments(p)
	if !ok {
		return false
	}
	for _, glob := range s.Paths {
		if _, g := splitGlob(glob); matchPrefix(g, segs) {
			return true
		}
	}
	return false
}

// SuppressionFiles lists the files an entry's paths could match: the
// regular files (and symbolic links) below Dir that its paths match, that accept (given the
// file's base name) takes as inputs, and that exclude does not drop.
// Directories named .git are not entered. Paths are absolute and cleaned.
// An entry without paths could match any input; it gives nil.
func (c *Config) SuppressionFiles(s *Suppression, accept func(name string) bool) ([]string, error) {
	if s.Paths == nil {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, glob := range s.Paths {
		_, segs := splitGlob(glob)
		root := c.Dir
		for len(segs) > 1 && !hasMeta(segs[0]) {
			root = filepath.Join(root, segs[0])
			segs = segs[1:]
		}
		if !hasMeta(segs[0]) { // a glob without metacharacters: one file or directory
			root = filepath.Join(root, segs[0])
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == root {
					return fs.SkipAll // nothing there
				}
				return nil
			}
			if d.IsDir() {
				if d.Name() == ".git" && p != root {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 || seen[p] || !accept(d.Name()) || c.Excluded(p) {
				return nil
			}
			if c.SuppressionMatchesPath(&Suppression{Paths: []string{glob}}, p) {
				seen[p] = true
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

// hasMeta reports whether a glob segment has a metacharacter.
func hasMeta(seg string) bool {
	return strings.ContainsAny(seg, `*?[\`)
}

// names reports whether the entry names the rule.
func (s *Suppression) names(rule string) bool { return slices.Contains(s.Rules, rule) }

// Matches reports whether the entry covers a finding of rule at path with
// the given operator and statement fingerprints.
func (c *Config) Matches(s *Suppression, rule, p, operator, statement string) bool {
	return s.names(rule) &&
		(s.Operator == "" || s.Operator == strings.ToLower(operator)) &&
		(s.Statement == "" || s.Statement == strings.ToLower(statement)) &&
		c.SuppressionMatchesPath(s, p)
}

package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/planlint/planlint/rules"
)

// Top-level keys, in the order the starter file lists them.
var topKeys = []string{"fail_on", "redact", "exclude", "rules", "suppress"}

// Parse reads configuration from data; path names the file in errors and
// anchors exclude globs. An empty file (or one of comments only) gives the
// defaults. Every problem found is returned, as Errors.
func Parse(path string, data []byte) (*Config, error) {
	return parse(path, path, data)
}

// parse is Parse with errors naming the file as display.
func parse(display, path string, data []byte) (*Config, error) {
	dir := filepath.Dir(path)
	c := &Config{Path: path, Dir: dir, WorkDir: dir}
	p := &parser{path: display}

	if e := p.checkText(data); e != nil {
		return nil, Errors{e}
	}
	root, err := decodeSingle(data)
	if err != nil {
		return nil, Errors{p.syntaxError(err, data)}
	}
	if root != nil {
		p.top(c, root)
	}
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b *Error) int {
			return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
		})
		return nil, p.errs
	}
	return c, nil
}

var errMultiDoc = errors.New("holds more than one YAML document; a config file has exactly one")

// decodeSingle returns the content of the file's only document, or nil for
// a file without one.
func decodeSingle(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, err
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == io.EOF:
	case err != nil:
		return nil, err
	default:
		return nil, &posError{line: next.Line, col: next.Column, err: errMultiDoc}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

type posError struct {
	line, col int
	err       error
}

func (e *posError) Error() string { return e.err.Error() }

type parser struct {
	path string
	errs Errors
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, &Error{Path: p.path, Line: n.Line, Column: n.Column, Msg: fmt.Sprintf(format, args...)})
}

// yamlLine finds the line yaml.v3 puts in its syntax errors ("yaml: line 3:
// ..."); it reports no column.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// yaml.v3 reports the lines of parser errors (unlike scanner errors)
// counting from 0. For those marked true the line is where the mapping,
// list or node being parsed starts, unless that is the first line.
var parserErrors = map[string]bool{
	"did not find expected <stream-start>":   false,
	"did not find expected <document start>": false,
	"found duplicate %YAML directive":        false,
	"found duplicate %TAG directive":         false,
	"found incompatible YAML document":       false,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
}

var unknownAnchor = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)

func (p *parser) syntaxError(err error, data []byte) *Error {
	var pe *posError
	if errors.As(err, &pe) {
		return &Error{Path: p.path, Line: pe.line, Column: pe.col, Msg: pe.err.Error()}
	}
	msg := err.Error()
	e := &Error{Path: p.path, Err: err}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
		if _, ok := parserErrors[msg]; ok {
			e.Line++
		}
	} else if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		e.Line, e.Column = findAlias(data, m[1])
		msg = fmt.Sprintf("alias *%s names no anchor (&%s) defined before it", m[1], m[1])
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	e.Msg = "malformed YAML: " + msg
	return e
}

// findAlias returns the position of the first alias "*name" in data, which
// yaml.v3 names in an unknown-anchor error without saying where. It skips
// comments and quoted scalars; aliases and quotes count only at the start of
// a token.
func findAlias(data []byte, name string) (line, col int) {
	line, col = 1, 1
	var quote rune   // the open quote, or 0
	escaped := false // the character is escaped inside quotes
	prev := '\n'     // the previous character
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		tokenStart := strings.ContainsRune(" \t\r\n[{,", prev)
		switch {
		case escaped:
			escaped = false
		case quote == '"' && r == '\\', quote == '\'' && r == '\'' && i+1 < len(data) && data[i+1] == '\'':
			escaped = true // \x in double quotes, '' in single quotes
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '#' && tokenStart:
			for i < len(data) && data[i] != '\n' {
				i++
			}
			prev = '#'
			continue
		case (r == '\'' || r == '"') && tokenStart:
			quote = r
		case r == '*' && tokenStart && bytes.HasPrefix(data[i+1:], []byte(name)):
			end := i + 1 + len(name)
			if end == len(data) || !isAnchorChar(data[end]) {
				return line, col
			}
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		prev = r
		i += size
	}
	return 0, 0
}

// isAnchorChar reports whether b can continue an anchor name (any
// non-space character but flow indicators).
func isAnchorChar(b byte) bool {
	return !strings.ContainsRune(" \t\r\n,[]{}", rune(b))
}

// checkText finds what yaml.v3 rejects without a position: invalid UTF-8
// and control characters. UTF-16 files (with a byte-order mark) are left to
// yaml.v3.
func (p *parser) checkText(data []byte) *Error {
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return nil
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		var msg string
		switch {
		case r == utf8.RuneError && size == 1:
			msg = fmt.Sprintf("not UTF-8: byte 0x%02X", data[i])
		case !yamlPrintable(r):
			msg = fmt.Sprintf("control character %U is not allowed in YAML", r)
		}
		if msg != "" {
			return &Error{Path: p.path, Line: line, Column: col, Msg: msg}
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return nil
}

// yamlPrintable is YAML 1.1's printable character set, as yaml.v3 checks it.
func yamlPrintable(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0x7E) || r == 0x85 ||
		(r >= 0xA0 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 8; i++ {
		n = n.Alias
	}
	return n
}

// describe names what a node holds, for "got ..." in messages.
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "nothing"
		case "!!str":
			return strconv.Quote(n.Value)
		case "!!int", "!!float", "!!bool":
			return n.Value
		}
		return n.ShortTag() + " " + strconv.Quote(n.Value)
	}
	return "an unsupported YAML node"
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// stringValue returns a plain string scalar's value.
func stringValue(n *yaml.Node) (string, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", false
	}
	return n.Value, true
}

// pair is a mapping entry; name is the key's text.
type pair struct {
	name       string
	key, value *yaml.Node
}

// pairs returns a mapping's entries, reporting non-string keys, duplicate
// keys and merge keys, which are skipped. where prefixes messages.
func (p *parser) pairs(where string, m *yaml.Node) []pair {
	var out []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name, ok := stringValue(k)
		switch {
		case k.ShortTag() == "!!merge":
			p.errorf(k, "%smerge keys (<<) are not supported; write the settings out", where)
			continue
		case !ok && resolve(k).Kind == yaml.ScalarNode && resolve(k).ShortTag() != "!!null":
			name = resolve(k).Value // a number or boolean used as a name
		case !ok:
			p.errorf(k, "%sexpected a key name; got %s", where, describe(k))
			continue
		}
		if first, dup := seen[name]; dup {
			p.errorf(k, "%sduplicate key %q (first at line %d, column %d)", where, name, first.Line, first.Column)
			continue
		}
		seen[name] = k
		out = append(out, pair{name, k, v})
	}
	return out
}

func (p *parser) top(c *Config, root *yaml.Node) {
	root = resolve(root)
	if isNull(root) {
		return
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(root, "expected a mapping with keys %s; got %s", strings.Join(topKeys, ", "), describe(root))
		return
	}
	for _, kv := range p.pairs("", root) {
		switch key := kv.name; key {
		case "fail_on":
			p.failOn(c, kv.value)
			c.failOnLine = kv.key.Line
		case "redact":
			p.redact(c, kv.value)
			c.redactLine = kv.key.Line
		case "exclude":
			p.exclude(c, kv.value)
		case "rules":
			p.rules(c, kv.value)
		case "suppress":
			p.suppress(c, kv.value)
		default:
			known := slices.Sorted(slices.Values(topKeys))
			msg := fmt.Sprintf("unknown key %q", key)
			if s := closest(key, topKeys); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			p.errorf(kv.key, "%s (known keys: %s)", msg, strings.Join(known, ", "))
		}
	}
}

func (p *parser) failOn(c *Config, n *yaml.Node) {
	s, ok := stringValue(n)
	v, valid := normalizeFailOn(s)
	if !ok || !valid {
		p.errorf(n, "fail_on: expected %s; got %s", failOnChoices, describe(n))
		return
	}
	c.FailOn = &v
}

func (p *parser) redact(c *Config, n *yaml.Node) {
	r := resolve(n)
	if r.Kind != yaml.ScalarNode || r.ShortTag() != "!!bool" {
		p.errorf(n, "redact: expected true or false; got %s", describe(n))
		return
	}
	var b bool
	if err := r.Decode(&b); err != nil {
		p.errorf(n, "redact: expected true or false; got %s", describe(n))
		return
	}
	c.Redact = &b
}

func (p *parser) exclude(c *Config, n *yaml.Node) {
	if isNull(n) {
		return
	}
	seq := resolve(n)
	if seq.Kind != yaml.SequenceNode {
		p.errorf(n, "exclude: expected a list of path globs; got %s", describe(n))
		return
	}
	for i, item := range seq.Content {
		where := fmt.Sprintf("exclude[%d]", i+1)
		s, ok := stringValue(item)
		if !ok {
			p.errorf(item, "%s: expected a path glob (a string); got %s", where, describe(item))
			continue
		}
		glob, _, err := compileGlob(s)
		if err != nil {
			p.errorf(item, "%s: %v", where, err)
			continue
		}
		c.Exclude = append(c.Exclude, glob)
	}
}

const severityChoices = "error, warning, info or off"

func (p *parser) rules(c *Config, n *yaml.Node) {
	if isNull(n) {
		return
	}
	m := resolve(n)
	if m.Kind != yaml.MappingNode {
		p.errorf(n, "rules: expected a mapping of rule names or codes to settings; got %s", describe(n))
		return
	}
	seen := map[string]pair{} // rule name → entry that configured it
	for _, kv := range p.pairs("rules: ", m) {
		ref := kv.name
		r := rules.Lookup(ref)
		if r == nil {
			p.errorf(kv.key, "rules: %s", unknownRule(ref))
			continue
		}
		if first, dup := seen[r.Name]; dup {
			p.errorf(kv.key, "rules: rule %s is configured twice, as %q (line %d, column %d) and as %q",
				r.Name, first.name, first.key.Line, first.key.Column, ref)
			continue
		}
		seen[r.Name] = kv
		p.rule(c, r, "rules."+ref, kv.value)
	}
}

func unknownRule(ref string) string {
	msg := fmt.Sprintf("unknown rule %q", ref)
	var cands []string
	byCand := map[string]*rules.Rule{}
	for _, r := range rules.All() {
		cands = append(cands, r.Name)
		byCand[r.Name], byCand[r.Code] = r, r
		// Codes differ in one digit from their neighbours: only a one-edit
		// slip (PL3O9, PL3009) names a code; PL999 is no typo of PL309.
		if editDistance(strings.ToLower(ref), strings.ToLower(r.Code)) <= 1 {
			cands = append(cands, r.Code)
		}
	}
	if s := closest(ref, cands); s != "" {
		r := byCand[s]
		return msg + fmt.Sprintf("; did you mean %q (%s)?", r.Name, r.Code)
	}
	return msg + ` (run "planlint rules" for the list)`
}

// rule reads one rule's settings: a severity or "off", or a mapping of
// severity and parameters.
func (p *parser) rule(c *Config, r *rules.Rule, where string, n *yaml.Node) {
	v := resolve(n)
	if v.Kind == yaml.MappingNode {
		for _, kv := range p.pairs(where+": ", v) {
			name := kv.name
			if name == "severity" {
				p.severity(c, r, where+".severity", kv.value)
				continue
			}
			if !hasParam(r, name) {
				msg := fmt.Sprintf("%s: unknown parameter %q", where, name)
				if s := closest(name, paramNames(r)); s != "" {
					msg += fmt.Sprintf("; did you mean %q?", s)
				}
				p.errorf(kv.key, "%s (%s)", msg, takes(r))
				continue
			}
			p.param(c, r, where+"."+name, name, kv.value)
		}
		return
	}
	if _, ok := stringValue(n); !ok {
		p.errorf(n, "%s: expected a severity (%s) or a mapping of settings; got %s", where, severityChoices, describe(n))
		return
	}
	p.severity(c, r, where, n)
}

func (p *parser) severity(c *Config, r *rules.Rule, where string, n *yaml.Node) {
	s, ok := stringValue(n)
	if !ok {
		p.errorf(n, "%s: expected a severity (%s); got %s", where, severityChoices, describe(n))
		return
	}
	if strings.EqualFold(strings.TrimSpace(s), "off") {
		if c.Rules.Off == nil {
			c.Rules.Off = map[string]bool{}
		}
		c.Rules.Off[r.Name] = true
		return
	}
	sev, err := rules.ParseSeverity(s)
	if err != nil {
		p.errorf(n, "%s: invalid severity %q; expected %s", where, s, severityChoices)
		return
	}
	if c.Rules.Severity == nil {
		c.Rules.Severity = map[string]rules.Severity{}
	}
	c.Rules.Severity[r.Name] = sev
}

func (p *parser) param(c *Config, r *rules.Rule, where, name string, n *yaml.Node) {
	v := resolve(n)
	var f float64
	if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!int" && v.ShortTag() != "!!float") || v.Decode(&f) != nil {
		p.errorf(n, "%s: expected a number; got %s", where, describe(n))
		return
	}
	// Every rule parameter is a threshold: a count, a factor or a share.
	if math.IsNaN(f) || f < 0 {
		p.errorf(n, "%s: expected a number of at least 0; got %s", where, describe(n))
		return
	}
	if c.Rules.Params == nil {
		c.Rules.Params = map[string]map[string]float64{}
	}
	if c.Rules.Params[r.Name] == nil {
		c.Rules.Params[r.Name] = map[string]float64{}
	}
	c.Rules.Params[r.Name][name] = f
}

func hasParam(r *rules.Rule, name string) bool {
	for _, p := range r.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

func paramNames(r *rules.Rule) []string {
	names := []string{"severity"}
	for _, p := range r.Params {
		names = append(names, p.Name)
	}
	return names
}

// takes lists what a rule's mapping accepts.
func takes(r *rules.Rule) string {
	if len(r.Params) == 0 {
		return r.Name + " takes only severity"
	}
	return r.Name + " takes " + strings.Join(paramNames(r), ", ")
}

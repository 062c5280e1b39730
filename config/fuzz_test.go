package config

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// FuzzLoadConfig checks that no input panics, that a failure is always
// Errors naming the file, and that every error carries a line once the
// YAML itself parsed (and a column, since it points at a node).
func FuzzLoadConfig(f *testing.F) {
	for _, s := range []string{
		"",
		Starter(),
		starter(true),
		"fail_on: warning\nredact: false\nexclude:\n  - legacy/**\nrules:\n  unmatched-indexes: warning\n  PL102: off\n  residual-sort:\n    severity: warning\n    warn_rows: 50000\n",
		"rulez: {}\n",
		"rules:\n  PL102: off\n  key-lookup: error\n",
		"rules: [PL102\n",
		"a: &x [*x]\nrules: *x\n",
		"<<: {fail_on: error}\n",
		"? [a]\n: b\n",
		"fail_on: !!int x\n",
		"exclude: ['C:\\x', '../y', '[', '']\n",
		"rules:\n  residual-sort: {warn_rows: .nan, error_rows: -1, warn_cost_share: '1'}\n",
		"---\n---\n",
		"%YAML 1.1\n---\nfail_on: none\n",
		"\xff\xfe",
		"suppress:\n  - rule: [PL102, residual-sort]\n    paths: [legacy/**, 'a/[']\n    operator: 0123456789abcdef0123456789abcdef\n    statement: fedcba9876543210\n    reason: known\n",
		"suppress:\n  - {rule: key-lookup, reason: ''}\n  - x\n  - {rule: [], paths: [], because: y}\n",
		"suppress: &s\n  - {rule: PL102, paths: *s, reason: r}\n",
	} {
		f.Add([]byte(s))
	}
	const file = "/repo/.planlint.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(file, data)
		if err == nil {
			if c == nil || c.Path != file {
				t.Fatalf("Parse succeeded without a config for %q", data)
			}
			if err := c.Rules.Validate(); err != nil {
				t.Fatalf("loaded rules do not validate: %v", err)
			}
			for _, g := range c.Exclude {
				c.Excluded(g + "/x")
			}
			for i := range c.Suppress {
				s := &c.Suppress[i]
				if len(s.Rules) == 0 || s.Reason == "" || s.Line == 0 || (s.Paths == nil && s.Operator == "" && s.Statement == "") {
					t.Fatalf("loaded suppress entry without rule, reason, position or scope: %+v", s)
				}
				for _, g := range s.Paths {
					c.Matches(s, s.Rules[0], "/repo/"+g+"/x", s.Operator, s.Statement)
				}
			}
			return
		}
		var es Errors
		if !errors.As(err, &es) || len(es) == 0 {
			t.Fatalf("error %T is not a non-empty Errors: %v", err, err)
		}
		for _, e := range es {
			if e.Path != file || !strings.HasPrefix(e.Error(), file+":") || e.Msg == "" {
				t.Fatalf("error does not name the file: %q", e.Error())
			}
		}
		if !utf8.Valid(data) {
			return // UTF-16 input may fail in yaml.v3 without a position
		}
		if parsesAsYAML(data) {
			for _, e := range es {
				if e.Line == 0 || e.Column == 0 {
					t.Fatalf("error on parsed YAML without a position: %q\ninput: %q", e.Error(), data)
				}
			}
		}
	})
}

// parsesAsYAML reports whether every document in data parses.
func parsesAsYAML(data []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		switch err := dec.Decode(&n); err {
		case nil:
		case io.EOF:
			return true
		default:
			return false
		}
	}
}

package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseSuppress(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []Suppression
	}{
		{"none", "suppress:\n", nil},
		{
			name: "rule and paths",
			yaml: "suppress:\n  - rule: key-lookup\n    paths: [legacy/**, ./reports/]\n    reason: '  the lookup reads\n      one row  '\n",
			want: []Suppression{{Rules: []string{"key-lookup"}, Paths: []string{"legacy/**", "reports"}, Reason: "the lookup reads one row", Line: 2, Column: 5}},
		},
		{
			name: "codes, a list of rules, one path as a string",
			yaml: "suppress:\n- rule: [PL102, residual-sort, pl102]\n  paths: plans/a.sqlplan\n  reason: known\n",
			want: []Suppression{{Rules: []string{"key-lookup", "residual-sort"}, Paths: []string{"plans/a.sqlplan"}, Reason: "known", Line: 2, Column: 3}},
		},
		{
			name: "fingerprints without paths, upper case",
			yaml: "suppress:\n  - rule: PL201\n    operator: 0123456789ABCDEF0123456789abcdef\n    statement: FEDCBA9876543210\n    reason: cache plan\n",
			want: []Suppression{{Rules: []string{"filtered-index-parameterized"}, Operator: "0123456789abcdef0123456789abcdef",
				Statement: "fedcba9876543210", Reason: "cache plan", Line: 2, Column: 5}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("/repo/.planlint.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Suppress, tt.want) {
				t.Errorf("Suppress\n got %+v\nwant %+v", c.Suppress, tt.want)
			}
		})
	}
}

func TestParseSuppressErrors(t *testing.T) {
	const file = "/repo/.planlint.yaml"
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"not a list", "suppress: {rule: key-lookup}\n",
			[]string{`1:11: suppress: expected a list of entries (rule, paths, reason); got a mapping`}},
		{"entry not a mapping", "suppress:\n  - key-lookup\n",
			[]string{`2:5: suppress[1]: expected a mapping with keys rule, paths, operator, statement, reason; got "key-lookup"`}},
		{"missing reason", "suppress:\n  - rule: key-lookup\n    paths: [a/**]\n",
			[]string{`2:5: suppress[1]: no reason (write reason: why these findings are accepted)`}},
		{"empty reason", "suppress:\n  - rule: key-lookup\n    paths: [a/**]\n    reason: '  '\n",
			[]string{`4:13: suppress[1].reason: expected why the findings are accepted (a non-empty string); got "  "`}},
		{"null reason", "suppress:\n  - rule: key-lookup\n    paths: [a/**]\n    reason:\n",
			[]string{`4:12: suppress[1].reason: expected why the findings are accepted (a non-empty string); got nothing`}},
		{"missing rule", "suppress:\n  - paths: [a/**]\n    reason: x\n",
			[]string{`2:5: suppress[1]: no rule (write rule: NAME or CODE, or a list of them)`}},
		{"unknown rule", "suppress:\n  - rule: [key-lookup, key-lookups]\n    paths: [a]\n    reason: x\n",
			[]string{`2:24: suppress[1].rule: unknown rule "key-lookups"; did you mean "key-lookup" (PL102)?`}},
		{"unknown key", "suppress:\n  - rule: key-lookup\n    path: [a]\n    reason: x\n",
			[]string{`3:5: suppress[1]: unknown key "path"; did you mean "paths"? (an entry takes rule, paths, operator, statement, reason)`}},
		{"invalid glob", "suppress:\n  - rule: key-lookup\n    paths: [ok/**, 'bad/[']\n    reason: x\n",
			[]string{`3:20: suppress[1].paths[2]: invalid glob "bad/[": bad pattern in segment "["`}},
		{"glob leaving the directory", "suppress:\n  - rule: key-lookup\n    paths: ../other\n    reason: x\n",
			[]string{`3:12: suppress[1].paths: glob "../other" leaves the config file's directory ("..")`}},
		{"empty paths", "suppress:\n  - rule: key-lookup\n    paths: []\n    reason: x\n",
			[]string{`3:12: suppress[1].paths: expected a path glob or a list of them; got an empty list (leave paths out to match every input)`}},
		{"bad operator fingerprint", "suppress:\n  - rule: key-lookup\n    operator: 'Key Lookup dbo.Work'\n    reason: x\n",
			[]string{`3:15: suppress[1].operator: expected 32 hexadecimal digits (the "fingerprint" of a finding in --format json, or partialFingerprints.primaryLocationLineHash in SARIF); got "Key Lookup dbo.Work"`}},
		{"bad statement fingerprint", "suppress:\n  - rule: key-lookup\n    statement: 12345\n    reason: x\n",
			[]string{`3:16: suppress[1].statement: expected 16 hexadecimal digits (the "statement_fingerprint" of a finding in --format json); got 12345`}},
		{"nothing to narrow", "suppress:\n  - rule: key-lookup\n    reason: x\n",
			[]string{`2:5: suppress[1]: names no paths, operator or statement, so it would silence key-lookup everywhere; narrow it, or turn the rule off under rules:`}},
		{"two bad entries in file order", "suppress:\n  - rule: nope\n    paths: [a]\n    reason: x\n  - {rule: PL102, paths: a, reason: y, because: z}\n",
			[]string{
				`2:11: suppress[1].rule: unknown rule "nope" (run "planlint rules" for the list)`,
				`5:40: suppress[2]: unknown key "because" (an entry takes rule, paths, operator, statement, reason)`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(file, []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded with %+v; want %q", c.Suppress, tt.want)
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("error %T is not Errors: %v", err, err)
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, file+":"+w)
			}
			if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
				t.Errorf("errors:\n got  %q\n want %q", got, want)
			}
		})
	}
}

func TestSuppressionMatches(t *testing.T) {
	c, err := Parse("/repo/.planlint.yaml", []byte(`suppress:
  - rule: [key-lookup, PL103]
    paths: [legacy/**, reports/q*.sqlplan]
    reason: a
  - rule: key-lookup
    operator: 0123456789abcdef0123456789abcdef
    reason: b
  - rule: key-lookup
    paths: [plans]
    statement: fedcba9876543210
    reason: c
`))
	if err != nil {
		t.Fatal(err)
	}
	c.WorkDir = "/repo/sub"
	const op, st = "0123456789abcdef0123456789abcdef", "fedcba9876543210"
	tests := []struct {
		entry                      int
		rule, path, operator, stmt string
		want                       bool
	}{
		{0, "key-lookup", "/repo/legacy/a/b.sqlplan", "", "", true},
		{0, "residual-sort", "../legacy/x.xml", "", "", true}, // relative to WorkDir
		{0, "residual-sort", "legacy/x.xml", "", "", false},   // that is /repo/sub/legacy
		{0, "row-goal", "/repo/legacy/x.xml", "", "", false},
		{0, "key-lookup", "/repo/reports/q1.sqlplan", "", "", true},
		{0, "key-lookup", "/repo/reports/a/q1.sqlplan", "", "", false},
		{0, "key-lookup", "/elsewhere/legacy/x.xml", "", "", false},
		{0, "key-lookup", "", "", "", false}, // standard input, cache plans
		{1, "key-lookup", "", strings.ToUpper(op), "", true},
		{1, "key-lookup", "/anywhere.sqlplan", op, "", true},
		{1, "key-lookup", "/anywhere.sqlplan", "", "", false},
		{2, "key-lookup", "/repo/plans/x/y.sqlplan", "", st, true},
		{2, "key-lookup", "/repo/plans/x/y.sqlplan", "", "0000000000000000", false},
		{2, "key-lookup", "/repo/other/y.sqlplan", "", st, false},
	}
	for _, tt := range tests {
		if got := c.Matches(&c.Suppress[tt.entry], tt.rule, tt.path, tt.operator, tt.stmt); got != tt.want {
			t.Errorf("entry %d, %s %q op %q stmt %q: %v, want %v", tt.entry+1, tt.rule, tt.path, tt.operator, tt.stmt, got, tt.want)
		}
	}
}

func TestSuppressionFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"legacy/a.sqlplan", "legacy/deep/b.xml", "legacy/notes.md", "plans/c.sqlplan",
		"plans/skip/d.sqlplan", ".git/e.sqlplan", "legacy/.git/f.sqlplan"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Parse(filepath.Join(dir, FileName), []byte(`exclude: [plans/skip]
suppress:
  - {rule: PL102, paths: [legacy], reason: a}
  - {rule: PL102, paths: ['**/*.sqlplan'], reason: b}
  - {rule: PL102, paths: [plans/c.sqlplan, gone/**], reason: c}
  - {rule: PL102, paths: [gone], reason: d}
  - {rule: PL102, operator: 0123456789abcdef0123456789abcdef, reason: e}
`))
	if err != nil {
		t.Fatal(err)
	}
	plans := func(name string) bool { return strings.HasSuffix(name, ".sqlplan") || strings.HasSuffix(name, ".xml") }
	want := [][]string{
		{"legacy/a.sqlplan", "legacy/deep/b.xml"},
		{"legacy/a.sqlplan", "plans/c.sqlplan"},
		{"plans/c.sqlplan"},
		nil,
		nil,
	}
	for i := range c.Suppress {
		got, err := c.SuppressionFiles(&c.Suppress[i], plans)
		if err != nil {
			t.Fatal(err)
		}
		var rel []string
		for _, p := range got {
			r, _ := filepath.Rel(dir, p)
			rel = append(rel, filepath.ToSlash(r))
		}
		if !reflect.DeepEqual(rel, want[i]) {
			t.Errorf("entry %d: files %q, want %q", i+1, rel, want[i])
		}
	}
}

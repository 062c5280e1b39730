package config

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/planlint/planlint/rules"
)

func ptr[T any](v T) *T { return &v }

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		failOn  *string
		redact  *bool
		exclude []string
		rules   rules.Config
	}{
		{name: "empty file", yaml: ""},
		{name: "comments only", yaml: "# nothing yet\n\n# still nothing\n"},
		{name: "explicit null document", yaml: "~\n"},
		{name: "empty collections", yaml: "exclude:\nrules:\n"},
		{name: "empty rule mapping", yaml: "rules:\n  key-lookup: {}\n"},
		{
			name: "full example",
			yaml: `# planlint configuration
fail_on: warning
redact: false
exclude:
  - legacy/**
  - ./generated/
rules:
  unmatched-indexes: warning
  PL102: off
  residual-sort:
    severity: warning
    warn_rows: 50000
  row-estimate-skew:
    warn_factor: 20
`,
			failOn:  ptr("warning"),
			redact:  ptr(false),
			exclude: []string{"legacy/**", "generated"},
			rules: rules.Config{
				Severity: map[string]rules.Severity{"unmatched-indexes": rules.Warning, "residual-sort": rules.Warning},
				Off:      map[string]bool{"key-lookup": true},
				Params: map[string]map[string]float64{
					"residual-sort":     {"warn_rows": 50000},
					"row-estimate-skew": {"warn_factor": 20},
				},
			},
		},
		{
			name:   "values are case-insensitive",
			yaml:   "fail_on: INFO\nrules:\n  Key-Lookup: Error\n  pl103: OFF\n",
			failOn: ptr("info"),
			rules: rules.Config{
				Severity: map[string]rules.Severity{"key-lookup": rules.Error},
				Off:      map[string]bool{"residual-sort": true},
			},
		},
		{name: "fail_on none", yaml: "fail_on: none\n", failOn: ptr("none")},
		{
			name: "severity aliases and off in long form",
			yaml: "rules:\n  key-lookup:\n    severity: warn\n  residual-sort: note\n  PL104:\n    severity: off\n    warn_factor: 5\n",
			rules: rules.Config{
				Severity: map[string]rules.Severity{"key-lookup": rules.Warning, "residual-sort": rules.Info},
				Off:      map[string]bool{"row-estimate-skew": true},
				Params:   map[string]map[string]float64{"row-estimate-skew": {"warn_factor": 5}},
			},
		},
		{
			name: "number spellings",
			yaml: "rules:\n  residual-sort:\n    warn_rows: 50_000\n    error_rows: 1e6\n    warn_cost_share: .5\n  key-lookup:\n    warn_executions: 0x10\n    error_executions: .inf\n",
			rules: rules.Config{Params: map[string]map[string]float64{
				"residual-sort": {"warn_rows": 50000, "error_rows": 1e6, "warn_cost_share": 0.5},
				"key-lookup":    {"warn_executions": 16, "error_executions": posInf},
			}},
		},
		{
			name:   "anchors and aliases",
			yaml:   "fail_on: &level warning\nrules:\n  key-lookup: *level\n",
			failOn: ptr("warning"),
			rules:  rules.Config{Severity: map[string]rules.Severity{"key-lookup": rules.Warning}},
		},
		{
			name:    "flow style",
			yaml:    "{fail_on: error, exclude: [a/*.sqlplan, 'b\\c'], rules: {PL105: info}}\n",
			failOn:  ptr("error"),
			exclude: []string{"a/*.sqlplan", "b/c"},
			rules:   rules.Config{Severity: map[string]rules.Severity{"set-options": rules.Info}},
		},
		{name: "byte order mark", yaml: "\ufefffail_on: info\n", failOn: ptr("info")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("/repo/.planlint.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if c.Path != "/repo/.planlint.yaml" || c.Dir != "/repo" {
				t.Errorf("Path, Dir = %q, %q; want /repo/.planlint.yaml, /repo", c.Path, c.Dir)
			}
			if !reflect.DeepEqual(c.FailOn, tt.failOn) {
				t.Errorf("FailOn = %v; want %v", deref(c.FailOn), deref(tt.failOn))
			}
			if !reflect.DeepEqual(c.Redact, tt.redact) {
				t.Errorf("Redact = %v; want %v", deref(c.Redact), deref(tt.redact))
			}
			if !reflect.DeepEqual(c.Exclude, tt.exclude) {
				t.Errorf("Exclude = %q; want %q", c.Exclude, tt.exclude)
			}
			if !reflect.DeepEqual(c.Rules, tt.rules) {
				t.Errorf("Rules = %+v; want %+v", c.Rules, tt.rules)
			}
			if err := c.Rules.Validate(); err != nil {
				t.Errorf("rules.Config.Validate: %v", err)
			}
		})
	}
}

var posInf = math.Inf(1)

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestParseErrors(t *testing.T) {
	const file = "/repo/.planlint.yaml"
	tests := []struct {
		name string
		yaml string
		want []string // one line per problem, path omitted
	}{
		{
			name: "unknown key with suggestion",
			yaml: "fail_on: error\nrulez:\n  PL102: off\n",
			want: []string{`2:1: unknown key "rulez"; did you mean "rules"? (known keys: exclude, fail_on, redact, rules, suppress)`},
		},
		{
			name: "unknown key without suggestion",
			yaml: "verbose: true\n",
			want: []string{`1:1: unknown key "verbose" (known keys: exclude, fail_on, redact, rules, suppress)`},
		},
		{
			name: "numeric key",
			yaml: "1: x\n",
			want: []string{`1:1: unknown key "1" (known keys: exclude, fail_on, redact, rules, suppress)`},
		},
		{
			name: "unknown rule with suggestion",
			yaml: "rules:\n  key-lookups: off\n",
			want: []string{`2:3: rules: unknown rule "key-lookups"; did you mean "key-lookup" (PL102)?`},
		},
		{
			name: "unknown rule code with suggestion",
			yaml: "rules:\n  PL2O1: off\n",
			want: []string{`2:3: rules: unknown rule "PL2O1"; did you mean "filtered-index-parameterized" (PL201)?`},
		},
		{
			name: "unknown rule without suggestion",
			yaml: "rules:\n  select-star: error\n",
			want: []string{`2:3: rules: unknown rule "select-star" (run "planlint rules" for the list)`},
		},
		{
			name: "unknown parameter with suggestion",
			yaml: "rules:\n  residual-sort:\n    warn_row: 5\n",
			want: []string{`3:5: rules.residual-sort: unknown parameter "warn_row"; did you mean "warn_rows"? (residual-sort takes severity, warn_rows, error_rows, warn_cost_share, min_statement_cost, min_rows, min_cost_share, max_key_columns, max_include_columns, warn_elapsed_ms)`},
		},
		{
			name: "unknown parameter on a rule without parameters",
			yaml: "rules:\n  PL105:\n    threshold: 5\n",
			want: []string{`3:5: rules.PL105: unknown parameter "threshold" (set-options takes only severity)`},
		},
		{
			name: "severity not a string",
			yaml: "rules:\n  key-lookup:\n    severity: 3\n",
			want: []string{`3:15: rules.key-lookup.severity: expected a severity (error, warning, info or off); got 3`},
		},
		{
			name: "severity a list",
			yaml: "rules:\n  key-lookup:\n    severity: [error]\n",
			want: []string{`3:15: rules.key-lookup.severity: expected a severity (error, warning, info or off); got a list`},
		},
		{
			name: "shorthand of the wrong type",
			yaml: "rules:\n  key-lookup: false\n",
			want: []string{`2:15: rules.key-lookup: expected a severity (error, warning, info or off) or a mapping of settings; got false`},
		},
		{
			name: "rule without a value",
			yaml: "rules:\n  key-lookup:\n",
			want: []string{`2:14: rules.key-lookup: expected a severity (error, warning, info or off) or a mapping of settings; got nothing`},
		},
		{
			name: "invalid severity shorthand",
			yaml: "rules:\n  PL102: critical\n",
			want: []string{`2:10: rules.PL102: invalid severity "critical"; expected error, warning, info or off`},
		},
		{
			name: "invalid severity long form",
			yaml: "rules:\n  PL102:\n    severity: fatal\n",
			want: []string{`3:15: rules.PL102.severity: invalid severity "fatal"; expected error, warning, info or off`},
		},
		{
			name: "parameter not a number",
			yaml: "rules:\n  residual-sort:\n    warn_rows: lots\n",
			want: []string{`3:16: rules.residual-sort.warn_rows: expected a number; got "lots"`},
		},
		{
			name: "quoted number is a string",
			yaml: "rules:\n  residual-sort:\n    warn_rows: \"5000\"\n",
			want: []string{`3:16: rules.residual-sort.warn_rows: expected a number; got "5000"`},
		},
		{
			name: "parameter tagged int but not one",
			yaml: "rules:\n  residual-sort:\n    warn_rows: !!int many\n",
			want: []string{`3:16: rules.residual-sort.warn_rows: expected a number; got many`},
		},
		{
			name: "negative parameter",
			yaml: "rules:\n  residual-sort:\n    warn_rows: -5\n",
			want: []string{`3:16: rules.residual-sort.warn_rows: expected a number of at least 0; got -5`},
		},
		{
			name: "NaN parameter",
			yaml: "rules:\n  residual-sort:\n    warn_rows: .nan\n",
			want: []string{`3:16: rules.residual-sort.warn_rows: expected a number of at least 0; got .nan`},
		},
		{
			name: "duplicate top-level key",
			yaml: "fail_on: error\nredact: true\nfail_on: warning\n",
			want: []string{`3:1: duplicate key "fail_on" (first at line 1, column 1)`},
		},
		{
			name: "duplicate rule key",
			yaml: "rules:\n  PL102: off\n  PL102: error\n",
			want: []string{`3:3: rules: duplicate key "PL102" (first at line 2, column 3)`},
		},
		{
			name: "duplicate parameter",
			yaml: "rules:\n  residual-sort:\n    warn_rows: 1\n    warn_rows: 2\n",
			want: []string{`4:5: rules.residual-sort: duplicate key "warn_rows" (first at line 3, column 5)`},
		},
		{
			name: "rule by code and by name",
			yaml: "rules:\n  PL102: off\n  key-lookup: error\n",
			want: []string{`3:3: rules: rule key-lookup is configured twice, as "PL102" (line 2, column 3) and as "key-lookup"`},
		},
		{
			name: "fail_on invalid",
			yaml: "fail_on: critical\n",
			want: []string{`1:10: fail_on: expected error, warning, info or none; got "critical"`},
		},
		{
			name: "fail_on not a string",
			yaml: "fail_on: [error]\n",
			want: []string{`1:10: fail_on: expected error, warning, info or none; got a list`},
		},
		{
			name: "fail_on empty",
			yaml: "fail_on:\n",
			want: []string{`1:9: fail_on: expected error, warning, info or none; got nothing`},
		},
		{
			name: "redact not a boolean",
			yaml: "redact: yes\n",
			want: []string{`1:9: redact: expected true or false; got "yes"`},
		},
		{
			name: "exclude not a list",
			yaml: "exclude: legacy/**\n",
			want: []string{`1:10: exclude: expected a list of path globs; got "legacy/**"`},
		},
		{
			name: "exclude item not a string",
			yaml: "exclude:\n  - a\n  - {b: c}\n",
			want: []string{`3:5: exclude[2]: expected a path glob (a string); got a mapping`},
		},
		{
			name: "exclude bad glob",
			yaml: "exclude:\n  - 'sql/[a-'\n",
			want: []string{`2:5: exclude[1]: invalid glob "sql/[a-": bad pattern in segment "[a-"`},
		},
		{
			name: "exclude absolute",
			yaml: "exclude:\n  - /etc/**\n",
			want: []string{`2:5: exclude[1]: glob "/etc/**" is absolute; globs are relative to the config file's directory`},
		},
		{
			name: "exclude windows absolute",
			yaml: "exclude:\n  - 'C:\\sql\\**'\n",
			want: []string{`2:5: exclude[1]: glob "C:\\sql\\**" is absolute; globs are relative to the config file's directory`},
		},
		{
			name: "exclude parent",
			yaml: "exclude:\n  - ../other/**\n",
			want: []string{`2:5: exclude[1]: glob "../other/**" leaves the config file's directory ("..")`},
		},
		{
			name: "exclude empty",
			yaml: "exclude:\n  - ''\n",
			want: []string{`2:5: exclude[1]: empty glob`},
		},
		{
			name: "exclude dot",
			yaml: "exclude:\n  - ./\n",
			want: []string{`2:5: exclude[1]: glob "./" names the config file's directory itself; use "**" to exclude everything`},
		},
		{
			name: "rules not a mapping",
			yaml: "rules:\n  - key-lookup\n",
			want: []string{`2:3: rules: expected a mapping of rule names or codes to settings; got a list`},
		},
		{
			name: "top level not a mapping",
			yaml: "- fail_on\n",
			want: []string{`1:1: expected a mapping with keys fail_on, redact, exclude, rules, suppress; got a list`},
		},
		{
			name: "top level scalar",
			yaml: "hello\n",
			want: []string{`1:1: expected a mapping with keys fail_on, redact, exclude, rules, suppress; got "hello"`},
		},
		{
			name: "merge key",
			yaml: "base: &b {fail_on: error}\n<<: *b\n",
			want: []string{
				`1:1: unknown key "base" (known keys: exclude, fail_on, redact, rules, suppress)`,
				`2:1: merge keys (<<) are not supported; write the settings out`,
			},
		},
		{
			name: "key that is a list",
			yaml: "? [a, b]\n: c\n",
			want: []string{`1:3: expected a key name; got a list`},
		},
		{
			name: "malformed YAML",
			yaml: "fail_on: error\nrules: [PL102\n",
			want: []string{`2: malformed YAML: did not find expected ',' or ']'`},
		},
		{
			name: "bad indentation",
			yaml: "rules:\n  PL102: off\n   PL103: off\n",
			want: []string{`3: malformed YAML: mapping values are not allowed in this context`},
		},
		{
			name: "tab indentation",
			yaml: "rules:\n\tPL102: off\n",
			want: []string{`2: malformed YAML: found character that cannot start any token`},
		},
		{
			name: "block sequence entry inside a mapping",
			yaml: "fail_on: error\nredact: true\n- legacy\n",
			want: []string{`3: malformed YAML: did not find expected key`},
		},
		{
			name: "unterminated quoted string",
			yaml: "fail_on: error\nexclude:\n  - \"legacy\n",
			want: []string{`3: malformed YAML: found unexpected end of stream`},
		},
		{
			name: "duplicate directive",
			yaml: "%YAML 1.1\n%YAML 1.1\n---\nfail_on: error\n",
			want: []string{`2: malformed YAML: found duplicate %YAML directive`},
		},
		{
			name: "unknown alias",
			yaml: "fail_on: error # not *level\nrules:\n  PL102: *level\n",
			want: []string{`3:10: malformed YAML: alias *level names no anchor (&level) defined before it`},
		},
		{
			name: "invalid UTF-8",
			yaml: "fail_on: error\nexclude:\n  - l\xe9gacy\n",
			want: []string{`3:6: not UTF-8: byte 0xE9`},
		},
		{
			name: "control character",
			yaml: "fail_on: \x01error\n",
			want: []string{`1:10: control character U+0001 is not allowed in YAML`},
		},
		{
			name: "two documents",
			yaml: "fail_on: error\n---\nredact: true\n",
			want: []string{`2:1: holds more than one YAML document; a config file has exactly one`},
		},
		{
			name: "a one-edit slip in a rule code",
			yaml: "rules:\n  PL3008: off\n",
			want: []string{`2:3: rules: unknown rule "PL3008"; did you mean "join-or-clause" (PL308)?`},
		},
		{
			name: "several problems in file order",
			yaml: "rules:\n  PL999: off\n  key-lookup: loud\nfail_on: never\n",
			want: []string{
				`2:3: rules: unknown rule "PL999" (run "planlint rules" for the list)`,
				`3:15: rules.key-lookup: invalid severity "loud"; expected error, warning, info or off`,
				`4:10: fail_on: expected error, warning, info or none; got "never"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(file, []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded with %+v; want errors %q", c, tt.want)
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
			for _, e := range es {
				if e.Path != file || e.Line == 0 {
					t.Errorf("error without file and line: %+v", e)
				}
			}
		})
	}
}

func TestParseFailOn(t *testing.T) {
	tests := []struct {
		in      string
		want    rules.Severity
		wantErr string
	}{
		{in: "error", want: rules.Error},
		{in: "Warning", want: rules.Warning},
		{in: " info ", want: rules.Info},
		{in: "none", want: 0},
		{in: "never", wantErr: `expected error, warning, info or none; got "never"`},
		{in: "", wantErr: `expected error, warning, info or none; got ""`},
	}
	for _, tt := range tests {
		got, err := ParseFailOn(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseFailOn(%q) error = %v; want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseFailOn(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	file, err := Parse("/repo/.planlint.yaml", []byte("# settings\nfail_on: warning\nredact: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cfg     *Config
		flags   Flags
		want    Settings
		wantErr string
	}{
		{
			name: "defaults",
			cfg:  Default("/srv/app"),
			want: Settings{FailOn: "error", Threshold: rules.Error, FailOnSource: "default", Redact: true, RedactSource: "default"},
		},
		{
			name: "file beats defaults",
			cfg:  file,
			want: Settings{FailOn: "warning", Threshold: rules.Warning, FailOnSource: "/repo/.planlint.yaml:2", Redact: false, RedactSource: "/repo/.planlint.yaml:3"},
		},
		{
			name:  "flags beat the file",
			cfg:   file,
			flags: Flags{FailOn: ptr("None"), Redact: ptr(true)},
			want:  Settings{FailOn: "none", Threshold: 0, FailOnSource: "--fail-on", Redact: true, RedactSource: "--redact"},
		},
		{
			name:    "invalid flag",
			cfg:     file,
			flags:   Flags{FailOn: ptr("fatal")},
			wantErr: `--fail-on: expected error, warning, info or none; got "fatal"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cfg.Resolve(tt.flags)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v; want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Resolve = %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestClosest(t *testing.T) {
	cands := []string{"fail_on", "redact", "exclude", "rules"}
	tests := []struct{ in, want string }{
		{"rulez", "rules"},
		{"RULES", "rules"},
		{"failon", "fail_on"},
		{"fail-on", "fail_on"},
		{"redcat", "redact"}, // transposition
		{"exclude_paths", ""},
		{"x", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := closest(tt.in, cands); got != tt.want {
			t.Errorf("closest(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func BenchmarkParseStarter(b *testing.B) {
	data := []byte(starter(true))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse("/repo/"+FileName, data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseErrors(b *testing.B) {
	data := []byte("rulez: {}\nrules:\n  key-lookups: off\n  residual-sort:\n    warn_row: 5\nfail_on: never\n")
	for b.Loop() {
		if _, err := Parse("/repo/"+FileName, data); err == nil {
			b.Fatal("no error")
		}
	}
}

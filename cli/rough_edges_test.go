package cli

import (
	"strings"
	"testing"
)

// TestCommandLineRoughEdges: each small usability fix, by the command a
// new user ran.
func TestCommandLineRoughEdges(t *testing.T) {
	inRoot(t)
	tests := []struct {
		name       string
		args       []string
		code       int
		out, err   string // substrings; "" means not checked
		exactOut   string
		checkExact bool
	}{
		{name: "--version prints what version prints", args: []string{"--version"}, exactOut: "planlint " + Version() + "\n", checkExact: true},
		{name: "version", args: []string{"version"}, exactOut: "planlint " + Version() + "\n", checkExact: true},
		{name: "rules --markdown lists the rules as Markdown", args: []string{"rules", "--markdown"}, out: "| Code | Name | Highest severity |"},
		{name: "completion with an unknown shell fails", args: []string{"completion", "tcsh"}, code: ExitError, err: `unknown shell "tcsh"`},
		{name: "completion of --format", args: []string{"__complete", "check", "--format", ""}, out: "sarif\ngithub\nmarkdown"},
		{name: "completion of compare --format", args: []string{"__complete", "compare", "--format", ""}, out: "text\njson\nmarkdown\ngithub\n:4"},
		{name: "completion of compare --fail-on", args: []string{"__complete", "compare", "--fail-on", ""}, out: "error\nwarning\ninfo\nnone"},
		{name: "completion of --fail-on", args: []string{"__complete", "check", "--fail-on", ""}, out: "error\nwarning\ninfo\nnone"},
		{name: "completion of --color", args: []string{"__complete", "check", "--color", ""}, out: "auto\nalways\nnever"},
		{name: "--jobs -1", args: []string{"check", "--jobs", "-1", "fixtures/queue/param.sqlplan"}, code: ExitError, err: "--jobs must be 0"},
		{name: "--max-file-size with a unit", args: []string{"check", "--fail-on", "none", "--max-file-size", "1 GiB", "fixtures/queue/param.sqlplan"}, out: "in 1 file\n"},
		{name: "--max-file-size too small", args: []string{"check", "--max-file-size", "1KiB", "fixtures/queue/param.sqlplan"}, code: ExitError, err: "param.sqlplan"},
		{name: "--max-file-size nonsense", args: []string{"check", "--max-file-size", "lots", "fixtures/queue/param.sqlplan"}, code: ExitError, err: "want a positive size"},
		{name: "--output FORMAT=-", args: []string{"check", "--output", "json=-", "fixtures/queue/param.sqlplan"}, code: ExitError, err: "standard output takes --format json"},
		{name: "compare names a missing file once", args: []string{"compare", "nope.sqlplan", "fixtures/queue/param.sqlplan"}, code: ExitError, err: "planlint: nope.sqlplan: no such file\n"},
		{name: "check file.sql points to explain", args: []string{"check", "fixtures/queue/literal.sql"}, code: ExitError, err: "'planlint explain fixtures/queue/literal.sql' captures its plans"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, "", tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errOut)
			}
			if tt.checkExact && out != tt.exactOut {
				t.Errorf("stdout %q, want %q", out, tt.exactOut)
			}
			if tt.out != "" && !strings.Contains(out, tt.out) {
				t.Errorf("stdout lacks %q:\n%s", tt.out, out)
			}
			if tt.err != "" && !strings.Contains(errOut, tt.err) {
				t.Errorf("stderr lacks %q: %q", tt.err, errOut)
			}
		})
	}
}

package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
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
		{name: "completion of --min-severity", args: []string{"__complete", "check", "--min-severity", ""}, out: "info\nwarning\nerror\n:4\n"},
		{name: "completion of compare --min-severity", args: []string{"__complete", "compare", "--min-severity", ""}, out: "info\nwarning\nerror\n:4\n"},
		{name: "completion of --sort", args: []string{"__complete", "check", "--sort", ""}, out: "impact\nlocation\n:4\n"},
		{name: "completion of explain --format", args: []string{"__complete", "explain", "--format", ""}, out: "text\njson\nsarif\ngithub\nmarkdown\nhtml\ndot\n:4\n"},
		{name: "completion of cache --fail-on", args: []string{"__complete", "cache", "--fail-on", ""}, out: "error\nwarning\ninfo\nnone\n:4\n"},
		{name: "completion of --color", args: []string{"__complete", "check", "--color", ""}, out: "auto\nalways\nnever"},
		{name: "--jobs -1", args: []string{"check", "--jobs", "-1", "fixtures/queue/param.sqlplan"}, code: ExitError, err: "--jobs must be 0"},
		{name: "--max-file-size with a unit", args: []string{"check", "--fail-on", "none", "--max-file-size", "1 GiB", "fixtures/queue/param.sqlplan"}, out: "in 1 file\n"},
		{name: "--max-file-size 1GiB", args: []string{"check", "--fail-on", "none", "--max-file-size", "1GiB", "fixtures/queue/param.sqlplan"}, out: "in 1 file\n"},
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

// TestOutputDestinationsCheckedFirst: a --output or --write-baseline path
// that cannot be written fails the run before anything is analysed: exit
// 2, one line naming the path, nothing on stdout, and no file left behind
// (an existing file keeps its content).
func TestOutputDestinationsCheckedFirst(t *testing.T) {
	inRoot(t)
	plan := "fixtures/queue/param.sqlplan"
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	precious := filepath.Join(dir, "precious.txt")
	if err := os.WriteFile(precious, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(precious, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	existing := filepath.Join(dir, "existing.json")
	created := filepath.Join(dir, "created.json")
	tests := []struct {
		name string
		args []string
		err  string // the whole of stderr
	}{
		{"missing directory", []string{"check", "--output", "json=" + missing + "/r.json", plan},
			"planlint: --output json=" + missing + "/r.json: the directory " + missing + " does not exist\n"},
		{"symbolic link", []string{"check", "--output", "sarif=" + link, plan},
			"planlint: --output sarif=" + link + ": is a symbolic link (to " + precious + "); refusing to write through it: remove the link or name another file\n"},
		{"directory", []string{"check", "--output", "html=" + dir, plan},
			"planlint: --output html=" + dir + ": is a directory\n"},
		{"baseline in a missing directory", []string{"check", "--write-baseline", missing + "/b.json", plan},
			"planlint: --write-baseline " + missing + "/b.json: the directory " + missing + " does not exist\n"},
		{"a good output and a bad one", []string{"check", "--output", "json=" + created, "--output", "html=" + missing + "/r.html", plan},
			"planlint: --output html=" + missing + "/r.html: the directory " + missing + " does not exist\n"},
		{"one file named twice", []string{"check", "--output", "json=" + created, "--output", "sarif=" + created, plan},
			"planlint: --output json=" + created + " and --output sarif=" + created + " name the same file\n"},
		{"the run fails after the files are open", []string{"check", "--output", "json=" + created, "--output", "sarif=" + existing, "--schema", missing + "/schema.sql", plan},
			"planlint: --schema " + missing + "/schema.sql: no such file or directory\n"},
		{"explain --save under a file", []string{"explain", "--save", precious + "/plans", "fixtures/queue/literal.sql"},
			"planlint: --save " + precious + "/plans: " + precious + " is not a directory\n"},
		{"explain, before connecting", []string{"explain", "--output", "json=" + missing + "/r.json", "fixtures/queue/literal.sql"},
			"planlint: --output json=" + missing + "/r.json: the directory " + missing + " does not exist\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(existing, []byte("old content"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := run(t, "", tt.args...)
			if code != ExitError || out != "" || errOut != tt.err {
				t.Errorf("exit %d, stdout %d bytes, stderr %q\nwant exit 2, no stdout, stderr %q", code, len(out), errOut, tt.err)
			}
			if _, err := os.Lstat(created); err == nil {
				t.Errorf("%s was left behind", created)
			}
			if b, _ := os.ReadFile(existing); string(b) != "old content" {
				t.Errorf("an existing output file was changed by a failed run: %q", b)
			}
			if b, _ := os.ReadFile(precious); string(b) != "keep me" {
				t.Errorf("written through the link: %q", b)
			}
		})
	}
	t.Run("not writable", func(t *testing.T) {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		if f, err := os.Create(filepath.Join(ro, "probe")); err == nil {
			f.Close()
			t.Skip("this user can write a read-only directory (root)")
		}
		out, errOut, code := run(t, "", "check", "--output", "json="+ro+"/r.json", plan)
		want := "planlint: --output json=" + ro + "/r.json: permission denied: cannot write it (or create it in " + ro + ")\n"
		if code != ExitError || out != "" || errOut != want {
			t.Errorf("exit %d, stdout %d bytes, stderr %q; want %q", code, len(out), errOut, want)
		}
	})
	t.Run("a device named twice", func(t *testing.T) {
		if _, err := os.Stat(os.DevNull); err != nil || os.DevNull != "/dev/null" {
			t.Skip("no /dev/null")
		}
		if _, errOut, code := run(t, "", "check", "--fail-on", "none", "--output", "sarif="+os.DevNull, "--output", "html="+os.DevNull, plan); code != ExitOK {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("an existing file is replaced whole", func(t *testing.T) {
		if err := os.WriteFile(existing, bytes.Repeat([]byte("x"), 1<<20), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, errOut, code := run(t, "", "check", "--fail-on", "none", "--output", "json="+existing, plan); code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		b, err := os.ReadFile(existing)
		if err != nil || !json.Valid(b) {
			t.Errorf("the output is not the JSON report alone (%d bytes, %v)", len(b), err)
		}
	})
}

// TestStderrLines: every command's error lines have one form — "planlint: ",
// then the file when there is one, then the problem — with no "error:"
// label, no doubled prefix, no file named twice and no second line pointing
// at help.
func TestStderrLines(t *testing.T) {
	inRoot(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unterminated := write("open.sql", "SELECT 1 /* open\n")
	badRules := write("rules.sql", "-- planlint-ignore nosuchrule -- why\nSELECT 1;\n-- planlint-ignore otherrule -- why\nSELECT 2;\n")
	empty := write("empty.sql", "")
	existing := write(".planlint.yaml", "fail_on: error\n")
	plan := "fixtures/queue/param.sqlplan"
	tests := []struct {
		name  string
		args  []string
		lines []string // each stderr line, in order
	}{
		{"check, missing file", []string{"check", "nope.sqlplan"}, []string{"planlint: nope.sqlplan: no such file"}},
		{"check, no argument", []string{"check"}, []string{"planlint: check needs at least one argument: a plan file, a directory, a glob or - for standard input (see 'planlint check --help')"}},
		{"check, unknown flag", []string{"check", "--bogus", plan}, []string{"planlint: unknown flag: --bogus (see 'planlint check --help')"}},
		{"check, bad flag value", []string{"check", "--jobs", "x", plan}, []string{`planlint: invalid argument "x" for "--jobs" flag: strconv.ParseInt: parsing "x": invalid syntax (see 'planlint check --help')`}},
		{"check, missing schema", []string{"check", "--schema", "nope.sql", plan}, []string{"planlint: --schema nope.sql: no such file or directory"}},
		{"check, a .sql file", []string{"check", "fixtures/queue/literal.sql"}, []string{"planlint: fixtures/queue/literal.sql: line 1, column 1: not XML: expected '<' at the start of the document, found what looks like T-SQL (a .sql file is T-SQL: 'planlint explain fixtures/queue/literal.sql' captures its plans from a server)"}},
		{"check, missing config", []string{"check", "--config", "nope.yaml", plan}, []string{"planlint: nope.yaml: config file named by --config does not exist"}},
		{"explain, missing file", []string{"explain", "nope.sql"}, []string{"planlint: nope.sql: no such file"}},
		{"explain, no argument", []string{"explain"}, []string{"planlint: explain needs at least one argument: a .sql file (see 'planlint explain --help')"}},
		{"explain, unterminated comment", []string{"explain", unterminated}, []string{"planlint: " + unterminated + ":1:10: unterminated comment: it runs to the end of the file"}},
		{"explain, unknown rules in suppressions", []string{"explain", badRules}, []string{
			"planlint: " + badRules + `:1:1: planlint-ignore names unknown rule "nosuchrule" (run 'planlint rules' for the list)`,
			"planlint: " + badRules + `:3:1: planlint-ignore names unknown rule "otherrule" (run 'planlint rules' for the list)`}},
		{"explain, nothing to capture", []string{"explain", empty}, []string{
			"planlint: " + empty + ": warning: no statement to capture",
			"planlint: no server given: use -S/--server (or SQLCMDSERVER), or --connection-string (or PLANLINT_CONNECTION)"}},
		{"cache, no server", []string{"cache"}, []string{"planlint: no server given: use -S/--server (or SQLCMDSERVER), or --connection-string (or PLANLINT_CONNECTION)"}},
		{"cache, an argument", []string{"cache", "x.sqlplan"}, []string{`planlint: cache takes no arguments, not "x.sqlplan" (see 'planlint cache --help')`}},
		{"querystore, no server", []string{"querystore"}, []string{"planlint: no server given: use -S/--server (or SQLCMDSERVER), or --connection-string (or PLANLINT_CONNECTION)"}},
		{"querystore, bad --since", []string{"querystore", "--since", "soon"}, []string{`planlint: --since "soon": want a duration such as 24h, 90m or 7d`}},
		{"doctor, no server", []string{"doctor"}, []string{"planlint: no server given: use -S/--server (or SQLCMDSERVER), or --connection-string (or PLANLINT_CONNECTION)"}},
		{"compare, missing file", []string{"compare", "nope.sqlplan", plan}, []string{"planlint: nope.sqlplan: no such file"}},
		{"rules, unknown rule", []string{"rules", "nope"}, []string{`planlint: unknown rule "nope" (run 'planlint rules' for the list)`}},
		{"init, an argument", []string{"init", "x"}, []string{`planlint: init takes no arguments, not "x" (see 'planlint init --help')`}},
		{"completion, unknown shell", []string{"completion", "tcsh"}, []string{`planlint: unknown shell "tcsh" for completion (want bash, fish, powershell, zsh)`}},
		{"version, an argument", []string{"version", "x"}, []string{`planlint: version takes no arguments, not "x" (see 'planlint version --help')`}},
		{"unknown command", []string{"bogus"}, []string{`planlint: unknown command "bogus" for "planlint" (see 'planlint --help')`}},
		{"unknown global flag", []string{"--bogus"}, []string{"planlint: unknown flag: --bogus (see 'planlint --help')"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runIn(t, sharedtest.Root(), nil, tt.args...)
			if code != ExitError {
				t.Errorf("exit %d, want %d", code, ExitError)
			}
			got := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(tt.lines, "\n") {
				t.Errorf("stderr:\n%s\nwant:\n%s", errOut, strings.Join(tt.lines, "\n"))
			}
			for _, l := range got {
				if !strings.HasPrefix(l, "planlint: ") || strings.Contains(l, "planlint: planlint") ||
					strings.Contains(l, "error: ") || strings.HasPrefix(l, "Error") {
					t.Errorf("not one planlint line: %q", l)
				}
			}
		})
	}
	t.Run("init, the file exists", func(t *testing.T) {
		_, errOut, code := runIn(t, dir, nil, "init")
		want := "planlint: " + existing + ": already exists (use --force to overwrite it)\n"
		if code != ExitError || errOut != want {
			t.Errorf("exit %d, stderr %q; want %q", code, errOut, want)
		}
	})
}

// TestEverythingExcluded: a run whose every input the config file excludes
// says there was nothing to analyse, not "0 errors … in 0 files".
func TestEverythingExcluded(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, ".planlint.yaml")
	if err := os.WriteFile(cfg, []byte("exclude: [\"*.sqlplan\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runIn(t, dir, nil, "check", "a.sqlplan")
	if code != ExitOK || out != "nothing to analyse\n" || errOut != "planlint: a.sqlplan: excluded by "+cfg+"\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

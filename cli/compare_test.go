package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

// TestCompareGolden pins `planlint compare` on fixture pairs: the literal
// query against its @Status twin, an estimated plan against its actual
// backlog capture, and (when the shared corpus is present) two real plans
// of different shape.
func TestCompareGolden(t *testing.T) {
	inRoot(t)
	q := "fixtures/queue/"
	cases := []struct {
		name, a, b string
		schema     bool
		want       int
	}{
		{"literal-vs-param", q + "literal.sqlplan", q + "param.sqlplan", true, ExitFindings},
		{"param-vs-param-actual", q + "param.sqlplan", q + "param-actual.sqlplan", false, ExitFindings},
		{"param-vs-literal", q + "param.sqlplan", q + "literal.sqlplan", true, ExitOK},
		{"status-index-vs-literal", q + "status-index.sqlplan", q + "literal.sqlplan", false, ExitOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"compare", "--color", "never"}
			if c.schema {
				args = append(args, "--schema", q+"schema.sql")
			}
			out, errOut, code := run(t, "", append(args, c.a, c.b)...)
			if code != c.want {
				t.Errorf("exit %d, want %d; stderr %s", code, c.want, errOut)
			}
			golden(t, "compare/"+c.name+".txt", out)
			for _, f := range []struct{ format, ext string }{{"json", ".json"}, {"markdown", ".md"}, {"github", ".github"}} {
				got, errOut, code := run(t, "", append(append(args, "--format", f.format), c.a, c.b)...)
				if code != c.want {
					t.Errorf("--format %s: exit %d, want %d; stderr %s", f.format, code, c.want, errOut)
				}
				golden(t, "compare/"+c.name+f.ext, strings.ReplaceAll(got, "planlint "+Version(), "planlint VERSION"))
			}
		})
	}
}

func TestCompareCorpusGolden(t *testing.T) {
	dir := sharedtest.Require(t, "corpus/plans")
	inRoot(t)
	pairs := []struct {
		name, a, b string
		markdown   bool
	}{
		{"corpus-key-vs-rid-lookup", "hqp__test_plans__KeyLookup.sqlplan", "hqp__test_plans__rid_lookup.sqlplan", false},
		{"corpus-estimated-vs-actual", "hqp__test_plans__adaptive_join_estimated.sqlplan", "hqp__test_plans__adaptive_join.sqlplan", false},
		// A varchar parameter sent as nvarchar: a compiled value and an
		// implicit conversion that the shared formats mask.
		{"corpus-implicit-conversion", "planlab__results__01-implicit-conversion-fast.sqlplan", "planlab__results__01-implicit-conversion-slow.sqlplan", true},
		{"corpus-key-lookup-tipping", "planlab__results__05-key-lookup-tipping-fast.sqlplan", "planlab__results__05-key-lookup-tipping-slow.sqlplan", true},
	}
	for _, p := range pairs {
		a, b := filepath.Join(dir, p.a), filepath.Join(dir, p.b)
		formats := []string{"text"}
		if p.markdown {
			formats = append(formats, "markdown", "github")
		}
		for _, format := range formats {
			out, errOut, code := run(t, "", "compare", "--color", "never", "--fail-on", "none", "--root", dir, "--format", format, a, b)
			if code != ExitOK {
				t.Fatalf("%s: exit %d: %s", p.name, code, errOut)
			}
			out = strings.ReplaceAll(out, dir+string(filepath.Separator), "corpus/plans/")
			out = strings.ReplaceAll(out, "planlint "+Version(), "planlint VERSION")
			golden(t, "compare/"+p.name+map[string]string{"text": ".txt", "markdown": ".md", "github": ".github"}[format], out)
		}
	}
}

func TestCompareErrors(t *testing.T) {
	inRoot(t)
	for _, args := range [][]string{
		{"compare", "fixtures/queue/literal.sqlplan"},
		{"compare", "fixtures/queue/literal.sqlplan", "fixtures/bad/empty.sqlplan"},
		{"compare", "--format", "sarif", "fixtures/queue/literal.sqlplan", "fixtures/queue/param.sqlplan"},
	} {
		_, errOut, code := run(t, "", args...)
		if code != ExitError || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// TestCompareExitCodes: 1 when B gains a finding at or above --fail-on,
// whatever the format; 0 below it or with none; 2 on bad input or usage.
func TestCompareExitCodes(t *testing.T) {
	inRoot(t)
	q := "fixtures/queue/"
	// param-actual gains an error (row-estimate-skew) and a warning (spill)
	// over param; literal against itself gains nothing.
	tests := []struct {
		name string
		args []string
		want int
		err  string
	}{
		{"gains an error", []string{q + "param.sqlplan", q + "param-actual.sqlplan"}, ExitFindings, ""},
		{"fail-on none", []string{"--fail-on", "none", q + "param.sqlplan", q + "param-actual.sqlplan"}, ExitOK, ""},
		{"fail-on warning, markdown", []string{"--fail-on", "warning", "--format", "markdown", q + "param.sqlplan", q + "param-actual.sqlplan"}, ExitFindings, ""},
		{"fail-on error, github", []string{"--format", "github", q + "param.sqlplan", q + "param-actual.sqlplan"}, ExitFindings, ""},
		{"loses findings only", []string{q + "param-actual.sqlplan", q + "param.sqlplan"}, ExitOK, ""},
		{"gains nothing", []string{"--fail-on", "info", q + "literal.sqlplan", q + "literal.sqlplan"}, ExitOK, ""},
		{"missing A", []string{"--format", "markdown", "nofile", q + "param.sqlplan"}, ExitError, "planlint: nofile: no such file\n"},
		{"missing B", []string{q + "param.sqlplan", "nofile"}, ExitError, "planlint: nofile: no such file\n"},
		{"B not a plan", []string{"--format", "github", q + "param.sqlplan", "fixtures/bad/garbage.sqlplan"}, ExitError, "fixtures/bad/garbage.sqlplan"},
		{"directory", []string{q + "param.sqlplan", q}, ExitError, "is a directory"},
		{"bad format", []string{"--format", "sarif", q + "param.sqlplan", q + "param.sqlplan"}, ExitError, "--format must be one of text, json, markdown, github"},
		{"bad output", []string{"--output", "html=x.html", q + "param.sqlplan", q + "param.sqlplan"}, ExitError, "want FORMAT=PATH with FORMAT one of text, json, markdown, github"},
		{"output to stdout", []string{"--output", "markdown=-", q + "param.sqlplan", q + "param.sqlplan"}, ExitError, "standard output takes --format markdown"},
		{"bad fail-on", []string{"--fail-on", "sometimes", q + "param.sqlplan", q + "param.sqlplan"}, ExitError, "sometimes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, "", append([]string{"compare"}, tt.args...)...)
			if code != tt.want {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.want, errOut)
			}
			if tt.err != "" && !strings.Contains(errOut, tt.err) {
				t.Errorf("stderr %q lacks %q", errOut, tt.err)
			}
			if strings.Count(errOut, "no such file") > 1 {
				t.Errorf("the error is said twice: %q", errOut)
			}
			if tt.want == ExitError && out != "" {
				t.Errorf("output on bad input: %.200q", out)
			}
		})
	}
}

// TestCompareOutputs: --output writes what --format prints, uncoloured;
// --format github appends the Markdown comparison to the job summary;
// --no-redact keeps the compiled values the shared formats mask.
func TestCompareOutputs(t *testing.T) {
	root := sharedtest.Root()
	dir := t.TempDir()
	a, b := filepath.Join(root, "fixtures/queue/param.sqlplan"), filepath.Join(root, "fixtures/queue/param-actual.sqlplan")
	md, js, txt := filepath.Join(dir, "c.md"), filepath.Join(dir, "c.json"), filepath.Join(dir, "c.txt")
	summary := filepath.Join(dir, "summary.md")
	vars := map[string]string{"GITHUB_STEP_SUMMARY": summary}
	gh := filepath.Join(dir, "c.github")
	out, errOut, code := runIn(t, root, vars, "compare", "--color", "always", "--format", "github",
		"--output", "markdown="+md, "--output", "json="+js, "--output", "text="+txt, "--output", "github="+gh, a, b)
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "::warning file=fixtures/queue/param-actual.sqlplan,line=25,") {
		t.Errorf("annotations not at B's location:\n%s", out)
	}
	if ann, err := os.ReadFile(gh); err != nil || string(ann) != out {
		t.Errorf("--output github= differs from stdout (%v):\n%s", err, ann)
	}
	for path, args := range map[string][]string{
		md:  {"--format", "markdown"},
		js:  {"--format", "json"},
		txt: {"--color", "never"},
	} {
		want, _, _ := runIn(t, root, nil, append(append([]string{"compare"}, args...), a, b)...)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s differs from stdout of %v:\n%s\n---\n%s", filepath.Base(path), args, got, want)
		}
	}
	sum, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	mdOut, _ := os.ReadFile(md)
	if string(sum) != string(mdOut) {
		t.Errorf("job summary is not the Markdown comparison once:\n%s", sum)
	}

	missing := filepath.Join(dir, "no-such-dir", "c.md")
	if _, errOut, code := runIn(t, root, nil, "compare", "--output", "markdown="+missing, a, a); code != ExitError || !strings.Contains(errOut, "--output markdown="+missing) {
		t.Errorf("unwritable --output: exit %d, stderr %q", code, errOut)
	}

	// param.sqlplan compiled for @Status = 7: a parameter-value change.
	src, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	seven := filepath.Join(dir, "seven.sqlplan")
	if err := os.WriteFile(seven, []byte(strings.Replace(string(src), `ParameterCompiledValue="(0)"`, `ParameterCompiledValue="(7)"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"markdown", "github"} {
		// What each run prints, with the job summary it writes.
		compared := func(extra ...string) string {
			if err := os.WriteFile(summary, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			out, _, _ := runIn(t, root, vars, append(append([]string{"compare", "--fail-on", "none", "--format", format}, extra...), a, seven)...)
			sum, err := os.ReadFile(summary)
			if err != nil {
				t.Fatal(err)
			}
			return out + string(sum)
		}
		redacted, kept := compared(), compared("--no-redact")
		if strings.Contains(redacted, "(0) →") || strings.Contains(redacted, "(7)") {
			t.Errorf("%s: compiled values shown without --no-redact:\n%s", format, redacted)
		}
		if !strings.Contains(redacted, "@&#8203;Status compiled for ? → ?") {
			t.Errorf("%s: no masked parameter-value change:\n%s", format, redacted)
		}
		if !strings.Contains(kept, "@&#8203;Status compiled for (0) → (7)") {
			t.Errorf("%s --no-redact: compiled values masked:\n%s", format, kept)
		}
	}
}

// TestCompareLimits: compare applies check's --max-file-size and
// --max-depth with check's defaults and wording, naming the side that
// exceeds them, and prints nothing on stdout.
func TestCompareLimits(t *testing.T) {
	inRoot(t)
	q := "fixtures/queue/"
	small, large := q+"literal.sqlplan", q+"param-actual.sqlplan" // 4,267 and 7,837 bytes
	checkSays := func(args ...string) string {
		_, errOut, code := run(t, "", append([]string{"check", "--fail-on", "none"}, args...)...)
		if code != ExitError {
			t.Fatalf("check %v: exit %d, want %d", args, code, ExitError)
		}
		return strings.SplitN(errOut, "\n", 2)[0]
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"file size, B", []string{"--max-file-size", "5000", small, large}, checkSays("--max-file-size", "5000", large)},
		{"file size, A", []string{"--max-file-size", "5000", large, small}, checkSays("--max-file-size", "5000", large)},
		{"file size with a unit", []string{"--max-file-size", "1KiB", small, small}, checkSays("--max-file-size", "1KiB", small)},
		{"depth", []string{"--max-depth", "10", small, large}, checkSays("--max-depth", "10", small)},
		{"depth over the ceiling", []string{"--max-depth", "10000000", small, large}, "--max-depth 10000000: at most 65536"},
		{"zero depth", []string{"--max-depth", "0", small, large}, "--max-file-size and --max-depth must be positive"},
		{"bad size", []string{"--max-file-size", "lots", small, large}, "want a positive size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, "", append([]string{"compare"}, tt.args...)...)
			if code != ExitError || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, ExitError, tt.want)
			}
			if out != "" {
				t.Errorf("output on refused input: %.200q", out)
			}
		})
	}
	if _, errOut, code := run(t, "", "compare", "--fail-on", "none", "--max-file-size", "8000", "--max-depth", "200", small, large); code != ExitOK {
		t.Errorf("raised limits: exit %d: %s", code, errOut)
	}
}

// TestCompareOutputsOpenedFirst: every --output destination is opened
// before the plans are read, as check does: one that cannot be written
// fails the run with exit 2 and nothing on stdout, a symbolic link is not
// written through, and a file the run created is removed when it fails.
func TestCompareOutputsOpenedFirst(t *testing.T) {
	root := sharedtest.Root()
	dir := t.TempDir()
	a, b := filepath.Join(root, "fixtures/queue/param.sqlplan"), filepath.Join(root, "fixtures/queue/param-actual.sqlplan")
	precious := filepath.Join(dir, "precious.txt")
	if err := os.WriteFile(precious, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.md")
	if err := os.Symlink(precious, link); err != nil {
		t.Skipf("symlink: %v", err)
	}
	missing := filepath.Join(dir, "no-such-dir", "c.md")
	fresh := filepath.Join(dir, "fresh.json")
	garbage := filepath.Join(root, "fixtures/bad/garbage.sqlplan")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing directory", []string{"--output", "markdown=" + missing, a, b}, "--output markdown=" + missing + ": the directory " + filepath.Dir(missing) + " does not exist"},
		{"missing directory, github", []string{"--format", "github", "--output", "json=" + missing, a, b}, "--output json=" + missing},
		{"symbolic link", []string{"--output", "markdown=" + link, a, b}, "is a symbolic link"},
		{"given twice", []string{"--output", "json=" + fresh, "--output", "json=" + fresh + "2", a, b}, "--output json given twice"},
		{"same file twice", []string{"--output", "json=" + fresh, "--output", "text=" + fresh, a, b}, "name the same file"},
		{"B not a plan", []string{"--output", "json=" + fresh, a, garbage}, "garbage.sqlplan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runIn(t, root, nil, append([]string{"compare"}, tt.args...)...)
			if code != ExitError || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, ExitError, tt.want)
			}
			if out != "" {
				t.Errorf("stdout written before the run failed: %.200q", out)
			}
			if got, err := os.ReadFile(precious); err != nil || string(got) != "keep me\n" {
				t.Errorf("the link's target was written: %q, %v", got, err)
			}
			if _, err := os.Lstat(fresh); err == nil {
				t.Errorf("%s left behind by a failed run", fresh)
				os.Remove(fresh)
			}
		})
	}
}

// TestCompareMinSeverity: text, markdown and github show the gained and
// lost findings at or above --min-severity (default warning) and count the
// others in a note; json carries every finding; --fail-on counts every
// gained finding, shown or not.
func TestCompareMinSeverity(t *testing.T) {
	inRoot(t)
	q := "fixtures/queue/"
	// With the schema, literal → param gains an error (PL201) and two
	// infos (PL101, PL103) and param → literal loses them; without it,
	// literal → isnull gains one info and literal → backlog-count a
	// warning and an info.
	tests := []struct {
		name       string
		args       []string
		code       int
		has, hasNo []string
	}{
		{"text default", []string{"--fail-on", "none", "--schema", q + "schema.sql", q + "literal.sqlplan", q + "param.sqlplan"}, ExitOK,
			[]string{"[PL201 ", "findings: 3 new in B, 0 gone, 1 in both; 2 info findings not shown (2 gained, 0 lost; --min-severity info shows them)\n"},
			[]string{"[PL101 ", "[PL103 "}},
		{"text info", []string{"--fail-on", "none", "--min-severity", "info", "--schema", q + "schema.sql", q + "literal.sqlplan", q + "param.sqlplan"}, ExitOK,
			[]string{"[PL201 ", "[PL101 ", "[PL103 ", "findings: 3 new in B, 0 gone, 1 in both\n"}, []string{"not shown"}},
		{"text lost", []string{"--schema", q + "schema.sql", q + "param.sqlplan", q + "literal.sqlplan"}, ExitOK,
			[]string{"gone", "[PL201 ", "2 info findings not shown (0 gained, 2 lost; --min-severity info shows them)"}, []string{"[PL101 "}},
		{"text error", []string{"--fail-on", "warning", "--min-severity", "error", q + "literal.sqlplan", q + "backlog-count.sqlplan"}, ExitFindings,
			[]string{"2 warning and info findings not shown (2 gained, 0 lost; --min-severity warning shows them)"}, []string{"  new "}},
		{"hidden info still fails", []string{"--fail-on", "info", q + "literal.sqlplan", q + "isnull.sqlplan"}, ExitFindings,
			[]string{"1 info finding not shown (1 gained, 0 lost; --min-severity info shows them)"}, []string{"  new "}},
		{"markdown default", []string{"--fail-on", "none", "--format", "markdown", "--schema", q + "schema.sql", q + "literal.sqlplan", q + "param.sqlplan"}, ExitOK,
			[]string{"PL201 filtered-index-parameterized", "**B gains 1 error, 0 warnings, 2 infos**", "\n2 info findings not shown (2 gained, 0 lost; --min-severity info shows them).\n"},
			[]string{"PL101 unmatched-indexes", "PL103 residual-sort"}},
		{"markdown info", []string{"--fail-on", "none", "--format", "markdown", "--min-severity", "info", "--schema", q + "schema.sql", q + "literal.sqlplan", q + "param.sqlplan"}, ExitOK,
			[]string{"PL201 filtered-index-parameterized", "PL101 unmatched-indexes", "PL103 residual-sort"}, []string{"not shown"}},
		{"github default", []string{"--fail-on", "none", "--format", "github", "--schema", q + "schema.sql", q + "literal.sqlplan", q + "param.sqlplan"}, ExitOK,
			[]string{"::error ", "PL201 filtered-index-parameterized"}, []string{"::notice"}},
		{"github info", []string{"--fail-on", "none", "--format", "github", "--min-severity", "info", "--schema", q + "schema.sql", q + "literal.sqlplan", q + "param.sqlplan"}, ExitOK,
			[]string{"::error ", "::notice ", "PL101 unmatched-indexes"}, nil},
		{"json keeps all", []string{"--fail-on", "none", "--format", "json", "--min-severity", "error", "--schema", q + "schema.sql", q + "literal.sqlplan", q + "param.sqlplan"}, ExitOK,
			[]string{`"code": "PL201"`, `"code": "PL101"`, `"code": "PL103"`}, []string{"not shown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, "", append([]string{"compare", "--color", "never"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.code, errOut)
			}
			for _, s := range tt.has {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tt.hasNo {
				if strings.Contains(out, s) {
					t.Errorf("output has %q:\n%s", s, out)
				}
			}
		})
	}
	if _, errOut, code := run(t, "", "compare", "--min-severity", "loud", q+"literal.sqlplan", q+"param.sqlplan"); code != ExitError || !strings.Contains(errOut, "--min-severity") {
		t.Errorf("bad --min-severity: exit %d, stderr %q", code, errOut)
	}
}

// TestCompareMinSeveritySummary: the job summary that --format github
// appends holds the findings --min-severity shows and the note.
func TestCompareMinSeveritySummary(t *testing.T) {
	root := sharedtest.Root()
	summary := filepath.Join(t.TempDir(), "summary.md")
	vars := map[string]string{"GITHUB_STEP_SUMMARY": summary}
	_, errOut, code := runIn(t, root, vars, "compare", "--fail-on", "none", "--format", "github", "--schema", "fixtures/queue/schema.sql",
		"fixtures/queue/literal.sqlplan", "fixtures/queue/param.sqlplan")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(got); !strings.Contains(s, "2 info findings not shown") || strings.Contains(s, "PL101 unmatched-indexes") || !strings.Contains(s, "PL201 filtered-index-parameterized") {
		t.Errorf("job summary ignores --min-severity:\n%s", s)
	}
}

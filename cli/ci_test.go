package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/capture/capturetest"
)

// runIn executes planlint with a working directory (config discovery and
// relative paths start there) and environment variables.
func runIn(t *testing.T, dir string, vars map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: dir, Getenv: func(k string) string { return vars[k] }}
	code = Main(args, env)
	return out.String(), errb.String(), code
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(rootDir(t), "fixtures", "queue", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func rootDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("repository root not found")
		}
		dir = filepath.Dir(dir)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func codes(t *testing.T, jsonOut string) []string {
	t.Helper()
	var rep struct {
		Files []struct {
			Findings []struct {
				Code, Severity string
			}
		}
	}
	if err := json.Unmarshal([]byte(jsonOut), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, jsonOut)
	}
	var out []string
	for _, f := range rep.Files {
		for _, x := range f.Findings {
			out = append(out, x.Code+"="+x.Severity)
		}
	}
	return out
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	status, isnull := fixture(t, "status-index.sqlplan"), fixture(t, "isnull.sqlplan")
	writeFile(t, filepath.Join(dir, ".planlint.yaml"), "fail_on: warning\nrules:\n  key-lookup: off\n  PL103:\n    severity: info\n")
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// Discovered by walking up from the working directory.
	out, errOut, code := runIn(t, sub, nil, "check", "--format", "json", status)
	if got := strings.Join(codes(t, out), " "); got != "PL103=info" || code != ExitOK {
		t.Errorf("key-lookup off, sorts graded info: got %q exit %d (%s)", got, code, errOut)
	}
	// fail_on: warning from the file; the flag beats it.
	if _, _, code := runIn(t, sub, nil, "check", isnull); code != ExitOK {
		// isnull's only plan finding is a key lookup, which is off.
		t.Errorf("isnull with key-lookup off: exit %d", code)
	}
	// isnull's key lookup (20 lookups in a 0.07-cost statement) is info.
	writeFile(t, filepath.Join(dir, "other.yaml"), "fail_on: info\n")
	if _, _, code := runIn(t, sub, nil, "check", "--config", filepath.Join(dir, "other.yaml"), isnull); code != ExitFindings {
		t.Errorf("--config other.yaml (fail_on info): exit %d, want 1", code)
	}
	if _, _, code := runIn(t, sub, nil, "check", "--config", filepath.Join(dir, "other.yaml"), "--fail-on", "error", isnull); code != ExitOK {
		t.Errorf("--fail-on error beats the file: exit %d, want 0", code)
	}
	if _, _, code := runIn(t, sub, map[string]string{"PLANLINT_CONFIG": filepath.Join(dir, "other.yaml")}, "check", isnull); code != ExitFindings {
		t.Errorf("PLANLINT_CONFIG: exit %d, want 1", code)
	}
}

func TestConfigErrors(t *testing.T) {
	plan := fixture(t, "literal.sqlplan")
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown key", "fail_on: error\nrulez:\n  key-lookup: off\n", `.planlint.yaml:2:1: unknown key "rulez"`},
		{"unknown rule", "rules:\n  key-lookups: off\n", `unknown rule "key-lookups"`},
		{"unknown parameter", "rules:\n  key-lookup:\n    warn_rows: 5\n", `warn_rows`},
		{"bad severity", "rules:\n  key-lookup: fatal\n", `fatal`},
		{"malformed YAML", "rules:\n  key-lookup: [off\n", `.planlint.yaml:`},
		{"bad fail_on", "fail_on: sometimes\n", `sometimes`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, ".planlint.yaml"), c.yaml)
			_, errOut, code := runIn(t, dir, nil, "check", plan)
			if code != ExitError || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 mentioning %q", code, errOut, c.want)
			}
		})
	}
	if _, errOut, code := runIn(t, t.TempDir(), nil, "check", "--config", "missing.yaml", plan); code != ExitError || !strings.Contains(errOut, "missing.yaml") {
		t.Errorf("missing --config file: exit %d, %q", code, errOut)
	}
}

func TestExcludeFromConfig(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"literal.sqlplan", "status-index.sqlplan"} {
		b, err := os.ReadFile(fixture(t, name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "plans", "legacy", name), string(b))
	}
	writeFile(t, filepath.Join(dir, ".planlint.yaml"), "exclude:\n  - plans/legacy/status-*\n")
	out, errOut, code := runIn(t, dir, nil, "check", "--format", "json", "plans/legacy/literal.sqlplan", "plans/legacy/status-index.sqlplan")
	if code != ExitOK || !strings.Contains(errOut, "status-index.sqlplan: excluded by") || strings.Contains(out, "status-index") {
		t.Errorf("exit %d, stderr %q\n%s", code, errOut, out)
	}
}

func TestBaseline(t *testing.T) {
	dir := t.TempDir()
	status, param := fixture(t, "status-index.sqlplan"), fixture(t, "param.sqlplan")
	base := filepath.Join(dir, "baseline.json")
	_, errOut, code := runIn(t, dir, nil, "check", "--write-baseline", base, status)
	if code != ExitOK || !strings.Contains(errOut, "recorded 2 finding(s)") {
		t.Fatalf("--write-baseline: exit %d, %q", code, errOut)
	}
	out, errOut, code := runIn(t, dir, nil, "check", "--format", "json", "--baseline", base, status)
	if code != ExitOK || len(codes(t, out)) != 0 || !strings.Contains(errOut, "2 finding(s) hidden by the baseline") {
		t.Errorf("same plan against its baseline: exit %d, %v, %q", code, codes(t, out), errOut)
	}
	// A new file's findings are new; the baselined ones stay hidden.
	out, _, code = runIn(t, dir, nil, "check", "--format", "json", "--baseline", base, status, param)
	if code != ExitFindings || strings.Join(codes(t, out), " ") != "PL101=warning PL103=error" {
		t.Errorf("new file: exit %d, %v", code, codes(t, out))
	}
	// Fixed findings are pointed out.
	lit := fixture(t, "literal.sqlplan")
	b, _ := os.ReadFile(lit)
	writeFile(t, filepath.Join(dir, "p.sqlplan"), string(b))
	runIn(t, dir, nil, "check", "--write-baseline", base, status)
	data, _ := os.ReadFile(base)
	writeFile(t, base, strings.ReplaceAll(string(data), filepath.ToSlash(status), "p.sqlplan"))
	_, errOut, _ = runIn(t, dir, nil, "check", "--baseline", base, "p.sqlplan")
	if !strings.Contains(errOut, "2 baselined finding(s) no longer occur") {
		t.Errorf("fixed findings not reported: %q", errOut)
	}
	for _, bad := range []string{"{", `{"version": 99, "entries": []}`, ""} {
		writeFile(t, base, bad)
		if _, errOut, code := runIn(t, dir, nil, "check", "--baseline", base, status); code != ExitError || !strings.Contains(errOut, "--baseline") {
			t.Errorf("baseline %q: exit %d, %q", bad, code, errOut)
		}
	}
	if _, _, code := runIn(t, dir, nil, "check", "--baseline", base, "--write-baseline", base, status); code != ExitError {
		t.Errorf("both baseline flags: exit %d", code)
	}
}

func TestOutputs(t *testing.T) {
	dir := t.TempDir()
	status := fixture(t, "status-index.sqlplan")
	args := []string{"check", "--format", "json"}
	files := map[string]string{}
	for _, f := range []string{"sarif", "github", "markdown", "html", "dot", "text"} {
		files[f] = filepath.Join(dir, "report."+f)
		args = append(args, "--output", f+"="+files[f])
	}
	out, errOut, code := runIn(t, dir, nil, append(args, status)...)
	if code != ExitFindings || len(codes(t, out)) != 2 {
		t.Fatalf("exit %d, %s\n%s", code, errOut, out)
	}
	want := map[string]string{"sarif": `"version": "2.1.0"`, "github": "::error file=", "markdown": "<!-- planlint-report -->",
		"html": "<svg", "dot": "digraph", "text": "[PL102 key-lookup]"}
	for f, path := range files {
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), want[f]) {
			t.Errorf("--output %s: %v, content lacks %q", f, err, want[f])
		}
		if strings.Contains(string(b), "\x1b[") {
			t.Errorf("--output %s: ANSI codes in a file", f)
		}
	}
	for _, bad := range []string{"sarif", "yaml=x", "=x", "sarif="} {
		if _, _, code := runIn(t, dir, nil, "check", "--output", bad, status); code != ExitError {
			t.Errorf("--output %q: exit %d", bad, code)
		}
	}
	// The GitHub job summary receives the Markdown report.
	summary := filepath.Join(dir, "summary.md")
	out, _, _ = runIn(t, dir, map[string]string{"GITHUB_STEP_SUMMARY": summary}, "check", "--format", "github", status)
	b, _ := os.ReadFile(summary)
	if !strings.Contains(out, "::error file=") || !strings.Contains(string(b), "key-lookup") {
		t.Errorf("github format: annotations %q, summary %q", out, b)
	}
	// With --output github=PATH as well, the summary is appended once.
	summary2 := filepath.Join(dir, "summary2.md")
	runIn(t, dir, map[string]string{"GITHUB_STEP_SUMMARY": summary2}, "check", "--format", "github",
		"--output", "github="+filepath.Join(dir, "annotations.txt"), status)
	b, _ = os.ReadFile(summary2)
	if n := strings.Count(string(b), "<!-- planlint-report -->"); n != 1 {
		t.Errorf("github format twice: the job summary holds %d reports, want 1", n)
	}
}

// TestSharedOutputsRedact: sarif, github, markdown and html mask literals
// and parameter values unless --no-redact (or redact: false) says otherwise.
func TestSharedOutputsRedact(t *testing.T) {
	dir := t.TempDir()
	param := fixture(t, "param.sqlplan")
	schema := fixture(t, "schema.sql")
	for _, f := range []string{"sarif", "github", "markdown", "html"} {
		out, _, _ := runIn(t, dir, nil, "check", "--schema", schema, "--format", f, param)
		if strings.Contains(out, "compiled value (0)") {
			t.Errorf("%s: the compiled value is not redacted", f)
		}
		out, _, _ = runIn(t, dir, nil, "check", "--schema", schema, "--format", f, "--no-redact", param)
		if !strings.Contains(out, "(0)") {
			t.Errorf("%s --no-redact: the compiled value is missing", f)
		}
	}
	writeFile(t, filepath.Join(dir, ".planlint.yaml"), "redact: false\n")
	if out, _, _ := runIn(t, dir, nil, "check", "--schema", schema, "--format", "markdown", param); !strings.Contains(out, "(0)") {
		t.Error("redact: false in the config file is ignored")
	}
}

func TestInit(t *testing.T) {
	dir := t.TempDir()
	out, _, code := runIn(t, dir, nil, "init")
	if code != ExitOK || !strings.Contains(out, ".planlint.yaml") {
		t.Fatalf("init: exit %d %q", code, out)
	}
	if _, errOut, code := runIn(t, dir, nil, "init"); code != ExitError || !strings.Contains(errOut, "already exists") {
		t.Errorf("second init: exit %d %q", code, errOut)
	}
	if _, _, code := runIn(t, dir, nil, "init", "--force"); code != ExitOK {
		t.Errorf("init --force: exit %d", code)
	}
	// The starter file loads and changes nothing.
	a, _, _ := runIn(t, dir, nil, "check", "--format", "json", fixture(t, "status-index.sqlplan"))
	b, _, _ := runIn(t, t.TempDir(), nil, "check", "--format", "json", fixture(t, "status-index.sqlplan"))
	if a != b {
		t.Error("the starter configuration changes the findings")
	}
}

// TestSuppressions: planlint-ignore comments in the .sql file silence the
// named rule on their statement; unused ones are reported; unknown rules
// and missing reasons stop the run before connecting.
func TestSuppressions(t *testing.T) {
	inRoot(t)
	stmt := "SELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE Status = 0 ORDER BY CreatedAt, WorkId;\n"
	cases := []struct {
		name, sql string
		want      string // finding codes
		exit      int
		stderr    string
	}{
		{"line form", "-- planlint-ignore queue-claim-not-atomic -- a dashboard, not a worker\n" + stmt, "", ExitOK, ""},
		{"block form by code", "/* planlint-ignore PL204: a dashboard */\n" + stmt, "", ExitOK, ""},
		{"block form with dashes", "/* planlint-ignore PL204 -- a dashboard */\n" + stmt, "", ExitOK, ""},
		{"line form with colon", "-- planlint-ignore queue-claim-not-atomic: a dashboard\n" + stmt, "", ExitOK, ""},
		{"file form", "-- planlint-ignore-file queue-claim-not-atomic -- dashboards only\n\n-- the poll\n" + stmt, "", ExitOK, ""},
		{"other rule: unused", "-- planlint-ignore key-lookup -- cheap\n" + stmt, "PL001=warning PL204=info", ExitFindings, ""},
		{"unknown rule", "-- planlint-ignore key-lookups -- typo\n" + stmt, "", ExitError, `unknown rule "key-lookups"`},
		{"missing reason", "-- planlint-ignore queue-claim-not-atomic\n" + stmt, "", ExitError, "gives no reason"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "poll.sql")
			writeFile(t, path, c.sql)
			srv := capturetest.Start(t, capturetest.Config{Catalog: capturetest.QueueCatalog(t),
				Statement: capturetest.Answer{Estimated: capturetest.Fixture(t, "queue/literal.sqlplan")}.Handler()})
			out, errOut, code := runWith(t, dsnVars(srv), "", "explain", "--format", "json", "--fail-on", "warning", path)
			if code != c.exit || (c.stderr != "" && !strings.Contains(errOut, c.stderr)) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errOut, c.exit, c.stderr)
			}
			if c.exit == ExitError {
				if len(srv.Requests()) != 0 {
					t.Errorf("the server was contacted: %d requests", len(srv.Requests()))
				}
				return
			}
			if got := strings.Join(codes(t, out), " "); got != c.want {
				t.Errorf("findings %q, want %q", got, c.want)
			}
		})
	}
}

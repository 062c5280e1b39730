package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// run executes planlint in-process from the repository root.
func run(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code = Main(args, env)
	return out.String(), errb.String(), code
}

// inRoot makes the repository root the working directory for the test.
func inRoot(t *testing.T) {
	t.Helper()
	root := sharedtest.Root()
	if root == "" {
		t.Fatal("repository root not found")
	}
	t.Chdir(root)
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(sharedtest.Root(), "cli", "testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cli -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (run go test ./cli -update and review the diff)\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

// queueFixtures lists the queue scenario plans and the schema each uses.
func queueFixtures(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("fixtures/queue/*.sqlplan")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no queue fixtures found: %v", err)
	}
	out := map[string]string{}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".sqlplan")
		schema := "fixtures/queue/schema.sql"
		if name == "status-index" {
			schema = "fixtures/queue/schema-status-index.sql"
		}
		out[name] = schema
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestQueueFixturesGolden pins every queue fixture's findings: plan-only in
// text, and with the schema's catalog facts in JSON (the expected finding
// sets with their fix text).
func TestQueueFixturesGolden(t *testing.T) {
	inRoot(t)
	fixtures := queueFixtures(t)
	for _, name := range sortedKeys(fixtures) {
		plan := "fixtures/queue/" + name + ".sqlplan"
		t.Run(name, func(t *testing.T) {
			out, errOut, code := run(t, "", "check", "--color", "never", plan)
			golden(t, "check/"+name+".txt", fmt.Sprintf("%s--- stderr\n%s--- exit %d\n", out, errOut, code))
			out, errOut, code = run(t, "", "check", "--format", "json", "--schema", fixtures[name], plan)
			if errOut != "" {
				t.Errorf("stderr: %s", errOut)
			}
			golden(t, "check-schema/"+name+".json", out)
			wantCode := ExitOK
			if strings.Contains(out, `"severity": "error"`) {
				wantCode = ExitFindings
			}
			if code != wantCode {
				t.Errorf("exit %d, want %d", code, wantCode)
			}
		})
	}
}

// TestBadInputs: every broken file gives exit 2 and one line on stderr
// naming the file and the problem, while the good file is still checked.
func TestBadInputs(t *testing.T) {
	inRoot(t)
	bad, err := filepath.Glob("fixtures/bad/*")
	if err != nil || len(bad) == 0 {
		t.Fatalf("no bad fixtures: %v", err)
	}
	args := append([]string{"check", "--color", "never", "fixtures/queue/status-index.sqlplan", "docs", "no-such-file.sqlplan"}, bad...)
	out, errOut, code := run(t, "", args...)
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != len(bad)+2 {
		t.Errorf("want one stderr line per bad input (%d), got %d:\n%s", len(bad)+2, len(lines), errOut)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "planlint: ") || strings.Count(l, ": ") < 2 {
			t.Errorf("stderr line does not name file and problem: %q", l)
		}
	}
	if !strings.Contains(out, "status-index.sqlplan:69:21: stmt 1 node 3") {
		t.Errorf("the good file was not checked:\n%s", out)
	}
	golden(t, "bad-inputs.txt", fmt.Sprintf("%s--- stderr\n%s--- exit %d\n", out, errOut, code))
}

func TestExitCodesAndFailOn(t *testing.T) {
	inRoot(t)
	cases := []struct {
		args []string
		want int
	}{
		{[]string{"check", "fixtures/queue/literal.sqlplan"}, ExitOK},
		{[]string{"check", "fixtures/queue/status-index.sqlplan"}, ExitFindings},
		{[]string{"check", "--fail-on", "none", "fixtures/queue/status-index.sqlplan"}, ExitOK},
		{[]string{"check", "--fail-on", "info", "fixtures/queue/isnull.sqlplan"}, ExitFindings}, // its only finding, a lookup, is info
		{[]string{"check", "--fail-on", "error", "fixtures/queue/isnull.sqlplan"}, ExitOK},
		{[]string{"check", "--fail-on", "info", "--schema", "fixtures/queue/schema.sql", "fixtures/queue/literal.sqlplan"}, ExitFindings},
		{[]string{"check", "--fail-on", "sometimes", "fixtures/queue/literal.sqlplan"}, ExitError},
		{[]string{"check"}, ExitError},
		{[]string{"check", "--no-such-flag", "x"}, ExitError},
		{[]string{"no-such-command"}, ExitError},
		{[]string{"check", "--format", "yaml", "fixtures/queue/literal.sqlplan"}, ExitError},
		{[]string{"check", "--schema", "no-such-schema.sql", "fixtures/queue/literal.sqlplan"}, ExitError},
		{[]string{"version"}, ExitOK},
		{[]string{"rules"}, ExitOK},
		{[]string{"rules", "key-lookup"}, ExitOK},
		{[]string{"rules", "PL201"}, ExitOK},
		{[]string{"rules", "no-such-rule"}, ExitError},
	}
	for _, c := range cases {
		_, errOut, code := run(t, "", c.args...)
		if code != c.want {
			t.Errorf("planlint %s: exit %d, want %d (stderr %q)", strings.Join(c.args, " "), code, c.want, errOut)
		}
		if code == ExitError && errOut == "" {
			t.Errorf("planlint %s: exit 2 without a message on stderr", strings.Join(c.args, " "))
		}
	}
}

func TestStdinAndEncodings(t *testing.T) {
	inRoot(t)
	raw, err := os.ReadFile("fixtures/queue/status-index.sqlplan")
	if err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, string(raw), "check", "--color", "never", "-")
	if code != ExitFindings || !strings.Contains(out, "<stdin>:69:21: stmt 1 node 3: error [PL102 key-lookup]") {
		t.Errorf("stdin: exit %d\n%s", code, out)
	}
	if _, errOut, code := run(t, "", "check", "-", "-"); code != ExitError || !strings.Contains(errOut, "more than once") {
		t.Errorf("stdin twice: exit %d, %q", code, errOut)
	}
	ref, _, _ := run(t, "", "check", "--format", "json", "fixtures/queue/literal.sqlplan")
	encs, _ := filepath.Glob("fixtures/encodings/*.sqlplan")
	if len(encs) == 0 {
		t.Fatal("no encoding fixtures")
	}
	for _, p := range encs {
		out, errOut, code := run(t, "", "check", "--format", "json", p)
		if code != ExitOK || errOut != "" {
			t.Errorf("%s: exit %d, stderr %q", p, code, errOut)
		}
		// The re-encoded files start with an XML declaration line.
		shifted := strings.ReplaceAll(out, p, "fixtures/queue/literal.sqlplan")
		for line := 1; line < 100; line++ {
			shifted = strings.ReplaceAll(shifted, fmt.Sprintf(`_line": %d,`, line+1), fmt.Sprintf(`_line": %d,`, line))
		}
		if shifted != ref {
			t.Errorf("%s: report differs from the UTF-8 original beyond the declaration line", p)
		}
	}
}

func TestColor(t *testing.T) {
	inRoot(t)
	plan := "fixtures/queue/status-index.sqlplan"
	out, _, _ := run(t, "", "check", "--color", "always", plan)
	if !strings.Contains(out, "\x1b[") {
		t.Error("--color always: no ANSI codes")
	}
	for _, args := range [][]string{{"check", plan}, {"check", "--color", "never", plan}, {"check", "--color", "auto", plan}} {
		out, _, _ := run(t, "", args...)
		if strings.Contains(out, "\x1b[") {
			t.Errorf("%v: ANSI codes when not writing to a terminal", args)
		}
	}
	var buf, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &buf, Stderr: &errb, Getenv: func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return ""
	}}
	Main([]string{"check", plan}, env)
	if strings.Contains(buf.String(), "\x1b[") {
		t.Error("NO_COLOR ignored")
	}
}

// TestLimitsAndUnreadableFiles: the size and depth limits are explicit,
// configurable and named when hit; a file that cannot be read says so.
func TestLimitsAndUnreadableFiles(t *testing.T) {
	inRoot(t)
	plan := "fixtures/queue/literal.sqlplan"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--max-depth", "10", plan}, "maximum element depth 10 exceeded; raise the limit with --max-depth"},
		{[]string{"--max-file-size", "1000", plan}, "maximum file size 1000 bytes exceeded; raise the limit with --max-file-size"},
	}
	if _, err := os.Stat("/proc/self/mem"); err == nil {
		// Readable by name, but every read fails: an unreadable file even for root.
		cases = append(cases, struct {
			args []string
			want string
		}{[]string{"/proc/self/mem"}, "/proc/self/mem: cannot read input"})
	}
	for _, c := range cases {
		_, errOut, code := run(t, "", append([]string{"check"}, c.args...)...)
		if code != ExitError || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
	if _, _, code := run(t, "", "check", "--max-depth", "200", "--max-file-size", "100000", plan); code != ExitOK {
		t.Errorf("raised limits: exit %d", code)
	}
}

// TestCheckLocationsPointAtElements: every finding of check points at the
// start tag of its operator's RelOp, or of its statement.
func TestCheckLocationsPointAtElements(t *testing.T) {
	inRoot(t)
	plans, _ := filepath.Glob("fixtures/queue/*.sqlplan")
	checked := 0
	for _, p := range plans {
		out, _, _ := run(t, "", "check", "--format", "json", "--schema", "fixtures/queue/schema.sql", p)
		var rep struct {
			Files []struct {
				Findings []struct {
					Rule     string
					NodeID   *int `json:"node_id"`
					Location *struct {
						Path      string
						StartLine int `json:"start_line"`
						StartCol  int `json:"start_column"`
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		for _, f := range rep.Files[0].Findings {
			l := f.Location
			if l == nil || l.Path != p || l.StartLine < 1 || l.StartLine > len(lines) || l.StartCol < 1 || l.StartCol > len(lines[l.StartLine-1]) {
				t.Errorf("%s: %s finding has location %+v", p, f.Rule, l)
				continue
			}
			at := lines[l.StartLine-1][l.StartCol-1:]
			want := "<Stmt"
			if f.NodeID != nil {
				want = fmt.Sprintf(`<RelOp NodeId="%d"`, *f.NodeID)
			}
			if !strings.HasPrefix(at, want) {
				t.Errorf("%s: %s finding points at %.40q, want %q", p, f.Rule, at, want)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d findings checked", checked)
	}
}

package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/config"
	"github.com/planlint/planlint/report"
	"github.com/planlint/planlint/rules"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// suppressConfig suppresses one finding by rule and path, one by operator
// fingerprint (PL202 on isnull.sqlplan's Key Lookup, as JSON output shows
// it), and has one entry that matches nothing in old/.
const suppressConfig = `suppress:
  - rule: filtered-index-parameterized
    paths: [param.sqlplan]
    reason: the report runs once a night; a full scan is fine
  - rule: PL202
    operator: 47ae49845ca2469d387020c2b32bfe96
    reason: the lookup reads one row per claim
  - rule: [memory-grant, PL402]
    paths: [old/**]
    reason: the old plans spilled before the upgrade
`

// suppressDir lays out plans and the config in a fresh directory (not in
// a git repository, so paths are relative to it).
func suppressDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for dst, src := range map[string]string{"param.sqlplan": "param.sqlplan", "isnull.sqlplan": "isnull.sqlplan",
		"old/literal.sqlplan": "literal.sqlplan", "schema.sql": "schema.sql"} {
		b, err := os.ReadFile(fixture(t, src))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, filepath.FromSlash(dst)), string(b))
	}
	writeFile(t, filepath.Join(dir, ".planlint.yaml"), suppressConfig)
	// Fingerprints take relative paths from the process's directory, as
	// in a real run.
	t.Chdir(dir)
	return dir
}

func TestSuppressGolden(t *testing.T) {
	root := rootDir(t)
	dir := suppressDir(t)
	args := []string{"check", "--schema", "schema.sql", "--min-severity", "info", "param.sqlplan", "isnull.sqlplan", "old/"}
	out, errOut, code := runIn(t, dir, nil, args...)
	if code != ExitOK || errOut != "" {
		t.Errorf("text: exit %d, stderr %q", code, errOut)
	}
	text := out
	out, _, code = runIn(t, dir, nil, append([]string{"check", "--format", "json"}, args[1:]...)...)
	if code != ExitOK {
		t.Errorf("json: exit %d", code)
	}
	// Without the config, the suppressed error fails the run.
	writeFile(t, filepath.Join(dir, "empty.yaml"), "")
	if _, _, code := runIn(t, dir, nil, append([]string{"check", "--config", "empty.yaml"}, args[1:]...)...); code != ExitFindings {
		t.Errorf("without the suppressions: exit %d, want %d", code, ExitFindings)
	}
	t.Chdir(root)
	golden(t, "suppress/check.txt", text)
	golden(t, "suppress/check.json", strings.ReplaceAll(out, `"version": "`+Version()+`"`, `"version": "VERSION"`))
}

func TestSuppressSARIF(t *testing.T) {
	schemaFile := filepath.Join(rootDir(t), "report", "testdata", "sarif-schema-2.1.0.json")
	dir := suppressDir(t)
	out, _, code := runIn(t, dir, nil, "check", "--format", "sarif", "--schema", "schema.sql", "param.sqlplan", "isnull.sqlplan", "old/")
	if code != ExitOK {
		t.Errorf("exit %d", code)
	}
	f, err := os.Open(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const id = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Fatalf("SARIF does not validate: %v", err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID       string
				Level        string
				Suppressions []struct{ Kind, Status, Justification string }
				Locations    []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range log.Runs[0].Results {
		loc := r.Locations[0].PhysicalLocation
		key := r.RuleID + "@" + loc.ArtifactLocation.URI
		if len(r.Suppressions) > 0 {
			s := r.Suppressions[0]
			got[key] = s.Kind + "/" + s.Status + ": " + s.Justification
		} else if r.RuleID == "PL001" {
			got[key] = r.Level
		}
	}
	want := map[string]string{
		"PL201@param.sqlplan":  "external/accepted: the report runs once a night; a full scan is fine",
		"PL202@isnull.sqlplan": "external/accepted: the lookup reads one row per claim",
		"PL001@.planlint.yaml": "warning",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("suppressed and PL001 results %v, want %v", got, want)
	}
}

// TestSuppressUnusedOnlyWhenCovered: an entry is reported unused only when
// every plan file its paths match was analysed in the run.
func TestSuppressUnusedOnlyWhenCovered(t *testing.T) {
	dir := suppressDir(t)
	writeFile(t, filepath.Join(dir, "old", "broken.sqlplan"), "<ShowPlanXML")
	writeFile(t, filepath.Join(dir, "old", "notes.txt"), "not a plan")
	tests := []struct {
		name   string
		args   []string
		unused bool
	}{
		{"another file only", []string{"param.sqlplan"}, false},
		{"one of the entry's two files", []string{"param.sqlplan", "old/literal.sqlplan"}, false},
		{"the entry's files, one of them broken", []string{"old/"}, false},
		{"the entry's files", []string{"old/literal.sqlplan", "old/broken.sqlplan", "--config", ".planlint.yaml"}, false},
		{"--include narrows the files", []string{"--include", "literal.*", "old/"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, _ := runIn(t, dir, nil, append([]string{"check", "--format", "json", "--schema", "schema.sql"}, tt.args...)...)
			if got := strings.Contains(out, `"code": "PL001"`); got != tt.unused {
				t.Errorf("PL001 reported %v, want %v\n%s", got, tt.unused, out)
			}
		})
	}
	os.Remove(filepath.Join(dir, "old", "broken.sqlplan"))
	out, _, code := runIn(t, dir, nil, "check", "--schema", "schema.sql", "old/")
	if code != ExitOK || !strings.Contains(out, ".planlint.yaml:8:5: warning [PL001 unused-suppression] suppress entry 3 (memory-grant, spill in old/**)") {
		t.Errorf("exit %d\n%s", code, out)
	}
	if _, _, code := runIn(t, dir, nil, "check", "--fail-on", "warning", "old/"); code != ExitFindings {
		t.Errorf("--fail-on warning with an unused entry: exit %d, want %d", code, ExitFindings)
	}
	writeFile(t, filepath.Join(dir, "off.yaml"), suppressConfig+"rules:\n  PL001: off\n")
	if out, _, _ := runIn(t, dir, nil, "check", "--config", "off.yaml", "--format", "json", "old/"); strings.Contains(out, "PL001") {
		t.Errorf("PL001: off still reports the unused entry")
	}
}

func TestSuppressConfigErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".planlint.yaml"), "suppress:\n  - rule: key-lookups\n    paths: ['a/[']\n")
	_, errOut, code := runIn(t, dir, nil, "check", fixture(t, "param.sqlplan"))
	want := []string{
		`.planlint.yaml:2:5: suppress[1]: no reason (write reason: why these findings are accepted)`,
		`.planlint.yaml:2:11: suppress[1].rule: unknown rule "key-lookups"; did you mean "key-lookup" (PL102)?`,
		`.planlint.yaml:3:13: suppress[1].paths[1]: invalid glob "a/[": bad pattern in segment "["`,
	}
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	for _, w := range want {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
}

func TestSuppressedNotBaselined(t *testing.T) {
	dir := suppressDir(t)
	base := filepath.Join(dir, "baseline.json")
	if _, _, code := runIn(t, dir, nil, "check", "--schema", "schema.sql", "--write-baseline", base, "param.sqlplan"); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	b, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("filtered-index-parameterized")) {
		t.Errorf("the baseline records a suppressed finding:\n%s", b)
	}
}

func TestSuppressStdinByPathOnly(t *testing.T) {
	dir := suppressDir(t)
	writeFile(t, filepath.Join(dir, "all.yaml"), "suppress:\n  - {rule: PL201, paths: ['**'], reason: everything here}\n")
	plan, err := os.ReadFile(filepath.Join(dir, "param.sqlplan"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := Env{Stdin: bytes.NewReader(plan), Stdout: &out, Stderr: &errb, Dir: dir, Getenv: func(string) string { return "" }}
	if code := Main([]string{"check", "--config", "all.yaml", "--schema", "schema.sql", "--format", "json", "-"}, env); code != ExitFindings {
		t.Errorf("standard input matched a paths glob: exit %d\n%s", code, out.String())
	}
}

func TestSuppressCompare(t *testing.T) {
	dir := suppressDir(t)
	writeFile(t, filepath.Join(dir, "empty.yaml"), "")
	// B gains PL201, an error: exit 1, unless the entry suppresses it.
	args := []string{"compare", "--schema", "schema.sql", "isnull.sqlplan", "param.sqlplan"}
	if _, _, code := runIn(t, dir, nil, append(args, "--config", "empty.yaml")...); code != ExitFindings {
		t.Fatalf("without suppressions: exit %d, want %d", code, ExitFindings)
	}
	out, errOut, code := runIn(t, dir, nil, args...)
	if code != ExitOK || strings.Contains(out, "PL201") || strings.Contains(out, "PL202") ||
		!strings.Contains(errOut, "param.sqlplan: 1 finding(s) suppressed by .planlint.yaml") {
		t.Errorf("exit %d, stderr %q\n%s", code, errOut, out)
	}
}

// TestSuppressExplainConfig: suppress entries apply to explain's .sql
// files too, and an entry for an explained file that matched nothing is
// unused.
func TestSuppressExplainConfig(t *testing.T) {
	root := rootDir(t)
	dir := t.TempDir()
	stmt := "SELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE Status = 0 ORDER BY CreatedAt, WorkId;\n"
	writeFile(t, filepath.Join(dir, "poll.sql"), stmt)
	writeFile(t, filepath.Join(dir, ".planlint.yaml"), `suppress:
  - {rule: queue-claim-not-atomic, paths: ['*.sql'], reason: 'a dashboard, not a worker'}
  - {rule: key-lookup, paths: [poll.sql], reason: cheap}
`)
	t.Chdir(root)
	srv := capturetest.Start(t, capturetest.Config{Catalog: capturetest.QueueCatalog(t),
		Statement: capturetest.Answer{Estimated: capturetest.Fixture(t, "queue/literal.sqlplan")}.Handler()})
	out, errOut, code := runIn(t, dir, dsnVars(srv), "explain", "--format", "json", "--fail-on", "warning", "poll.sql")
	if code != ExitFindings {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if got := strings.Join(codes(t, out), " "); got != "PL001=warning" {
		t.Errorf("findings %q, want the unused second entry only\n%s", got, out)
	}
	if !strings.Contains(out, `"suppressed": 1`) || !strings.Contains(out, `"reason": "a dashboard, not a worker"`) {
		t.Errorf("the suppressed PL204 is not listed\n%s", out)
	}
}

// TestSuppressPlanCacheNames: plans from the plan cache or Query Store and
// standard input are matched only by entries without paths, and such runs
// report no unused entries.
func TestSuppressPlanCacheNames(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Parse(filepath.Join(dir, ".planlint.yaml"), []byte(`suppress:
  - {rule: key-lookup, paths: ['**'], reason: by path}
  - {rule: key-lookup, statement: fedcba9876543210, reason: by statement}
  - {rule: residual-sort, paths: ['**'], reason: unused}
`))
	if err != nil {
		t.Fatal(err)
	}
	x := func() *report.Finding {
		return &report.Finding{Finding: rules.Finding{Rule: "key-lookup", Code: "PL102", Severity: rules.Error, Batch: 1, StatementID: 1, Ordinal: 1}}
	}
	rep := &report.Report{}
	for _, name := range []string{"cache:0x0A plan 0x0B", "querystore:query 1 plan 2", "<stdin>"} {
		rep.Files = append(rep.Files, &report.File{Path: name, Statements: []*report.Statement{{Batch: 1, StatementID: 1, Ordinal: 1, Text: "SELECT 1"}},
			Findings: []*report.Finding{x()}})
	}
	r := &invocation{env: &Env{}, cfg: cfg, workDir: dir, baseDir: dir}
	r.applySuppressions(rep)
	if len(rep.Files) != 3 {
		t.Fatalf("%d files: an unused entry was reported for a run over no files", len(rep.Files))
	}
	for _, f := range rep.Files {
		if len(f.Findings) != 1 || len(f.Suppressed) != 0 {
			t.Errorf("%s: %d findings, %d suppressed; a paths entry matched a plan that is no file", f.Path, len(f.Findings), len(f.Suppressed))
		}
	}
	// The statement fingerprint entry matches wherever the statement is.
	fp := rep.Files[0].Findings[0].StatementFingerprint
	cfg.Suppress[1].Statement = fp
	for _, f := range rep.Files {
		f.Findings = append(f.Findings, f.Suppressed...)
		f.Suppressed = nil
	}
	r.applySuppressions(rep)
	for _, f := range rep.Files {
		if len(f.Findings) != 0 || len(f.Suppressed) != 1 || f.Suppressed[0].Suppression.Reason != "by statement" {
			t.Errorf("%s: %d findings, %d suppressed; want the statement entry to match", f.Path, len(f.Findings), len(f.Suppressed))
		}
	}
	if rep.SuppressedCount() != 3 {
		t.Errorf("%d suppressed, want 3", rep.SuppressedCount())
	}
}

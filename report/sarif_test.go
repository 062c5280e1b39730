package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/planlint/planlint/rules"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// sarifSchemaID is the $id of the copy in testdata (see testdata/README.md).
const sarifSchemaID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("reading the SARIF schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(sarifSchemaID, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(sarifSchemaID)
	if err != nil {
		t.Fatalf("compiling the SARIF schema: %v", err)
	}
	return s
}

func renderSARIF(t *testing.T, r *Report, opt SARIFOptions) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := SARIF(&b, r, opt); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSARIFValidatesAgainstSchema(t *testing.T) {
	schema := sarifSchema(t)
	many := explainReport()
	for i := 0; i < 40; i++ {
		many.Files[0].Findings = append(many.Files[0].Findings, many.Files[0].Findings[i%3])
	}
	cases := []struct {
		name string
		r    *Report
		opt  SARIFOptions
	}{
		{"queue fixtures", queueFixtureReport(t), SARIFOptions{BaseDir: "..", Category: "planlint/queue"}},
		{"explain with a failed input", explainReport(), SARIFOptions{}},
		{"not redacted", explainReport(), SARIFOptions{NoRedact: true}},
		{"capped", many, SARIFOptions{MaxResults: 5}},
		{"empty report", &Report{Tool: "planlint"}, SARIFOptions{}},
		{"outside the base directory", explainReport(), SARIFOptions{BaseDir: "testdata"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := renderSARIF(t, c.r, c.opt)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("output is not JSON: %v", err)
			}
			if err := schema.Validate(inst); err != nil {
				t.Fatalf("output does not match the SARIF 2.1.0 schema: %v", err)
			}
		})
	}
}

// TestSARIFSchemaRejects makes sure the validation above can fail.
func TestSARIFSchemaRejects(t *testing.T) {
	schema := sarifSchema(t)
	for name, doc := range map[string]string{
		"bad level":       `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"level":"fatal"}]}]}`,
		"region line 0":   `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a"},"region":{"startLine":0}}}]}]}]}`,
		"unknown member":  `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[],"surprise":1}]}`,
		"helpUri not URI": `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x","rules":[{"id":"a","helpUri":"not a uri"}]}}}]}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if schema.Validate(inst) == nil {
			t.Errorf("%s: the schema accepted an invalid log", name)
		}
	}
}

// sarifDoc is the part of the log the tests look at.
type sarifDoc struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name            string `json:"name"`
				SemanticVersion string `json:"semanticVersion"`
				InformationURI  string `json:"informationUri"`
				Rules           []struct {
					ID               string `json:"id"`
					Name             string `json:"name"`
					ShortDescription struct{ Text string }
					FullDescription  struct{ Text string }
					Help             struct{ Text, Markdown string }
					HelpURI          string                 `json:"helpUri"`
					Default          struct{ Level string } `json:"defaultConfiguration"`
					Properties       map[string]any
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		AutomationDetails *struct{ ID string } `json:"automationDetails"`
		Invocations       []struct {
			ExecutionSuccessful bool `json:"executionSuccessful"`
			Notifications       []struct {
				Level   string
				Message struct{ Text string }
			} `json:"toolExecutionNotifications"`
		} `json:"invocations"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex *int   `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   struct{ Text string }
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct{ URI string }
					Region           map[string]int
				}
			}
			PartialFingerprints map[string]string
		} `json:"results"`
	} `json:"runs"`
}

func decodeSARIF(t *testing.T, raw []byte) sarifDoc {
	t.Helper()
	var d sarifDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Runs) != 1 {
		t.Fatalf("got %d runs, want 1", len(d.Runs))
	}
	return d
}

func TestSARIFContent(t *testing.T) {
	d := decodeSARIF(t, renderSARIF(t, explainReport(), SARIFOptions{Category: "planlint/explain"}))
	run := d.Runs[0]
	if d.Version != "2.1.0" || d.Schema == "" {
		t.Errorf("version %q, $schema %q", d.Version, d.Schema)
	}
	drv := run.Tool.Driver
	if drv.Name != "planlint" || drv.SemanticVersion != fixtureVersion || drv.InformationURI == "" {
		t.Errorf("driver = %q %q %q", drv.Name, drv.SemanticVersion, drv.InformationURI)
	}
	all := rules.All()
	if len(drv.Rules) != len(all) {
		t.Fatalf("%d rules described, want %d", len(drv.Rules), len(all))
	}
	for i, r := range all {
		got := drv.Rules[i]
		if got.ID != r.Code || got.Name != r.Name || got.ShortDescription.Text != r.Summary || got.HelpURI != rules.DocURL(r) {
			t.Errorf("rule %d = %s %s, want %s %s", i, got.ID, got.Name, r.Code, r.Name)
		}
		if got.Help.Text != rules.Text(r) || got.Help.Markdown != rules.Markdown(r) {
			t.Errorf("%s: help is not the rule's documentation", r.Code)
		}
		if n := utf8.RuneCountInString(got.FullDescription.Text); n == 0 || n > 1024 {
			t.Errorf("%s: fullDescription has %d characters", r.Code, n)
		}
		if got.Default.Level != sarifLevel(r.Severity) {
			t.Errorf("%s: default level %q", r.Code, got.Default.Level)
		}
		for _, key := range []string{"tags", "precision", "problem.severity"} {
			if got.Properties[key] == nil {
				t.Errorf("%s: properties.%s missing", r.Code, key)
			}
		}
	}
	if run.AutomationDetails == nil || run.AutomationDetails.ID != "planlint/explain" {
		t.Errorf("automationDetails = %+v", run.AutomationDetails)
	}
	inv := run.Invocations
	if len(inv) != 1 || !inv[0].ExecutionSuccessful || len(inv[0].Notifications) != 1 ||
		!strings.Contains(inv[0].Notifications[0].Message.Text, "plans/broken.sqlplan") || inv[0].Notifications[0].Level != "error" {
		t.Errorf("invocations = %+v, want one successful with a notification about the broken plan", inv)
	}
	wantLevels := []string{"error", "warning", "note"}
	if len(run.Results) != len(wantLevels) {
		t.Fatalf("%d results, want %d", len(run.Results), len(wantLevels))
	}
	for i, res := range run.Results {
		if res.Level != wantLevels[i] {
			t.Errorf("result %d level %q, want %q", i, res.Level, wantLevels[i])
		}
		if res.RuleIndex == nil || drv.Rules[*res.RuleIndex].ID != res.RuleID {
			t.Errorf("result %d: ruleIndex does not point at %s", i, res.RuleID)
		}
		if len(res.Locations) != 1 || res.Locations[0].PhysicalLocation.ArtifactLocation.URI != "queries/poll.sql" {
			t.Errorf("result %d: locations %+v", i, res.Locations)
		}
		if res.PartialFingerprints["primaryLocationLineHash"] == "" {
			t.Errorf("result %d: no primaryLocationLineHash", i)
		}
	}
	reg := run.Results[2].Locations[0].PhysicalLocation.Region
	if reg["startLine"] != 8 || reg["startColumn"] != 5 || reg["endLine"] != 8 || reg["endColumn"] != 61 {
		t.Errorf("region = %v, want 8:5-8:61", reg)
	}
}

func TestSARIFPlanFileRegion(t *testing.T) {
	d := decodeSARIF(t, renderSARIF(t, queueFixtureReport(t), SARIFOptions{BaseDir: ".."}))
	if len(d.Runs[0].Results) == 0 {
		t.Fatal("no results for the queue fixtures")
	}
	for _, res := range d.Runs[0].Results {
		loc := res.Locations[0].PhysicalLocation
		if !strings.HasPrefix(loc.ArtifactLocation.URI, "fixtures/queue/") || !strings.HasSuffix(loc.ArtifactLocation.URI, ".sqlplan") {
			t.Errorf("%s: uri %q", res.RuleID, loc.ArtifactLocation.URI)
		}
		if loc.Region["startLine"] != 1 {
			t.Errorf("%s: region %v, want startLine 1 for a plan file", res.RuleID, loc.Region)
		}
	}
}

func TestSARIFCapKeepsMostSevere(t *testing.T) {
	r := explainReport()
	f := r.Files[0]
	var many []*Finding
	for i := 0; i < 30; i++ {
		many = append(many, f.Findings[2]) // info
	}
	many = append(many, f.Findings[1], f.Findings[0]) // a warning and an error, last
	f.Findings = many
	d := decodeSARIF(t, renderSARIF(t, r, SARIFOptions{MaxResults: 4}))
	run := d.Runs[0]
	var levels []string
	for _, res := range run.Results {
		levels = append(levels, res.Level)
	}
	if got := strings.Join(levels, ","); got != "note,note,warning,error" {
		t.Errorf("kept levels %s, want the two most severe plus the first two notes, in report order", got)
	}
	var note string
	for _, n := range run.Invocations[0].Notifications {
		if strings.Contains(n.Message.Text, "dropped") {
			note = n.Message.Text
		}
	}
	if !strings.Contains(note, "28 of 32 results were dropped") {
		t.Errorf("no notification about the dropped results; got %q", note)
	}
}

func TestSARIFFingerprint(t *testing.T) {
	base := explainReport()
	hash := func(r *Report, i int) string {
		d := decodeSARIF(t, renderSARIF(t, r, SARIFOptions{}))
		return d.Runs[0].Results[i].PartialFingerprints["primaryLocationLineHash"]
	}
	want := hash(base, 0)

	moved := explainReport()
	moved.Files[0].Findings[0].Location = &Location{Path: "queries/poll.sql", StartLine: 40, StartCol: 3, EndLine: 44, EndCol: 2}
	moved.Files[0].Statements[0].Text = "SELECT  TOP (5) WorkId\nFROM dbo.Work WHERE Status = @Status AND Email = N'bob@example.com' AND Token = 0x01"
	if got := hash(moved, 0); got != want {
		t.Errorf("moving the statement and changing its literals changed the fingerprint: %s, want %s", got, want)
	}
	if got := decodeSARIF(t, renderSARIF(t, base, SARIFOptions{NoRedact: true})).Runs[0].Results[0].PartialFingerprints["primaryLocationLineHash"]; got != want {
		t.Errorf("redaction changed the fingerprint")
	}
	changes := map[string]func(r *Report){
		"another node": func(r *Report) { r.Files[0].Findings[0].NodeID = rules.Node(1) },
		"another rule": func(r *Report) { r.Files[0].Findings[0].Code = "PL203" },
		"another file": func(r *Report) { r.Files[0].Findings[0].Location.Path = "queries/other.sql" },
		"another statement shape": func(r *Report) {
			r.Files[0].Statements[0].Text = "SELECT WorkId FROM dbo.Work WHERE Status = @Status"
		},
	}
	for name, change := range changes {
		r := explainReport()
		change(r)
		if got := hash(r, 0); got == want {
			t.Errorf("%s: fingerprint unchanged", name)
		}
	}
}

func TestDisplayPathAndURI(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		base, path, display, uri string
	}{
		{"", "queries/poll.sql", "queries/poll.sql", "queries/poll.sql"},
		{".", "./queries/../queries/poll.sql", "queries/poll.sql", "queries/poll.sql"},
		{"..", "../fixtures/queue/param.sqlplan", "fixtures/queue/param.sqlplan", "fixtures/queue/param.sqlplan"},
		{"..", "a dir/x#1.sql", "report/a dir/x#1.sql", "report/a%20dir/x%231.sql"},
		{"", "a:b.sql", "a:b.sql", "./a:b.sql"},
		{"testdata", "../outside.sql", filepath.ToSlash(filepath.Join(filepath.Dir(wd), "outside.sql")), "file://" + filepath.ToSlash(filepath.Join(filepath.Dir(wd), "outside.sql"))},
		{"", "<stdin>", "<stdin>", ""},
	}
	for _, c := range cases {
		if got := displayPath(c.base, c.path); got != c.display {
			t.Errorf("displayPath(%q, %q) = %q, want %q", c.base, c.path, got, c.display)
		}
		if got := artifactURI(c.base, c.path); got != c.uri {
			t.Errorf("artifactURI(%q, %q) = %q, want %q", c.base, c.path, got, c.uri)
		}
		if strings.Contains(displayPath(c.base, c.path), "..") {
			t.Errorf("displayPath(%q, %q) escapes with ..", c.base, c.path)
		}
	}
}

func TestCutAtSentence(t *testing.T) {
	long := strings.Repeat("word ", 300)
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"Short. Enough.", 20, "Short. Enough."},
		{"First sentence. Second sentence is long.", 25, "First sentence."},
		{"Is it? Yes! Then more text here", 14, "Is it? Yes!"},
		{"no sentence end at all here", 12, "no sentence…"},
		{"e.g. this is not cut at e.g", 8, "e.g."},
		{long, 1024, strings.TrimSpace(long[:1019]) + "…"},
	}
	for _, c := range cases {
		got := cutAtSentence(c.in, c.max)
		if got != c.want {
			t.Errorf("cutAtSentence(%.30q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
		if utf8.RuneCountInString(got) > c.max {
			t.Errorf("cutAtSentence(%.30q, %d) is %d characters long", c.in, c.max, utf8.RuneCountInString(got))
		}
	}
}

func TestSARIFRuleMetaNamesRules(t *testing.T) {
	for name, meta := range sarifRuleMeta {
		if rules.Lookup(name) == nil {
			t.Errorf("sarifRuleMeta names %q, which is not a rule", name)
		}
		switch meta.precision {
		case "very-high", "high", "medium", "low":
		default:
			t.Errorf("%s: precision %q is not one GitHub knows", name, meta.precision)
		}
	}
}

func TestSARIFGolden(t *testing.T) {
	checkGolden(t, "queue.sarif", renderSARIF(t, queueFixtureReport(t), SARIFOptions{BaseDir: "..", Category: "planlint/queue"}))
	checkGolden(t, "explain.sarif", renderSARIF(t, explainReport(), SARIFOptions{Category: "planlint/explain"}))
}

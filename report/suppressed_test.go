package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// suppressedReport is explainReport with its warning moved to the first
// file's suppressed list, as the CLI does for a suppress entry.
func suppressedReport() *Report {
	r := explainReport()
	f := r.Files[0]
	x := f.Findings[1]
	f.Findings = append(f.Findings[:1:1], f.Findings[2:]...)
	x.Suppression = &Suppression{Kind: "config", Reason: "estimates are off on purpose: 'SECRET-REASON' stays",
		Location: &Location{Path: ".planlint.yaml", StartLine: 7, StartCol: 5, EndLine: 7, EndCol: 5}}
	f.Suppressed = []*Finding{x}
	r.SuppressedBy = ".planlint.yaml"
	return r
}

func TestSARIFSuppressed(t *testing.T) {
	r := suppressedReport()
	plain := renderSARIF(t, explainReport(), SARIFOptions{})
	out := renderSARIF(t, r, SARIFOptions{})
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := sarifSchema(t).Validate(inst); err != nil {
		t.Fatalf("output does not match the SARIF 2.1.0 schema: %v", err)
	}
	var d struct {
		Runs []struct {
			Results []struct {
				RuleID              string
				PartialFingerprints map[string]string
				Suppressions        []struct {
					Kind, Status, Justification string
					Location                    struct {
						PhysicalLocation struct {
							ArtifactLocation struct{ URI string }
							Region           map[string]int
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatal(err)
	}
	res := d.Runs[0].Results
	if len(res) != 3 {
		t.Fatalf("%d results, want 3 (the suppressed one kept)", len(res))
	}
	var suppressed int
	for _, x := range res {
		if len(x.Suppressions) == 0 {
			continue
		}
		suppressed++
		s := x.Suppressions[0]
		if x.RuleID != "PL104" || s.Kind != "external" || s.Status != "accepted" || !strings.HasPrefix(s.Justification, "estimates are off") {
			t.Errorf("suppressed result %s: %+v", x.RuleID, s)
		}
		if l := s.Location.PhysicalLocation; l.ArtifactLocation.URI != ".planlint.yaml" || l.Region["startLine"] != 7 {
			t.Errorf("suppression location %+v", l)
		}
	}
	if suppressed != 1 {
		t.Errorf("%d suppressed results, want 1", suppressed)
	}
	// The alert keeps its identity: the same fingerprint as unsuppressed.
	if !strings.Contains(string(plain), res[2].PartialFingerprints["primaryLocationLineHash"]) {
		t.Errorf("the suppressed result's fingerprint changed")
	}
}

func TestSARIFCapDropsSuppressedFirst(t *testing.T) {
	d := decodeSARIF(t, renderSARIF(t, suppressedReport(), SARIFOptions{MaxResults: 2}))
	for _, x := range d.Runs[0].Results {
		if x.RuleID == "PL104" {
			t.Errorf("the suppressed result was kept over an unsuppressed one")
		}
	}
}

func TestJSONSuppressed(t *testing.T) {
	r := suppressedReport()
	SetFingerprints(r, "")
	var b bytes.Buffer
	if err := JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var d struct {
		Files []struct {
			Findings   []map[string]any
			Suppressed []map[string]any
		}
		Summary map[string]int
	}
	if err := json.Unmarshal(b.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if d.Summary["suppressed"] != 1 || d.Summary["warnings"] != 0 || d.Summary["errors"] != 1 {
		t.Errorf("summary %v", d.Summary)
	}
	f := d.Files[0]
	if len(f.Findings) != 2 || len(f.Suppressed) != 1 {
		t.Fatalf("%d findings, %d suppressed", len(f.Findings), len(f.Suppressed))
	}
	s, _ := f.Suppressed[0]["suppression"].(map[string]any)
	if f.Suppressed[0]["code"] != "PL104" || s["kind"] != "config" || s["reason"] == "" {
		t.Errorf("suppressed finding %v", f.Suppressed[0])
	}
	for _, x := range append(f.Findings, f.Suppressed...) {
		fp, _ := x["fingerprint"].(string)
		st, _ := x["statement_fingerprint"].(string)
		if len(fp) != 32 || len(st) != 16 {
			t.Errorf("%v: fingerprint %q, statement_fingerprint %q", x["code"], fp, st)
		}
	}
	if _, ok := f.Findings[0]["suppression"]; ok {
		t.Errorf("an unsuppressed finding carries a suppression")
	}
}

func TestSetFingerprintsMatchSARIF(t *testing.T) {
	r := explainReport()
	SetFingerprints(r, "base")
	d := decodeSARIF(t, renderSARIF(t, r, SARIFOptions{BaseDir: "base"}))
	for i, x := range r.Files[0].Findings {
		if got := d.Runs[0].Results[i].PartialFingerprints["primaryLocationLineHash"]; got != x.Fingerprint {
			t.Errorf("finding %d: JSON fingerprint %s, SARIF %s", i, x.Fingerprint, got)
		}
	}
}

func TestSummariesCountSuppressed(t *testing.T) {
	r := suppressedReport()
	var text, md bytes.Buffer
	if err := Text(&text, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, r, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "; 1 suppressed by .planlint.yaml\n") {
		t.Errorf("text summary does not count the suppressed finding:\n%s", text.String())
	}
	if strings.Contains(text.String(), "PL104") {
		t.Errorf("text shows the suppressed finding:\n%s", text.String())
	}
	if !strings.Contains(md.String(), "; 1 suppressed by .planlint.yaml.") {
		t.Errorf("markdown header does not count the suppressed finding:\n%s", md.String())
	}
	var page bytes.Buffer
	if err := HTML(&page, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "; 1 suppressed by .planlint.yaml") {
		t.Errorf("HTML summary does not count the suppressed finding")
	}
	var plain bytes.Buffer
	if err := Text(&plain, explainReport(), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "suppressed") {
		t.Errorf("a report without suppressions mentions them:\n%s", plain.String())
	}
}

func TestRedactedKeepsSuppressed(t *testing.T) {
	red := Redacted(suppressedReport())
	f := red.Files[0]
	if red.SuppressedBy != ".planlint.yaml" || len(f.Suppressed) != 1 || f.Suppressed[0].Suppression == nil {
		t.Fatalf("redacted copy lost the suppressed finding: %+v", f.Suppressed)
	}
	if strings.Contains(f.Suppressed[0].Message, "0xDEADBEEF") {
		t.Errorf("suppressed finding not redacted: %s", f.Suppressed[0].Message)
	}
}

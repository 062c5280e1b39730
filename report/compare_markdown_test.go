package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/compare"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/rules"
)

// fixtureComparison compares two queue fixtures as `planlint compare`
// does, keeping both sides as report files.
func fixtureComparison(t *testing.T, a, b string) *Comparison {
	t.Helper()
	var sides [2]compare.Side
	var files [2]*File
	for i, name := range []string{a, b} {
		path := filepath.Join("..", "fixtures", "queue", name)
		doc, err := plan.ParseFile(path, plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fs, err := rules.Analyze(doc, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		sides[i] = compare.Side{Name: name, Document: doc, Findings: fs}
		files[i] = &File{Path: name, Statements: Summarize(doc), Findings: Wrap(fs), Plans: []*plan.Document{doc}}
		for j, x := range files[i].Findings {
			x.Location = &Location{Path: name, StartLine: 10 + j, StartCol: 3, EndLine: 10 + j, EndCol: 3}
		}
	}
	return &Comparison{Version: fixtureVersion, Result: compare.Documents(sides[0], sides[1]), A: files[0], B: files[1]}
}

func renderCompareMarkdown(t *testing.T, c *Comparison, opt CompareMarkdownOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := CompareMarkdown(&b, c, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// secretComparison is a comparison whose compiled values and finding
// texts hold literals that shared outputs must mask.
func secretComparison() *Comparison {
	gained := rules.Finding{Rule: "implicit-conversion", Code: "PL301", Severity: rules.Error, Batch: 1, StatementID: 1, Ordinal: 1,
		NodeID: rules.Node(3), Message: "dbo.Customers.AccountCode is converted to compare it with the Unicode literal N'ACCT-4242'",
		Fix: "drop the N prefix: compare AccountCode with 'ACCT-4242'", Evidence: map[string]any{"compiled_value": "N'ACCT-4242'"}}
	lost := rules.Finding{Rule: "key-lookup", Code: "PL102", Severity: rules.Warning, Batch: 1, StatementID: 1, Ordinal: 1,
		NodeID: rules.Node(2), Message: "Key Lookup for Code = 'ACCT-4242'"}
	r := &compare.Result{A: "fast.sqlplan", B: "slow.sqlplan",
		Statements: []*compare.StatementDiff{{
			A: compare.StatementRef{Batch: 1, StatementID: 1, Type: "SELECT"}, B: compare.StatementRef{Batch: 1, StatementID: 1, Type: "SELECT"},
			MatchedBy: "query_hash", Cost: compare.Delta{A: 0.5, B: 4},
			Changes: []compare.Change{
				{Kind: "parameter-value", Detail: compare.ParameterDetail("@Code", "'ACCT-4242'", "N'ACCT-4242'"), Parameter: "@Code", ValueA: "'ACCT-4242'", ValueB: "N'ACCT-4242'"},
				{Kind: "parameter-value", Detail: compare.ParameterDetail("@Since", "", "'2024-01-01'"), Parameter: "@Since", ValueB: "'2024-01-01'"},
			},
		}},
		Findings: compare.FindingsDiff{New: []rules.Finding{gained}, NewAt: []int{0}, Gone: []rules.Finding{lost}, GoneAt: []int{0}},
	}
	return &Comparison{Version: fixtureVersion, Result: r,
		A: &File{Path: "fast.sqlplan", Findings: Wrap([]rules.Finding{lost})},
		B: &File{Path: "slow.sqlplan", Findings: Wrap([]rules.Finding{gained})}}
}

// TestCompareMarkdownRedaction: compiled values in parameter-value changes
// and literals in the findings gained and lost are masked unless NoRedact;
// the comparison given is not modified.
func TestCompareMarkdownRedaction(t *testing.T) {
	c := secretComparison()
	before := fmt.Sprintf("%+v %+v", c.Result.Statements[0].Changes, c.Result.Findings)
	for _, noRedact := range []bool{false, true} {
		t.Run(fmt.Sprint("noRedact=", noRedact), func(t *testing.T) {
			out := renderCompareMarkdown(t, c, CompareMarkdownOptions{NoRedact: noRedact})
			var gh bytes.Buffer
			summary := filepath.Join(t.TempDir(), "summary.md")
			if err := CompareGitHub(&gh, c, GitHubOptions{NoRedact: noRedact, SummaryPath: summary}); err != nil {
				t.Fatal(err)
			}
			sum, err := os.ReadFile(summary)
			if err != nil {
				t.Fatal(err)
			}
			for name, text := range map[string]string{"markdown": out, "github": gh.String(), "summary": string(sum)} {
				if got := strings.Contains(text, "ACCT-4242"); got != noRedact {
					t.Errorf("%s: holds the literal %v, want %v:\n%s", name, got, noRedact, text)
				}
			}
			want := "@&#8203;Code compiled for ? → ?"
			wantSince := "@&#8203;Since compiled for (none) → ?"
			if noRedact {
				want = "@&#8203;Code compiled for 'ACCT-4242' → N'ACCT-4242'"
				wantSince = "@&#8203;Since compiled for (none) → '2024-01-01'"
			}
			for _, w := range []string{want, wantSince} {
				if !strings.Contains(out, w) {
					t.Errorf("markdown lacks %q:\n%s", w, out)
				}
			}
			if redacted := strings.Contains(out, "literals and parameter values redacted"); redacted == noRedact {
				t.Errorf("footer says redacted=%v, want %v", redacted, !noRedact)
			}
		})
	}
	if after := fmt.Sprintf("%+v %+v", c.Result.Statements[0].Changes, c.Result.Findings); after != before {
		t.Errorf("rendering modified the comparison:\n%s\n%s", before, after)
	}
}

func TestCompareRenderersRefuseNothing(t *testing.T) {
	for _, c := range []*Comparison{nil, {Version: "x"}} {
		if err := CompareMarkdown(&bytes.Buffer{}, c, CompareMarkdownOptions{}); err == nil {
			t.Errorf("markdown of %+v: no error", c)
		}
		if err := CompareGitHub(&bytes.Buffer{}, c, GitHubOptions{}); err == nil {
			t.Errorf("github of %+v: no error", c)
		}
	}
}

// bigComparison has n gained findings with fixes, n lost ones and a
// statement with n changed operators.
func bigComparison(n int) *Comparison {
	r := &compare.Result{A: "a.sqlplan", B: "b.sqlplan"}
	s := &compare.StatementDiff{A: compare.StatementRef{Batch: 1, StatementID: 1, Type: "SELECT"}, B: compare.StatementRef{Batch: 1, StatementID: 1, Type: "SELECT"},
		MatchedBy: "position", Cost: compare.Delta{A: 1, B: 2}}
	for i := 0; i < n; i++ {
		a, b := float64(i), float64(10*i+1)
		s.Operators = append(s.Operators, compare.OperatorDiff{Operator: "Index Seek", Object: fmt.Sprintf("dbo.T%d.IX_%d", i, i),
			NodeA: &i, NodeB: &i, EstimatedRows: compare.SideDelta{A: &a, B: &b}, CostShare: compare.SideDelta{A: &a, B: &b}})
		f := rules.Finding{Rule: "key-lookup", Code: "PL102", Severity: rules.Severity(1 + i%3), Batch: 1, StatementID: 1, Ordinal: 1,
			Message: fmt.Sprintf("finding %d: %s", i, strings.Repeat("x", 200)), Fix: fmt.Sprintf("fix %d: %s", i, strings.Repeat("y", 100))}
		r.Findings.New = append(r.Findings.New, f)
		r.Findings.NewAt = append(r.Findings.NewAt, i)
		r.Findings.Gone = append(r.Findings.Gone, f)
		r.Findings.GoneAt = append(r.Findings.GoneAt, i)
	}
	r.Statements = []*compare.StatementDiff{s}
	return &Comparison{Version: fixtureVersion, Result: r, A: &File{Path: "a.sqlplan", Findings: Wrap(r.Findings.Gone)},
		B: &File{Path: "b.sqlplan", Findings: Wrap(r.Findings.New)}}
}

// TestCompareMarkdownLimit: within the limit the comparison is whole; over
// it, what is left out is counted in a note, gained findings keep their
// fixes and are kept before lost findings (the statement's figures and
// operator rows fill the room left), and the
// output stays under the limit.
func TestCompareMarkdownLimit(t *testing.T) {
	c := bigComparison(300)
	whole := renderCompareMarkdown(t, c, CompareMarkdownOptions{MaxLength: 1 << 30})
	if strings.Contains(whole, "Comparison truncated") || strings.Count(whole, "<details>") != 600 {
		t.Fatalf("an unlimited comparison is truncated or lacks fixes (%d)", strings.Count(whole, "<details>"))
	}
	for _, limit := range []int{0, 2000, 20000, 65000, 150000} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			out := renderCompareMarkdown(t, c, CompareMarkdownOptions{MaxLength: limit, FullReport: "the compare.json artifact"})
			want := limit
			if want == 0 {
				want = DefaultMarkdownLength
			}
			if len(out) > want {
				t.Errorf("%d bytes, over the limit %d", len(out), want)
			}
			if !strings.HasPrefix(out, CompareMarkdownMarker+"\n") {
				t.Errorf("no sticky-comment marker first: %.80q", out)
			}
			if !strings.Contains(out, "Comparison truncated") || !strings.Contains(out, "the compare.json artifact") {
				t.Errorf("no truncation note naming the full comparison:\n%s", out[max(0, len(out)-400):])
			}
			gainedRows := strings.Count(out, "| [PL102 key-lookup]")
			gained, lost := sectionOf(out, "### Findings B gained"), sectionOf(out, "### Findings B lost")
			if g := strings.Count(gained, "<details>"); g != strings.Count(gained, "| [PL102 key-lookup]") {
				t.Errorf("%d gained rows but %d fixes", strings.Count(gained, "| [PL102"), g)
			}
			if lost != "" && gainedRows < 300 {
				t.Errorf("lost findings shown before all gained findings (%d of 300 rows)", gainedRows)
			}
			if limit >= 20000 && (!strings.Contains(out, "| cost | 1 | 2 | ×2 |") || gainedRows == 0) {
				t.Errorf("the statement's figures or the first gained findings are missing")
			}
			note := fmt.Sprintf("%d of 300 gained findings", strings.Count(gained, "| [PL102"))
			if !strings.Contains(out, note) {
				t.Errorf("note lacks %q", note)
			}
		})
	}
}

// sectionOf is the text from head to the next "### " heading.
func sectionOf(s, head string) string {
	i := strings.Index(s, head)
	if i < 0 {
		return ""
	}
	rest := s[i+len(head):]
	if j := strings.Index(rest, "\n### "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// TestCompareMarkdownFixtures: the literal plan against its parameterized
// twin — the access path change, the operators on one side only (— on the
// other, never 0%), the gained findings at B's locations.
func TestCompareMarkdownFixtures(t *testing.T) {
	c := fixtureComparison(t, "literal.sqlplan", "param.sqlplan")
	out := renderCompareMarkdown(t, c, CompareMarkdownOptions{})
	for _, want := range []string{
		"A: `literal.sqlplan`  \nB: `param.sqlplan`",
		"- **access-path** dbo.Work: Index Scan IX\\_Work\\_Pending → Clustered Index Scan PK\\_Work",
		"| 1 → — | Index Scan | dbo.Work.IX\\_Work\\_Pending | 20 → — | — → — | 100% → — |",
		"| — → 1 | Clustered Index Scan | dbo.Work.PK\\_Work | — → 200 | — → — | — → 100% |",
		"### Findings B gained",
		"`param.sqlplan:1", // B's location
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"dbo.work", "0% → 0%", "0% → 100%", "100% → 0%", "literal.sqlplan:1"} {
		if strings.Contains(out, bad) {
			t.Errorf("holds %q:\n%s", bad, out)
		}
	}
	same := renderCompareMarkdown(t, fixtureComparison(t, "param.sqlplan", "param.sqlplan"), CompareMarkdownOptions{})
	for _, want := range []string{"**B gains no finding**", "Same shape and settings.", "Every operator has the same figures on both sides."} {
		if !strings.Contains(same, want) {
			t.Errorf("self-comparison lacks %q:\n%s", want, same)
		}
	}
	if strings.Contains(same, "| Node A → B |") {
		t.Errorf("self-comparison lists operators:\n%s", same)
	}
}

// TestCompareMarkdownEscaping: names from the plan cannot break the table
// or mention users.
func TestCompareMarkdownEscaping(t *testing.T) {
	c := bigComparison(1)
	c.Result.Statements[0].Operators[0].Object = "dbo.[a|b]*c"
	c.Result.Statements[0].Changes = []compare.Change{{Kind: "access-path", Detail: "dbo.[a|b] <img> @team"}}
	out := renderCompareMarkdown(t, c, CompareMarkdownOptions{})
	for _, want := range []string{`dbo.\[a\|b\]\*c`, `dbo.\[a\|b\] &lt;img&gt; @&#8203;team`} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

// TestCompareGitHub: one annotation per finding B gained at its place in
// B's file, capped per level; the lost ones are not annotated; the
// comparison is appended to the job summary.
func TestCompareGitHub(t *testing.T) {
	c := fixtureComparison(t, "literal.sqlplan", "param-actual.sqlplan")
	summary := filepath.Join(t.TempDir(), "summary.md")
	if err := os.WriteFile(summary, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := CompareGitHub(&b, c, GitHubOptions{SummaryPath: summary}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(c.Result.Findings.New) {
		t.Fatalf("%d annotations for %d gained findings:\n%s", len(lines), len(c.Result.Findings.New), b.String())
	}
	for i, l := range lines {
		x := c.B.Findings[c.Result.Findings.NewAt[i]]
		want := fmt.Sprintf("::%s file=param-actual.sqlplan,line=%d,endLine=%d,col=3,title=%s %s::", annotationLevel(x.Severity),
			x.Location.StartLine, x.Location.StartLine, x.Code, x.Rule)
		if !strings.HasPrefix(l, want) {
			t.Errorf("annotation %d:\n got %s\nwant %s…", i, l, want)
		}
	}
	sum, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(sum), "earlier step\n"+CompareMarkdownMarker+"\n") {
		t.Errorf("summary not appended:\n%.200s", sum)
	}

	big := bigComparison(40)
	b.Reset()
	if err := CompareGitHub(&b, big, GitHubOptions{SummaryPath: filepath.Join(t.TempDir(), "s.md")}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for level, n := range map[string]int{"::error ": 10, "::warning ": 10, "::notice file=": 10} {
		if got := strings.Count(out, level); got != n {
			t.Errorf("%d %s annotations, want the cap %d", got, level, n)
		}
	}
	if !strings.Contains(out, "::notice title=planlint::10 more findings not annotated (3 errors, 3 warnings, 4 notices over the per-level cap); the full report is in the job summary") {
		t.Errorf("no closing notice:\n%s", out)
	}
}

// FuzzCompareMarkdown: whatever names and messages the plans hold, the
// comparison starts with its marker, keeps within a limit that has room
// for its summary, and every operator and finding row has its columns.
func FuzzCompareMarkdown(f *testing.F) {
	f.Add("dbo.Work.IX_Work_Pending", "access-path dbo.Work: a → b", "Key Lookup on dbo.Work", 65000)
	f.Add("dbo.[a|b]", "x\n| --- |\r\n", "`|`\\|@x <b>", 5000)
	f.Fuzz(func(t *testing.T, object, detail, message string, limit int) {
		if limit < 4000 || limit > 1<<20 {
			limit = 4000 + (limit%60000+60000)%60000
		}
		c := bigComparison(30)
		for i := range c.Result.Statements[0].Operators {
			c.Result.Statements[0].Operators[i].Object = object
		}
		c.Result.Statements[0].Changes = []compare.Change{{Kind: "access-path", Detail: detail}}
		for _, x := range c.B.Findings {
			x.Message = message
		}
		out := renderCompareMarkdown(t, c, CompareMarkdownOptions{MaxLength: limit})
		if !strings.HasPrefix(out, CompareMarkdownMarker+"\n") {
			t.Fatalf("no marker first: %.80q", out)
		}
		if len(out) > limit {
			t.Fatalf("%d bytes over the limit %d", len(out), limit)
		}
		for _, line := range strings.Split(out, "\n") {
			cols := 0
			if strings.HasPrefix(line, "| ") {
				cols = strings.Count(strings.ReplaceAll(line, `\|`, ""), "|")
			}
			switch {
			case strings.HasPrefix(line, "| ") && strings.Contains(line, " → ") && strings.Contains(line, "Index Seek"):
				if cols != 7 {
					t.Fatalf("operator row with %d pipes: %q", cols, line)
				}
			case strings.HasPrefix(line, "| [PL") || strings.HasPrefix(line, "| info |") || strings.HasPrefix(line, "| warning |") || strings.HasPrefix(line, "| **error** |"):
				if cols != 6 {
					t.Fatalf("finding row with %d pipes: %q", cols, line)
				}
			}
		}
	})
}

// TestCompareMinSeverity: the Markdown, text and GitHub comparisons show
// the gained and lost findings at or above MinSeverity, keep counting all
// of them in the summary, and say how many are hidden; JSON keeps all.
func TestCompareMinSeverity(t *testing.T) {
	// secretComparison gains an error (PL301) and loses a warning (PL102).
	const note = "1 warning and info finding not shown (0 gained, 1 lost; --min-severity warning shows them)"
	tests := []struct {
		min       rules.Severity
		lostShown bool
	}{
		{0, true},
		{rules.Info, true},
		{rules.Warning, true},
		{rules.Error, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.min), func(t *testing.T) {
			c := secretComparison()
			md := renderCompareMarkdown(t, c, CompareMarkdownOptions{MinSeverity: tt.min})
			var text, ann bytes.Buffer
			if err := CompareText(&text, c.Result, TextOptions{MinSeverity: tt.min}); err != nil {
				t.Fatal(err)
			}
			summary := filepath.Join(t.TempDir(), "summary.md")
			if err := CompareGitHub(&ann, c, GitHubOptions{SummaryPath: summary, MinSeverity: tt.min}); err != nil {
				t.Fatal(err)
			}
			sum, err := os.ReadFile(summary)
			if err != nil {
				t.Fatal(err)
			}
			for name, out := range map[string]string{"markdown": md, "text": text.String(), "summary": string(sum)} {
				if !strings.Contains(out, "PL301") {
					t.Errorf("%s: the gained error is not shown:\n%s", name, out)
				}
				if got := strings.Contains(out, "PL102"); got != tt.lostShown {
					t.Errorf("%s: lost warning shown %v, want %v:\n%s", name, got, tt.lostShown, out)
				}
				if got := strings.Contains(out, note); got == tt.lostShown {
					t.Errorf("%s: note %q present %v, want %v:\n%s", name, note, got, !tt.lostShown, out)
				}
			}
			if !strings.Contains(md, "it loses 1 finding") || !strings.Contains(text.String(), "findings: 1 new in B, 1 gone, 0 in both") {
				t.Errorf("the summary does not count every finding:\n%s\n%s", md, text.String())
			}
			if !strings.HasPrefix(ann.String(), "::error ") || strings.Count(ann.String(), "\n") != 1 {
				t.Errorf("annotations: want the gained error only:\n%s", ann.String())
			}
			var js bytes.Buffer
			if err := CompareJSON(&js, c.Result); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(js.String(), `"PL102"`) || strings.Contains(js.String(), "not shown") {
				t.Errorf("json must carry every finding:\n%s", js.String())
			}
		})
	}
}

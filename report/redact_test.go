package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/planlint/planlint/plan"
)

// sharedFormats renders r in every shared format (the ones redacted by
// default), keyed by format name.
func sharedFormats(t *testing.T, r *Report, noRedact bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	var b bytes.Buffer
	if err := SARIF(&b, r, SARIFOptions{NoRedact: noRedact}); err != nil {
		t.Fatalf("sarif: %v", err)
	}
	out["sarif"] = b.String()
	b.Reset()
	summary := filepath.Join(t.TempDir(), "summary.md")
	if err := GitHub(&b, r, GitHubOptions{NoRedact: noRedact, SummaryPath: summary}); err != nil {
		t.Fatalf("github: %v", err)
	}
	out["github"] = b.String()
	raw, err := os.ReadFile(summary)
	if err != nil {
		t.Fatalf("github summary: %v", err)
	}
	out["github summary"] = string(raw)
	b.Reset()
	if err := Markdown(&b, r, MarkdownOptions{NoRedact: noRedact}); err != nil {
		t.Fatalf("markdown: %v", err)
	}
	out["markdown"] = b.String()
	b.Reset()
	if err := HTML(&b, r, HTMLOptions{NoRedact: noRedact}); err != nil {
		t.Fatalf("html: %v", err)
	}
	out["html"] = b.String()
	return out
}

func TestRedactedHidesValuesInEveryFormat(t *testing.T) {
	for format, out := range sharedFormats(t, explainReport(), false) {
		for _, secret := range secretValues {
			if strings.Contains(out, secret) {
				i := strings.Index(out, secret)
				t.Errorf("%s shows %q: ...%s...", format, secret, out[max(0, i-60):min(len(out), i+40)])
			}
		}
		if !strings.Contains(out, Mask) {
			t.Errorf("%s shows no mask at all", format)
		}
	}
	// Compiled values of the queue fixtures (the rest are 0 and 1, which
	// prose such as "node 0" also holds).
	for format, out := range sharedFormats(t, queueFixtureReport(t), false) {
		for _, v := range []string{"(5000001)", "(1001)", "(42)", "5000001", "1001"} {
			// Whole numbers only: "Expr1001" is a column name, not a value.
			if regexp.MustCompile(`(^|[^\w])` + regexp.QuoteMeta(v) + `($|[^\w])`).MatchString(out) {
				t.Errorf("queue fixtures: %s shows the compiled value %s", format, v)
			}
		}
	}
}

// TestNoRedactShowsValues proves the test above can fail: without
// redaction the values are there.
func TestNoRedactShowsValues(t *testing.T) {
	for format, out := range sharedFormats(t, explainReport(), true) {
		for _, v := range secretValuesPlain {
			if !strings.Contains(out, v) {
				t.Errorf("%s with NoRedact lacks %q", format, v)
			}
		}
	}
	html := sharedFormats(t, explainReport(), true)["html"]
	for _, v := range []string{"<td>(77)</td><td>(78)</td>", "(987654.25)", "0xDEADBEEF", "TOP (31337)"} {
		if !strings.Contains(html, v) {
			t.Errorf("HTML with NoRedact lacks %q", v)
		}
	}
}

func TestRedactedLeavesTheOriginalAlone(t *testing.T) {
	r := explainReport()
	before, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	red := Redacted(r)
	after, _ := json.Marshal(r)
	if !bytes.Equal(before, after) {
		t.Errorf("Redacted changed its input")
	}
	if !reflect.DeepEqual(r, explainReport()) {
		t.Errorf("Redacted changed its input's plans")
	}
	src := r.Files[0].Statements[0].Source
	if src.QueryPlan.Parameters[0].CompiledValue != "(77)" || src.QueryPlan.Root.Top.RowsText != "(31337)" {
		t.Errorf("the original plan lost its values")
	}
	if Redacted(nil) != nil {
		t.Errorf("Redacted(nil) should be nil")
	}
	if red.Files[1].Error == nil || *red.Files[1].Error == *r.Files[1].Error {
		t.Errorf("the failed input's error was not redacted: %v", red.Files[1].Error)
	}
}

func TestRedactedPlanCopy(t *testing.T) {
	red := Redacted(explainReport())
	f := red.Files[0]
	doc := f.Plans[0]
	stmts := doc.Statements()
	for i, s := range f.Statements {
		if s.Source != stmts[i] {
			t.Errorf("statement %d: Source does not point into the copied document", i)
		}
	}
	q := stmts[0].QueryPlan
	p := q.Parameters[0]
	if p.Name != "@Status" || p.DataType != "tinyint" || p.CompiledValue != Mask || p.RuntimeValue != Mask {
		t.Errorf("parameter = %+v, want name and type kept, values masked", p)
	}
	if len(q.Nodes) != 3 || q.Root != q.Nodes[0] {
		t.Fatalf("node list not rebuilt from the copied tree")
	}
	for _, n := range q.Nodes {
		for _, c := range n.Children {
			if c.Parent != n {
				t.Errorf("node %d: child %d's Parent is not the copy", n.NodeID, c.NodeID)
			}
		}
	}
	if got := q.Root.Top.RowsText; got != "(?)" {
		t.Errorf("Top rows = %q", got)
	}
	filter := q.Nodes[1]
	if got := filter.Predicate.Args[1].Value; got != Mask {
		t.Errorf("constant = %q", got)
	}
	if got := filter.Predicate.Text; got != "[WorkDb].[dbo].[Work].[Token]=?" {
		t.Errorf("predicate = %q", got)
	}
	if got := filter.Warnings.Converts[0].Expression; strings.Contains(got, "DEADBEEF") {
		t.Errorf("convert warning = %q", got)
	}
	seek := stmts[1].QueryPlan.Root.Access.SeekPredicates[0].Keys[0].Values[0]
	if seek.Text != "(?)" || seek.Value != "(?)" {
		t.Errorf("seek value = %q / %q", seek.Text, seek.Value)
	}
	if got := stmts[1].Text; got != "/* note ? */ SELECT WorkId FROM dbo.Work WHERE Amount = ?" {
		t.Errorf("statement text = %q", got)
	}
	if got := f.Statements[0].Text; strings.Contains(got, "alice") || !strings.Contains(got, "Email = N'?'") {
		t.Errorf("summary text = %q", got)
	}
}

func TestMaskProse(t *testing.T) {
	cases := []struct {
		in   string
		keep []string
		want string
	}{
		{"compiled value (0)", nil, "compiled value (?)"},
		{"values (-1.5), (1e3) and ((7))", nil, "values (?), (?) and ((?))"},
		{"N'abc' and 'x' and n'y''z'", nil, "? and ? and ?"},
		{"binary 0x1F, not 0x or 0xZZ or ab0x12", nil, "binary ?, not 0x or 0xZZ or ab0x12"},
		{"Status = 0, x >= -2.5; y<>3", nil, "Status = ?, x >= ?; y<>?"},
		{"5,000,000 rows (62%) at node 3; error 8622; 10× under", nil, "5,000,000 rows (62%) at node 3; error 8622; 10× under"},
		{"rows = 5,000,000 and ratio > 10% and a = 2x", nil, "rows = 5,000,000 and ratio > 10% and a = 2x"},
		{"the index's filter, it's the workers' rows", nil, "the index's filter, it's the workers' rows"},
		{"an 'unclosed quote", nil, "an 'unclosed quote"},
		{"'line\nbreak'", nil, "'line\nbreak'"},
		{"filter (WHERE [Status]=(0)) vs (0)", []string{"[Status]=(0)"}, "filter (WHERE [Status]=(0)) vs (?)"},
		{"DDL CREATE INDEX i ON t (c) WHERE s = 0; then s = 0", []string{"CREATE INDEX i ON t (c) WHERE s = 0"}, "DDL CREATE INDEX i ON t (c) WHERE s = 0; then s = ?"},
		{"", nil, ""},
	}
	for _, c := range cases {
		if got := maskProse(c.in, c.keep); got != c.want {
			t.Errorf("maskProse(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRedactSQL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SELECT TOP (20) a FROM t WHERE s = 0 AND n = N'x' AND b = 0x1F", "SELECT TOP (?) a FROM t WHERE s = ? AND n = N'?' AND b = ?"},
		{"-- filter 'PENDING' = 5\nSELECT 1", "-- filter ? = ?\nSELECT ?"},
		{"/* a /* nested 'x' */ (7) */ SELECT [col 1], \"q 2\", @p3 FROM #t4", "/* a /* nested ? */ (?) */ SELECT [col 1], \"q 2\", @p3 FROM #t4"},
		{"[a--b] = 'c'", "[a--b] = '?'"},
		{"", ""},
	}
	for _, c := range cases {
		if got := redactSQL(c.in); got != c.want {
			t.Errorf("redactSQL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRedactEvidence(t *testing.T) {
	type custom struct {
		Predicate string `json:"predicate"`
		Count     int    `json:"count"`
	}
	in := map[string]any{
		"compiled_value": "(77)", "runtime_value": "", "predicate": "[a]=N'x'", "filter": "[s]=(0)",
		"suggested_index": "CREATE INDEX i ON t (c) WHERE s = 0", "note": "value (5) and 'x'", "index": "IX_1",
		"factor": 12.5, "flag": true, "list": []any{"(9)", map[string]any{"compiled_value": "(8)"}},
		"names": []string{"'a'"}, "objs": []map[string]any{{"runtime_value": "(3)"}}, "custom": custom{"[b]=5", 2},
	}
	got := redactEvidence("", in).(map[string]any)
	want := map[string]any{
		"compiled_value": Mask, "runtime_value": "", "predicate": "[a]=N'?'", "filter": "[s]=(0)",
		"suggested_index": "CREATE INDEX i ON t (c) WHERE s = 0", "note": "value (?) and ?", "index": "IX_1",
		"factor": 12.5, "flag": true, "list": []any{"(?)", map[string]any{"compiled_value": Mask}},
		"names": []string{"?"}, "objs": []map[string]any{{"runtime_value": Mask}},
		"custom": map[string]any{"predicate": "[b]=?", "count": float64(2)},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("redactEvidence:\n got %s\nwant %s", g, w)
	}
	if in["compiled_value"] != "(77)" {
		t.Errorf("the input map was changed")
	}
}

func FuzzMaskProse(f *testing.F) {
	for _, s := range []string{"compiled value (0)", "N'a''b' 'c", "x >= -2.5e3, (1.) 0xFF", "it's 62% of 5,000,000", "((0))", "= ", "(", "'", "n'"} {
		f.Add(s, "(0)")
	}
	parenNumber := regexp.MustCompile(`\([-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\)`)
	f.Fuzz(func(t *testing.T, s, keep string) {
		out := maskProse(s, nil)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("maskProse(%q) = %q is not valid UTF-8", s, out)
		}
		if parenNumber.MatchString(out) {
			t.Fatalf("maskProse(%q) = %q keeps a parenthesised number", s, out)
		}
		if again := maskProse(out, nil); again != out {
			t.Fatalf("maskProse is not idempotent on %q: %q then %q", s, out, again)
		}
		if keep != "" && strings.Contains(s, keep) && !strings.Contains(maskProse(s, []string{keep}), keep) {
			t.Fatalf("maskProse(%q, keep %q) lost the kept text", s, keep)
		}
	})
}

func FuzzRedactSQL(f *testing.F) {
	for _, s := range []string{"SELECT 1", "-- c 'x'\nSELECT N'a''b' /* (5) */", "[a]]b] \"c\"\"d\" 'e", "/* /* */", "0x 0xAB $-1.5 .5e+3 1e", "@p1 #t $x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b strings.Builder
		for _, tok := range sqlTokens(s) {
			if tok.text == "" {
				t.Fatalf("sqlTokens(%q) returned an empty token", s)
			}
			b.WriteString(tok.text)
		}
		if b.String() != s {
			t.Fatalf("sqlTokens(%q) loses text: %q", s, b.String())
		}
		out := redactSQL(s)
		if again := redactSQL(out); again != out {
			t.Fatalf("redactSQL is not idempotent on %q: %q then %q", s, out, again)
		}
	})
}

// BenchmarkFormats renders the queue fixtures (14 plans, 38 findings) in
// each format, redacting where the format does by default.
func BenchmarkFormats(b *testing.B) {
	r := queueFixtureReport(b)
	formats := []struct {
		name   string
		render func(w *bytes.Buffer) error
	}{
		{"redact", func(*bytes.Buffer) error { Redacted(r); return nil }},
		{"sarif", func(w *bytes.Buffer) error { return SARIF(w, r, SARIFOptions{BaseDir: ".."}) }},
		{"github", func(w *bytes.Buffer) error { return GitHub(w, r, GitHubOptions{BaseDir: ".."}) }},
		{"markdown", func(w *bytes.Buffer) error { return Markdown(w, r, MarkdownOptions{BaseDir: ".."}) }},
		{"html", func(w *bytes.Buffer) error { return HTML(w, r, HTMLOptions{BaseDir: ".."}) }},
		{"dot", func(w *bytes.Buffer) error { return DOT(w, r, DOTOptions{BaseDir: ".."}) }},
	}
	for _, f := range formats {
		b.Run(f.name, func(b *testing.B) {
			var w bytes.Buffer
			for i := 0; i < b.N; i++ {
				w.Reset()
				if err := f.render(&w); err != nil {
					b.Fatal(err)
				}
			}
			if w.Len() > 0 {
				b.ReportMetric(float64(w.Len()), "bytes")
			}
		})
	}
}

// TestRedactedStatementWarnings: the statement properties carry the plan's
// warnings, whose conversions quote the predicate; a redacted report masks
// them whether the statement keeps its plan or not.
func TestRedactedStatementWarnings(t *testing.T) {
	src := &plan.Statement{QueryPlan: &plan.QueryPlan{Warnings: &plan.Warnings{
		Converts: []plan.PlanAffectingConvert{{Issue: "Seek Plan", Expression: "CONVERT_IMPLICIT(nvarchar(20),[w].[Code],0)=N'secret-code'"}}}}}
	withPlan := SummarizeStatement(src, "estimated")
	noPlan := SummarizeStatement(src, "estimated")
	noPlan.Source = nil
	r := &Report{Files: []*File{{Path: "a.sqlplan", Statements: []*Statement{withPlan, noPlan}}}}
	for i, s := range Redacted(r).Files[0].Statements {
		got := strings.Join(s.Properties.Warnings, "\n")
		if strings.Contains(got, "secret-code") || !strings.Contains(got, "Type conversion (Seek Plan)") {
			t.Errorf("statement %d: redacted warnings %q", i, got)
		}
	}
	if !strings.Contains(withPlan.Properties.Warnings[0], "secret-code") {
		t.Errorf("the original report was changed: %q", withPlan.Properties.Warnings)
	}
}

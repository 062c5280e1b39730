package report

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/planlint/planlint/rules"
)

func renderMarkdown(t *testing.T, r *Report, opt MarkdownOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := Markdown(&b, r, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestMarkdownContent(t *testing.T) {
	out := renderMarkdown(t, explainReport(), MarkdownOptions{SourceURL: "https://github.com/o/r/blob/abc/"})
	if !strings.HasPrefix(out, MarkdownMarker+"\n") {
		t.Errorf("the report does not start with the marker comment:\n%.80s", out)
	}
	for _, want := range []string{
		"**1 error, 1 warning, 1 info** in 1 file; 1 of 2 files could not be analysed.",
		"| Severity | Rule | Location | Statement / node | Message |",
		"[PL201 filtered-index-parameterized](" + rules.DocURL(rules.Lookup("PL201")) + ")",
		"[`queries/poll.sql:4`](https://github.com/o/r/blob/abc/queries/poll.sql#L4-L6)",
		"[`queries/poll.sql:8`](https://github.com/o/r/blob/abc/queries/poll.sql#L8)",
		"stmt 1 node 2 Clustered Index Scan",
		"<details><summary>PL201 filtered-index-parameterized — queries/poll.sql:4, stmt 1 node 2 Clustered Index Scan</summary>",
		"### Inputs that could not be analysed",
		"- `plans/broken.sqlplan`: line 3, column 7: unexpected element &lt;Foo&gt;",
		"literals and parameter values redacted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Most severe first.
	if e, w, i := strings.Index(out, "| **error** |"), strings.Index(out, "| warning |"), strings.Index(out, "| info |"); !(e >= 0 && e < w && w < i) {
		t.Errorf("rows are not ordered error, warning, info (%d, %d, %d)", e, w, i)
	}
	clean := renderMarkdown(t, &Report{Tool: "planlint", Files: []*File{{Path: "a.sqlplan"}}}, MarkdownOptions{})
	if !strings.Contains(clean, "No findings.") || strings.Contains(clean, "| Severity |") {
		t.Errorf("a clean report should say so and have no table:\n%s", clean)
	}
}

func TestMarkdownCellEscaping(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a | b", `a \| b`},
		{"`code`", "\\`code\\`"},
		{"<script>&", "&lt;script&gt;&amp;"},
		{"IX_Work_Pending *bold* [link](x)", `IX\_Work\_Pending \*bold\* \[link\](x)`},
		{"@Status", "@&#8203;Status"},
		{"line\nbreak\r\nagain", "line<br>break<br>again"},
		{`back\slash`, `back\\slash`},
		{"# not a heading ~x~", `\# not a heading \~x\~`},
	}
	for _, c := range cases {
		if got := markdownCell(c.in); got != c.want {
			t.Errorf("markdownCell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := markdownHTML(`<b>"x" & @y`); got != "&lt;b&gt;&#34;x&#34; &amp; @&#8203;y" {
		t.Errorf("markdownHTML = %q", got)
	}
}

// TestMarkdownTableStaysATable checks that hostile messages cannot add
// columns or rows to the table.
func TestMarkdownTableStaysATable(t *testing.T) {
	r := explainReport()
	r.Files[0].Findings[0].Message = "a | b |\n| --- | injected\n<details>"
	out := renderMarkdown(t, r, MarkdownOptions{NoRedact: true})
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(line, -1))
		if cells != 6 {
			t.Errorf("table line has %d unescaped pipes, want 6: %s", cells, line)
		}
	}
	if strings.Contains(out, "<details>\n") && strings.Count(out, "<details>") != strings.Count(out, "</details>") {
		t.Errorf("unbalanced <details>")
	}
}

func TestMarkdownCap(t *testing.T) {
	r := explainReport()
	f := r.Files[0]
	base := f.Findings
	for i := 0; i < 3000; i++ {
		x := *base[i%len(base)]
		x.Message = fmt.Sprintf("finding %d: %s", i, x.Message)
		f.Findings = append(f.Findings, &x)
	}
	for _, limit := range []int{0, 20000, 3000} {
		out := renderMarkdown(t, r, MarkdownOptions{MaxLength: limit, FullReport: "the planlint.sarif artifact"})
		max := limit
		if max == 0 {
			max = DefaultMarkdownLength
		}
		if len(out) > max {
			t.Errorf("limit %d: report is %d bytes", max, len(out))
		}
		if !strings.HasPrefix(out, MarkdownMarker) {
			t.Errorf("limit %d: marker missing", max)
		}
		if !strings.Contains(out, "**Report truncated** to "+fmt.Sprint(max)) || !strings.Contains(out, "the planlint.sarif artifact") {
			t.Errorf("limit %d: truncation note missing:\n%s", max, out[len(out)-600:])
		}
		if strings.Count(out, "<details>") != strings.Count(out, "</details>") {
			t.Errorf("limit %d: a <details> section was cut", max)
		}
		if !strings.Contains(out, "| **error** |") {
			t.Errorf("limit %d: no error row kept", max)
		}
	}
	// A long pointer to the full report still fits.
	where := strings.Repeat("a very long place name ", 40)
	if out := renderMarkdown(t, r, MarkdownOptions{MaxLength: 3000, FullReport: where}); len(out) > 3000 {
		t.Errorf("with a long FullReport the report is %d bytes, over 3000", len(out))
	}
	// The note's counts add up to what is shown.
	out := renderMarkdown(t, r, MarkdownOptions{MaxLength: 20000})
	m := regexp.MustCompile(`: (\d+) of (\d+) findings`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no counts in the truncation note")
	}
	if rows := strings.Count(out, "\n| **error** |") + strings.Count(out, "\n| warning |") + strings.Count(out, "\n| info |"); fmt.Sprint(rows) != m[1] {
		t.Errorf("note says %s findings shown, the table has %d rows", m[1], rows)
	}
	if m[2] != fmt.Sprint(len(f.Findings)) {
		t.Errorf("note says %s findings in all, want %d", m[2], len(f.Findings))
	}
	// Under the limit nothing is cut.
	if full := renderMarkdown(t, explainReport(), MarkdownOptions{}); strings.Contains(full, "truncated") {
		t.Errorf("a small report was truncated")
	}
}

func TestMarkdownGolden(t *testing.T) {
	checkGolden(t, "queue.md", []byte(renderMarkdown(t, queueFixtureReport(t), MarkdownOptions{BaseDir: ".."})))
	checkGolden(t, "explain.md", []byte(renderMarkdown(t, explainReport(), MarkdownOptions{})))
}

// TestMarkdownTruncationKeepsFixes: every finding a truncated report shows
// keeps its fix (before, the table took the whole budget: "149 of 1012
// findings, 0 of 641 fixes").
func TestMarkdownTruncationKeepsFixes(t *testing.T) {
	r := explainReport()
	f := r.Files[0]
	base := f.Findings
	withFix := 0
	for i := 0; i < 1000; i++ {
		x := *base[i%len(base)]
		x.Message = fmt.Sprintf("finding %d: %s", i, x.Message)
		f.Findings = append(f.Findings, &x)
	}
	for _, x := range base {
		if x.Fix != "" {
			withFix++
		}
	}
	if withFix == 0 {
		t.Fatal("the sample report has no fix")
	}
	out := renderMarkdown(t, r, MarkdownOptions{MaxLength: 20000})
	m := regexp.MustCompile(`: (\d+) of (\d+) findings, (\d+) of (\d+) fixes`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no counts in the truncation note:\n%s", out[len(out)-400:])
	}
	shownRows, shownFixes := 0, 0
	fmt.Sscan(m[1], &shownRows)
	fmt.Sscan(m[3], &shownFixes)
	wantFixes := 0
	// The rows shown are the first ones in severity order; count their fixes.
	rows := append([]*Finding(nil), f.Findings...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Severity > rows[j].Severity })
	for _, x := range rows[:shownRows] {
		if x.Fix != "" {
			wantFixes++
		}
	}
	if shownRows == 0 || shownFixes != wantFixes {
		t.Errorf("%d findings shown with %d fixes, want %d fixes", shownRows, shownFixes, wantFixes)
	}
	if got := strings.Count(out, "<details>"); got != shownFixes {
		t.Errorf("%d fix sections, note says %d", got, shownFixes)
	}
}

package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/rules"
)

func renderGitHub(t *testing.T, r *Report, opt GitHubOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := GitHub(&b, r, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestEscapeWorkflowValues(t *testing.T) {
	cases := []struct{ in, data, prop string }{
		{"plain", "plain", "plain"},
		{"100%", "100%25", "100%25"},
		{"a\nb\r\nc", "a%0Ab%0D%0Ac", "a%0Ab%0D%0Ac"},
		{"x: y, z", "x: y, z", "x%3A y%2C z"},
		{"%0A is not a newline", "%250A is not a newline", "%250A is not a newline"},
		{"::error::injected", "::error::injected", "%3A%3Aerror%3A%3Ainjected"},
		{"", "", ""},
	}
	for _, c := range cases {
		if got := EscapeData(c.in); got != c.data {
			t.Errorf("EscapeData(%q) = %q, want %q", c.in, got, c.data)
		}
		if got := EscapeProperty(c.in); got != c.prop {
			t.Errorf("EscapeProperty(%q) = %q, want %q", c.in, got, c.prop)
		}
	}
}

func TestWorkflowCommand(t *testing.T) {
	got := workflowCommand("warning", [][2]string{{"file", "dir/a,b:c.sql"}, {"line", "3"}, {"title", "PL101 x"}}, "one\ntwo 50%")
	want := "::warning file=dir/a%2Cb%3Ac.sql,line=3,title=PL101 x::one%0Atwo 50%25"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestGitHubAnnotations(t *testing.T) {
	out := renderGitHub(t, explainReport(), GitHubOptions{})
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []string{
		"::error file=plans/broken.sqlplan,title=planlint could not analyse this file::",
		"::error file=queries/poll.sql,line=4,endLine=6,title=PL201 filtered-index-parameterized::stmt 1 node 2 Clustered Index Scan: ",
		"::warning file=queries/poll.sql,line=4,endLine=6,title=PL104 row-estimate-skew::stmt 1 node 1 Filter: ",
		"::notice file=queries/poll.sql,line=8,endLine=8,col=5,endColumn=60,title=PL204 queue-claim-not-atomic::stmt 2: ",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d:\n got %s\nwant prefix %s", i+1, lines[i], w)
		}
	}
	if !strings.Contains(lines[1], "%0AFix: ") || !strings.Contains(lines[1], "%0ADocs: "+rules.DocURL(rules.Lookup("PL201"))) {
		t.Errorf("the error annotation lacks its fix or doc link: %s", lines[1])
	}
	// Plan files without source locations annotate the file itself.
	for _, line := range strings.Split(strings.TrimSpace(renderGitHub(t, queueFixtureReport(t), GitHubOptions{BaseDir: "..", MaxNotices: -1, MaxErrors: -1, MaxWarnings: -1})), "\n") {
		if !strings.Contains(line, " file=fixtures/queue/") || strings.Contains(line, "line=") {
			t.Errorf("plan-file annotation should name the file and no line: %s", line)
		}
	}
}

func TestGitHubCaps(t *testing.T) {
	r := explainReport()
	f := r.Files[0]
	base := f.Findings
	f.Findings = nil
	for i := 0; i < 15; i++ {
		f.Findings = append(f.Findings, base...) // 15 of each level
	}
	count := func(out, level string) int {
		return strings.Count(out, "\n::"+level+" ") + boolInt(strings.HasPrefix(out, "::"+level+" "))
	}

	out := renderGitHub(t, r, GitHubOptions{FullReport: "the planlint-report artifact"})
	// The failed input is one of the ten errors.
	if e, w, n := count(out, "error"), count(out, "warning"), count(out, "notice"); e != 10 || w != 10 || n != 11 {
		t.Errorf("default caps: %d errors, %d warnings, %d notices; want 10, 10, 10 + the closing notice", e, w, n)
	}
	last := out[strings.LastIndex(strings.TrimSuffix(out, "\n"), "\n")+1:]
	if !strings.HasPrefix(last, "::notice title=planlint::16 more findings not annotated (6 errors, 5 warnings, 5 notices over the per-level cap); the full report is in the planlint-report artifact") {
		t.Errorf("closing notice = %s", last)
	}

	out = renderGitHub(t, r, GitHubOptions{MaxErrors: 2, MaxWarnings: -1, MaxNotices: 1, SummaryPath: filepath.Join(t.TempDir(), "s.md")})
	if e, w, n := count(out, "error"), count(out, "warning"), count(out, "notice"); e != 2 || w != 15 || n != 2 {
		t.Errorf("custom caps: %d errors, %d warnings, %d notices; want 2, 15, 1 + the closing notice", e, w, n)
	}
	if !strings.Contains(out, "the full report is in the job summary") {
		t.Errorf("with a job summary the notice should point there:\n%s", out[strings.LastIndex(out, "::notice"):])
	}

	if out := renderGitHub(t, explainReport(), GitHubOptions{}); strings.Contains(out, "not annotated") {
		t.Errorf("no closing notice is due when nothing was left out")
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestGitHubSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "step_summary.md")
	if err := os.WriteFile(path, []byte("earlier step output\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	renderGitHub(t, explainReport(), GitHubOptions{SummaryPath: path})
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(raw)
	if !strings.HasPrefix(got, "earlier step output\n"+MarkdownMarker) {
		t.Errorf("the summary was not appended after the existing content:\n%.200s", got)
	}
	if !strings.Contains(got, "| **error** |") {
		t.Errorf("the summary lacks the findings table")
	}

	// A huge report is cut well under GitHub's 1 MiB step summary limit.
	r := explainReport()
	for i := 0; i < 5000; i++ {
		r.Files[0].Findings = append(r.Files[0].Findings, r.Files[0].Findings[i%3])
	}
	big := filepath.Join(t.TempDir(), "big.md")
	renderGitHub(t, r, GitHubOptions{SummaryPath: big})
	st, err := os.Stat(big)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > DefaultSummaryLimit || st.Size() < DefaultSummaryLimit/2 {
		t.Errorf("summary is %d bytes, want at most %d and not much less", st.Size(), DefaultSummaryLimit)
	}
	raw, _ = os.ReadFile(big)
	if !strings.Contains(string(raw), "**Report truncated**") {
		t.Errorf("the cut summary has no truncation note")
	}

	err = GitHub(&bytes.Buffer{}, explainReport(), GitHubOptions{SummaryPath: filepath.Join(t.TempDir(), "missing", "dir", "s.md")})
	if err == nil || !strings.Contains(err.Error(), "job summary") {
		t.Errorf("an unwritable summary path should fail clearly, got %v", err)
	}
}

func TestGitHubGolden(t *testing.T) {
	checkGolden(t, "queue.github", []byte(renderGitHub(t, queueFixtureReport(t), GitHubOptions{BaseDir: ".."})))
	checkGolden(t, "explain.github", []byte(renderGitHub(t, explainReport(), GitHubOptions{})))
}

func FuzzEscapeData(f *testing.F) {
	for _, s := range []string{"", "a%b", "line\nbreak\r\n", "x: y, z", "%0A", "::error::"} {
		f.Add(s)
	}
	unescape := strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%")
	f.Fuzz(func(t *testing.T, s string) {
		for name, esc := range map[string]func(string) string{"data": EscapeData, "property": EscapeProperty} {
			got := esc(s)
			if strings.ContainsAny(got, "\r\n") {
				t.Fatalf("%s escape of %q keeps a line break: %q", name, s, got)
			}
			if name == "property" && strings.ContainsAny(got, ":,") {
				t.Fatalf("property escape of %q keeps a separator: %q", s, got)
			}
			if back := unescape.Replace(got); back != s {
				t.Fatalf("%s escape of %q does not round-trip: %q -> %q", name, s, got, back)
			}
		}
	})
}

package report

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/planlint/planlint/rules"
)

// TestSummaryWording: the summary line of every human format says what a
// user understands when inputs could not be analysed — never "0 errors in
// 1 file" about a file nobody read.
func TestSummaryWording(t *testing.T) {
	broken := "no such file"
	bad := func(path string) *File { return &File{Path: path, Error: &broken} }
	good := func(path string, sev ...rules.Severity) *File {
		f := &File{Path: path}
		for _, s := range sev {
			f.Findings = append(f.Findings, &Finding{Finding: rules.Finding{Rule: "key-lookup", Code: "PL102", Severity: s, Message: "m"}})
		}
		return f
	}
	pulled := func(f *File) *File {
		f.Statements = []*Statement{{Batch: 1, StatementID: 1, Runtime: &Runtime{Executions: 3}}}
		return f
	}
	tests := []struct {
		name     string
		files    []*File
		text     string // the whole text summary line
		markdown string // the Markdown summary sentence
		html     string // the HTML summary paragraph, up to the version
	}{
		{"one file, analysed", []*File{good("a.sqlplan", rules.Error)},
			"1 error, 0 warnings, 0 infos in 1 file",
			"**1 error, 0 warnings, 0 infos** in 1 file.",
			`<span class="count sev-error">1 error</span> <span class="count sev-warning">0 warnings</span> <span class="count sev-info">0 infos</span> in 1 file`},
		{"the configuration file's entry is not an input", []*File{good("a.sqlplan"), {Path: ".planlint.yaml", Config: true,
			Findings: []*Finding{{Finding: rules.Finding{Rule: "unused-suppression", Code: "PL001", Severity: rules.Warning, Message: "m"}}}}},
			"0 errors, 1 warning, 0 infos in 1 file",
			"**0 errors, 1 warning, 0 infos** in 1 file.",
			`<span class="count sev-error">0 errors</span> <span class="count sev-warning">1 warning</span> <span class="count sev-info">0 infos</span> in 1 file`},
		{"no file at all", nil,
			"nothing to analyse",
			"Nothing to analyse.",
			`<span class="failed">Nothing to analyse</span>`},
		{"one file, not analysed", []*File{bad("/nonexist.sqlplan")},
			"no file could be analysed",
			"No file could be analysed.",
			`<span class="failed">No file could be analysed</span>`},
		{"three files, none analysed", []*File{bad("a"), bad("b"), bad("c")},
			"none of the 3 files could be analysed",
			"None of the 3 files could be analysed.",
			`<span class="failed">None of the 3 files could be analysed</span>`},
		{"one of three not analysed", []*File{good("a", rules.Warning), bad("b"), good("c")},
			"0 errors, 1 warning, 0 infos in 2 files; 1 of 3 files could not be analysed",
			"**0 errors, 1 warning, 0 infos** in 2 files; 1 of 3 files could not be analysed.",
			`<span class="count sev-info">0 infos</span> in 2 files; <span class="failed">1 of 3 files could not be analysed</span>`},
		{"two of three not analysed", []*File{bad("a"), bad("b"), good("c")},
			"0 errors, 0 warnings, 0 infos in 1 file; 2 of 3 files could not be analysed",
			"**0 errors, 0 warnings, 0 infos** in 1 file; 2 of 3 files could not be analysed.",
			`in 1 file; <span class="failed">2 of 3 files could not be analysed</span>`},
		{"statements from the plan cache", []*File{pulled(good("cache:0x1", rules.Info)), pulled(bad("cache:0x2"))},
			"0 errors, 0 warnings, 1 info in 1 statement; 1 of 2 statements could not be analysed",
			"**0 errors, 0 warnings, 1 info** in 1 statement; 1 of 2 statements could not be analysed.",
			`in 1 statement; <span class="failed">1 of 2 statements could not be analysed</span>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Tool: "planlint", Files: tt.files}
			var b bytes.Buffer
			if err := Text(&b, r, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(b.String()), "\n")
			if !containsLine(lines, tt.text) {
				t.Errorf("text summary: want the line %q in\n%s", tt.text, b.String())
			}
			md := renderMarkdown(t, r, MarkdownOptions{})
			if !strings.Contains(md, "\n"+tt.markdown+"\n") {
				t.Errorf("markdown summary: want %q in\n%s", tt.markdown, md)
			}
			summary := filepath.Join(t.TempDir(), "summary.md")
			if err := GitHub(&bytes.Buffer{}, r, GitHubOptions{SummaryPath: summary}); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(summary); err != nil || !strings.Contains(string(got), "\n"+tt.markdown+"\n") {
				t.Errorf("github job summary: want %q in\n%s (%v)", tt.markdown, got, err)
			}
			b.Reset()
			if err := HTML(&b, r, HTMLOptions{}); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			start := strings.Index(page, `<p class="summary">`)
			end := strings.Index(page[max(start, 0):], "</p>")
			if start < 0 || end < 0 || !strings.Contains(page[start:start+end], tt.html) {
				t.Errorf("html summary: want %q in %q", tt.html, page[max(start, 0):max(start, 0)+max(end, 0)])
			}
		})
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// TestNoOneWithAPluralNoun: no rendered output says "1 threads" or "1
// executions" — checked over every golden file of the renderers and the
// commands.
func TestNoOneWithAPluralNoun(t *testing.T) {
	bad := regexp.MustCompile(`(^|[^0-9.,])1 (threads|rows|executions|files|statements|errors|warnings|findings|branches|plans|pages|batches|operators|spills)\b`)
	n := 0
	for _, dir := range []string{"testdata/golden", "../cli/testdata/golden"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			n++
			for i, line := range strings.Split(string(b), "\n") {
				if m := bad.FindString(line); m != "" {
					t.Errorf("%s:%d: %q", path, i+1, strings.TrimSpace(m))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Fatal("no golden files read")
	}
}

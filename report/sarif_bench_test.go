package report

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/plangen"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/rules"
)

// statementsReport is the report of plangen.Statements(n): n statements,
// each with findings, in one file.
func statementsReport(tb testing.TB, n int) *Report {
	tb.Helper()
	doc, err := plan.Parse(strings.NewReader(plangen.Statements(n)), plan.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	f := &File{Path: "st.sqlplan", Statements: Summarize(doc), Findings: []*Finding{}}
	for _, s := range doc.Statements() {
		fs, err := rules.AnalyzeStatement(doc, s, nil, nil)
		if err != nil {
			tb.Fatal(err)
		}
		f.Findings = append(f.Findings, Wrap(fs)...)
	}
	return &Report{Tool: "planlint", Version: "v0", Files: []*File{f}}
}

// BenchmarkSarif renders SARIF for files of 2,500 to 20,000 statements:
// ns/op should double with the size (bench/scaling prints the slope of
// the whole binary).
func BenchmarkSarif(b *testing.B) {
	for _, n := range []int{2500, 5000, 10000, 20000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := statementsReport(b, n)
			b.ResetTimer()
			for b.Loop() {
				if err := SARIF(io.Discard, r, SARIFOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

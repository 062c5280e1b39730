package rules

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
)

// TestStreamMatchesStatementByStatement: Analyze, which reads each
// statement's facts once through a Stream, and AnalyzeStatement, which reads
// them from the document for every statement, give the same findings on
// the corpus plans with several statements, with a configured severity
// override applied to the findings decided across statements too.
func TestStreamMatchesStatementByStatement(t *testing.T) {
	dir := sharedtest.Require(t, "corpus/plans")
	paths, _ := filepath.Glob(filepath.Join(dir, "*"))
	cfg := &Config{Severity: map[string]Severity{"set-options": Error}}
	compared := 0
	for _, path := range paths {
		doc, err := plan.ParseFile(path, plan.Options{})
		if err != nil || len(doc.Statements()) < 2 {
			continue
		}
		compared++
		got, err := Analyze(doc, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var want []Finding
		for _, s := range doc.Statements() {
			fs, err := AnalyzeStatement(doc, s, nil, cfg)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, fs...)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Analyze gives %d findings, statement by statement %d", filepath.Base(path), len(got), len(want))
			for i := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("first difference:\n got %+v\nwant %+v", got[i], want[i])
					break
				}
			}
		}
		for _, f := range got {
			if f.Rule == SetOptions.Name && f.Severity != Error {
				t.Errorf("%s: set-options at %s despite the override", filepath.Base(path), f.Severity)
			}
		}
	}
	if compared == 0 {
		t.Fatal("no corpus plan with several statements")
	}
}

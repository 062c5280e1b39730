package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/report"
)

// TestStreamedFindingsMatchDocument: a plan streamed statement by statement
// (files over wholeDocumentBytes) gets the findings of the same plan parsed
// whole, on every corpus and fixture plan with several statements in a
// batch. The stream used to report SET options once per statement and could
// not count a missing-index request's later repeats nor a MAXDOP setting's
// other statements.
func TestStreamedFindingsMatchDocument(t *testing.T) {
	var paths []string
	if dir := sharedtest.Dir(); dir != "" {
		m, _ := filepath.Glob(filepath.Join(dir, "corpus", "plans", "*"))
		paths = append(paths, m...)
	} else {
		t.Log("shared corpus not found: fixtures only")
	}
	_ = filepath.WalkDir(filepath.Join("..", "fixtures"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".sqlplan") || strings.HasSuffix(p, ".xml")) {
			paths = append(paths, p)
		}
		return nil
	})
	a := &analyzer{}
	analyse := func(t *testing.T, path string, threshold int64) *report.File {
		t.Helper()
		old := wholeDocumentBytes
		wholeDocumentBytes = threshold
		defer func() { wholeDocumentBytes = old }()
		r, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		st, err := r.Stat()
		if err != nil {
			t.Fatal(err)
		}
		f, err := a.streamSized(path, r, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	compared, across := 0, 0
	for _, path := range paths {
		doc, err := plan.ParseFile(path, plan.Options{})
		if err != nil || !severalPerBatch(doc) {
			continue
		}
		compared++
		whole := analyse(t, path, 1<<62)
		streamed := analyse(t, path, -1) // every file is streamed
		if whole.Error != nil || streamed.Error != nil {
			t.Errorf("%s: errors %v / %v", path, whole.Error, streamed.Error)
			continue
		}
		w, s := findingsJSON(t, whole), findingsJSON(t, streamed)
		if w != s {
			t.Errorf("%s: streamed findings differ from the whole document's:\nwhole:\n%s\nstreamed:\n%s", path, w, s)
		}
		for _, x := range whole.Findings {
			if n, _ := x.Evidence["statements"].(int); x.Code == "PL105" && n > 1 || x.Evidence["also_requested_by_statements"] != nil || x.Evidence["other_statements"] != nil {
				across++
				break
			}
		}
	}
	t.Logf("%d plans with several statements per batch compared, %d with a finding decided across statements", compared, across)
	if compared == 0 || across == 0 && sharedtest.Dir() != "" {
		t.Fatalf("the comparison covered %d plans and %d cross-statement findings: it tests nothing", compared, across)
	}
}

// severalPerBatch reports a document with a batch of two or more statements.
func severalPerBatch(doc *plan.Document) bool {
	n := map[int]int{}
	for _, s := range doc.Statements() {
		n[s.Batch]++
		if n[s.Batch] > 1 {
			return true
		}
	}
	return false
}

func findingsJSON(t *testing.T, f *report.File) string {
	t.Helper()
	var lines []string
	for _, x := range f.Findings {
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	return strings.Join(lines, "\n")
}

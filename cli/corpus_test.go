package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/antchfx/xmlquery"
	"golang.org/x/text/encoding/unicode"

	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/report"
)

// utf8Text decodes a plan file to UTF-8 and drops its XML declaration,
// whose encoding label is often wrong. Independent of package plan.
func utf8Text(t *testing.T, b []byte) []byte {
	t.Helper()
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}), bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		dec := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewDecoder()
		out, err := dec.Bytes(b)
		if err != nil {
			t.Fatalf("utf-16: %v", err)
		}
		b = out
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		b = b[3:]
	}
	return regexp.MustCompile(`^\s*<\?xml[^?]*\?>`).ReplaceAll(b, nil)
}

type site struct {
	rule        string
	batch, stmt int
	node        int // -1 for statement level
}

func (s site) String() string {
	return fmt.Sprintf("%s batch %d stmt %d node %d", s.rule, s.batch, s.stmt, s.node)
}

// expectedSites finds, with XPath over a generic DOM, every Key/RID Lookup,
// Sort and UnmatchedIndexes occurrence and where it must be reported:
// all but lookups into system tables (sys.*), which nobody can index, and
// the constant-row sorts of a dynamic seek (Sort under Merge Interval).
func expectedSites(t *testing.T, doc *xmlquery.Node) []site {
	batches := xmlquery.Find(doc, "//*[local-name()='Batch']")
	batchIndex := map[*xmlquery.Node]int{}
	for i, b := range batches {
		batchIndex[b] = i + 1
	}
	locate := func(n *xmlquery.Node) (int, int) {
		stmt, batch := -1, -1
		for p := n.Parent; p != nil; p = p.Parent {
			if stmt < 0 && p.SelectAttr("StatementId") != "" {
				stmt, _ = strconv.Atoi(p.SelectAttr("StatementId"))
			}
			if i, ok := batchIndex[p]; ok {
				batch = i
				break
			}
		}
		return batch, stmt
	}
	var out []site
	add := func(rule, xpath string, statementLevel bool) {
		for _, n := range xmlquery.Find(doc, xpath) {
			b, s := locate(n)
			node := -1
			if !statementLevel {
				node, _ = strconv.Atoi(n.SelectAttr("NodeId"))
			}
			out = append(out, site{rule, b, s, node})
		}
	}
	add("key-lookup", "//*[local-name()='RelOp'][@PhysicalOp='RID Lookup' or *[local-name()='IndexScan'][@Lookup='1' or @Lookup='true']]"+
		"[not(.//*[local-name()='Object'][@Schema='[sys]'])]", false)
	add("residual-sort", "//*[local-name()='RelOp'][@PhysicalOp='Sort'][not(../../@PhysicalOp='Merge Interval')]", false)
	add("unmatched-indexes", "//*[local-name()='QueryPlan'][*[local-name()='UnmatchedIndexes'] or *[local-name()='Warnings'][@UnmatchedIndexes='1' or @UnmatchedIndexes='true']]", true)
	return out
}

func TestCorpusFindingsCoverEveryLookupSortAndUnmatchedIndex(t *testing.T) {
	files := sharedtest.Files(t, "corpus/plans")
	a := &analyzer{}
	totals := map[string]int{}
	for _, path := range files {
		f, err := a.one(input{path: path, open: func() (io.ReadCloser, error) { return os.Open(path) }}, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if f.Error != nil {
			t.Errorf("%s: parse error: %s", filepath.Base(path), *f.Error)
			continue
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := xmlquery.Parse(bytes.NewReader(utf8Text(t, raw)))
		if err != nil {
			t.Fatalf("%s: xmlquery: %v", path, err)
		}
		got := map[site]bool{}
		for _, x := range f.Findings {
			node := -1
			if x.NodeID != nil {
				node = *x.NodeID
			}
			got[site{x.Rule, x.Batch, x.StatementID, node}] = true
		}
		for _, want := range expectedSites(t, doc) {
			totals[want.rule]++
			if !got[want] {
				t.Errorf("%s: no finding for %s", filepath.Base(path), want)
			}
		}
	}
	t.Logf("checked %d files: %v", len(files), totals)
	if totals["key-lookup"] == 0 || totals["residual-sort"] == 0 || totals["unmatched-indexes"] == 0 {
		t.Errorf("the corpus should contain lookups, sorts and unmatched indexes; found %v", totals)
	}
}

// TestCorpusOddFilesNeverPanic runs check over the awkward files: each one
// gives findings or a clear error.
func TestCorpusOddFilesNeverPanic(t *testing.T) {
	files := sharedtest.Files(t, "corpus/odd")
	a := &analyzer{keepPlans: true}
	for _, path := range files {
		f, err := a.one(input{path: path, open: func() (io.ReadCloser, error) { return os.Open(path) }}, nil)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
			continue
		}
		if f.Error != nil {
			if *f.Error == "" {
				t.Errorf("%s: empty error message", filepath.Base(path))
			}
			continue
		}
		var buf bytes.Buffer
		if err := report.Text(&buf, &report.Report{Files: []*report.File{f}}, report.TextOptions{Tree: true}); err != nil {
			t.Errorf("%s: rendering: %v", filepath.Base(path), err)
		}
	}
}

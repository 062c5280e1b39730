package plan

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// sharedDir locates the shared test material: $PLANLINT_SHARED, or the
// directory "shared" next to the repository root. It skips the test when
// neither exists.
func sharedDir(tb testing.TB) string {
	tb.Helper()
	dir, reason := locateShared()
	if dir == "" {
		tb.Skip(reason)
	}
	return dir
}

// locateShared returns the shared folder, or "" and why it is missing.
func locateShared() (dir, reason string) {
	if d := os.Getenv("PLANLINT_SHARED"); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d, ""
		}
		return "", "PLANLINT_SHARED=" + d + " is not a directory; skipping tests on the shared corpus"
	}
	root, err := os.Getwd()
	if err != nil {
		return "", "cannot locate the repository root: " + err.Error()
	}
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", "go.mod not found above the working directory; skipping tests on the shared corpus"
		}
		root = parent
	}
	d := filepath.Join(filepath.Dir(root), "shared")
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return "", "shared test material not found (set PLANLINT_SHARED or provide " + d + "); skipping"
	}
	return d, ""
}

// corpusFiles lists the files of a corpus subfolder, sorted.
func corpusFiles(tb testing.TB, sub string) []string {
	tb.Helper()
	dir := filepath.Join(sharedDir(tb), "corpus", sub)
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Skipf("corpus folder %s not readable: %v", dir, err)
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		tb.Skipf("corpus folder %s is empty", dir)
	}
	return files
}

// utf8Text decodes a file's bytes to UTF-8 with golang.org/x/text, without
// using the package's own transcoder.
func utf8Text(tb testing.TB, b []byte) []byte {
	tb.Helper()
	dec := unicode.BOMOverride(unicode.UTF8.NewDecoder())
	out, _, err := transform.Bytes(dec, b)
	if err != nil {
		tb.Fatalf("transcoding: %v", err)
	}
	return out
}

// relOpPositions lists the line and column of every RelOp start tag, found
// with a plain encoding/xml token loop and counted from byte offsets.
func relOpPositions(tb testing.TB, text []byte) []Pos {
	tb.Helper()
	d := xml.NewDecoder(bytes.NewReader(text))
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	var out []Pos
	line, lineStart, counted := 1, 0, 0
	for {
		off := int(d.InputOffset())
		tok, err := d.RawToken()
		if err == io.EOF {
			return out
		}
		if err != nil {
			tb.Fatalf("token loop: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "RelOp" {
			for i := counted; i < off; i++ {
				if text[i] == '\n' {
					line, lineStart = line+1, i+1
				}
			}
			counted = off
			out = append(out, Pos{Line: line, Column: off - lineStart + 1})
		}
	}
}

// modelPositions lists the positions of every RelOp in the model, sorted.
func modelPositions(doc *Document) []Pos {
	var out []Pos
	for _, s := range doc.Statements() {
		for _, q := range s.Plans() {
			for _, n := range q.Nodes {
				out = append(out, n.Pos)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Column < out[j].Column
	})
	return out
}

// modelNodes sums len(Nodes) over every plan reachable in the document.
func modelNodes(doc *Document) int {
	n := 0
	for _, s := range doc.Statements() {
		n += s.NodeCount()
	}
	return n
}

func TestCorpusPlans(t *testing.T) {
	files := corpusFiles(t, "plans")
	total := 0
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := Parse(bytes.NewReader(raw), Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			positions := relOpPositions(t, utf8Text(t, raw))
			want := len(positions)
			if got := modelNodes(doc); got != want {
				t.Errorf("model has %d RelOps in Nodes, the file has %d", got, want)
			} else if got := modelPositions(doc); !reflect.DeepEqual(got, positions) {
				for i := range got {
					if got[i] != positions[i] {
						t.Errorf("RelOp %d of %d is at %+v in the model, %+v in the file", i+1, want, got[i], positions[i])
						break
					}
				}
			}
			total += want
			checkTree(t, doc)

			// Stream must deliver the same statements.
			var streamed []*Statement
			h, err := Stream(bytes.NewReader(raw), Options{}, func(s *Statement) error {
				streamed = append(streamed, s)
				return nil
			})
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if h.Version != doc.Version || h.Build != doc.Build || h.Batches != len(doc.Batches) {
				t.Errorf("Stream header %+v, Parse has %q %q %d batches", h, doc.Version, doc.Build, len(doc.Batches))
			}
			var parsed []*Statement
			for _, b := range doc.Batches {
				parsed = append(parsed, b.Statements...)
			}
			if len(streamed) != len(parsed) {
				t.Fatalf("Stream delivered %d statements, Parse has %d", len(streamed), len(parsed))
			}
			for i := range parsed {
				if a, b := summary(streamed[i]), summary(parsed[i]); a != b {
					t.Errorf("statement %d: Stream %+v, Parse %+v", i, a, b)
				}
			}
		})
	}
	t.Logf("%d files, %d RelOps", len(files), total)
}

type stmtSummary struct {
	Kind, Text string
	Batch      int
	Nodes      int
	Children   int
}

func summary(s *Statement) stmtSummary {
	return stmtSummary{s.Kind, s.Text, s.Batch, treeNodes(s), len(s.Children)}
}

// treeNodes counts the RelOps of a statement and of every statement nested
// in it.
func treeNodes(s *Statement) int {
	n := s.NodeCount()
	for _, c := range s.Children {
		n += treeNodes(c)
	}
	return n
}

// checkTree verifies the links the decoder sets: Parent and Batch on
// statements, Parent and Children on operators, Nodes in pre-order.
func checkTree(t *testing.T, doc *Document) {
	t.Helper()
	for bi, b := range doc.Batches {
		if b.Index != bi+1 {
			t.Errorf("batch %d has Index %d", bi+1, b.Index)
		}
		for _, s := range b.Statements {
			if s.Parent != nil {
				t.Errorf("top-level statement %q has a parent", s.Text)
			}
			checkStatement(t, s, b.Index)
		}
	}
}

func checkStatement(t *testing.T, s *Statement, batch int) {
	t.Helper()
	if s.Batch != batch {
		t.Errorf("statement %q: Batch %d, want %d", s.Text, s.Batch, batch)
	}
	if len(s.Children) != len(s.ChildBranch) {
		t.Errorf("statement %q: %d children but %d branch names", s.Text, len(s.Children), len(s.ChildBranch))
	}
	for _, c := range s.Children {
		if c.Parent != s {
			t.Errorf("child %q of %q has the wrong Parent", c.Text, s.Text)
		}
		checkStatement(t, c, batch)
	}
	for _, lp := range s.Plans() {
		if lp.Root == nil {
			if len(lp.Nodes) != 0 {
				t.Errorf("plan without Root has %d nodes", len(lp.Nodes))
			}
			continue
		}
		var pre []*RelOp
		lp.Root.Walk(func(r *RelOp) bool {
			pre = append(pre, r)
			for _, c := range r.Children {
				if c.Parent != r {
					t.Errorf("node %d: child %d has the wrong Parent", r.NodeID, c.NodeID)
				}
			}
			return true
		})
		if lp.Root.Parent != nil {
			t.Errorf("root node %d has a parent", lp.Root.NodeID)
		}
		if len(pre) != len(lp.Nodes) {
			t.Fatalf("walk finds %d nodes, Nodes has %d", len(pre), len(lp.Nodes))
		}
		for i := range pre {
			if pre[i] != lp.Nodes[i] {
				t.Fatalf("Nodes[%d] is node %d, pre-order walk has node %d", i, lp.Nodes[i].NodeID, pre[i].NodeID)
			}
		}
	}
}

func TestCorpusOdd(t *testing.T) {
	for _, path := range corpusFiles(t, "odd") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			doc, err := ParseFile(path, Options{})
			if err != nil {
				var pe *Error
				var le *LimitError
				if !errors.As(err, &pe) && !errors.As(err, &le) {
					t.Fatalf("error is neither *Error nor *LimitError: %T %v", err, err)
				}
				t.Logf("rejected: %v", err)
				return
			}
			checkTree(t, doc)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if want, got := len(relOpPositions(t, utf8Text(t, raw))), modelNodes(doc); got != want {
				t.Errorf("model has %d RelOps in Nodes, the file has %d", got, want)
			}
		})
	}
}

// TestCorpusDepth reports the deepest element nesting in the corpus and
// checks that it is far below DefaultMaxDepth.
func TestCorpusDepth(t *testing.T) {
	deepest, where := 0, ""
	files := corpusFiles(t, "plans")
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		d := xml.NewDecoder(bytes.NewReader(utf8Text(t, raw)))
		d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
		depth := 0
		for {
			tok, err := d.RawToken()
			if err != nil {
				break
			}
			switch tok.(type) {
			case xml.StartElement:
				depth++
				if depth > deepest {
					deepest, where = depth, path
				}
			case xml.EndElement:
				depth--
			}
		}
	}
	t.Logf("deepest element nesting in the corpus: %d levels (%s)", deepest, filepath.Base(where))
	if deepest*4 > DefaultMaxDepth {
		t.Errorf("corpus nests %d levels, too close to DefaultMaxDepth %d", deepest, DefaultMaxDepth)
	}
	// The limit is exact: the deepest plan decodes at its own depth and
	// fails one level below it.
	if _, err := ParseFile(where, Options{MaxDepth: deepest}); err != nil {
		t.Errorf("MaxDepth %d: %v", deepest, err)
	}
	_, err := ParseFile(where, Options{MaxDepth: deepest - 1})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitDepth || le.Max != int64(deepest-1) {
		t.Errorf("MaxDepth %d: got %v, want a depth LimitError", deepest-1, err)
	}
}

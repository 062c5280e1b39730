package sqlscript

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

// sharedDir finds the shared material: $PLANLINT_SHARED, or the directory
// "shared" next to the repository root. It skips the test when absent.
func sharedDir(t testing.TB) string {
	t.Helper()
	sharedtest.Require(t, "corpus/plans")
	return sharedtest.Dir()
}

// planBatches returns the StatementText of every statement of each batch of
// a showplan file, in document order.
func planBatches(t testing.TB, path string) [][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text, err := decodeSource(raw)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	d := xml.NewDecoder(strings.NewReader(text))
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil } // already decoded
	var batches [][]string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if se.Name.Local == "Batch" {
			batches = append(batches, nil)
		}
		for _, a := range se.Attr {
			if a.Name.Local == "StatementText" && len(batches) > 0 && strings.HasPrefix(se.Name.Local, "Stmt") {
				batches[len(batches)-1] = append(batches[len(batches)-1], a.Value)
			}
		}
	}
	return batches
}

func corpusBatches(t testing.TB) map[string][][]string {
	files, err := filepath.Glob(filepath.Join(sharedDir(t), "corpus", "plans", "*"))
	if err != nil || len(files) == 0 {
		t.Skipf("no plans in the shared corpus (%v)", err)
	}
	out := map[string][][]string{}
	for _, f := range files {
		out[filepath.Base(f)] = planBatches(t, f)
	}
	return out
}

// TestCorpusStatementTexts runs the statement helpers on every
// StatementText of the shared corpus.
func TestCorpusStatementTexts(t *testing.T) {
	n, parsedClean := 0, 0
	for file, batches := range corpusBatches(t) {
		for _, stmts := range batches {
			for _, st := range stmts {
				n++
				fp := Fingerprint(st)
				if Fingerprint(respace(st)) != fp {
					t.Errorf("%s: whitespace changes the fingerprint of %.80q", file, st)
				}
				for _, tk := range lex(Redact(st)) {
					if tk.Literal() && unquote(tk) != "?" {
						t.Errorf("%s: Redact left %q in %.80q", file, tk.Text, st)
					}
				}
				s, err := Parse(file, []byte(st))
				if s == nil {
					t.Fatalf("%s: %v", file, err)
				}
				if err == nil {
					parsedClean++
				}
				for _, b := range s.Batches {
					for _, x := range b.Statements {
						x.NotRollbackable()
					}
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d statement texts found in the corpus", n)
	}
	t.Logf("%d statement texts; %d parse without error diagnostics", n, parsedClean)
}

// TestCorpusLocate rebuilds each plan batch from its consecutive statement
// texts, converts its line endings, and finds every statement again.
func TestCorpusLocate(t *testing.T) {
	found := 0
	for file, batches := range corpusBatches(t) {
		for bi, stmts := range batches {
			var hay bytes.Buffer
			var want []int // expected start of each statement's first non-space byte
			for _, st := range stmts {
				lf := strings.ReplaceAll(st, "\r\n", "\n")
				want = append(want, hay.Len()+len(lf)-len(strings.TrimLeft(lf, " \t\r\n")))
				hay.WriteString(lf)
			}
			from := 0
			for i, st := range stmts {
				if strings.TrimSpace(st) == "" {
					continue
				}
				start, end, ok := Locate(hay.String(), st, from)
				if !ok {
					t.Errorf("%s batch %d: statement %d not found", file, bi+1, i+1)
					break
				}
				if start != want[i] {
					t.Errorf("%s batch %d: statement %d found at %d, want %d", file, bi+1, i+1, start, want[i])
				}
				from = end
				found++
			}
		}
	}
	t.Logf("located %d statements", found)
}

// TestCorpusStatementBoundaries checks that the statement splitter finds
// the statement boundaries SQL Server reports in multi-statement plans.
func TestCorpusStatementBoundaries(t *testing.T) {
	markers := setOf("BEGIN", "END", "ELSE", "TRY", "CATCH")
	total, hit, ourTotal, ourHit := 0, 0, 0, 0
	for file, batches := range corpusBatches(t) {
		for _, stmts := range batches {
			if len(stmts) < 2 {
				continue
			}
			text := strings.Join(stmts, "")
			ours := map[int]bool{}
			toks := code(lex(text))
			if len(toks) == 0 || wholeBatch(windowOf(toks)) {
				continue // a module body: one statement by design
			}
			for _, sp := range splitStatements(toks) {
				ours[toks[sp.first].Start] = true
			}
			theirs := map[int]bool{}
			off := 0
			for _, st := range stmts {
				// the plan's statement starts at its first code token that
				// is not a block marker or the previous statement's ';'
				ctoks := code(lex(st))
				for k, tk := range ctoks {
					tran := k+1 < len(ctoks) && (ctoks[k+1].IsWord("TRAN") || ctoks[k+1].IsWord("TRANSACTION"))
					if tk.IsOp(";") || (tk.Kind == tokWord && markers[tk.Upper()] && !tran) {
						continue
					}
					total++
					theirs[off+tk.Start] = true
					if ours[off+tk.Start] {
						hit++
					} else if testing.Verbose() {
						t.Logf("%s: missed boundary at %.60q", file, st[tk.Start:])
					}
					break
				}
				off += len(st)
			}
			for start := range ours {
				ourTotal++
				if theirs[start] {
					ourHit++
				}
			}
		}
	}
	if total == 0 {
		t.Skip("no multi-statement batches in the corpus")
	}
	t.Logf("plan statement boundaries found: %d of %d (%.1f%%); boundaries found that the plan also has: %d of %d (%.1f%%)",
		hit, total, 100*float64(hit)/float64(total), ourHit, ourTotal, 100*float64(ourHit)/float64(ourTotal))
	if float64(hit) < 0.95*float64(total) {
		t.Errorf("only %d of %d plan statement boundaries found", hit, total)
	}
}

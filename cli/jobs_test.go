package cli

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/planlint/planlint/report"
)

// sizedPlan is an open plan file that claims size bytes (so the tests need
// not write gigabytes) and, on its first Read, calls onRead.
type sizedPlan struct {
	r      io.Reader
	size   int64
	onRead func()
	read   bool
}

func (p *sizedPlan) Read(b []byte) (int, error) {
	if !p.read {
		p.read = true
		if p.onRead != nil {
			p.onRead()
		}
	}
	return p.r.Read(b)
}

func (p *sizedPlan) Close() error { return nil }

func (p *sizedPlan) Stat() (os.FileInfo, error) {
	if p.size < 0 {
		return fakeInfo{mode: fs.ModeNamedPipe}, nil
	}
	return fakeInfo{size: p.size}, nil
}

type fakeInfo struct {
	size int64
	mode fs.FileMode
}

func (i fakeInfo) Name() string       { return "p.sqlplan" }
func (i fakeInfo) Size() int64        { return i.size }
func (i fakeInfo) Mode() fs.FileMode  { return i.mode }
func (i fakeInfo) ModTime() time.Time { return time.Time{} }
func (i fakeInfo) IsDir() bool        { return false }
func (i fakeInfo) Sys() any           { return nil }

func fixturePlan(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("../fixtures/queue/param.sqlplan")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// heldShare is the weight of budget (of total weight) held by others.
func heldShare(budget *semaphore.Weighted, total int64) int64 {
	lo, hi := int64(0), total // the largest free weight is in [lo, hi]
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if budget.TryAcquire(mid) {
			budget.Release(mid)
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return total - lo
}

// TestJobHoldsItsFootprint: a check job holds its expected footprint of the
// memory budget while it reads its file: a whole document its size times
// the whole-document factor, a streamed one the streaming factor, a file
// of unknown size or larger than the budget the whole budget.
func TestJobHoldsItsFootprint(t *testing.T) {
	raw := fixturePlan(t)
	const budget = 8 << 30
	for _, c := range []struct {
		name      string
		size      int64
		keepPlans bool
		want      int64
	}{
		{"small file", 4 << 10, false, jobFixedBytes + wholeDocumentFactor*(4<<10)},
		{"largest whole document", wholeDocumentBytes, false, jobFixedBytes + wholeDocumentFactor*wholeDocumentBytes},
		{"streamed", wholeDocumentBytes + 1, false, jobFixedBytes + streamFactor*(wholeDocumentBytes+1)},
		{"whole for a renderer", 100 << 20, true, jobFixedBytes + wholeDocumentFactor*(100<<20)},
		{"larger than the budget", budget + 1, false, budget},
		{"footprint larger than the budget", budget / 2, false, budget},
		{"unknown size", -1, false, budget},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &analyzer{keepPlans: c.keepPlans, budget: budget}
			sem := semaphore.NewWeighted(budget)
			held := int64(-1)
			p := &sizedPlan{r: bytes.NewReader(raw), size: c.size, onRead: func() { held = heldShare(sem, budget) }}
			f, err := a.one(input{path: "p.sqlplan", open: func() (io.ReadCloser, error) { return p, nil }}, sem)
			if err != nil || f.Error != nil || len(f.Findings) == 0 {
				t.Fatalf("analysis failed: %v %+v", err, f)
			}
			if held != c.want {
				t.Errorf("held %d bytes of the budget while reading, want %d", held, c.want)
			}
			if after := heldShare(sem, budget); after != 0 {
				t.Errorf("%d bytes still held after the job", after)
			}
		})
	}
}

// TestAnalyzeAllBudget: with --jobs 4, files whose footprints add up past
// the budget are not read at the same time; a file larger than the whole
// budget runs alone and still completes, and the results keep input order.
func TestAnalyzeAllBudget(t *testing.T) {
	raw := fixturePlan(t)
	const budget = 64 << 20
	a := &analyzer{budget: budget}
	sizes := []int64{4 << 20, 4 << 20, budget * 2, 4 << 20, 2 << 20, 1 << 10}
	var inputs []input
	var violations []string
	inFlight := make(chan int64, 1)
	inFlight <- 0
	for i, size := range sizes {
		w := a.footprint(size)
		p := &sizedPlan{r: bytes.NewReader(raw), size: size}
		p.onRead = func() {
			n := <-inFlight + w
			if n > budget {
				violations = append(violations, fmt.Sprintf("file %d (footprint %d) read while %d bytes were in flight", i, w, n-w))
			}
			inFlight <- n
		}
		inputs = append(inputs, input{path: string(rune('a' + i)), open: func() (io.ReadCloser, error) {
			return &doneOnClose{sizedPlan: p, done: func() { inFlight <- <-inFlight - w }}, nil
		}})
	}
	files, err := a.analyzeAll(inputs, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if f.Path != string(rune('a'+i)) || f.Error != nil || len(f.Findings) == 0 {
			t.Errorf("file %d: %+v", i, f)
		}
	}
	for _, v := range violations {
		t.Error(v)
	}
}

// doneOnClose calls done when the file is closed.
type doneOnClose struct {
	*sizedPlan
	done func()
}

func (d *doneOnClose) Close() error {
	d.done()
	return nil
}

// TestReportKeepsNoDocument: the report keeps every file until it is
// written, so a file analysed whole lets its parsed document go unless a
// renderer draws operators (the report held each one, whatever --jobs);
// findings still name their operator, for the SARIF message, whichever
// path analysed the file.
func TestReportKeepsNoDocument(t *testing.T) {
	raw := fixturePlan(t)
	for _, c := range []struct {
		name      string
		size      int64
		keepPlans bool
	}{
		{"whole", int64(len(raw)), false},
		{"streamed", wholeDocumentBytes + 1, false},
		{"whole for a renderer", int64(len(raw)), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &analyzer{keepPlans: c.keepPlans}
			p := &sizedPlan{r: bytes.NewReader(raw), size: c.size}
			f, err := a.one(input{path: "p.sqlplan", open: func() (io.ReadCloser, error) { return p, nil }}, nil)
			if err != nil || f.Error != nil {
				t.Fatalf("%v %+v", err, f)
			}
			for _, s := range f.Statements {
				if kept := s.Source != nil; kept != c.keepPlans {
					t.Errorf("statement %d: document kept %v, want %v", s.Ordinal, kept, c.keepPlans)
				}
			}
			named := 0
			for _, x := range f.Findings {
				if x.NodeID != nil {
					if x.OperatorName == "" {
						t.Errorf("%s on node %d: no operator name", x.Rule, *x.NodeID)
					}
					named++
				}
			}
			if named == 0 {
				t.Fatal("no finding on an operator")
			}
			var out bytes.Buffer
			if err := report.SARIF(&out, &report.Report{Files: []*report.File{f}}, report.SARIFOptions{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "(stmt 1 node 0 Sort (TopN Sort))") {
				t.Errorf("SARIF message does not name the operator:\n%.2000s", out.String())
			}
		})
	}
}

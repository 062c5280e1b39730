package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/report"
	"github.com/planlint/planlint/rules"
)

// analyzer runs the rules over plan documents and builds report files.
type analyzer struct {
	catalog   *catalog.Catalog
	config    *rules.Config
	limits    plan.Options
	keepPlans bool  // keep documents for renderers that draw operators
	budget    int64 // bytes of memory in flight across jobs; 0: memoryBudget
}

// errorFile records an input that could not be analysed.
func errorFile(path string, err error) *report.File {
	msg := err.Error()
	if strings.EqualFold(filepath.Ext(path), ".sql") && strings.Contains(msg, "not XML") {
		// The plan decoder's general hint, made specific to this file.
		msg = strings.Replace(msg, " (planlint explain runs a query to capture its plan)", "", 1) +
			" (a .sql file is T-SQL: 'planlint explain " + path + "' captures its plans from a server)"
	}
	return &report.File{Path: path, Error: &msg}
}

// document analyses a parsed document.
func (a *analyzer) document(path string, doc *plan.Document) (*report.File, error) {
	f := &report.File{Path: path, Statements: report.Summarize(doc)}
	fa := a.fileAnalysis(path, doc)
	for _, s := range doc.Statements() {
		if err := fa.statement(s); err != nil {
			return nil, err
		}
	}
	fs, err := fa.finish()
	if err != nil {
		return nil, err
	}
	f.Findings = fs
	if a.keepPlans {
		f.Plans = []*plan.Document{doc}
	}
	return f, nil
}

// fileAnalysis runs the rules over the statements of one file in document
// order, whether the file is parsed whole or streamed: the rules that
// decide across statements (SET options once per batch and module, a
// missing-index request once per file, a MAXDOP setting once) keep only
// small facts per statement and report when the last one is in, so both
// give the same findings.
type fileAnalysis struct {
	path     string
	stream   *rules.Stream
	pos      []plan.Pos // each statement's start tag, for the findings reported at the end
	findings []*report.Finding
}

func (a *analyzer) fileAnalysis(path string, doc *plan.Document) *fileAnalysis {
	return &fileAnalysis{path: path, stream: rules.NewStream(doc, a.catalog, a.config), findings: []*report.Finding{}}
}

// statement analyses one statement (not its nested ones).
func (fa *fileAnalysis) statement(s *plan.Statement) error {
	fs, err := fa.stream.Statement(s)
	if err != nil {
		return err
	}
	fa.findings = append(fa.findings, locateInPlan(fa.path, s, fs)...)
	fa.pos = append(fa.pos, s.Pos)
	return nil
}

// finish adds the findings decided across statements (about statements,
// not operators: they point at the statement) and sorts them all.
func (fa *fileAnalysis) finish() ([]*report.Finding, error) {
	late, err := fa.stream.Finish()
	if err != nil {
		return nil, err
	}
	for _, l := range late {
		x := report.Wrap([]rules.Finding{l.Finding})[0]
		x.Location = planLocation(fa.path, fa.pos[l.Statement])
		fa.findings = append(fa.findings, x)
	}
	sortByStatement(fa.findings)
	return fa.findings, nil
}

// sortByStatement orders findings as rules.SortFindings does.
func sortByStatement(fs []*report.Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return rules.Less(fs[i].Finding, fs[j].Finding) })
}

// locateInPlan points findings at their element in the plan file: the
// operator's RelOp, else the statement.
func locateInPlan(path string, s *plan.Statement, fs []rules.Finding) []*report.Finding {
	out := report.Wrap(fs)
	for _, x := range out {
		pos := s.Pos
		if x.NodeID != nil {
			if n := s.Node(*x.NodeID, x.CursorOperation()); n != nil {
				pos = n.Pos
				x.OperatorName = n.DisplayName()
			}
		}
		x.Location = planLocation(path, pos)
	}
	return out
}

// planLocation is the location of a start tag in a plan file.
func planLocation(path string, p plan.Pos) *report.Location {
	if p.Line < 1 {
		return nil
	}
	return &report.Location{Path: path, StartLine: p.Line, StartCol: p.Column, EndLine: p.Line, EndCol: p.Column}
}

// wholeDocumentBytes is the file size up to which a plan is parsed as a
// whole document; larger files are streamed to bound memory. Both give the
// same findings (see fileAnalysis). A variable so that tests can stream
// small plans.
var wholeDocumentBytes int64 = 64 << 20

// streamSized parses r statement by statement, analysing each one as it
// completes so memory stays bounded by the largest statement. Documents are
// kept whole when a renderer needs them or the input's size (-1 when
// unknown) is at most wholeDocumentBytes.
func (a *analyzer) streamSized(path string, r io.Reader, size int64) (*report.File, error) {
	if a.keepPlans || size >= 0 && size <= wholeDocumentBytes {
		doc, err := plan.Parse(r, a.limits)
		if err != nil {
			return errorFile(path, err), nil
		}
		f, err := a.document(path, doc)
		if err == nil && !a.keepPlans {
			for _, s := range f.Statements {
				s.Source = nil // let the document go: the report keeps every file
			}
		}
		return f, err
	}
	f := &report.File{Path: path}
	fa := a.fileAnalysis(path, nil)
	actual := false
	_, err := plan.Stream(r, a.limits, func(top *plan.Statement) error {
		for _, s := range (&plan.Document{Batches: []*plan.Batch{{Statements: []*plan.Statement{top}}}}).Statements() {
			if err := fa.statement(s); err != nil {
				return err
			}
			actual = actual || s.IsActual()
			sum := report.SummarizeStatement(s, "")
			sum.Source = nil // let the statement go
			f.Statements = append(f.Statements, sum)
		}
		return nil
	})
	var re *rules.RuleError
	if errors.As(err, &re) {
		return nil, re
	}
	if err != nil {
		return errorFile(path, err), nil
	}
	kind := "estimated"
	if actual {
		kind = "actual"
	}
	for _, s := range f.Statements {
		s.Kind = kind
	}
	if f.Findings, err = fa.finish(); err != nil {
		return nil, err
	}
	return f, nil
}

// input is one thing to analyse: a path, or standard input.
type input struct {
	path string
	open func() (io.ReadCloser, error)
}

// Memory in flight across --jobs: every job holds a share of memoryBudget
// for its expected footprint while it runs, so that N large files are not
// all decoded at once. BenchmarkJobFootprint measures the factors: the
// peak heap per input byte is 4.5-6.5 for a document analysed whole and
// 3-4.4 for a streamed one (statement summaries and findings stay), 2.2
// for the largest corpus plans; a small file peaks at ~0.3 MiB, which
// jobFixedBytes covers. A job whose footprint exceeds the budget runs
// alone; a file of unknown size (standard input) counts as the whole
// budget. The budget bounds what jobs decode, not what the report keeps:
// the findings, and for the HTML and DOT renderers the documents, stay
// until the report is written.
const (
	memoryBudget        = 1 << 30
	wholeDocumentFactor = 7
	streamFactor        = 5
	jobFixedBytes       = 1 << 20
)

// footprint is the share of memoryBudget that analysing an input of size
// bytes (-1: unknown) takes.
func (a *analyzer) footprint(size int64) int64 {
	budget := a.memoryBudget()
	var n int64
	switch {
	case size < 0 || size > budget:
		n = budget
	case a.keepPlans || size <= wholeDocumentBytes:
		n = jobFixedBytes + wholeDocumentFactor*size
	default:
		n = jobFixedBytes + streamFactor*size
	}
	return min(n, budget)
}

func (a *analyzer) memoryBudget() int64 {
	if a.budget > 0 {
		return a.budget
	}
	return memoryBudget
}

// analyzeAll analyses the inputs with up to jobs workers and returns the
// files in input order. A rule failure (a planlint bug) stops the run.
func (a *analyzer) analyzeAll(inputs []input, jobs int) ([]*report.File, error) {
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	out := make([]*report.File, len(inputs))
	errs := make([]error, len(inputs))
	budget := semaphore.NewWeighted(a.memoryBudget())
	idx := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < jobs && w < len(inputs); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				out[i], errs[i] = a.one(inputs[i], budget)
			}
		}()
	}
	for i := range inputs {
		idx <- i
	}
	close(idx)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// one analyses an input, holding its footprint of budget (when not nil)
// from the moment its size is known until it is analysed and closed.
func (a *analyzer) one(in input, budget *semaphore.Weighted) (*report.File, error) {
	rc, err := in.open()
	if err != nil {
		return errorFile(in.path, err), nil
	}
	held := int64(0)
	defer func() {
		rc.Close()
		if held > 0 {
			budget.Release(held)
		}
	}()
	size := int64(-1)
	if st, ok := rc.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	if budget != nil {
		n := a.footprint(size)
		if err := budget.Acquire(context.Background(), n); err != nil {
			return nil, fmt.Errorf("%s: %w", in.path, err)
		}
		held = n
	}
	f, err := a.streamSized(in.path, rc, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.path, err)
	}
	return f, nil
}

package cli

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

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
	keepPlans bool // keep documents for renderers that draw operators
}

// errorFile records an input that could not be analysed.
func errorFile(path string, err error) *report.File {
	msg := err.Error()
	return &report.File{Path: path, Error: &msg}
}

// document analyses a parsed document.
func (a *analyzer) document(path string, doc *plan.Document) (*report.File, error) {
	fs, err := rules.Analyze(doc, a.catalog, a.config)
	if err != nil {
		return nil, err
	}
	f := &report.File{Path: path, Statements: report.Summarize(doc), Findings: report.Wrap(fs)}
	if a.keepPlans {
		f.Plans = []*plan.Document{doc}
	}
	return f, nil
}

// stream parses r statement by statement, analysing each one as it
// completes so memory stays bounded by the largest statement. Documents are
// kept whole only when a renderer needs them.
func (a *analyzer) stream(path string, r io.Reader) (*report.File, error) {
	if a.keepPlans {
		doc, err := plan.Parse(r, a.limits)
		if err != nil {
			return errorFile(path, err), nil
		}
		return a.document(path, doc)
	}
	f := &report.File{Path: path}
	var findings []rules.Finding
	actual := false
	doc := &plan.Document{}
	_, err := plan.Stream(r, a.limits, func(top *plan.Statement) error {
		for _, s := range (&plan.Document{Batches: []*plan.Batch{{Statements: []*plan.Statement{top}}}}).Statements() {
			fs, err := rules.AnalyzeStatement(doc, s, a.catalog, a.config)
			if err != nil {
				return err
			}
			findings = append(findings, fs...)
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
	rules.SortFindings(findings)
	f.Findings = report.Wrap(findings)
	return f, nil
}

// input is one thing to analyse: a path, or standard input.
type input struct {
	path string
	open func() (io.ReadCloser, error)
}

// analyzeAll analyses the inputs with up to jobs workers and returns the
// files in input order. A rule failure (a planlint bug) stops the run.
func (a *analyzer) analyzeAll(inputs []input, jobs int) ([]*report.File, error) {
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	out := make([]*report.File, len(inputs))
	errs := make([]error, len(inputs))
	idx := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < jobs && w < len(inputs); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				out[i], errs[i] = a.one(inputs[i])
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

func (a *analyzer) one(in input) (*report.File, error) {
	rc, err := in.open()
	if err != nil {
		return errorFile(in.path, err), nil
	}
	defer rc.Close()
	f, err := a.stream(in.path, rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.path, err)
	}
	return f, nil
}

package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/rules"
)

// The tree, the JSON operators and the row-estimate-skew finding show the
// same factor: 23,177.6 estimated against 522,078 rows from 8 threads that
// each ran the hash join once is 22.5× (printed 23×), not the 2.8× a
// per-thread execution count gives.
func TestTreeAndFindingShowTheSameFactor(t *testing.T) {
	path := filepath.Join(sharedtest.Require(t, "corpus/plans"), "showplan-dotnet__tests__Showplan.Tests__plans__parallelism.sqlplan")
	doc, err := plan.ParseFile(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := rules.Analyze(doc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &File{Path: "parallelism.sqlplan", Statements: Summarize(doc), Plans: []*plan.Document{doc}}
	var msg string
	for i := range fs {
		f.Findings = append(f.Findings, &Finding{Finding: fs[i]})
		if fs[i].Rule == "row-estimate-skew" && *fs[i].NodeID == 3 {
			msg = fs[i].Message
		}
	}
	if !strings.Contains(msg, "23×") {
		t.Fatalf("finding at node 3: %q", msg)
	}
	var b bytes.Buffer
	if err := Text(&b, &Report{Files: []*File{f}}, TextOptions{Tree: true}); err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "[3] Hash Match") {
			line = l
		}
	}
	if !strings.Contains(line, "(23× under)") || !strings.Contains(line, "self ") {
		t.Errorf("tree line %q", line)
	}
	var op *OperatorRuntime
	for _, o := range f.Statements[0].Operators {
		if o.NodeID == 3 {
			op = o
		}
	}
	if op == nil || op.EstimateFactor != 22.5 || op.ActualExecutions != 1 || op.Threads != 8 {
		t.Errorf("JSON operator %+v", op)
	}
}

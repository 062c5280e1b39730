package rules

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
)

// The verdict set: hand-written judgements of what a DBA reading the XML
// would expect from each rule on real corpus plans. One file per rule in
// testdata/verdicts, tab-separated:
//
//	file  batch  statement  node  rule  expected  reason  [schema]
//
// file is a name in corpus/plans; statement is the StatementId, or "ID#K"
// for the K-th statement with that id in the batch (real plans repeat ids);
// node is a NodeId, "-" for a statement-level finding or "*" for anywhere in
// the statement; expected is error, warning or info (a finding of exactly
// that severity), silent (no finding of the rule there) or quiet (nothing
// above info there); reason is one line read from the XML. The optional
// schema column names a CREATE TABLE/INDEX script or catalog JSON, relative
// to the repository root, for rules that need catalog facts.
//
// Verdicts are never derived from planlint's output.

var verdictReport = flag.Bool("verdict-report", false, "print per rule the findings by severity over the corpus and how many verdicts hold")

type verdict struct {
	where     string // testdata file:line
	file      string
	batch     int
	stmtID    int
	stmtNth   int // 1-based among statements with stmtID in the batch
	node      string
	rule      string
	expected  string
	reason    string
	schema    string
	nodeID    int
	anyNode   bool
	stmtLevel bool
}

func loadVerdicts(t *testing.T) []verdict {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "verdicts", "*.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var out []verdict
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		line := 0
		for sc.Scan() {
			line++
			text := sc.Text()
			if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
				continue
			}
			v, err := parseVerdict(text)
			if err != nil {
				t.Errorf("%s:%d: %v", path, line, err)
				continue
			}
			v.where = fmt.Sprintf("%s:%d", path, line)
			out = append(out, v)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func parseVerdict(text string) (verdict, error) {
	cols := strings.Split(text, "\t")
	if len(cols) < 7 || len(cols) > 8 {
		return verdict{}, fmt.Errorf("want 7 or 8 tab-separated columns, have %d", len(cols))
	}
	v := verdict{file: cols[0], node: cols[3], rule: cols[4], expected: cols[5], reason: strings.TrimSpace(cols[6])}
	if len(cols) == 8 {
		v.schema = cols[7]
	}
	var err error
	if v.batch, err = strconv.Atoi(cols[1]); err != nil {
		return v, fmt.Errorf("batch %q: %v", cols[1], err)
	}
	id, nth, hasNth := strings.Cut(cols[2], "#")
	if v.stmtID, err = strconv.Atoi(id); err != nil {
		return v, fmt.Errorf("statement %q: %v", cols[2], err)
	}
	v.stmtNth = 1
	if hasNth {
		if v.stmtNth, err = strconv.Atoi(nth); err != nil || v.stmtNth < 1 {
			return v, fmt.Errorf("statement %q: want ID#K with K ≥ 1", cols[2])
		}
	}
	switch v.node {
	case "*":
		v.anyNode = true
	case "-":
		v.stmtLevel = true
	default:
		if v.nodeID, err = strconv.Atoi(v.node); err != nil {
			return v, fmt.Errorf("node %q: want a NodeId, - or *", v.node)
		}
	}
	if Lookup(v.rule) == nil {
		return v, fmt.Errorf("unknown rule %q", v.rule)
	}
	switch v.expected {
	case "error", "warning", "info", "silent", "quiet":
	default:
		return v, fmt.Errorf("expected %q: want error, warning, info, silent or quiet", v.expected)
	}
	if v.reason == "" {
		return v, fmt.Errorf("a verdict needs a reason read from the XML")
	}
	return v, nil
}

// verdictAnalysis caches one analysis per (file, schema).
type verdictAnalysis struct {
	doc      *plan.Document
	findings []Finding
}

func analyzeForVerdict(t *testing.T, cache map[[2]string]*verdictAnalysis, plans, file, schema string) *verdictAnalysis {
	t.Helper()
	key := [2]string{file, schema}
	if a, ok := cache[key]; ok {
		return a
	}
	d, err := plan.ParseFile(filepath.Join(plans, file), plan.Options{})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var cat *catalog.Catalog
	if schema != "" {
		cat, _, err = catalog.LoadFile(filepath.Join(sharedtest.Root(), schema))
		if err != nil {
			t.Fatalf("%s: schema %s: %v", file, schema, err)
		}
	}
	fs, err := Analyze(d, cat, nil)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	a := &verdictAnalysis{doc: d, findings: fs}
	cache[key] = a
	return a
}

// statementOrdinal finds the document ordinal of the verdict's statement.
func (v verdict) statementOrdinal(d *plan.Document) (int, bool) {
	seen := 0
	for _, s := range d.Statements() {
		if s.Batch == v.batch && s.ID == v.stmtID {
			seen++
			if seen == v.stmtNth {
				return s.Ordinal, true
			}
		}
	}
	return 0, false
}

// check says whether the verdict holds, and what planlint reported there.
func (v verdict) check(a *verdictAnalysis) (bool, string) {
	ord, ok := v.statementOrdinal(a.doc)
	if !ok {
		return false, "no such statement in the plan"
	}
	var got []Finding
	for _, f := range a.findings {
		if f.Rule != v.rule && f.Code != v.rule || f.Ordinal != ord {
			continue
		}
		switch {
		case v.anyNode:
		case v.stmtLevel:
			if f.NodeID != nil {
				continue
			}
		default:
			if f.NodeID == nil || *f.NodeID != v.nodeID {
				continue
			}
		}
		got = append(got, f)
	}
	desc := "nothing"
	if len(got) > 0 {
		var parts []string
		for _, f := range got {
			node := "-"
			if f.NodeID != nil {
				node = strconv.Itoa(*f.NodeID)
			}
			parts = append(parts, fmt.Sprintf("%s at node %s: %s", f.Severity, node, f.Message))
		}
		desc = strings.Join(parts, "; ")
	}
	switch v.expected {
	case "silent":
		return len(got) == 0, desc
	case "quiet":
		for _, f := range got {
			if f.Severity > Info {
				return false, desc
			}
		}
		return true, desc
	}
	want, _ := ParseSeverity(v.expected)
	for _, f := range got {
		if f.Severity == want {
			return true, desc
		}
	}
	return false, desc
}

// TestVerdicts enforces the verdict set against the real corpus.
func TestVerdicts(t *testing.T) {
	verdicts := loadVerdicts(t)
	plans := sharedtest.Require(t, "corpus/plans")
	cache := map[[2]string]*verdictAnalysis{}
	held := map[string][2]int{} // rule → held, total
	for _, v := range verdicts {
		a := analyzeForVerdict(t, cache, plans, v.file, v.schema)
		ok, got := v.check(a)
		h := held[v.rule]
		h[1]++
		if ok {
			h[0]++
		} else {
			t.Errorf("%s: %s batch %d stmt %d node %s: %s expected %s (%s); planlint reported %s",
				v.where, v.file, v.batch, v.stmtID, v.node, v.rule, v.expected, v.reason, got)
		}
		held[v.rule] = h
	}
	if *verdictReport {
		printVerdictReport(t, plans, held)
	}
}

// printVerdictReport prints, per rule, the findings by severity over the
// whole corpus (no catalog) and how many of its verdicts hold.
func printVerdictReport(t *testing.T, plans string, held map[string][2]int) {
	t.Helper()
	counts := map[string]*[4]int{}
	files := sharedtest.Files(t, "corpus/plans")
	for _, path := range files {
		if !strings.HasSuffix(path, ".sqlplan") && !strings.HasSuffix(path, ".xml") {
			continue
		}
		d, err := plan.ParseFile(path, plan.Options{})
		if err != nil {
			continue
		}
		fs, _ := Analyze(d, nil, nil)
		for _, f := range fs {
			c := counts[f.Rule]
			if c == nil {
				c = &[4]int{}
				counts[f.Rule] = c
			}
			c[f.Severity]++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-40s %7s %7s %7s %9s\n", "rule", "error", "warning", "info", "verdicts")
	names := []string{}
	for _, r := range All() {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	for _, n := range names {
		c := counts[n]
		if c == nil {
			c = &[4]int{}
		}
		h := held[n]
		fmt.Fprintf(&b, "%-40s %7d %7d %7d %4d/%-4d\n", n, c[Error], c[Warning], c[Info], h[0], h[1])
	}
	fmt.Fprintf(os.Stdout, "findings over %d corpus files (no catalog):\n%s", len(files), b.String())
}

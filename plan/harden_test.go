package plan

import (
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/plangen"
)

// levelsAround is the element depth of a plan with n nested joins: six
// levels above the first RelOp, two per join, three for the Index Seek.
func levelsAround(n int) int { return 6 + 2*n + 3 }

// TestDepthCeiling: a depth option far above what the stack can take is
// held at MaxDepthCeiling, so a hostile nesting ends in a LimitError rather
// than a stack overflow that kills the process.
func TestDepthCeiling(t *testing.T) {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(plangen.WriteNestedLoops(pw, 300000)) }()
	_, err := Parse(pr, Options{MaxDepth: 10000000})
	pr.Close()
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitDepth || le.Max != MaxDepthCeiling {
		t.Fatalf("300000 nested joins: got %v, want a depth LimitError at %d", err, MaxDepthCeiling)
	}
	if !strings.Contains(err.Error(), "no plan may nest deeper") {
		t.Errorf("message %q does not say the ceiling cannot be raised", err)
	}
}

// TestDepthAtCeiling: the deepest accepted plan parses, and the recursive
// walks of the model get through it.
func TestDepthAtCeiling(t *testing.T) {
	if raceDetector {
		t.Skip("parses a 14 MB plan twice (run without -race)")
	}
	n := (MaxDepthCeiling - 9) / 2
	if levelsAround(n) > MaxDepthCeiling {
		t.Fatalf("generator arithmetic: %d levels", levelsAround(n))
	}
	d, err := Parse(strings.NewReader(plangen.NestedLoops(n)), Options{MaxDepth: MaxDepthCeiling})
	if err != nil {
		t.Fatal(err)
	}
	s := d.Statements()[0]
	if got := s.NodeCount(); got != n+1 {
		t.Errorf("NodeCount %d, want %d", got, n+1)
	}
	walked := 0
	s.QueryPlan.Root.Walk(func(*RelOp) bool { walked++; return true })
	if walked != n+1 {
		t.Errorf("Walk visited %d, want %d", walked, n+1)
	}
	if _, err := Parse(strings.NewReader(plangen.NestedLoops(n+1)), Options{MaxDepth: MaxDepthCeiling}); err == nil {
		t.Errorf("%d levels accepted over the ceiling %d", levelsAround(n+1), MaxDepthCeiling)
	}
}

// TestNumbersSaturate: finite numbers past MaxMagnitude are held there and
// integer counters at ±maxCount (non-finite ones stay absent); sums over
// threads saturate too. Real estimates as large as 1.78e44 are kept.
func TestNumbersSaturate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
	}{
		{"1e308", MaxMagnitude}, {"-1e308", -MaxMagnitude}, {"1e309", 0}, {"INF", 0},
		{"1e19", 1e19}, {"1.78e+44", 1.78e44}, {"1e101", MaxMagnitude}, {"12.5", 12.5}, {"NaN", 0}, {"x", 0}, {"1e-400", 0},
	} {
		if got := parseFloat(c.in); got != c.want {
			t.Errorf("parseFloat(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"9223372036854775807", maxCount}, {"99999999999999999999", maxCount}, {"-99999999999999999999", -maxCount},
		{"42", 42}, {"4.2", 0},
	} {
		if got := parseInt64(c.in); got != c.want {
			t.Errorf("parseInt64(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	d, err := Parse(strings.NewReader(plangen.HugeNumbers()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sort := d.Statements()[0].QueryPlan.Root
	if sort.RunTime.ActualRows != maxCount {
		t.Errorf("thread rows near 2^63 twice add up to %d, want %d", sort.RunTime.ActualRows, maxCount)
	}
	lookup := d.Statements()[1].QueryPlan.Node(2)
	if lookup.EstimateRebinds != MaxMagnitude || math.IsInf(lookup.EstimatedRowsAllExecutions(), 0) {
		t.Errorf("rebinds %v, rows over all executions %v", lookup.EstimateRebinds, lookup.EstimatedRowsAllExecutions())
	}
}

// endless is a prefix followed by an unbounded run of filler bytes; it
// counts what it hands out.
type endless struct {
	prefix string
	fill   byte
	read   int64
}

func (e *endless) Read(p []byte) (int, error) {
	n := copy(p, e.prefix)
	e.prefix = e.prefix[n:]
	for i := n; i < len(p); i++ {
		p[i] = e.fill
	}
	e.read += int64(len(p))
	return len(p), nil
}

// TestUnterminatedConstructsBounded: an unterminated comment, CDATA
// section, processing instruction or declaration is refused after a
// bounded read, not buffered up to the file size limit.
func TestUnterminatedConstructsBounded(t *testing.T) {
	root := `<ShowPlanXML xmlns="` + Namespace + `">`
	for _, c := range []struct{ name, prefix, want string }{
		{"comment", root + "<!--", "comment longer than 1 MiB"},
		{"CDATA", root + "<![CDATA[", "CDATA section longer than 1 MiB"},
		{"processing instruction", root + "<?pi ", "processing instruction longer than 1 MiB"},
		{"DOCTYPE", `<?xml version="1.0"?><!DOCTYPE ShowPlanXML [`, "DOCTYPE declarations are not allowed"},
		{"ENTITY", root + "<!ENTITY x '", "unexpected markup declaration <!ENTITY"},
	} {
		in := &endless{prefix: c.prefix, fill: 'a'}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Parse(in, Options{})
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if in.read > 4<<20 {
			t.Errorf("%s: read %d bytes before refusing", c.name, in.read)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Errorf("%s: allocated %d bytes", c.name, alloc)
		}
	}
}

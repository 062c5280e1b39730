package plan

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the decoder: it must never panic, fail
// only with *Error or *LimitError, and build a consistent model otherwise.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"",
		" ",
		"<",
		"<ShowPlanXML/>",
		`<ShowPlanXML ` + nsAttr + `/>`,
		sampleDoc("utf-8"),
		sampleDoc("utf-16"),
		showplan(simple("q", relop("0", "Filter", `<Filter StartupExpression="0"><Predicate>`+residual+`</Predicate>`+
			relop("1", "Index Seek", `<IndexScan Lookup="1" Ordered="1"><Object Table="[T]"/><SeekPredicates><SeekPredicateNew><SeekKeys>`+
				`<Prefix ScanType="EQ"><RangeColumns>`+colA+`</RangeColumns><RangeExpressions>`+constant("(1)")+`</RangeExpressions></Prefix>`+
				`</SeekKeys></SeekPredicateNew></SeekPredicates></IndexScan>`)+`</Filter>`))),
		showplan(`<StmtCond><Condition/><Then><Statements><StmtSimple/></Statements></Then><Else><Statements><StmtCursor><CursorPlan><Operation><QueryPlan/></Operation></CursorPlan></StmtCursor></Statements></Else></StmtCond>`),
		`<!DOCTYPE x [<!ENTITY a "b">]><ShowPlanXML ` + nsAttr + `/>`,
		showplan(simple("q", `<ThreadStat Branches="1"><ThreadReservation NodeId="0" ReservedThreads="4"/></ThreadStat>`+
			`<OptimizerHardwareDependentProperties EstimatedAvailableMemoryGrant="1" EstimatedPagesCached="2"/>`+
			`<QueryTimeStats CpuTime="1" ElapsedTime="2" UdfCpuTime="1"/>`+
			relop("0", "Parallelism", `<MemoryFractions Input="0.5" Output="1"/><Parallelism PartitioningType="Hash"><PartitionColumns>`+colA+
				`</PartitionColumns>`+relop("1", "Nested Loops", `<NestedLoops Optimized="1"/>`)+`</Parallelism>`))),
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add(encodeUTF16(sampleDoc("utf-16"), false, true))
	f.Add(encodeUTF16(sampleDoc("utf-16"), true, false))
	for _, b := range smallCorpusPlans(8, 16<<10) {
		f.Add(b)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		opts := Options{MaxBytes: 4 << 20, MaxDepth: 256}
		doc, err := Parse(bytes.NewReader(data), opts)
		var n int
		_, serr := Stream(bytes.NewReader(data), opts, func(*Statement) error { n++; return nil })
		if (err == nil) != (serr == nil) {
			t.Fatalf("Parse error %v, Stream error %v", err, serr)
		}
		if err != nil {
			var pe *Error
			var le *LimitError
			if !errors.As(err, &pe) && !errors.As(err, &le) {
				t.Fatalf("error %T is neither *Error nor *LimitError: %v", err, err)
			}
			if doc != nil {
				t.Fatal("document returned with an error")
			}
			if err.Error() != serr.Error() {
				t.Fatalf("Parse and Stream disagree: %q vs %q", err, serr)
			}
			return
		}
		checkTree(t, doc)
		top := 0
		for _, b := range doc.Batches {
			top += len(b.Statements)
		}
		if top != n {
			t.Fatalf("Parse has %d statements, Stream delivered %d", top, n)
		}
	})
}

// smallCorpusPlans returns up to n plans no larger than maxSize, half from
// corpus/plans and half from corpus/odd, or nothing when the shared folder
// is absent.
func smallCorpusPlans(n int, maxSize int64) [][]byte {
	dir, _ := locateShared()
	if dir == "" {
		return nil
	}
	var out [][]byte
	for _, sub := range []string{"plans", "odd"} {
		paths, _ := filepath.Glob(filepath.Join(dir, "corpus", sub, "*"))
		sort.Strings(paths)
		taken := 0
		for _, p := range paths {
			if taken == n/2 {
				break
			}
			st, err := os.Stat(p)
			if err != nil || !st.Mode().IsRegular() || st.Size() > maxSize {
				continue
			}
			if b, err := os.ReadFile(p); err == nil {
				out = append(out, b)
				taken++
			}
		}
	}
	return out
}

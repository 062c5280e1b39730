package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sqlgen"
)

// andedFilter is a filter of n ANDed conditions on distinct columns, with
// the query predicates that imply it.
func andedFilter(n int) (string, []Conjunct) {
	conds := make([]string, n)
	preds := make([]Conjunct, n)
	for i := range n {
		conds[i] = fmt.Sprintf("[c%d]=(%d)", i, i)
		preds[i] = Conjunct{Column: fmt.Sprintf("c%d", i), Op: "=", Values: []string{fmt.Sprintf("(%d)", i)}}
	}
	return strings.Join(conds, " AND "), preds
}

// BenchmarkScalingAndedFilter: parsing a filter of n ANDed conditions and
// testing it against n predicates grows linearly in n.
func BenchmarkScalingAndedFilter(b *testing.B) {
	for _, n := range []int{1000, 2000, 4000} {
		text, preds := andedFilter(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, err := ParseFilter(text)
				if err != nil {
					b.Fatal(err)
				}
				if ok, _ := f.ImpliedBy(preds); !ok {
					b.Fatal("not implied")
				}
			}
		})
	}
}

// scalingSizes are the sizes each generated shape is parsed at, in its
// unit: the metrics per input byte should not grow from one to the next.
var scalingSizes = map[string][]int{"bytes": {1 << 20, 4 << 20}, "columns": {1000, 4000}, "indexes": {5000, 20000}}

// BenchmarkScalingShapes reads every generated .sql shape as a schema
// script at two sizes and reports the bytes allocated and the time per
// input byte (alloc/in, ns/in), which stay flat when reading is linear; the
// bytes allocated bound the peak heap's multiple of the input.
func BenchmarkScalingShapes(b *testing.B) {
	for _, shape := range sqlgen.Shapes {
		for _, n := range scalingSizes[shape.Unit] {
			b.Run(fmt.Sprintf("%s/%d", shape.Name, n), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "schema.sql")
				src := shape.Gen(n)
				if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.SetBytes(int64(len(src)))
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for b.Loop() {
					if _, _, err := LoadFile(path); err != nil && !strings.Contains(err.Error(), "no CREATE TABLE") {
						b.Fatal(err)
					}
				}
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(src)), "alloc/in")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(src)), "ns/in")
			})
		}
	}
}

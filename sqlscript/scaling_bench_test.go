package sqlscript

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/planlint/planlint/internal/sqlgen"
)

// scalingSizes are the sizes each generated shape is parsed at, in its
// unit: the metrics per input byte should not grow from one to the next.
var scalingSizes = map[string][]int{"bytes": {1 << 20, 4 << 20}, "columns": {1000, 4000}, "indexes": {5000, 20000}}

// BenchmarkScalingShapes parses every generated shape at two sizes and
// reports, besides ns/op and B/op, the bytes allocated and the time per
// input byte (alloc/in, ns/in), which stay flat when parsing is linear. The
// bytes allocated bound the peak heap: alloc/in is at most the peak
// memory's multiple of the input.
func BenchmarkScalingShapes(b *testing.B) {
	for _, shape := range sqlgen.Shapes {
		for _, n := range scalingSizes[shape.Unit] {
			b.Run(fmt.Sprintf("%s/%d", shape.Name, n), func(b *testing.B) {
				src := []byte(shape.Gen(n))
				b.ReportAllocs()
				b.SetBytes(int64(len(src)))
				perInput(b, len(src), func() {
					s, err := Parse("big.sql", src)
					if err != nil || len(s.Batches) == 0 {
						b.Fatal("no batch", err)
					}
				})
			})
		}
	}
}

// BenchmarkScalingSingleLine: B/op over the input size shows the memory a
// single-line script costs; it should stay a few times the input.
func BenchmarkScalingSingleLine(b *testing.B) {
	for _, n := range []int{1 << 20, 2 << 20, 4 << 20} {
		src := []byte(sqlgen.OneLine(n))
		b.Run(fmt.Sprintf("%dMiB", n>>20), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			perInput(b, len(src), func() {
				if _, err := Parse("big.sql", src); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// perInput runs parse as the benchmark's loop and reports the bytes
// allocated and the time of one run per byte of input.
func perInput(b *testing.B, size int, parse func()) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		parse()
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(size), "alloc/in")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(size), "ns/in")
}

// BenchmarkScalingFingerprint fingerprints the byte-sized shapes whole, as
// a baseline or SARIF does for a statement with a finding: alloc/in shows
// that the normalized text is hashed, not built.
func BenchmarkScalingFingerprint(b *testing.B) {
	for _, shape := range sqlgen.Shapes {
		if shape.Unit != "bytes" {
			continue
		}
		for _, n := range scalingSizes["bytes"] {
			b.Run(fmt.Sprintf("%s/%d", shape.Name, n), func(b *testing.B) {
				sql := shape.Gen(n)
				b.ReportAllocs()
				b.SetBytes(int64(len(sql)))
				perInput(b, len(sql), func() { Fingerprint(sql) })
			})
		}
	}
}

package sqlscript

import (
	"fmt"
	"strings"
	"testing"
)

// singleLine is a one-line script of about n bytes: one SELECT with a long
// column list, as a generated query can be.
func singleLine(n int) []byte {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "a + %d AS c%d, ", i, i)
	}
	b.WriteString("1 AS z FROM dbo.T;")
	return []byte(b.String())
}

// BenchmarkScalingSingleLine: B/op over the input size shows the memory a
// single-line script costs; it should stay a few times the input.
func BenchmarkScalingSingleLine(b *testing.B) {
	for _, n := range []int{1 << 20, 2 << 20, 4 << 20} {
		src := singleLine(n)
		b.Run(fmt.Sprintf("%dMiB", n>>20), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := Parse("big.sql", src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

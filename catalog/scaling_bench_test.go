package catalog

import (
	"fmt"
	"strings"
	"testing"
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

package rules

import (
	"os"
	"testing"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
)

// BenchmarkAnalyzeCorpus runs every rule over every statement of the
// parsed corpus: plan-only rules, then with a catalog for every table so
// the filtered-index rules run too. Bytes are those of the plan files.
func BenchmarkAnalyzeCorpus(b *testing.B) {
	files := sharedtest.Files(b, "corpus/plans")
	var docs []*plan.Document
	var cats []*catalog.Catalog
	var size int64
	for _, f := range files {
		d, err := plan.ParseFile(f, plan.Options{})
		if err != nil {
			b.Fatal(err)
		}
		st, _ := os.Stat(f)
		size += st.Size()
		docs = append(docs, d)
		cats = append(cats, syntheticCatalog(d))
	}
	for _, withCatalog := range []bool{false, true} {
		name := "plan-only"
		if withCatalog {
			name = "with-catalog"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for i, d := range docs {
					var cat *catalog.Catalog
					if withCatalog {
						cat = cats[i]
					}
					if _, err := Analyze(d, cat, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

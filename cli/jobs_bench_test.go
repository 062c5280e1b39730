package cli

import (
	"io"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/planlint/planlint/internal/plangen"
	"github.com/planlint/planlint/internal/sharedtest"
)

// BenchmarkJobFootprint measures what one check job holds at its peak,
// per byte of input: the heap in use (sampled every millisecond while the
// file is analysed, above the heap before it) divided by the file size,
// for both paths of streamSized. wholeDocumentFactor and streamFactor are
// set from these ratios; the process's peak RSS adds the collector's slack
// on top (GOGC=100 lets the heap reach twice what is live).
func BenchmarkJobFootprint(b *testing.B) {
	cases := []struct {
		name    string
		content func() string
		stream  bool
	}{
		{"whole/statements", func() string { return plangen.Statements(8000) }, false},
		{"whole/key-lookups", func() string { return plangen.KeyLookups(8000) }, false},
		{"stream/statements", func() string { return plangen.Statements(8000) }, true},
		{"stream/key-lookups", func() string { return plangen.KeyLookups(8000) }, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			path := benchFile(b, "p.sqlplan", c.content())
			benchFootprint(b, []string{path}, c.stream)
		})
	}
	b.Run("whole/corpus", func(b *testing.B) {
		benchFootprint(b, sharedtest.Files(b, "corpus/plans"), false)
	})
}

func benchFootprint(b *testing.B, paths []string, stream bool) {
	a := &analyzer{}
	var worst float64
	var fixed uint64
	for b.Loop() {
		for _, path := range paths {
			st, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			size := st.Size()
			claimed := size
			if stream {
				claimed = -1 // unknown size: streamed
			}
			peak, f := peakHeap(func() any {
				rc, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				defer rc.Close()
				f, err := a.streamSized(path, io.Reader(rc), claimed)
				if err != nil {
					b.Fatal(err)
				}
				return f
			})
			runtime.KeepAlive(f)
			if r := float64(peak) / float64(size); size >= 256<<10 && r > worst {
				worst = r
			}
			if peak > fixed && size < 16<<10 {
				fixed = peak
			}
		}
	}
	b.ReportMetric(worst, "peak-heap/byte")
	if fixed > 0 {
		b.ReportMetric(float64(fixed), "small-file-peak-bytes")
	}
}

// peakHeap runs fn and returns the highest heap in use while it ran, above
// the heap in use before, and fn's result.
func peakHeap(fn func() any) (uint64, any) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base && ms.HeapInuse-base > peak {
				peak = ms.HeapInuse - base
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	out := fn()
	close(stop)
	wg.Wait()
	runtime.ReadMemStats(&ms)
	if ms.HeapInuse > base && ms.HeapInuse-base > peak {
		peak = ms.HeapInuse - base
	}
	return peak, out
}

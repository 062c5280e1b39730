package plan

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/antchfx/xmlquery"
)

// loadCorpus returns every corpus plan re-encoded as UTF-8 and declaring
// UTF-8 (xmlquery honours the declaration), so all benchmarks read the same
// bytes.
func loadCorpus(b *testing.B) [][]byte {
	b.Helper()
	var docs [][]byte
	for _, path := range corpusFiles(b, "plans") {
		raw, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, declareUTF8(utf8Text(b, raw)))
	}
	return docs
}

// declareUTF8 rewrites an encoding="utf-16" declaration to utf-8.
func declareUTF8(d []byte) []byte {
	end := bytes.Index(d, []byte("?>"))
	if !bytes.HasPrefix(d, []byte("<?xml")) || end < 0 {
		return d
	}
	decl := bytes.ToLower(d[:end])
	i := bytes.Index(decl, []byte("utf-16"))
	if i < 0 {
		return d
	}
	return append(append(append([]byte{}, d[:i]...), "utf-8"...), d[i+len("utf-16"):]...)
}

func totalSize(docs [][]byte) int64 {
	n := int64(0)
	for _, d := range docs {
		n += int64(len(d))
	}
	return n
}

// benchCorpus runs fn over every corpus document once per iteration,
// reporting throughput over the corpus size.
func benchCorpus(b *testing.B, fn func([]byte) error) {
	docs := loadCorpus(b)
	b.SetBytes(totalSize(docs))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		for _, d := range docs {
			if err := fn(d); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportCPU(b, cpu)
}

// reportCPU adds the process CPU time per operation since start, which is
// steadier than wall time on a shared machine (it includes GC work).
func reportCPU(b *testing.B, start time.Duration) {
	if used := processCPU() - start; used > 0 {
		b.ReportMetric(float64(used.Milliseconds())/float64(b.N), "cpu-ms/op")
	}
}

// BenchmarkCorpusParse is this package's decoder on one goroutine.
func BenchmarkCorpusParse(b *testing.B) {
	benchCorpus(b, func(d []byte) error {
		_, err := Parse(bytes.NewReader(d), Options{})
		return err
	})
}

// BenchmarkCorpusParseStored decodes the corpus files as stored, UTF-16
// ones included, as the CLI reads them.
func BenchmarkCorpusParseStored(b *testing.B) {
	var docs [][]byte
	for _, path := range corpusFiles(b, "plans") {
		raw, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, raw)
	}
	b.SetBytes(totalSize(docs))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		for _, d := range docs {
			if _, err := Parse(bytes.NewReader(d), Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkCorpusParseParallel decodes the corpus with one goroutine per
// core, the way the CLI checks many files.
func BenchmarkCorpusParseParallel(b *testing.B) {
	benchCorpusParallel(b, func(d []byte) error {
		_, err := Parse(bytes.NewReader(d), Options{})
		return err
	})
}

// benchCorpusParallel is benchCorpus with the documents shared out among
// GOMAXPROCS goroutines.
func benchCorpusParallel(b *testing.B, fn func([]byte) error) {
	docs := loadCorpus(b)
	b.SetBytes(totalSize(docs))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	defer reportCPU(b, cpu)
	for b.Loop() {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < int64(len(docs)); i = next.Add(1) - 1 {
					if err := fn(docs[i]); err != nil {
						b.Error(err)
					}
				}
			})
		}
		wg.Wait()
	}
}

// BenchmarkCorpusScan is this package's XML scanner alone, reading every
// token: compare with BenchmarkCorpusRawToken.
func BenchmarkCorpusScan(b *testing.B) { benchCorpus(b, scanTokensOnly) }

// BenchmarkCorpusScanParallel is the scanner with one goroutine per core.
func BenchmarkCorpusScanParallel(b *testing.B) { benchCorpusParallel(b, scanTokensOnly) }

func scanTokensOnly(d []byte) error {
	s := newScanner(bytes.NewReader(d))
	for {
		_, err := s.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// BenchmarkCorpusXMLQuery is the generic DOM first considered, for reference.
func BenchmarkCorpusXMLQuery(b *testing.B) {
	benchCorpus(b, func(d []byte) error {
		_, err := xmlquery.Parse(bytes.NewReader(d))
		return err
	})
}

// BenchmarkCorpusRawToken is bare encoding/xml tokenization: the floor for
// any decoder built on it.
func BenchmarkCorpusRawToken(b *testing.B) { benchCorpus(b, rawTokens) }

// BenchmarkCorpusRawTokenParallel is RawToken with one goroutine per core.
func BenchmarkCorpusRawTokenParallel(b *testing.B) { benchCorpusParallel(b, rawTokens) }

func rawTokens(d []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(d))
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for {
		_, err := dec.RawToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// largePlan is a document of about size bytes made by repeating the
// statements of the corpus plan with the most RelOps in one Statements
// block. It is generated while read, so the input holds no memory.
type largePlan struct {
	head, body, tail []byte
	repeats          int
}

func newLargePlan(b *testing.B, size int) largePlan {
	b.Helper()
	var src []byte
	best := 0
	for _, d := range loadCorpus(b) {
		if n := bytes.Count(d, []byte("<RelOp ")); n > best && bytes.Count(d, []byte("<Statements>")) == 1 {
			best, src = n, d
		}
	}
	open := bytes.Index(src, []byte("<Statements>")) + len("<Statements>")
	end := bytes.Index(src, []byte("</Statements>"))
	if best == 0 || end < open {
		b.Skip("no corpus plan with a single Statements block")
	}
	lp := largePlan{head: src[:open], body: src[open:end], tail: src[end:]}
	lp.repeats = max(1, (size-len(lp.head)-len(lp.tail))/len(lp.body))
	return lp
}

func (lp largePlan) size() int { return len(lp.head) + lp.repeats*len(lp.body) + len(lp.tail) }

func (lp largePlan) reader() io.Reader {
	rs := []io.Reader{bytes.NewReader(lp.head)}
	for range lp.repeats {
		rs = append(rs, bytes.NewReader(lp.body))
	}
	return io.MultiReader(append(rs, bytes.NewReader(lp.tail))...)
}

// peakLive samples the heap retained at each garbage collection while fn
// runs and returns the maximum.
func peakLive(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	runtime.GC() // count what fn's result retains
	close(done)
	<-stopped
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

func benchLarge(b *testing.B, run func(io.Reader) error) {
	lp := newLargePlan(b, 50<<20)
	b.SetBytes(int64(lp.size()))
	b.ReportAllocs()
	var peak uint64
	cpu := processCPU()
	defer reportCPU(b, cpu)
	for b.Loop() {
		peak = max(peak, peakLive(func() {
			if err := run(lp.reader()); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-live-MB")
	b.ReportMetric(float64(lp.size())/(1<<20), "doc-MB")
}

// BenchmarkLargeStream decodes a generated ~50 MB plan statement by
// statement without keeping them.
func BenchmarkLargeStream(b *testing.B) {
	benchLarge(b, func(r io.Reader) error {
		_, err := Stream(r, Options{}, func(*Statement) error { return nil })
		return err
	})
}

// BenchmarkLargeParse decodes the same plan into one Document.
func BenchmarkLargeParse(b *testing.B) {
	var doc *Document
	benchLarge(b, func(r io.Reader) error {
		var err error
		doc, err = Parse(r, Options{})
		return err
	})
	runtime.KeepAlive(doc)
}

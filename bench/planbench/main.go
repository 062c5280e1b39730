// Command planbench measures planlint against a reference parser in one
// run: the time to check the whole showplan corpus against `xmllint
// --noout` over the same files re-encoded to UTF-8, peak memory as a
// multiple of the largest input, and how time and memory grow on generated
// large plans.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/text/encoding/unicode"
)

func main() {
	corpus := flag.String("corpus", "", "folder of showplan files (default: $PLANLINT_SHARED/corpus/plans or ../shared/corpus/plans)")
	bin := flag.String("planlint", "", "planlint binary to measure (default: build it)")
	runs := flag.Int("runs", 5, "repetitions per measurement; the median is reported")
	sizes := flag.String("sizes", "10,50,200", "generated plan sizes in MB")
	flag.Parse()
	if err := run(*corpus, *bin, *runs, *sizes); err != nil {
		fmt.Fprintln(os.Stderr, "planbench:", err)
		os.Exit(1)
	}
}

func run(corpus, bin string, runs int, sizes string) error {
	if corpus == "" {
		corpus = defaultCorpus()
	}
	if _, err := os.Stat(corpus); err != nil {
		return fmt.Errorf("corpus not found (%v); pass -corpus or set PLANLINT_SHARED", err)
	}
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		return errors.New("xmllint not found (Debian package libxml2-utils)")
	}
	work, err := os.MkdirTemp("", "planbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if bin == "" {
		bin = filepath.Join(work, "planlint")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building planlint: %w", err)
		}
	}

	originals, utf8Files, largest, total, err := prepareCorpus(corpus, filepath.Join(work, "utf8"))
	if err != nil {
		return err
	}
	fmt.Printf("corpus: %d files, %.1f MB as UTF-8, largest %.1f MB; %d CPUs; median of %d runs\n",
		len(originals), mb(total), mb(largest), runtime.NumCPU(), runs)

	ref := measure(runs, xmllint, append([]string{"--noout"}, utf8Files...))
	if ref.err != nil {
		return fmt.Errorf("xmllint: %w", ref.err)
	}
	pl := measure(runs, bin, append([]string{"check", "--format", "json", "--fail-on", "none"}, originals...))
	if pl.err != nil {
		return fmt.Errorf("planlint: %w", pl.err)
	}
	fmt.Printf("xmllint --noout (UTF-8 copies): %8.3f s  peak RSS %6.1f MB\n", ref.wall.Seconds(), mb(ref.rss))
	fmt.Printf("planlint check (all rules):     %8.3f s  peak RSS %6.1f MB\n", pl.wall.Seconds(), mb(pl.rss))
	ratio := pl.wall.Seconds() / ref.wall.Seconds()
	fmt.Printf("ratio planlint/xmllint: %.2f× (target ≤ 2×: %s)\n", ratio, verdict(ratio <= 2))
	fmt.Printf("peak RSS / largest input: %.1f×\n", float64(pl.rss)/float64(largest))

	seed, err := seedPlan(utf8Files)
	if err != nil {
		return err
	}
	var xs, ys []float64
	fmt.Printf("\ngenerated plans (statements of %s repeated):\n", filepath.Base(seed))
	for _, f := range strings.Split(sizes, ",") {
		var size int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &size); err != nil || size <= 0 {
			return fmt.Errorf("bad size %q", f)
		}
		path := filepath.Join(work, fmt.Sprintf("large-%dMB.sqlplan", size))
		n, err := generate(seed, path, int64(size)<<20)
		if err != nil {
			return err
		}
		m := measure(max(1, runs/2), bin, []string{"check", "--format", "json", "--fail-on", "none", path})
		if m.err != nil {
			return fmt.Errorf("planlint on %s: %w", path, m.err)
		}
		r := float64(m.rss) / float64(n)
		fmt.Printf("  %6.1f MB: %7.2f s  %6.1f MB/s  peak RSS %7.1f MB = %.2f× the file (target ≤ 3×: %s)\n",
			mb(n), m.wall.Seconds(), mb(n)/m.wall.Seconds(), mb(m.rss), r, verdict(r <= 3))
		xs, ys = append(xs, mb(n)), append(ys, m.wall.Seconds())
		os.Remove(path)
	}
	if len(xs) >= 2 {
		slope, intercept, r2 := fit(xs, ys)
		fmt.Printf("time = %.4f s/MB × size + %.3f s (R² = %.4f: %s)\n", slope, intercept, r2, verdict(r2 >= 0.98))
	}
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

func defaultCorpus() string {
	if d := os.Getenv("PLANLINT_SHARED"); d != "" {
		return filepath.Join(d, "corpus", "plans")
	}
	wd, _ := os.Getwd()
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared", "corpus", "plans")
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

var declaration = regexp.MustCompile(`^\s*<\?xml[^?]*\?>`)

// prepareCorpus lists the corpus files and writes UTF-8 copies without
// the (often wrong) encoding declaration, for xmllint.
func prepareCorpus(dir, out string) (originals, copies []string, largest, total int64, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, 0, 0, err
	}
	for _, e := range entries {
		if name := strings.ToLower(e.Name()); !e.Type().IsRegular() || !strings.HasSuffix(name, ".sqlplan") && !strings.HasSuffix(name, ".xml") {
			continue
		}
		src := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		if bytes.HasPrefix(b, []byte{0xFF, 0xFE}) || bytes.HasPrefix(b, []byte{0xFE, 0xFF}) {
			if b, err = unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewDecoder().Bytes(b); err != nil {
				return nil, nil, 0, 0, fmt.Errorf("%s: %w", src, err)
			}
		}
		b = declaration.ReplaceAll(bytes.TrimPrefix(b, []byte{0xEF, 0xBB, 0xBF}), nil)
		dst := filepath.Join(out, e.Name())
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return nil, nil, 0, 0, err
		}
		originals, copies = append(originals, src), append(copies, dst)
		total += int64(len(b))
		largest = max(largest, int64(len(b)))
	}
	if len(originals) == 0 {
		return nil, nil, 0, 0, fmt.Errorf("no .sqlplan or .xml files in %s", dir)
	}
	return originals, copies, largest, total, nil
}

type result struct {
	wall time.Duration
	rss  int64 // bytes
	err  error
}

// measure runs the command n times and returns the median wall time and
// the largest peak RSS (from the kernel's rusage of the child).
func measure(n int, name string, args []string) result {
	var walls []time.Duration
	var rss int64
	for i := 0; i < n; i++ {
		cmd := exec.Command(name, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Stdout = nil
		start := time.Now()
		err := cmd.Run()
		walls = append(walls, time.Since(start))
		if err != nil {
			return result{err: fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))}
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = max(rss, ru.Maxrss*1024) // Linux reports KB
		}
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	return result{wall: walls[len(walls)/2], rss: rss}
}

// seedPlan picks the largest single-batch corpus plan made of StmtSimple
// statements, to repeat into large plans.
func seedPlan(files []string) (string, error) {
	best, bestSize := "", 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		if bytes.Count(b, []byte("<Batch>")) != 1 || bytes.Contains(b, []byte("<StmtCond")) || !bytes.Contains(b, []byte("<StmtSimple")) {
			continue
		}
		if len(b) > bestSize && len(b) < 4<<20 {
			best, bestSize = f, len(b)
		}
	}
	if best == "" {
		return "", errors.New("no suitable seed plan in the corpus")
	}
	return best, nil
}

// generate writes a plan whose Statements repeat the seed's until the file
// reaches size bytes; it returns the size written.
func generate(seed, path string, size int64) (int64, error) {
	b, err := os.ReadFile(seed)
	if err != nil {
		return 0, err
	}
	open := bytes.Index(b, []byte("<Statements>"))
	close := bytes.LastIndex(b, []byte("</Statements>"))
	if open < 0 || close < 0 {
		return 0, fmt.Errorf("%s: no Statements element", seed)
	}
	head, body, tail := b[:open+len("<Statements>")], b[open+len("<Statements>"):close], b[close:]
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	written := int64(0)
	for _, part := range [][]byte{head} {
		n, err := f.Write(part)
		if err != nil {
			return 0, err
		}
		written += int64(n)
	}
	for written+int64(len(tail)) < size {
		n, err := f.Write(body)
		if err != nil {
			return 0, err
		}
		written += int64(n)
	}
	n, err := f.Write(tail)
	return written + int64(n), err
}

// fit is a least-squares line through the points with its R².
func fit(xs, ys []float64) (slope, intercept, r2 float64) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	slope = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	intercept = (sy - slope*sx) / n
	mean := sy / n
	var ssRes, ssTot float64
	for i := range xs {
		p := slope*xs[i] + intercept
		ssRes += (ys[i] - p) * (ys[i] - p)
		ssTot += (ys[i] - mean) * (ys[i] - mean)
	}
	if ssTot == 0 {
		return slope, intercept, 1
	}
	return slope, intercept, 1 - ssRes/ssTot
}

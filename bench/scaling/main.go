// Command scaling measures how planlint's time and peak memory grow on
// generated hostile inputs: for each path it runs the binary at three sizes
// and prints CPU time (user+sys, which other load on the machine does not
// inflate as it does wall time), peak RSS, their ratios to the smallest
// size, and the slope: the exponent k in time ∝ size^k (1 is linear). The
// .sql cases (internal/sqlgen's shapes) also print the peak RSS over the
// input size, which should stay a few times the input.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/planlint/planlint/internal/plangen"
)

type scalingCase struct {
	name  string
	unit  string
	sizes []int
	gen   func(n int) (file, content string)
	args  func(path string) []string
}

func main() {
	bin := flag.String("planlint", "", "planlint binary to measure (default: build it)")
	only := flag.String("only", "", "run only the cases whose name contains this")
	gen := flag.String("gen", "", "internal: write the input of this case at size -n to stdout")
	genN := flag.Int("n", 0, "internal: the size for -gen")
	scale := flag.Int("scale", 1, "multiply every case's sizes by this (e.g. 10: 100,000 statements)")
	explain := flag.Bool("explain", false, "also measure explain on the .sql cases, against the TDS test server")
	flag.Parse()
	if *scale < 1 {
		fail(fmt.Errorf("-scale must be at least 1"))
	}
	work, err := os.MkdirTemp("", "scaling")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(work)
	if *bin == "" && *gen == "" {
		*bin = filepath.Join(work, "planlint")
		build := exec.Command("go", "build", "-o", *bin, ".")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fail(fmt.Errorf("building planlint: %w", err))
		}
	}
	check := func(extra ...string) func(string) []string {
		return func(path string) []string { return append(append([]string{"check"}, extra...), path) }
	}
	root := `<?xml version="1.0"?><ShowPlanXML xmlns="` + plangen.Namespace + `">`
	cases := []scalingCase{
		{"key lookups in one statement, json", "lookups", []int{2500, 5000, 10000},
			func(n int) (string, string) { return "kl.sqlplan", plangen.KeyLookups(n) }, check("--format", "json")},
		{"statements, json", "statements", []int{2500, 5000, 10000},
			func(n int) (string, string) { return "st.sqlplan", plangen.Statements(n) }, check("--format", "json")},
		{"statements with one root cause across them, json", "statements", []int{2500, 5000, 10000},
			func(n int) (string, string) { return "cs.sqlplan", plangen.CrossStatements(n) }, check("--format", "json")},
		{"statements, sarif", "statements", []int{2500, 5000, 10000},
			func(n int) (string, string) { return "st.sqlplan", plangen.Statements(n) }, check("--format", "sarif")},
		{"statements, html", "statements", []int{1000, 2000, 4000},
			func(n int) (string, string) { return "st.sqlplan", plangen.Statements(n) }, check("--format", "html")},
		{"nested loops, --tree", "levels", []int{2000, 4000, 8000},
			func(n int) (string, string) { return "nl.sqlplan", plangen.NestedLoops(n) }, check("--tree", "--max-depth", "65536")},
		{"unterminated comment", "MiB", []int{16, 32, 64},
			func(n int) (string, string) { return "c.sqlplan", root + "<!--" + strings.Repeat("a", n<<20) }, check()},
		{"unterminated DOCTYPE", "MiB", []int{16, 32, 64},
			func(n int) (string, string) {
				return "d.sqlplan", `<?xml version="1.0"?><!DOCTYPE x [` + strings.Repeat("a", n<<20)
			}, check()},
	}
	server := "gen" // the generator child needs only the case names
	if *gen == "" {
		server = ""
	}
	if *explain && *gen == "" {
		var stop func()
		server, stop, err = startServer(work)
		if err != nil {
			fail(err)
		}
		defer stop()
	}
	cases = append(cases, sqlCases(server)...)
	for i := range cases {
		sizes := make([]int, len(cases[i].sizes))
		for j, n := range cases[i].sizes {
			sizes[j] = n * *scale
		}
		cases[i].sizes = sizes
	}
	if *gen != "" {
		for _, c := range cases {
			if c.name == *gen {
				_, content := c.gen(*genN)
				os.Stdout.WriteString(content)
				return
			}
		}
		fail(fmt.Errorf("no case %q", *gen))
	}
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	for _, c := range cases {
		if *only != "" && !strings.Contains(c.name, *only) {
			continue
		}
		if err := measure(self, *bin, work, c); err != nil {
			fail(fmt.Errorf("%s: %w", c.name, err))
		}
	}
}

func measure(self, bin, work string, c scalingCase) error {
	fmt.Printf("\n%s\n  %10s %10s %10s %10s %10s %8s %8s %8s %12s\n", c.name, c.unit, "input", "cpu", "wall", "peak RSS", "RSS/in", "cpu×", "RSS×", "output")
	var cpu0, rss0 float64
	var cpus []float64
	for i, n := range c.sizes {
		// A child process writes the input: the peak RSS the kernel reports
		// for the measured child includes this process's, which therefore
		// never holds the input.
		name, _ := c.gen(0)
		path := filepath.Join(work, name)
		in, err := os.Create(path)
		if err != nil {
			return err
		}
		g := exec.Command(self, "-gen", c.name, "-n", fmt.Sprint(n))
		g.Stdout, g.Stderr = in, os.Stderr
		err = g.Run()
		inSize, _ := in.Seek(0, 2)
		in.Close()
		if err != nil {
			return fmt.Errorf("generating: %w", err)
		}
		out, err := os.Create(filepath.Join(work, "out"))
		if err != nil {
			return err
		}
		cmd := exec.Command(bin, c.args(path)...)
		cmd.Stdout = out
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		err = cmd.Run()
		wall := time.Since(start)
		size, _ := out.Seek(0, 2)
		out.Close()
		if cmd.ProcessState == nil {
			return err
		}
		if cmd.ProcessState.ExitCode() > 1 { // 1 is findings
			return fmt.Errorf("exit %d: %s", cmd.ProcessState.ExitCode(), lastLines(stderr.String(), 5))
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		rss := float64(ru.Maxrss) * 1024 // Linux reports KiB
		if i == 0 {
			cpu0, rss0 = cpu, rss
		}
		cpus = append(cpus, cpu)
		fmt.Printf("  %10d %9.1fMB %9.2fs %9.2fs %9.0fMB %10.1f %8.2f %8.2f %11.1fMB\n", n, float64(inSize)/1e6, cpu, wall.Seconds(), rss/1e6,
			rss/float64(inSize), cpu/cpu0, rss/rss0, float64(size)/1e6)
		os.Remove(path)
	}
	first, last := c.sizes[0], c.sizes[len(c.sizes)-1]
	slope := math.Log(cpus[len(cpus)-1]/cpus[0]) / math.Log(float64(last)/float64(first))
	fmt.Printf("  slope (cpu ∝ %s^k): k = %.2f\n", c.unit, slope)
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scaling:", err)
	os.Exit(1)
}

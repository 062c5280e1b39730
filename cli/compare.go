package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/planlint/planlint/compare"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/report"
	"github.com/planlint/planlint/rules"
)

// compareFormats are compare's --format and --output values.
var compareFormats = []string{"text", "json", "markdown", "github"}

type compareFlags struct {
	format   string
	outputs  []string
	failOn   string
	schemas  []string
	noRedact bool
	root     string
}

func newCompareCmd(env *Env, g *globalFlags) *cobra.Command {
	f := &compareFlags{}
	cmd := &cobra.Command{
		Use:   "compare [flags] A B",
		Short: "Compare two plans of the same statements: shape, rows, cost, grant and findings",
		Long: "compare shows what changed from plan A to plan B — for example a capture at normal queue depth and one\n" +
			"during a backlog, or the plans before and after an index change: operators added or removed, access\n" +
			"paths and indexes, join types, sorts, estimated and actual rows per operator, cost, memory grant, SET\n" +
			"options and compiled parameter values, and the findings B gained or lost. It exits 1 when B gains a\n" +
			"finding at or above --fail-on, so it can guard a change in CI. --format markdown writes a pull-request\n" +
			"comment; --format github annotates the findings B gained and appends the comment to the job summary.\n" +
			"Both mask literals and compiled parameter values unless --no-redact.",
		Example: "  planlint compare normal.sqlplan backlog.sqlplan\n" +
			"  planlint compare --schema schema.sql --format json before.sqlplan after.sqlplan\n" +
			"  planlint compare --format github --output markdown=compare.md before.sqlplan after.sqlplan",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd, env, g, f, args[0], args[1])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "text", "output format on stdout: "+strings.Join(compareFormats, ", "))
	fl.StringArrayVar(&f.outputs, "output", nil, "also write the comparison in FORMAT to PATH: FORMAT=PATH (repeatable)")
	fl.StringVar(&f.failOn, "fail-on", "error", "exit 1 when B gains a finding at or above this severity: error, warning, info or none")
	fl.StringArrayVar(&f.schemas, "schema", nil, "catalog facts for the filtered-index rules (repeatable)")
	fl.BoolVar(&f.noRedact, "no-redact", false, "keep literals and parameter values in shared outputs (markdown, github)")
	fl.StringVar(&f.root, "root", "", "directory that file paths in markdown and github output are relative to (default: the git repository root, else the working directory)")
	completeValues(cmd, "format", compareFormats...)
	completeValues(cmd, "fail-on", "error", "warning", "info", "none")
	return cmd
}

func runCompare(cmd *cobra.Command, env *Env, g *globalFlags, f *compareFlags, pathA, pathB string) error {
	if !slices.Contains(compareFormats, f.format) {
		return usageError("--format must be one of %s, not %q", strings.Join(compareFormats, ", "), f.format)
	}
	extra := map[string]string{}
	for _, o := range f.outputs {
		format, path, ok := strings.Cut(o, "=")
		if !ok || path == "" || !slices.Contains(compareFormats, format) {
			return usageError("--output %q: want FORMAT=PATH with FORMAT one of %s", o, strings.Join(compareFormats, ", "))
		}
		if path == "-" {
			return usageError("--output %s=-: standard output takes --format %s", format, format)
		}
		extra[format] = path
	}
	wd, err := workDir(env)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	baseDir := repoRoot(wd)
	if f.root != "" {
		baseDir = absPath(wd, f.root)
	}
	cfg, threshold, redact, err := loadConfig(cmd, env, g, wd, f.failOn, f.noRedact)
	if err != nil {
		return err
	}
	colored, err := g.useColor(env, env.Stdout)
	if err != nil {
		return err
	}
	cat, err := loadSchemasIn(env, f.schemas)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	sides := make([]compare.Side, 2)
	files := make([]*report.File, 2)
	for i, path := range []string{pathA, pathB} {
		in, err := openFile(env.resolve(path)) // its errors say it once: "no such file"
		if err != nil {
			return &exitError{code: ExitError, err: fmt.Errorf("%s: %w", path, err)}
		}
		in.Close()
		doc, err := plan.ParseFile(env.resolve(path), plan.Options{})
		if err != nil {
			return &exitError{code: ExitError, err: err}
		}
		fs, err := rules.Analyze(doc, cat, &cfg.Rules)
		if err != nil {
			return &exitError{code: ExitError, err: fmt.Errorf("%s: %w", path, err)}
		}
		fs, n := suppressCompared(cfg, repoRoot(wd), path, doc, fs)
		if n > 0 {
			fmt.Fprintf(env.Stderr, "planlint: %s: %d finding(s) suppressed by %s\n", path, n, configName(cfg, wd))
		}
		sides[i] = compare.Side{Name: path, Document: doc, Findings: fs}
		files[i] = locatedFile(path, doc, fs)
	}
	c := &report.Comparison{Version: Version(), Result: compare.Documents(sides[0], sides[1]), A: files[0], B: files[1]}
	summarized := false
	render := func(w io.Writer, format string, toFile bool) error {
		switch format {
		case "json":
			return report.CompareJSON(w, c.Result)
		case "markdown":
			return report.CompareMarkdown(w, c, report.CompareMarkdownOptions{BaseDir: baseDir, NoRedact: !redact})
		case "github":
			summary := env.Getenv("GITHUB_STEP_SUMMARY")
			if summarized {
				summary = "" // stdout and --output github=PATH append it once
			}
			summarized = true
			return report.CompareGitHub(w, c, report.GitHubOptions{BaseDir: baseDir, NoRedact: !redact, SummaryPath: summary})
		}
		return report.CompareText(w, c.Result, report.TextOptions{Color: colored && !toFile})
	}
	if err := render(env.Stdout, f.format, false); err != nil {
		return &exitError{code: ExitError, err: fmt.Errorf("writing the comparison: %w", err)}
	}
	for _, format := range compareFormats {
		path := extra[format]
		if path == "" {
			continue
		}
		if err := writeCompareFile(path, format, render); err != nil {
			return &exitError{code: ExitError, err: fmt.Errorf("--output %s=%s: %w", format, path, err)}
		}
	}
	if c.Result.Worst() >= threshold {
		return &exitError{code: ExitFindings}
	}
	return nil
}

func writeCompareFile(path, format string, render func(io.Writer, string, bool) error) error {
	out, err := createOutput(path)
	if err != nil {
		return err
	}
	if err := render(out, format, true); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// locatedFile is a side as a report file: its statements, its plan, and
// its findings in the order the rules gave them, each located at its
// element in the plan file as check locates them.
func locatedFile(path string, doc *plan.Document, fs []rules.Finding) *report.File {
	byOrdinal := map[int]*plan.Statement{}
	for _, s := range doc.Statements() {
		byOrdinal[s.Ordinal] = s
	}
	f := &report.File{Path: path, Statements: report.Summarize(doc), Plans: []*plan.Document{doc}, Findings: []*report.Finding{}}
	for _, x := range fs {
		one := []rules.Finding{x}
		if s := byOrdinal[x.Ordinal]; s != nil {
			f.Findings = append(f.Findings, locateInPlan(path, s, one)...)
		} else {
			f.Findings = append(f.Findings, report.Wrap(one)...)
		}
	}
	return f
}

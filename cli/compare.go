package cli

import (
	"fmt"
	"io"
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
	out     outputFlags
	schemas []string
	limits  limitFlags
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
			"Both mask literals and compiled parameter values unless --no-redact. Text, markdown and github show\n" +
			"the gained and lost findings at or above --min-severity (default warning) and count the others in a\n" +
			"note; json carries every finding, and --fail-on counts every gained finding whatever is shown.",
		Example: "  planlint compare normal.sqlplan backlog.sqlplan\n" +
			"  planlint compare --schema schema.sql --format json before.sqlplan after.sqlplan\n" +
			"  planlint compare --min-severity info before.sqlplan after.sqlplan\n" +
			"  planlint compare --format github --output markdown=compare.md before.sqlplan after.sqlplan",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd, env, g, f, args[0], args[1])
		},
	}
	fl := cmd.Flags()
	o := &f.out
	o.sort = "impact"
	fl.StringVar(&o.format, "format", "text", "output format on stdout: "+strings.Join(compareFormats, ", "))
	fl.StringArrayVar(&o.outputs, "output", nil, "also write the comparison in FORMAT to PATH: FORMAT=PATH (repeatable)")
	fl.StringVar(&o.failOn, "fail-on", "error", "exit 1 when B gains a finding at or above this severity: error, warning, info or none")
	fl.StringVar(&o.minSeverity, "min-severity", "warning", "show gained and lost findings at or above this severity in text, markdown and github output: info, warning or error (json keeps all; --fail-on counts all)")
	fl.StringArrayVar(&f.schemas, "schema", nil, "catalog facts for the filtered-index rules (repeatable)")
	fl.BoolVar(&o.noRedact, "no-redact", false, "keep literals and parameter values in shared outputs (markdown, github)")
	fl.StringVar(&o.root, "root", "", "directory that file paths in markdown and github output are relative to (default: the git repository root, else the working directory)")
	f.limits.register(cmd)
	completeValues(cmd, "format", compareFormats...)
	completeValues(cmd, "fail-on", "error", "warning", "info", "none")
	completeValues(cmd, "min-severity", "info", "warning", "error")
	return cmd
}

func runCompare(cmd *cobra.Command, env *Env, g *globalFlags, f *compareFlags, pathA, pathB string) error {
	tuneGCForDecoding()
	limits, err := f.limits.options()
	if err != nil {
		return err
	}
	// Every --output file is opened before anything is read or printed.
	r, err := prepareFormats(cmd, env, g, &f.out, compareFormats)
	if err != nil {
		return err
	}
	defer r.release()
	cat, err := loadSchemasIn(env, f.schemas)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	sides := make([]compare.Side, 2)
	files := make([]*report.File, 2)
	for i, path := range []string{pathA, pathB} {
		doc, err := parseCompared(env, path, limits)
		if err != nil {
			return &exitError{code: ExitError, err: fmt.Errorf("%s: %w", path, err)}
		}
		fs, err := rules.Analyze(doc, cat, r.rulesConfig())
		if err != nil {
			return &exitError{code: ExitError, err: fmt.Errorf("%s: %w", path, err)}
		}
		fs, n := suppressCompared(r.cfg, repoRoot(r.workDir), path, doc, fs)
		if n > 0 {
			fmt.Fprintf(env.Stderr, "planlint: %s: %d finding(s) suppressed by %s\n", path, n, configName(r.cfg, r.workDir))
		}
		sides[i] = compare.Side{Name: path, Document: doc, Findings: fs}
		files[i] = locatedFile(path, doc, fs)
	}
	c := &report.Comparison{Version: Version(), Result: compare.Documents(sides[0], sides[1]), A: files[0], B: files[1]}
	noRedact := !r.redact
	render := func(w io.Writer, format string, toFile bool) error {
		switch format {
		case "json":
			return report.CompareJSON(w, c.Result)
		case "markdown":
			return report.CompareMarkdown(w, c, report.CompareMarkdownOptions{BaseDir: r.baseDir, NoRedact: noRedact, MinSeverity: r.minShown})
		case "github":
			return report.CompareGitHub(w, c, report.GitHubOptions{BaseDir: r.baseDir, NoRedact: noRedact, SummaryPath: r.jobSummary(), MinSeverity: r.minShown})
		}
		return report.CompareText(w, c.Result, report.TextOptions{Color: r.colored && !toFile, MinSeverity: r.minShown})
	}
	if err := render(env.Stdout, f.out.format, false); err != nil {
		return &exitError{code: ExitError, err: fmt.Errorf("writing the comparison: %w", err)}
	}
	if err := r.writeOutputs(func(w io.Writer, format string) error { return render(w, format, true) }); err != nil {
		return err
	}
	if c.Result.Worst() >= r.threshold { // every gained finding, shown or not
		return &exitError{code: ExitFindings}
	}
	return nil
}

// parseCompared reads one side as check reads a plan file: a regular file
// only (a FIFO or device is refused without blocking), within the
// --max-file-size and --max-depth limits. Its errors do not repeat the
// path.
func parseCompared(env *Env, path string, limits plan.Options) (*plan.Document, error) {
	in, err := openFile(env.resolve(path))
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return plan.Parse(in, limits)
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

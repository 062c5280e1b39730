package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/report"
	"github.com/planlint/planlint/rules"
)

// outputFlags are the reporting flags shared by every command that
// reports findings.
type outputFlags struct {
	format string
	failOn string
	tree   bool
}

func (o *outputFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.format, "format", "text", "output format: text or json")
	cmd.Flags().StringVar(&o.failOn, "fail-on", "error", "exit 1 when a finding is at or above this severity: error, warning, info or none")
	cmd.Flags().BoolVar(&o.tree, "tree", false, "print each statement's operator tree (text format)")
}

// threshold parses --fail-on; none gives a severity no finding reaches.
func (o *outputFlags) threshold() (rules.Severity, error) {
	if strings.EqualFold(o.failOn, "none") {
		return rules.Error + 1, nil
	}
	s, err := rules.ParseSeverity(o.failOn)
	if err != nil {
		return 0, usageError("--fail-on: %v", err)
	}
	return s, nil
}

type checkFlags struct {
	out         outputFlags
	schemas     []string
	maxFileSize int64
	maxDepth    int
	jobs        int
}

func newCheckCmd(env *Env, g *globalFlags) *cobra.Command {
	f := &checkFlags{}
	cmd := &cobra.Command{
		Use:   "check [flags] PLAN...",
		Short: "Analyse saved showplan files (.sqlplan, plan-cache or Query Store exports; - for stdin)",
		Long: "check analyses saved showplan XML files: SSMS .sqlplan files (UTF-8 or UTF-16), plans exported from the\n" +
			"plan cache or Query Store, or - for standard input. With --schema it also reads catalog facts (CREATE TABLE /\n" +
			"CREATE INDEX scripts, or the JSON that 'explain --save' writes) for the filtered-index rules.",
		Example: "  planlint check slow.sqlplan\n  planlint check --schema schema.sql --format json plans/*.sqlplan\n  planlint check - < plan.xml",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(env, g, f, args)
		},
	}
	f.out.register(cmd)
	cmd.Flags().StringArrayVar(&f.schemas, "schema", nil, "catalog facts: a CREATE TABLE/INDEX script or an 'explain --save' JSON file (repeatable)")
	cmd.Flags().Int64Var(&f.maxFileSize, "max-file-size", plan.DefaultMaxBytes, "refuse plans larger than this many bytes")
	cmd.Flags().IntVar(&f.maxDepth, "max-depth", plan.DefaultMaxDepth, "refuse plans nested deeper than this many XML elements")
	cmd.Flags().IntVar(&f.jobs, "jobs", 0, "files analysed in parallel (default: number of CPUs)")
	return cmd
}

func runCheck(env *Env, g *globalFlags, f *checkFlags, args []string) error {
	threshold, err := f.out.threshold()
	if err != nil {
		return err
	}
	if f.out.format != "text" && f.out.format != "json" {
		return usageError("--format must be text or json, not %q", f.out.format)
	}
	colored, err := g.useColor(env, env.Stdout)
	if err != nil {
		return err
	}
	cat, err := loadSchemas(f.schemas)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	a := &analyzer{
		catalog:   cat,
		limits:    plan.Options{MaxBytes: f.maxFileSize, MaxDepth: f.maxDepth},
		keepPlans: f.out.tree,
	}
	inputs, err := checkInputs(env, args)
	if err != nil {
		return err
	}
	files, err := a.analyzeAll(inputs, f.jobs)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	rep := &report.Report{Tool: "planlint", Version: Version(), Files: files}
	return finish(env, rep, &f.out, threshold, colored)
}

// finish renders the report, prints input errors on stderr and turns the
// outcome into an exit code.
func finish(env *Env, rep *report.Report, out *outputFlags, threshold rules.Severity, colored bool) error {
	for _, f := range rep.Files {
		if f.Error != nil {
			fmt.Fprintf(env.Stderr, "planlint: %s: %s\n", f.Path, *f.Error)
		}
	}
	var err error
	switch out.format {
	case "json":
		err = report.JSON(env.Stdout, rep)
	default:
		err = report.Text(env.Stdout, rep, report.TextOptions{Color: colored, Tree: out.tree})
	}
	if err != nil {
		return &exitError{code: ExitError, err: fmt.Errorf("writing the report: %w", err)}
	}
	if rep.Failed() > 0 {
		return &exitError{code: ExitError}
	}
	if rep.Max() >= threshold {
		return &exitError{code: ExitFindings}
	}
	return nil
}

// checkInputs turns arguments into inputs; "-" is standard input (once).
func checkInputs(env *Env, args []string) ([]input, error) {
	var inputs []input
	stdin := false
	for _, arg := range args {
		if arg == "-" {
			if stdin {
				return nil, usageError("standard input (-) given more than once")
			}
			stdin = true
			inputs = append(inputs, input{path: "<stdin>", open: func() (io.ReadCloser, error) {
				return io.NopCloser(env.Stdin), nil
			}})
			continue
		}
		path := arg
		inputs = append(inputs, input{path: path, open: func() (io.ReadCloser, error) { return openFile(path) }})
	}
	return inputs, nil
}

// openFile opens a plan file with errors that say what is wrong.
func openFile(path string) (io.ReadCloser, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.New("no such file")
	case errors.Is(err, fs.ErrPermission):
		return nil, errors.New("permission denied")
	case err != nil:
		return nil, err
	case st.IsDir():
		return nil, errors.New("is a directory (name the plan files, e.g. dir/*.sqlplan)")
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrPermission) {
		return nil, errors.New("permission denied")
	}
	return f, err
}

// loadSchemas reads and merges catalog facts; nil when none are given.
func loadSchemas(paths []string) (*catalog.Catalog, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	var cat *catalog.Catalog
	for _, p := range paths {
		c, err := catalog.Load(p)
		if err != nil {
			return nil, fmt.Errorf("--schema %s: %w", p, err)
		}
		if cat == nil {
			cat = c
		} else {
			cat.Merge(c)
		}
	}
	return cat, nil
}

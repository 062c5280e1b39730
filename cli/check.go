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
	"github.com/planlint/planlint/internal/regular"
	"github.com/planlint/planlint/report"
)

type checkFlags struct {
	out     outputFlags
	schemas []string
	limits  limitFlags
	jobs    int
	include []string
}

func newCheckCmd(env *Env, g *globalFlags) *cobra.Command {
	f := &checkFlags{}
	cmd := &cobra.Command{
		Use:   "check [flags] PLAN|DIR|GLOB...",
		Short: "Analyse saved showplan files (.sqlplan, plan-cache or Query Store exports; - for stdin)",
		Long: "check analyses saved showplan XML files: SSMS .sqlplan files (UTF-8 or UTF-16), plans exported from the\n" +
			"plan cache or Query Store, or - for standard input. With --schema it also reads catalog facts (CREATE TABLE /\n" +
			"CREATE INDEX scripts, or the JSON that 'explain --save' writes) for the filtered-index rules.",
		Example: "  planlint check slow.sqlplan\n  planlint check --schema schema.sql --format json plans/*.sqlplan\n  planlint check plans/          # every .sqlplan and .xml below plans\n  planlint check 'plans/**/*.sqlplan'\n  planlint check - < plan.xml",
		Args:    needArgs("a plan file, a directory, a glob or - for standard input"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd, env, g, f, args)
		},
	}
	f.out.register(cmd)
	cmd.Flags().StringArrayVar(&f.schemas, "schema", nil, "catalog facts: a CREATE TABLE/INDEX script or an 'explain --save' JSON file (repeatable)")
	f.limits.register(cmd)
	cmd.Flags().IntVar(&f.jobs, "jobs", 0, "files analysed in parallel (default: number of CPUs)")
	cmd.Flags().StringArrayVar(&f.include, "include", nil, "file names read from a directory argument (repeatable; default *.sqlplan and *.xml)")
	return cmd
}

func runCheck(cmd *cobra.Command, env *Env, g *globalFlags, f *checkFlags, args []string) error {
	tuneGCForDecoding()
	limits, err := f.limits.options()
	if err != nil {
		return err
	}
	r, err := prepare(cmd, env, g, &f.out)
	if err != nil {
		return err
	}
	defer r.release()
	if f.jobs < 0 {
		return usageError("--jobs must be 0 (one per CPU) or more, not %d", f.jobs)
	}
	cat, err := loadSchemasIn(env, f.schemas)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	a := &analyzer{
		catalog:   cat,
		config:    r.rulesConfig(),
		limits:    limits,
		keepPlans: r.needsPlans(),
	}
	include := f.include
	if len(include) == 0 {
		include = defaultInclude
	}
	r.unusedScope = includeScope(include)
	paths, failed := expandArgs(env, args, f.include)
	inputs, err := checkInputs(env, r.excluded(paths))
	if err != nil {
		return err
	}
	for i, in := range inputs {
		if err := failed[in.path]; err != nil {
			inputs[i] = failedInput(in.path, err)
		}
	}
	files, err := a.analyzeAll(inputs, f.jobs)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	return r.finish(&report.Report{Tool: "planlint", Version: Version(), Files: files})
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
		inputs = append(inputs, input{path: path, open: func() (io.ReadCloser, error) { return openFile(env.resolve(path)) }})
	}
	return inputs, nil
}

// openFile opens a plan file with errors that say what is wrong. Only
// regular files are read: a FIFO or device could block the run forever.
func openFile(path string) (io.ReadCloser, error) {
	f, err := regular.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.New("no such file")
	case errors.Is(err, fs.ErrPermission):
		return nil, errors.New("permission denied")
	case errors.Is(err, regular.ErrNotRegular):
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			return nil, errors.New("is a directory (name the plan files, e.g. dir/*.sqlplan)")
		}
		return nil, unwrapPath(err)
	case err != nil:
		return nil, unwrapPath(err)
	}
	return f, nil
}

// unwrapPath drops the "open path:" that the path's own prefix repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// loadSchemas reads and merges catalog facts; nil when none are given.
func loadSchemas(paths []string) (*catalog.Catalog, error) { return loadSchemasIn(&Env{}, paths) }

// loadSchemasIn is loadSchemas with relative paths taken from env's
// working directory.
func loadSchemasIn(env *Env, paths []string) (*catalog.Catalog, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	var cat *catalog.Catalog
	for _, p := range paths {
		path := env.resolve(p)
		c, err := catalog.Load(path)
		if err != nil {
			if msg, ok := strings.CutPrefix(err.Error(), path); ok { // catalog's errors start with the path
				return nil, fmt.Errorf("--schema %s%s", p, msg)
			}
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

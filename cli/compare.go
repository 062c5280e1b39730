package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/planlint/planlint/compare"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/report"
	"github.com/planlint/planlint/rules"
)

type compareFlags struct {
	format  string
	failOn  string
	schemas []string
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
			"finding at or above --fail-on, so it can guard a change in CI.",
		Example: "  planlint compare normal.sqlplan backlog.sqlplan\n  planlint compare --schema schema.sql --format json before.sqlplan after.sqlplan",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd, env, g, f, args[0], args[1])
		},
	}
	cmd.Flags().StringVar(&f.format, "format", "text", "output format: text or json")
	cmd.Flags().StringVar(&f.failOn, "fail-on", "error", "exit 1 when B gains a finding at or above this severity: error, warning, info or none")
	cmd.Flags().StringArrayVar(&f.schemas, "schema", nil, "catalog facts for the filtered-index rules (repeatable)")
	return cmd
}

func runCompare(cmd *cobra.Command, env *Env, g *globalFlags, f *compareFlags, pathA, pathB string) error {
	if f.format != "text" && f.format != "json" {
		return usageError("--format must be text or json, not %q", f.format)
	}
	wd, err := workDir(env)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	cfg, threshold, _, err := loadConfig(cmd, env, g, wd, f.failOn, false)
	if err != nil {
		return err
	}
	colored, err := g.useColor(env, env.Stdout)
	if err != nil {
		return err
	}
	cat, err := loadSchemas(f.schemas)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	sides := make([]compare.Side, 2)
	for i, path := range []string{pathA, pathB} {
		in, err := openFile(path) // its errors say it once: "no such file"
		if err != nil {
			return &exitError{code: ExitError, err: fmt.Errorf("%s: %w", path, err)}
		}
		in.Close()
		doc, err := plan.ParseFile(path, plan.Options{})
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
	}
	res := compare.Documents(sides[0], sides[1])
	if f.format == "json" {
		err = report.CompareJSON(env.Stdout, res)
	} else {
		err = report.CompareText(env.Stdout, res, report.TextOptions{Color: colored})
	}
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	if res.Worst() >= threshold {
		return &exitError{code: ExitFindings}
	}
	return nil
}

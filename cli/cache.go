package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/planlint/planlint/capture"
)

func newCacheCmd(env *Env, g *globalFlags) *cobra.Command {
	f := &triageFlags{}
	cmd := &cobra.Command{
		Use:   "cache [flags]",
		Short: "Analyse the worst statements of the plan cache, with their runtime figures",
		Long: "cache reads the top statements of the plan cache (sys.dm_exec_query_stats), ranked by --order-by, reads\n" +
			"each plan as text (sys.dm_exec_text_query_plan, which has no 128-level nesting limit), and runs every rule on\n" +
			"it with the catalog facts of the connected database's tables. Each statement is reported with its figures:\n" +
			"executions, CPU, duration, reads, rows, spills, memory grant and last execution. A statement whose plan the\n" +
			"server no longer has, or that is over --max-file-size, is reported without findings; it does not fail the run.\n" +
			"-d/--database both connects to a database and keeps only its statements. It only reads, and needs\n" +
			"VIEW SERVER STATE (VIEW SERVER PERFORMANCE STATE on SQL Server 2022 and later).",
		Example: "  planlint cache -S prod -d WorkDb --top 10\n" +
			"  planlint cache -S prod --order-by reads --like 'dbo.Work' --format json\n" +
			"  planlint cache -S prod -d WorkDb --order-by grant --tree",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCache(cmd, env, g, f)
		},
	}
	f.register(cmd, "rank statements by total cpu, duration, reads, executions, or by their largest grant")
	return cmd
}

func runCache(cmd *cobra.Command, env *Env, g *globalFlags, f *triageFlags) error {
	order, err := f.validate()
	if err != nil {
		return err
	}
	t, err := openTriage(cmd, env, g, f, "")
	if err != nil {
		return err
	}
	defer t.close()
	o := capture.CacheOptions{Top: f.top, OrderBy: order, Like: f.like, Limits: f.limits(), Progress: t.pulling}
	if cmd.Flags().Changed("database") {
		o.Database = f.conn.database
	}
	pull, err := t.sess.PlanCache(t.ctx, o)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	t.notes(pull)
	if len(pull.Statements) == 0 {
		what := "the plan cache holds no statement"
		if o.Database != "" {
			what += " of database " + o.Database
		}
		if f.like != "" {
			what += fmt.Sprintf(" whose text is LIKE %q", capture.LikePattern(f.like))
		}
		diag(env.Stderr, "", what)
	}
	tr, err := t.analyse(pull, methodPlanCache)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	return t.finishTriage(tr)
}

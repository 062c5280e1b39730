package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/planlint/planlint/capture"
)

type doctorFlags struct {
	conn   connFlags
	trace  traceFlags
	format string
}

func newDoctorCmd(env *Env) *cobra.Command {
	f := &doctorFlags{}
	cmd := &cobra.Command{
		Use:   "doctor [flags]",
		Short: "Check that a SQL Server gives planlint what explain, cache and querystore need",
		Long: "doctor connects as explain does and checks every assumption the capture commands rely on: version and edition;\n" +
			"the SHOWPLAN, VIEW SERVER STATE and VIEW DATABASE STATE permissions; whether SHOWPLAN_XML returns a plan for a batch\n" +
			"and for an sp_executesql RPC, and whether the temporary-procedure fallback returns one with the parameter's compiled\n" +
			"value; sp_get_query_template; the catalog views and DMVs; the database's parameterization, snapshot settings and\n" +
			"compatibility level. It changes nothing on the server (its only object is the session's temporary procedure, dropped\n" +
			"at the end). Exit status 0 when everything explain needs works, 1 otherwise, with the reason and what to grant.",
		Example: "  planlint doctor -S db -d WorkDb -U app   # password from $SQLCMDPASSWORD\n" +
			"  planlint doctor --connection-string \"$DSN\" --format json",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runDoctor(cmd, env, f) },
	}
	f.conn.register(cmd)
	f.trace.register(cmd)
	cmd.Flags().StringVar(&f.format, "format", "text", "text (a table) or json")
	return cmd
}

func runDoctor(cmd *cobra.Command, env *Env, f *doctorFlags) error {
	if f.format != "text" && f.format != "json" {
		return usageError("--format must be text or json, not %q", f.format)
	}
	o, err := f.conn.options(cmd, env, f.format != "text")
	if err != nil {
		return err
	}
	rec, err := f.trace.recorder(env, "doctor")
	if err != nil {
		return err
	}
	defer f.trace.write(env)
	ctx, stop := interruptContext()
	defer stop()
	rep, _ := capture.Doctor(ctx, o, capture.SessionOptions{QueryTimeout: f.conn.queryTimeout, Trace: rec})
	if f.format == "json" {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return &exitError{code: ExitError, err: err}
		}
	} else {
		writeDoctorTable(env.Stdout, rep)
	}
	if !rep.ExplainWorks {
		return &exitError{code: ExitFindings}
	}
	return nil
}

func writeDoctorTable(w io.Writer, rep *capture.DoctorReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSTATUS\tDETAIL")
	for _, c := range rep.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, c.Status, oneLine(c.Detail))
	}
	tw.Flush()
	var fixes []string
	for _, c := range rep.Checks {
		if c.Fix != "" && (c.Status == capture.CheckFail || c.Status == capture.CheckWarn) {
			fixes = append(fixes, fmt.Sprintf("  %s (%s): %s", c.Name, c.Status, c.Fix))
		}
	}
	if len(fixes) > 0 {
		fmt.Fprintln(w, "\nTo fix:")
		fmt.Fprintln(w, strings.Join(fixes, "\n"))
	}
	if rep.ExplainWorks {
		fmt.Fprintln(w, "\nexplain: everything it needs works")
	} else {
		fmt.Fprintln(w, "\nexplain: will not work here (see the failed checks)")
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

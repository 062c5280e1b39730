package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/planlint/planlint/capture"
	"github.com/planlint/planlint/compare"
	"github.com/planlint/planlint/report"
)

type querystoreFlags struct {
	triageFlags
	since   string
	queryID int64
}

func newQuerystoreCmd(env *Env, g *globalFlags) *cobra.Command {
	f := &querystoreFlags{}
	cmd := &cobra.Command{
		Use:   "querystore [flags]",
		Short: "Analyse the worst plans in Query Store, or every plan of one query side by side",
		Long: "querystore reads the Query Store of the connected database (-d): the top plans by their runtime statistics\n" +
			"summed over --since, each with its figures, whether it is forced (and why forcing last failed), and its\n" +
			"Parameter Sensitive Plan type. Each plan is read as text and analysed with every rule. With --query-id it\n" +
			"shows every plan of that query (and of its variants) side by side, then compares each with the most\n" +
			"executed one. A plan that is missing or over --max-file-size is reported without findings; it does not\n" +
			"fail the run. It only reads, and needs VIEW DATABASE STATE (VIEW DATABASE PERFORMANCE STATE on SQL Server\n" +
			"2022 and later).",
		Example: "  planlint querystore -S prod -d WorkDb --since 2h --order-by duration\n" +
			"  planlint querystore -S prod -d WorkDb --query-id 42\n" +
			"  planlint querystore -S prod -d WorkDb --like '%dbo.Work%' --format json",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQuerystore(cmd, env, g, f)
		},
	}
	f.register(cmd, "rank plans by total cpu, duration, reads, executions, or by the largest memory used (grant)")
	cmd.Flags().StringVar(&f.since, "since", "24h", "sum runtime statistics of this recent period: a duration such as 90m, 24h or 7d")
	cmd.Flags().Int64Var(&f.queryID, "query-id", 0, "show every plan of this Query Store query side by side and compare them")
	return cmd
}

func runQuerystore(cmd *cobra.Command, env *Env, g *globalFlags, f *querystoreFlags) error {
	order, err := f.validate()
	if err != nil {
		return err
	}
	since, err := parseSince(f.since)
	if err != nil {
		return usageError("%v", err)
	}
	if cmd.Flags().Changed("query-id") && f.queryID <= 0 {
		return usageError("--query-id %d: query ids are positive", f.queryID)
	}
	extras := ""
	if f.queryID > 0 {
		extras = "--query-id"
	}
	t, err := openTriage(cmd, env, g, &f.triageFlags, extras)
	if err != nil {
		return err
	}
	defer t.close()
	pull, err := t.sess.QueryStore(t.ctx, capture.StoreOptions{Top: f.top, OrderBy: order, Since: since, Like: f.like,
		QueryID: f.queryID, Limits: f.limits(), Progress: t.pulling})
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	t.notes(pull)
	if len(pull.Statements) == 0 {
		if f.queryID > 0 {
			return &exitError{code: ExitError, err: fmt.Errorf("the Query Store of database %s has no plan of query %d", t.sess.Info.Database, f.queryID)}
		}
		diagf(env.Stderr, "", "Query Store of database %s recorded no execution in the last %s", t.sess.Info.Database, sinceText(since))
	}
	tr, err := t.analyse(pull, methodQueryStore)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	if f.queryID == 0 {
		return t.finishTriage(tr)
	}
	extra, err := queryPlans(t, tr, f.queryID, since)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	return finishWithExtras(t.inv, func() error { return t.finishTriage(tr) }, extra)
}

// planRow is one line of the --query-id table.
type planRow struct {
	QueryID         int64      `json:"query_id"`
	PlanID          int64      `json:"plan_id"`
	Forced          bool       `json:"is_forced_plan"`
	PlanType        string     `json:"plan_type,omitempty"`
	Executions      int64      `json:"executions"`
	AvgCPUMs        float64    `json:"avg_cpu_ms"`
	AvgDurationMs   float64    `json:"avg_duration_ms"`
	AvgLogicalReads float64    `json:"avg_logical_reads"`
	LastExecution   *time.Time `json:"last_execution,omitempty"`
	Errors          int        `json:"errors"`
	Warnings        int        `json:"warnings"`
	Infos           int        `json:"infos"`
	// Problem says why the plan was not analysed.
	Problem string `json:"problem,omitempty"`
}

// queryPlans builds the --query-id output: the plans side by side, then
// each plan compared with the most executed one that could be analysed.
func queryPlans(t *triageRun, tr *triaged, queryID int64, since time.Duration) (extraOutput, error) {
	var rows []planRow
	var base *report.File
	for _, f := range tr.files {
		rt := f.Runtime()
		p := tr.pulled[f]
		e, w, i := severityCounts(f)
		row := planRow{QueryID: p.Store.QueryID, PlanID: p.Store.PlanID, Forced: p.Store.Forced, PlanType: p.Store.PlanType,
			Executions: rt.Executions, AvgCPUMs: rt.AvgCPUMs, AvgDurationMs: rt.AvgDurationMs, AvgLogicalReads: rt.AvgLogicalReads,
			LastExecution: rt.LastExecution, Errors: e, Warnings: w, Infos: i}
		if p.Err != nil {
			row.Problem = p.Err.Error()
		} else if base == nil {
			base = f // the list is ordered by executions, most first
		}
		rows = append(rows, row)
	}
	var results []*compare.Result
	if base != nil {
		bp := tr.pulled[base]
		for _, f := range tr.files {
			p := tr.pulled[f]
			if f == base || p.Doc == nil {
				continue
			}
			results = append(results, compare.Documents(
				compare.Side{Name: base.Path, Document: bp.Doc, Findings: ruleFindings(base)},
				compare.Side{Name: f.Path, Document: p.Doc, Findings: ruleFindings(f)}))
		}
	}
	comparisons := []json.RawMessage{}
	for _, r := range results {
		raw, err := comparisonJSON(r)
		if err != nil {
			return extraOutput{}, err
		}
		comparisons = append(comparisons, raw)
	}
	if rows == nil {
		rows = []planRow{}
	}
	db := t.sess.Info.Database
	return extraOutput{
		json: map[string]any{"query_id": queryID, "database": db, "since_seconds": int64(since / time.Second),
			"plans": rows, "comparisons": comparisons},
		text: func(w io.Writer) error {
			fmt.Fprintf(w, "\nplans of query %d in Query Store of %s, figures over the last %s\n", queryID, db, sinceText(since))
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "  query\tplan\tforced\ttype\texecutions\tavg CPU ms\tavg duration ms\tavg reads\tlast run\tfindings")
			for _, r := range rows {
				last := "-"
				if r.LastExecution != nil {
					last = r.LastExecution.UTC().Format("2006-01-02 15:04:05Z")
				}
				forced := "no"
				if r.Forced {
					forced = "yes"
				}
				typ := r.PlanType
				if typ == "" {
					typ = "-"
				}
				findings := fmt.Sprintf("%s, %s, %s", count(r.Errors, "error"), count(r.Warnings, "warning"), count(r.Infos, "info"))
				if r.Problem != "" {
					findings = r.Problem
				}
				fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.QueryID, r.PlanID, forced, typ,
					report.FormatCount(float64(r.Executions)), strconv.FormatFloat(r.AvgCPUMs, 'f', 2, 64),
					strconv.FormatFloat(r.AvgDurationMs, 'f', 2, 64), report.FormatCount(r.AvgLogicalReads), last, findings)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			switch {
			case base == nil:
				fmt.Fprintf(w, "\nno plan of query %d could be analysed, so none is compared\n", queryID)
			case len(results) == 0:
				fmt.Fprintf(w, "\nonly %s could be analysed: nothing to compare it with\n", base.Path)
			}
			for _, r := range results {
				fmt.Fprintln(w)
				if err := report.CompareText(w, r, report.TextOptions{Color: t.inv.colored}); err != nil {
					return err
				}
			}
			return nil
		},
	}, nil
}

// count renders "1 error", "2 errors", "0 infos".
func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// sinceText renders a --since period the way it is usually written: 7d,
// 24h, 1h30m.
func sinceText(d time.Duration) string {
	var b strings.Builder
	if days := d / (24 * time.Hour); days > 0 {
		fmt.Fprintf(&b, "%dd", days)
		d -= days * 24 * time.Hour
	}
	if h := d / time.Hour; h > 0 {
		fmt.Fprintf(&b, "%dh", h)
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		fmt.Fprintf(&b, "%dm", m)
		d -= m * time.Minute
	}
	if s := d / time.Second; s > 0 || b.Len() == 0 {
		fmt.Fprintf(&b, "%ds", s)
	}
	return b.String()
}

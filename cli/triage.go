package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/planlint/planlint/capture"
	"github.com/planlint/planlint/compare"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/report"
	"github.com/planlint/planlint/rules"
)

// Capture methods of pulled statements (report.Capture.Method).
const (
	methodPlanCache  = "plan cache (sys.dm_exec_text_query_plan)"
	methodQueryStore = "query store (sys.query_store_plan)"
)

// triageFlags are the flags cache and querystore share.
type triageFlags struct {
	out         outputFlags
	conn        connFlags
	trace       traceFlags
	top         int
	orderBy     string
	like        string
	maxFileSize byteSize
	maxDepth    int
}

func (f *triageFlags) register(cmd *cobra.Command, orderHelp string) {
	f.out.register(cmd)
	f.conn.register(cmd)
	f.trace.register(cmd)
	fl := cmd.Flags()
	fl.IntVar(&f.top, "top", 20, fmt.Sprintf("how many statements to pull (1 to %d)", capture.MaxTop))
	fl.StringVar(&f.orderBy, "order-by", "cpu", orderHelp)
	fl.StringVar(&f.like, "like", "", "keep statements whose text matches this T-SQL LIKE pattern (wrapped in % unless it starts or ends with %)")
	f.maxFileSize = byteSize(plan.DefaultMaxBytes)
	fl.Var(&f.maxFileSize, "max-file-size", "report plans larger than this size without reading them (bytes, or 500KB, 10MiB, 1GiB)")
	fl.IntVar(&f.maxDepth, "max-depth", plan.DefaultMaxDepth, "report plans nested deeper than this many XML elements without analysing them")
}

// limits are the plan size limits of the run.
func (f *triageFlags) limits() plan.Options {
	return plan.Options{MaxBytes: int64(f.maxFileSize), MaxDepth: f.maxDepth}
}

// validate checks the flags that need no connection.
func (f *triageFlags) validate() (capture.Order, error) {
	if f.top < 1 || f.top > capture.MaxTop {
		return 0, usageError("--top %d: want 1 to %d", f.top, capture.MaxTop)
	}
	if err := checkLimits(int64(f.maxFileSize), f.maxDepth); err != nil {
		return 0, err
	}
	o, err := capture.ParseOrder(f.orderBy)
	if err != nil {
		return 0, usageError("%v", err)
	}
	return o, nil
}

// triageRun is one cache or querystore run: the flags, the output
// settings and the session.
type triageRun struct {
	env      *Env
	inv      *invocation
	sess     *capture.Session
	progress *progress
	ctx      context.Context
	stop     context.CancelFunc
	trace    *traceFlags
}

// openTriage validates the output flags, connects and pins the session.
// extras says that the run prints more than the report (a table or
// comparisons), which only text and json can carry.
func openTriage(cmd *cobra.Command, env *Env, g *globalFlags, f *triageFlags, extras string) (*triageRun, error) {
	inv, err := prepare(cmd, env, g, &f.out)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			inv.release()
		}
	}()
	if extras != "" && f.out.format != "text" && f.out.format != "json" {
		return nil, usageError("%s prints more than findings: use --format text or json (--output FORMAT=PATH writes the findings in other formats)", extras)
	}
	connOpts, err := f.conn.options(cmd, env, f.out.format != "text")
	if err != nil {
		return nil, err
	}
	rec, err := f.trace.recorder(env, cmd.Name())
	if err != nil {
		return nil, err
	}
	ctx, stop := interruptContext()
	sess, err := capture.Open(ctx, connOpts, capture.SessionOptions{QueryTimeout: f.conn.queryTimeout,
		MaxReplyBytes: capture.ReplyLimit(int64(f.maxFileSize), f.top), Trace: rec})
	if err != nil {
		stop()
		f.trace.write(env)
		return nil, &exitError{code: ExitError, err: err}
	}
	t := &triageRun{env: env, inv: inv, sess: sess, progress: newProgress(env), ctx: ctx, stop: stop, trace: &f.trace}
	ok = true
	t.progress.printf("connected to %s (SQL Server %s), database %s\n", sess.Connection().Redacted, sess.Info.ProductVersion, sess.Info.Database)
	return t, nil
}

func (t *triageRun) close() {
	t.inv.release()
	t.sess.Close()
	t.stop()
	t.trace.write(t.env)
}

// pulling reports progress, one line per statement, on a terminal.
func (t *triageRun) pulling(n, total int) {
	t.progress.printf("pulling plans: %d of %d\n", n, total)
}

// notes prints the pull's notes on stderr.
func (t *triageRun) notes(pull *capture.Pull) {
	for _, n := range pull.Notes {
		diag(t.env.Stderr, "", "note: "+n)
	}
	if len(pull.OtherTables) > 0 {
		names := make([]string, len(pull.OtherTables))
		for i, o := range pull.OtherTables {
			names[i] = o.String()
		}
		diagf(t.env.Stderr, "", "note: no catalog facts for %s: planlint reads the tables of the session's database (%s) only",
			strings.Join(names, ", "), t.sess.Info.Database)
	}
}

// triaged is a report of pulled statements and, per file, the statement
// it came from.
type triaged struct {
	files  []*report.File
	pulled map[*report.File]*capture.Pulled
}

// analyse runs every rule on each pulled plan with the session's catalog
// facts. A statement without a plan becomes a file with Error set and its
// text and figures, never dropped.
func (t *triageRun) analyse(pull *capture.Pull, method string) (*triaged, error) {
	out := &triaged{pulled: map[*report.File]*capture.Pulled{}}
	cfg := t.inv.rulesConfig()
	for _, p := range pull.Statements {
		rt := runtimeOf(p)
		capt := &report.Capture{Method: method, Database: p.Database, Note: p.Note}
		switch {
		case p.Sibling && p.Cache != nil:
			capt.Note = strings.TrimSpace(fmt.Sprintf("Not among the ranked statements: another cached plan of query_hash %s in %s, pulled to compare the plans of one query (plan-variance). %s",
				p.Cache.QueryHash, p.Database, p.Note))
		case p.Sibling && p.Store != nil:
			q := p.Store.QueryID
			if p.Store.ParentQueryID != 0 {
				q = p.Store.ParentQueryID
			}
			capt.Note = strings.TrimSpace(fmt.Sprintf("Not among the ranked plans: another plan of query %d, pulled to compare the plans of one query (plan-variance). %s", q, p.Note))
		}
		f := &report.File{Path: p.Name, Statements: []*report.Statement{}, Findings: []*report.Finding{}}
		out.files = append(out.files, f)
		out.pulled[f] = p
		if p.Doc == nil {
			msg := p.Err.Error()
			f.Error = &msg
			f.Statements = append(f.Statements, &report.Statement{Batch: 1, Text: p.Text, Capture: capt, Runtime: rt})
			continue
		}
		f.Plans = []*plan.Document{p.Doc}
		f.Statements = report.Summarize(p.Doc)
		if len(f.Statements) == 0 {
			f.Statements = []*report.Statement{{Batch: 1, Text: p.Text}}
		}
		for _, s := range f.Statements {
			s.Capture = capt
		}
		f.Statements[mainStatement(f.Statements)].Runtime = rt
		fs, err := rules.Analyze(p.Doc, t.sess.Catalog(), cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err) // a rule failed: a planlint bug
		}
		f.Findings = report.Wrap(fs)
	}
	if err := t.analyseQueries(out); err != nil {
		return nil, err
	}
	return out, nil
}

// mainStatement is the index of the statement the figures belong to: the
// first with a plan.
func mainStatement(ss []*report.Statement) int {
	for i, s := range ss {
		if s.Source != nil && s.Source.QueryPlan != nil {
			return i
		}
	}
	return 0
}

// runtimeOf converts a pulled statement's figures for the report.
func runtimeOf(p *capture.Pulled) *report.Runtime {
	r := p.Runtime
	ms := func(us float64) float64 { return us / 1000 }
	avg := func(total float64) float64 {
		if r.Executions <= 0 {
			return 0
		}
		return total / float64(r.Executions)
	}
	optMs := func(us *float64) *float64 {
		if us == nil {
			return nil
		}
		v := ms(*us)
		return &v
	}
	optTime := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		return &t
	}
	rt := &report.Runtime{
		Database: p.Database, Executions: r.Executions,
		CPUMs: ms(r.CPUMicros), AvgCPUMs: ms(avg(r.CPUMicros)), MaxCPUMs: optMs(r.MaxCPUMicros),
		DurationMs: ms(r.DurationMicros), AvgDurationMs: ms(avg(r.DurationMicros)), MaxDurationMs: optMs(r.MaxDurationMicros),
		LogicalReads: r.LogicalReads, AvgLogicalReads: avg(r.LogicalReads), MaxLogicalReads: r.MaxLogicalReads,
		StdevDurationMs: optMs(r.StdevDurationMicros), StdevLogicalReads: r.StdevLogicalReads,
		AvgRows: r.AvgRows, MinRows: r.MinRows, MaxRows: r.MaxRows, SpilledPages: r.SpilledPages,
		MaxGrantKB: r.MaxGrantKB, MaxUsedMemoryKB: r.MaxUsedMemoryKB,
		LastExecution: optTime(r.LastExecution), Compiled: optTime(r.Compiled),
	}
	switch {
	case p.Cache != nil:
		rt.Source = report.SourcePlanCache
		rt.QueryHash, rt.QueryPlanHash, rt.PlanHandle = p.Cache.QueryHash, p.Cache.QueryPlanHash, p.Cache.PlanHandle
	case p.Store != nil:
		rt.Source = report.SourceQueryStore
		s := p.Store
		forced := s.Forced
		rt.QueryID, rt.PlanID, rt.Forced, rt.PlanType = s.QueryID, s.PlanID, &forced, s.PlanType
		rt.ParentQueryID, rt.LastForceFailure, rt.ForceFailureCount = s.ParentQueryID, s.LastForceFailure, s.ForceFailureCount
	}
	return rt
}

// finishTriage renders the report as finish does, except for the exit
// code of statements without a plan: a plan the server no longer has or
// that exceeds --max-file-size or --max-depth is a normal state of the
// plan cache and Query Store, reported but not an error of the run. A plan
// that does not parse still makes it exit 2.
func (t *triageRun) finishTriage(tr *triaged) error {
	rep := &report.Report{Tool: "planlint", Version: Version(), Files: tr.files}
	err := t.inv.finish(rep)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != ExitError || ee.err != nil {
		return err
	}
	for _, f := range rep.Files {
		if f.Error == nil {
			continue
		}
		if p := tr.pulled[f]; p == nil || p.Err == nil || p.Err.Problem == capture.PlanInvalid {
			return err
		}
	}
	switch {
	case t.inv.out.writeBaseline != "":
		return nil
	case rep.Max() >= t.inv.threshold:
		return &exitError{code: ExitFindings}
	}
	return nil
}

// extraOutput is what a run prints after the report: text for people, or
// fields added beside the report in one JSON object.
type extraOutput struct {
	text func(w io.Writer) error
	json map[string]any
}

// finishWithExtras renders the report through finish (or finishTriage)
// and then the extras: in text after the report, in JSON as one object
// {"schema_version", "report", extras...}.
func finishWithExtras(inv *invocation, finish func() error, extra extraOutput) error {
	if inv.out.format != "json" {
		err := finish()
		if extra.text != nil {
			if werr := extra.text(inv.env.Stdout); werr != nil {
				return &exitError{code: ExitError, err: fmt.Errorf("writing the report: %w", werr)}
			}
		}
		return err
	}
	var buf bytes.Buffer
	env := *inv.env
	env.Stdout = &buf
	real := inv.env
	inv.env = &env
	err := finish()
	inv.env = real
	obj := map[string]any{"schema_version": report.SchemaVersion, "report": json.RawMessage(bytes.TrimSpace(buf.Bytes()))}
	if buf.Len() == 0 {
		obj["report"] = nil
	}
	for k, v := range extra.json {
		obj[k] = v
	}
	enc := json.NewEncoder(real.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if werr := enc.Encode(obj); werr != nil {
		return &exitError{code: ExitError, err: fmt.Errorf("writing the report: %w", werr)}
	}
	return err
}

// comparisonJSON renders a comparison as planlint compare's JSON does.
func comparisonJSON(res *compare.Result) (json.RawMessage, error) {
	var b bytes.Buffer
	err := report.CompareJSON(&b, res)
	return json.RawMessage(bytes.TrimSpace(b.Bytes())), err
}

// parseSince reads --since: a Go duration (90m, 36h) or a number of days
// with d, optionally followed by a duration (7d, 1d12h).
func parseSince(s string) (time.Duration, error) {
	orig := s
	s = strings.TrimSpace(s)
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 || n > int(capture.MaxSince/(24*time.Hour)) {
			return 0, fmt.Errorf("--since %q: want a duration such as 24h, 90m or 7d (at most %d days)", orig, int(capture.MaxSince/(24*time.Hour)))
		}
		days = time.Duration(n) * 24 * time.Hour
		s = s[i+1:]
		if s == "" {
			s = "0s"
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("--since %q: want a duration such as 24h, 90m or 7d", orig)
	}
	d += days
	if d < time.Second || d > capture.MaxSince {
		return 0, fmt.Errorf("--since %q: want 1s to %d days", orig, int(capture.MaxSince/(24*time.Hour)))
	}
	return d, nil
}

// severityCounts counts a file's findings by severity.
func severityCounts(f *report.File) (errs, warns, infos int) {
	for _, x := range f.Findings {
		switch x.Severity {
		case rules.Error:
			errs++
		case rules.Warning:
			warns++
		case rules.Info:
			infos++
		}
	}
	return
}

// ruleFindings unwraps a file's findings for compare.
func ruleFindings(f *report.File) []rules.Finding {
	out := make([]rules.Finding, len(f.Findings))
	for i, x := range f.Findings {
		out[i] = x.Finding
	}
	return out
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/planlint/planlint/capture"
	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/internal/regular"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/report"
	"github.com/planlint/planlint/rules"
	"github.com/planlint/planlint/sqlscript"
)

type explainFlags struct {
	out              outputFlags
	conn             connFlags
	actual           bool
	setPreset        string
	set              []string
	parameterization string
	params           []string
	save             string
	compareWith      []string
	maxFileSize      int64
	trace            traceFlags
}

// interruptSignals cancel a running explain; the capture still switches
// SHOWPLAN_XML off or rolls its transaction back, for at most
// capture.CancelGrace, and a second signal ends that wait.
var interruptSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// interruptContext is cancelled by the first of interruptSignals; the
// second aborts the capture's wait for the server (capture.WithAbort),
// closing the connection. stop stops listening.
func interruptContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	abort, cancelAbort := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, interruptSignals...)
	done := make(chan struct{})
	go func() {
		for _, end := range []context.CancelFunc{cancel, cancelAbort} {
			select {
			case <-sigs:
				end()
			case <-done:
				return
			}
		}
	}()
	return capture.WithAbort(ctx, abort), func() {
		signal.Stop(sigs)
		close(done)
		cancel()
		cancelAbort()
	}
}

func newExplainCmd(env *Env, g *globalFlags) *cobra.Command {
	f := &explainFlags{}
	cmd := &cobra.Command{
		Use:   "explain [flags] FILE.sql...",
		Short: "Capture the plan SQL Server gives each statement of .sql files, as the application sends it, and analyse it",
		Long: "explain connects to SQL Server, sends every batch of the .sql files the way the application does (a plain batch as\n" +
			"a SQL batch; EXEC sp_executesql calls and batches with -- @Name type = value annotations as an RPC to sp_executesql\n" +
			"with that declaration and those values), captures the plan and runs every rule on it with the catalog facts of the\n" +
			"tables it touches. By default the plan is estimated (SET SHOWPLAN_XML) and nothing runs; --actual runs the statement\n" +
			"under SET STATISTICS XML inside a transaction that is always rolled back.",
		Example: "  planlint explain -S localhost -d WorkDb -U app queue.sql   # password from $SQLCMDPASSWORD\n" +
			"  planlint explain -S db -d WorkDb --compare-with database=WorkDb_backlog poll.sql\n" +
			"  planlint explain --connection-string \"$DSN\" --param @Status=1 poll.sql\n" +
			"  planlint explain -S db --actual --set-options ssms claim.sql\n" +
			"  planlint explain -S db --parameterization forced --save plans/ poll.sql && planlint check --schema plans/catalog.json plans/*.sqlplan",
		Args: needArgs("a .sql file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExplain(cmd, env, g, f, args)
		},
	}
	f.out.register(cmd)
	f.conn.register(cmd)
	f.trace.register(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&f.actual, "actual", false, "run the statements (inside a transaction that is rolled back) and capture actual plans")
	fl.StringVar(&f.setPreset, "set-options", "driver", "SET options of the session: driver (ARITHABORT OFF, as applications) or ssms (ARITHABORT ON)")
	fl.StringArrayVar(&f.set, "set", nil, "override one SET option: NAME=ON or NAME=OFF (repeatable)")
	fl.StringVar(&f.parameterization, "parameterization", "auto", "auto (as the database does) or forced (compile as PARAMETERIZATION FORCED would, even where the database is SIMPLE)")
	fl.StringArrayVar(&f.params, "param", nil, "override a parameter value: @Name=value (repeatable)")
	fl.StringVar(&f.save, "save", "", "write each captured plan (.sqlplan) and the catalog facts (catalog.json) to this directory")
	fl.StringArrayVar(&f.compareWith, "compare-with", nil, "capture every statement again as B and compare it with A: @Name=value (B's parameter value), database=NAME or connection=DSN (repeatable parts of one B side)")
	fl.Int64Var(&f.maxFileSize, "max-file-size", plan.DefaultMaxBytes, "cut the connection when a captured plan grows past this many bytes")
	return cmd
}

// explainOptions are the validated settings of one run.
type explainOptions struct {
	capture capture.CaptureOptions
	session capture.SessionOptions
	rules   *rules.Config
	// keepXML keeps each captured plan's XML text for --save; without it
	// the text is dropped once parsed.
	keepXML bool
}

func parseExplainOptions(f *explainFlags) (explainOptions, error) {
	o := explainOptions{keepXML: f.save != ""}
	if f.actual {
		o.capture.Mode = capture.Actual
	}
	switch strings.ToLower(f.parameterization) {
	case "auto", "":
	case "forced":
		o.capture.Parameterization = capture.EmulateForced
	default:
		return o, usageError("--parameterization must be auto or forced, not %q", f.parameterization)
	}
	set, err := capture.PresetSetOptions(f.setPreset)
	if err != nil {
		return o, usageError("--set-options: %v", err)
	}
	for _, s := range f.set {
		if err := set.Apply(s); err != nil {
			return o, usageError("%v", err)
		}
	}
	if f.maxFileSize <= 0 {
		return o, usageError("--max-file-size must be positive")
	}
	o.session = capture.SessionOptions{SetOptions: set, QueryTimeout: f.conn.queryTimeout,
		MaxReplyBytes: capture.ReplyLimit(f.maxFileSize, 1)}
	return o, nil
}

func runExplain(cmd *cobra.Command, env *Env, g *globalFlags, f *explainFlags, args []string) error {
	r, err := prepare(cmd, env, g, &f.out)
	if err != nil {
		return err
	}
	defer r.release()
	if f.save != "" {
		if err := checkSaveDir(env.resolve(f.save)); err != nil {
			return &exitError{code: ExitError, err: fmt.Errorf("--save %s: %w", f.save, err)}
		}
	}
	opts, err := parseExplainOptions(f)
	if err != nil {
		return err
	}
	opts.rules = r.rulesConfig()
	r.unusedScope = includeScope([]string{"*.sql"})
	spec, err := parseCompareSpec(f.compareWith)
	if err != nil {
		return usageError("%v", err)
	}
	if spec != nil && f.out.format != "text" && f.out.format != "json" {
		return usageError("--compare-with prints a comparison after the report: use --format text or json (--output FORMAT=PATH writes A's findings in other formats)")
	}
	scripts, err := readScripts(env, r.excluded(args), f.params)
	if err != nil {
		return err
	}
	var bScripts []*sqlscript.Script
	if spec != nil {
		if bScripts, err = spec.scripts(scripts, f.params); err != nil {
			return err
		}
	}
	if f.actual {
		if err := refuseNotRollbackable(env, scripts); err != nil {
			return err
		}
	}
	connOpts, err := f.conn.options(cmd, env, f.out.format != "text")
	if err != nil {
		return err
	}
	var bOpts capture.Options
	if spec != nil {
		if bOpts, err = spec.options(connOpts); err != nil {
			return err
		}
	}

	if opts.session.Trace, err = f.trace.recorder(env, "explain"); err != nil {
		return err
	}
	defer f.trace.write(env)
	ctx, stop := interruptContext()
	defer stop()
	sess, err := capture.Open(ctx, connOpts, opts.session)
	if err != nil {
		return &exitError{code: ExitError, err: err}
	}
	defer sess.Close()
	progress := newProgress(env)
	progress.printf("connected to %s (SQL Server %s), database %s\n", sess.Connection().Redacted, sess.Info.ProductVersion, sess.Info.Database)

	var files []*report.File
	var saved []savedPlan
	for _, s := range scripts {
		file, plans, err := explainScript(ctx, sess, s, opts, progress)
		files = append(files, file)
		saved = append(saved, plans...)
		if err != nil {
			var ce *capture.Error
			if !errors.As(err, &ce) {
				return &exitError{code: ExitError, err: fmt.Errorf("%s: %w", s.Path, err)} // a rule failed: a planlint bug
			}
			if ce.Kind == capture.ErrCanceled || ce.Kind == capture.ErrConnectionLost {
				break // nothing more can be captured
			}
		}
	}
	if f.save != "" {
		if err := savePlans(env, f.save, saved, analysisCatalog(sess, opts)); err != nil {
			return &exitError{code: ExitError, err: err}
		}
	}
	rep := &report.Report{Tool: "planlint", Version: Version(), Files: files}
	if spec != nil {
		return compareWithB(ctx, env, r, spec, bOpts, opts, sess, bScripts, saved, rep, progress)
	}
	return r.finish(rep)
}

// readScripts reads and parses the .sql files and applies --param
// overrides. Any error diagnostic stops the run before connecting.
func readScripts(env *Env, paths, params []string) ([]*sqlscript.Script, error) {
	var overrides []sqlscript.ParamOverride
	for _, p := range params {
		o, err := sqlscript.ParseParamOverride(p)
		if err != nil {
			return nil, usageError("%v", err)
		}
		overrides = append(overrides, o)
	}
	var scripts []*sqlscript.Script
	failed := false
	for _, path := range paths {
		rc, err := openFile(env.resolve(path))
		if err != nil {
			diag(env.Stderr, path, err.Error())
			failed = true
			continue
		}
		src, err := readAll(rc)
		if err != nil {
			diag(env.Stderr, path, err.Error())
			failed = true
			continue
		}
		s, err := sqlscript.Parse(path, src)
		if s == nil {
			diag(env.Stderr, "", err.Error())
			failed = true
			continue
		}
		for _, d := range s.Diagnostics {
			diag(env.Stderr, "", diagnosticLine(d))
		}
		if err != nil || !checkSuppressions(env, s) {
			failed = true
			continue
		}
		if len(s.Batches) == 0 {
			diag(env.Stderr, path, "warning: no statement to capture")
		}
		scripts = append(scripts, s)
	}
	if failed {
		return nil, &exitError{code: ExitError}
	}
	for _, o := range overrides {
		found := false
		for _, s := range scripts {
			if !s.HasParam(o.Name) {
				continue
			}
			found = true
			if err := s.ApplyOverrides([]sqlscript.ParamOverride{o}); err != nil {
				return nil, usageError("%v", err)
			}
		}
		if !found {
			return nil, usageError("--param %s: no batch of the given files annotates or passes a parameter of that name (annotate it with a comment such as \"-- %s int = 0\" above the statement)", o.Name, o.Name)
		}
	}
	return scripts, nil
}

// refuseNotRollbackable stops --actual before connecting when a statement
// could not be undone by the rollback.
func refuseNotRollbackable(env *Env, scripts []*sqlscript.Script) error {
	bad := false
	for _, s := range scripts {
		for _, b := range s.Batches {
			for _, st := range b.Request().Statements {
				if reason, no := st.NotRollbackable(); no {
					diagf(env.Stderr, fmt.Sprintf("%s:%d:%d", s.Path, st.Range.Start.Line, st.Range.Start.Column), "--actual runs each statement inside a transaction that is rolled back, and this one cannot be: %s", reason)
					bad = true
				}
			}
		}
	}
	if bad {
		return usageError("--actual refused: nothing was sent to the server (capture an estimated plan without --actual)")
	}
	return nil
}

// savedPlan is a captured document to write with --save.
type savedPlan struct {
	script string // the .sql path
	batch  int
	doc    int // 1-based position among the batch's documents
	docs   int // documents of the batch
	multi  bool
	xml    string
	// plan and findings (those not suppressed) are for --compare-with.
	plan     *plan.Document
	findings []rules.Finding
}

// explainScript captures and analyses every batch of a script. The
// returned error is the capture error that ended it, if any (also recorded
// in the file).
func explainScript(ctx context.Context, sess *capture.Session, s *sqlscript.Script, opts explainOptions, progress *progress) (*report.File, []savedPlan, error) {
	file := &report.File{Path: s.Path, Statements: []*report.Statement{}, Findings: []*report.Finding{}}
	var saved []savedPlan
	used := suppressionUse{}
	defer func() {
		file.Findings = append(file.Findings, used.unused(s, opts.rules)...)
		sortFindings(file.Findings)
	}()
	for _, b := range s.Batches {
		progress.printf("capturing %s batch %d of %d (lines %d-%d)\n", s.Path, b.Index, len(s.Batches), b.Range.Start.Line, b.Range.End.Line)
		req := b.Request()
		res, err := sess.Explain(ctx, req, opts.capture)
		if err != nil {
			msg := fmt.Sprintf("batch %d (line %d): %v", b.Index, firstLine(b, req), err)
			file.Error = &msg
			return file, saved, err
		}
		forced := sess.Info.ParameterizationForced
		capt := &report.Capture{Method: res.Method, Database: sess.Info.Database, SetOptions: sess.SetOptions(),
			ParameterizationForced: &forced, Note: res.Note()}
		for k, p := range res.Plans {
			file.Plans = append(file.Plans, p.Doc)
			locs := locateStatements(s, req, p.Doc)
			// Ordinals count within one plan; the file holds several.
			offset := len(file.Statements)
			for _, st := range report.Summarize(p.Doc) {
				st.Batch = b.Index
				st.Ordinal += offset
				st.Location = locs[st.Source]
				st.Capture = capt
				file.Statements = append(file.Statements, st)
			}
			fs, err := rules.Analyze(p.Doc, analysisCatalog(sess, opts), opts.rules)
			if err != nil {
				return file, saved, err
			}
			var kept []rules.Finding // as the rules report them, for compare
			for i, x := range report.Wrap(fs) {
				x.Batch = b.Index
				x.Ordinal += offset
				x.Location = statementLocation(p.Doc, locs, x.StatementID)
				if !used.suppressed(s, x) {
					file.Findings = append(file.Findings, x)
					kept = append(kept, fs[i])
				}
			}
			sp := savedPlan{script: s.Path, batch: b.Index, doc: k + 1, docs: len(res.Plans),
				multi: len(s.Batches) > 1, plan: p.Doc, findings: kept}
			if opts.keepXML {
				sp.xml = p.XML
			}
			saved = append(saved, sp)
		}
	}
	sortFindings(file.Findings)
	return file, saved, nil
}

func firstLine(b *sqlscript.Batch, req sqlscript.Request) int {
	if len(req.Statements) > 0 {
		return req.Statements[0].Range.Start.Line
	}
	return b.Range.Start.Line
}

// locateStatements places every statement of a captured document in the
// script: by finding its text in what was sent (plan statement texts are
// substrings of it), else by position among the request's statements (an
// emulated forced-parameterization template, the EXEC of the probe
// procedure), else on the batch's statements as a whole.
func locateStatements(s *sqlscript.Script, req sqlscript.Request, doc *plan.Document) map[*plan.Statement]*report.Location {
	out := map[*plan.Statement]*report.Location{}
	loc := func(r sqlscript.Range) *report.Location {
		return &report.Location{Path: s.Path, StartLine: r.Start.Line, StartCol: r.Start.Column, EndLine: r.End.Line, EndCol: r.End.Column}
	}
	var unplaced []*plan.Statement
	cursor := 0
	sent := sqlscript.NewLocator(req.Text) // compacted once, not per statement
	for _, st := range doc.Statements() {
		start, end, ok := sent.Locate(st.Text, cursor)
		if !ok {
			start, end, ok = sent.Locate(st.Text, 0)
		}
		if !ok {
			unplaced = append(unplaced, st)
			continue
		}
		cursor = end
		out[st] = loc(s.RangeAt(req.ScriptOffset(start), req.ScriptOffset(end)))
	}
	stmts := req.Statements
	for i, st := range unplaced {
		switch {
		case len(stmts) == 1:
			out[st] = loc(stmts[0].Range)
		case len(unplaced) == len(stmts):
			out[st] = loc(stmts[i].Range)
		case len(stmts) > 0:
			out[st] = loc(sqlscript.Range{Start: stmts[0].Range.Start, End: stmts[len(stmts)-1].Range.End})
		}
	}
	return out
}

// statementLocation is the location of the document's statement with the
// given id (the first one placed, as nested statements may repeat ids).
func statementLocation(doc *plan.Document, locs map[*plan.Statement]*report.Location, id int) *report.Location {
	var first *report.Location
	for _, st := range doc.Statements() {
		if st.ID == id && locs[st] != nil {
			if st.QueryPlan != nil {
				return locs[st]
			}
			if first == nil {
				first = locs[st]
			}
		}
	}
	return first
}

// suppressionUse records which planlint-ignore comments silenced a
// finding, by the line each comment starts on.
type suppressionUse map[int]bool

// suppressed reports whether a planlint-ignore comment covering the
// finding's statement names its rule, and records the use.
func (u suppressionUse) suppressed(s *sqlscript.Script, x *report.Finding) bool {
	if x.Location == nil {
		return false
	}
	r := sqlscript.Range{Start: sqlscript.Pos{Line: x.Location.StartLine, Column: x.Location.StartCol},
		End: sqlscript.Pos{Line: x.Location.EndLine, Column: x.Location.EndCol}}
	for _, sup := range s.StatementSuppressions(r) {
		for _, ref := range sup.Rules {
			if strings.EqualFold(ref, x.Rule) || strings.EqualFold(ref, x.Code) || strings.EqualFold(ref, "all") {
				u[sup.Line] = true
				return true
			}
		}
	}
	return false
}

// unused reports, as unused-suppression findings at the comment, every
// suppression of the script that silenced nothing.
func (u suppressionUse) unused(s *sqlscript.Script, cfg *rules.Config) []*report.Finding {
	var out []*report.Finding
	r := rules.UnusedSuppression
	for _, sup := range s.Suppressions {
		if u[sup.Line] {
			continue
		}
		what := "this statement"
		if sup.File {
			what = "this file"
		}
		graded := cfg.Grade(r, []rules.Finding{{Rule: r.Name, Code: r.Code, Severity: r.Severity,
			Message:  fmt.Sprintf("planlint-ignore %s matches no finding of %s; remove it or correct the rule name", strings.Join(sup.Rules, ","), what),
			Evidence: map[string]any{"rules": sup.Rules, "reason": sup.Reason}}})
		for _, f := range graded {
			out = append(out, &report.Finding{Finding: f, Location: &report.Location{Path: s.Path,
				StartLine: sup.Range.Start.Line, StartCol: sup.Range.Start.Column, EndLine: sup.Range.End.Line, EndCol: sup.Range.End.Column}})
		}
	}
	return out
}

// checkSuppressions rejects suppressions naming rules that do not exist.
func checkSuppressions(env *Env, s *sqlscript.Script) bool {
	ok := true
	for _, sup := range s.Suppressions {
		for _, ref := range sup.Rules {
			if !strings.EqualFold(ref, "all") && rules.Lookup(ref) == nil {
				diagf(env.Stderr, fmt.Sprintf("%s:%d:%d", s.Path, sup.Range.Start.Line, sup.Range.Start.Column), "planlint-ignore names unknown rule %q (run 'planlint rules' for the list)", ref)
				ok = false
			}
		}
	}
	return ok
}

// analysisCatalog is the session's catalog facts, with the database marked
// as forcing parameterization when the capture emulated it, so the rules
// explain the plan as production would produce it.
func analysisCatalog(sess *capture.Session, opts explainOptions) *catalog.Catalog {
	cat := sess.Catalog()
	if cat == nil || opts.capture.Parameterization != capture.EmulateForced {
		return cat
	}
	c := *cat
	c.Databases = nil
	for _, d := range cat.Databases {
		dd := *d
		if strings.EqualFold(d.Name, sess.Info.Database) {
			dd.ParameterizationForced = true
		}
		c.Databases = append(c.Databases, &dd)
	}
	return &c
}

// sortFindings orders findings by source position, keeping the rules
// engine's order within a statement.
func sortFindings(fs []*report.Finding) {
	pos := func(f *report.Finding) (int, int) {
		if f.Location == nil {
			return 1 << 30, 0
		}
		return f.Location.StartLine, f.Location.StartCol
	}
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0; j-- {
			la, ca := pos(fs[j-1])
			lb, cb := pos(fs[j])
			if la < lb || la == lb && ca <= cb {
				break
			}
			fs[j-1], fs[j] = fs[j], fs[j-1]
		}
	}
}

// savePlans writes the captured documents as UTF-8 .sqlplan files and the
// catalog facts as catalog.json, so that `planlint check --schema
// DIR/catalog.json DIR/*.sqlplan` repeats the analysis offline.
// checkSaveDir fails, as --output does, before the capture when the --save
// folder cannot be made: the deepest part of it that exists must be a
// directory. Nothing is created yet.
func checkSaveDir(dir string) error {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		switch {
		case err == nil && st.IsDir():
			return nil
		case err == nil:
			return fmt.Errorf("%s is not a directory", d)
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return unwrapPath(err)
		case filepath.Dir(d) == d:
			return nil
		}
	}
}

func savePlans(env *Env, dir string, plans []savedPlan, cat *catalog.Catalog) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--save: %w", err)
	}
	used := map[string]bool{}
	for _, p := range plans {
		base := strings.TrimSuffix(filepath.Base(p.script), filepath.Ext(p.script))
		name := base
		if p.multi {
			name += fmt.Sprintf(".%d", p.batch)
		}
		if p.docs > 1 {
			name += fmt.Sprintf("-%d", p.doc)
		}
		candidate := name
		for n := 2; used[strings.ToLower(candidate)]; n++ {
			candidate = fmt.Sprintf("%s~%d", name, n)
		}
		used[strings.ToLower(candidate)] = true
		path := filepath.Join(dir, candidate+".sqlplan")
		if err := writeOutput(path, []byte(p.xml)); err != nil {
			return fmt.Errorf("--save: %w", err)
		}
	}
	path := filepath.Join(dir, "catalog.json")
	out, err := createOutput(path)
	if err != nil {
		return fmt.Errorf("--save: %w", err)
	}
	if err := catalog.Write(out, cat); err != nil {
		out.Close()
		return fmt.Errorf("--save: writing %s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("--save: %w", err)
	}
	diagf(env.Stderr, "", "saved %d plan(s) and the catalog facts in %s; re-run offline with: planlint check --schema %s %s",
		len(plans), dir, path, filepath.Join(dir, "*.sqlplan"))
	return nil
}

// readAll reads and closes a file.
func readAll(rc io.ReadCloser) ([]byte, error) {
	defer rc.Close()
	return regular.ReadAll(rc, 0) // sized once for a file, as io.ReadAll is not
}

// progress prints what explain is doing on stderr, when stderr is a
// terminal.
type progress struct {
	w  io.Writer
	on bool
}

func newProgress(env *Env) *progress { return &progress{w: env.Stderr, on: isTerminal(env.Stderr)} }

func (p *progress) printf(format string, args ...any) {
	if p.on {
		fmt.Fprintf(p.w, "planlint: "+format, args...)
	}
}

package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/planlint/planlint/baseline"
	"github.com/planlint/planlint/config"
	"github.com/planlint/planlint/report"
	"github.com/planlint/planlint/rules"
	"github.com/planlint/planlint/sqlscript"
)

// reportFormats are the --format and --output values of commands that
// report findings.
var reportFormats = []string{"text", "json", "sarif", "github", "markdown", "html", "dot"}

// outputFlags are the reporting flags shared by every command that
// reports findings.
type outputFlags struct {
	format        string
	outputs       []string
	failOn        string
	tree          bool
	noRedact      bool
	baseline      string
	writeBaseline string
	category      string
	minSeverity   string
	sort          string
	root          string
}

func (o *outputFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.format, "format", "text", "output format on stdout: "+strings.Join(reportFormats, ", "))
	fl.StringArrayVar(&o.outputs, "output", nil, "also write the report in FORMAT to PATH: FORMAT=PATH (repeatable)")
	fl.StringVar(&o.failOn, "fail-on", "error", "exit 1 when a finding is at or above this severity: error, warning, info or none; the config file's fail_on when not given")
	fl.BoolVar(&o.tree, "tree", false, "print each statement's operator tree (text format)")
	fl.BoolVar(&o.noRedact, "no-redact", false, "keep literals and parameter values in shared outputs (sarif, github, markdown, html)")
	fl.StringVar(&o.baseline, "baseline", "", "hide findings recorded in this baseline file; fail only on new ones")
	fl.StringVar(&o.writeBaseline, "write-baseline", "", "record every current finding in this baseline file and exit 0")
	fl.StringVar(&o.category, "sarif-category", "", "SARIF automationDetails.id, distinct per SARIF file uploaded for one commit")
	fl.StringVar(&o.minSeverity, "min-severity", "warning", "show findings at or above this severity in text, markdown, html and github output: info, warning or error (json and sarif keep all; summaries count all)")
	fl.StringVar(&o.root, "root", "", "directory that file paths in sarif, github, markdown, html and dot output and in baselines are relative to (default: the git repository root, else the working directory)")
	fl.StringVar(&o.sort, "sort", "impact", "order of each file's findings in text output: impact (worst first) or location")
	// Values complete only for flags already defined.
	completeValues(cmd, "format", reportFormats...)
	completeValues(cmd, "fail-on", "error", "warning", "info", "none")
	completeValues(cmd, "min-severity", "info", "warning", "error")
	completeValues(cmd, "sort", "impact", "location")
}

// invocation holds the settings of one command run: flags over the config file.
type invocation struct {
	env       *Env
	out       *outputFlags
	cfg       *config.Config
	threshold rules.Severity
	redact    bool
	colored   bool
	workDir   string
	baseDir   string            // what shared outputs and baselines make paths relative to
	extra     map[string]string // format → path from --output
	minShown  rules.Severity    // --min-severity
	// unusedScope takes the names of the files the command reads, for
	// reporting unused suppress entries (see unusedEntries); nil for none.
	unusedScope func(name string) bool
	// files are the --output and --write-baseline destinations, opened by
	// prepare and written by finish; release removes the ones never written.
	files        map[string]*pendingOutput // format → file
	baselineFile *pendingOutput
	// summarized is set once the GitHub renderer has appended the job
	// summary, so a second github output does not append it again.
	summarized bool
}

// rulesConfig is the config file's per-rule settings (nil when none).
func (r *invocation) rulesConfig() *rules.Config { return &r.cfg.Rules }

// needsPlans reports whether a requested output draws operators, so the
// analysis must keep whole plans.
func (r *invocation) needsPlans() bool {
	if r.out.tree || r.out.format == "html" || r.out.format == "dot" {
		return true
	}
	return r.extra["html"] != "" || r.extra["dot"] != ""
}

// prepare validates the output flags and loads the configuration file.
func prepare(cmd *cobra.Command, env *Env, g *globalFlags, out *outputFlags) (*invocation, error) {
	return prepareFormats(cmd, env, g, out, reportFormats)
}

// prepareFormats is prepare for a command that renders only formats.
func prepareFormats(cmd *cobra.Command, env *Env, g *globalFlags, out *outputFlags, formats []string) (*invocation, error) {
	if !slices.Contains(formats, out.format) {
		return nil, usageError("--format must be one of %s, not %q", strings.Join(formats, ", "), out.format)
	}
	extra, err := parseOutputs(out.outputs, formats)
	if err != nil {
		return nil, err
	}
	r := &invocation{env: env, out: out, extra: extra}
	min, err := rules.ParseSeverity(out.minSeverity)
	if err != nil {
		return nil, usageError("--min-severity: %v", err)
	}
	r.minShown = min
	if out.sort != "impact" && out.sort != "location" {
		return nil, usageError("--sort must be impact or location, not %q", out.sort)
	}
	if out.baseline != "" && out.writeBaseline != "" {
		return nil, usageError("give --baseline or --write-baseline, not both")
	}
	wd, err := workDir(env)
	if err != nil {
		return nil, &exitError{code: ExitError, err: err}
	}
	r.workDir = wd
	r.baseDir = repoRoot(wd)
	if out.root != "" {
		r.baseDir = absPath(wd, out.root)
	}
	r.cfg, r.threshold, r.redact, err = loadConfig(cmd, env, g, wd, out.failOn, out.noRedact)
	if err != nil {
		return nil, err
	}
	if r.colored, err = g.useColor(env, env.Stdout); err != nil {
		return nil, err
	}
	if err := r.openOutputs(); err != nil {
		r.release()
		return nil, err
	}
	return r, nil
}

// parseOutputs reads --output FORMAT=PATH values into format → path.
func parseOutputs(values, formats []string) (map[string]string, error) {
	extra := map[string]string{}
	for _, o := range values {
		f, path, ok := strings.Cut(o, "=")
		if !ok || path == "" || !slices.Contains(formats, f) {
			return nil, usageError("--output %q: want FORMAT=PATH with FORMAT one of %s", o, strings.Join(formats, ", "))
		}
		if path == "-" {
			return nil, usageError("--output %s=-: standard output takes --format %s", f, f)
		}
		if prev := extra[f]; prev != "" {
			return nil, usageError("--output %s given twice (%s and %s)", f, prev, path)
		}
		extra[f] = path
	}
	return extra, nil
}

// openOutputs opens every --output and --write-baseline file before the
// run, so that one that cannot be written fails it with nothing analysed
// and nothing on stdout.
func (r *invocation) openOutputs() error {
	seen := map[string]string{} // cleaned absolute path → the flag naming it
	check := func(flag, path string) error {
		if st, err := os.Stat(r.env.resolve(path)); err == nil && !st.Mode().IsRegular() {
			return nil // a device or pipe (/dev/null) takes any number of writers
		}
		abs := filepath.Clean(absPath(r.workDir, path))
		if prev, ok := seen[abs]; ok {
			return usageError("%s and %s name the same file", prev, flag)
		}
		seen[abs] = flag
		return nil
	}
	r.files = map[string]*pendingOutput{}
	for _, f := range reportFormats {
		path := r.extra[f]
		if path == "" {
			continue
		}
		flag := "--output " + f + "=" + path
		if err := check(flag, path); err != nil {
			return err
		}
		p, err := openPending(r.env.resolve(path))
		if err != nil {
			return &exitError{code: ExitError, err: fmt.Errorf("%s: %w", flag, err)}
		}
		r.files[f] = p
	}
	if path := r.out.writeBaseline; path != "" {
		if err := check("--write-baseline "+path, path); err != nil {
			return err
		}
		p, err := openPending(r.env.resolve(path))
		if err != nil {
			return &exitError{code: ExitError, err: fmt.Errorf("--write-baseline %s: %w", path, err)}
		}
		r.baselineFile = p
	}
	return nil
}

// release closes the output files that were not written and removes the
// ones this run created; commands defer it after prepare.
func (r *invocation) release() {
	for _, p := range r.files {
		p.abandon()
	}
	if r.baselineFile != nil {
		r.baselineFile.abandon()
	}
}

// loadConfig reads the configuration file and resolves --fail-on and
// redaction over it (flags win). A threshold of "none" is returned as a
// severity no finding reaches.
func loadConfig(cmd *cobra.Command, env *Env, g *globalFlags, wd, failOn string, noRedact bool) (*config.Config, rules.Severity, bool, error) {
	cfg, err := config.Load(config.Options{Path: g.config, Dir: wd, Getenv: env.Getenv})
	if err != nil {
		return nil, 0, false, &exitError{code: ExitError, err: err}
	}
	var flags config.Flags
	if cmd.Flags().Changed("fail-on") {
		flags.FailOn = &failOn
	}
	if noRedact {
		no := false
		flags.Redact = &no
	}
	settings, err := cfg.Resolve(flags)
	if err != nil {
		return nil, 0, false, usageError("%v", err)
	}
	threshold := settings.Threshold
	if threshold == 0 {
		threshold = rules.Error + 1 // none: nothing fails the run
	}
	return cfg, threshold, settings.Redact, nil
}

// workDir is the directory relative paths and config discovery start from.
func workDir(env *Env) (string, error) {
	if env.Dir != "" {
		return env.Dir, nil
	}
	return os.Getwd()
}

// excluded drops the paths the config file excludes, saying so on stderr.
func (r *invocation) excluded(paths []string) []string {
	var keep []string
	for _, p := range paths {
		if p != "-" && r.cfg.Excluded(p) {
			diagf(r.env.Stderr, p, "excluded by %s", r.cfg.Path)
			continue
		}
		keep = append(keep, p)
	}
	return keep
}

// finish applies the baseline, renders the report on stdout and to every
// --output file, prints input errors on stderr and turns the outcome into
// an exit code.
func (r *invocation) finish(rep *report.Report) error {
	env := r.env
	for _, f := range rep.Files {
		if f.Error != nil {
			diag(env.Stderr, f.Path, *f.Error)
		}
	}
	r.applySuppressions(rep)
	if r.out.writeBaseline != "" {
		if err := r.saveBaseline(rep); err != nil {
			return &exitError{code: ExitError, err: err}
		}
	}
	if r.out.baseline != "" {
		if err := r.applyBaseline(rep); err != nil {
			return &exitError{code: ExitError, err: err}
		}
	}
	if err := r.render(env.Stdout, r.out.format, rep, false); err != nil {
		return &exitError{code: ExitError, err: fmt.Errorf("writing the report: %w", err)}
	}
	if err := r.writeOutputs(func(w io.Writer, f string) error { return r.render(w, f, rep, true) }); err != nil {
		return err
	}
	switch {
	case rep.Failed() > 0:
		return &exitError{code: ExitError}
	case r.out.writeBaseline != "":
		return nil
	case rep.Max() >= r.threshold:
		return &exitError{code: ExitFindings}
	}
	return nil
}

// writeOutputs writes every --output file that prepare opened with
// render, in the order of reportFormats.
func (r *invocation) writeOutputs(render func(w io.Writer, format string) error) error {
	for _, f := range reportFormats {
		p := r.files[f]
		if p == nil {
			continue
		}
		if err := p.write(func(w io.Writer) error { return render(w, f) }); err != nil {
			return &exitError{code: ExitError, err: fmt.Errorf("--output %s=%s: %w", f, r.extra[f], err)}
		}
	}
	return nil
}

// jobSummary is $GITHUB_STEP_SUMMARY the first time a github output asks
// for it and "" after, so stdout and --output github=PATH append the job
// summary once.
func (r *invocation) jobSummary() string {
	if r.summarized {
		return ""
	}
	r.summarized = true
	return r.env.Getenv("GITHUB_STEP_SUMMARY")
}

// render writes the report in one format. Shared formats (sarif, github,
// markdown, html) are redacted unless the run says otherwise.
func (r *invocation) render(w io.Writer, format string, rep *report.Report, toFile bool) error {
	noRedact := !r.redact
	switch format {
	case "json":
		return report.JSON(w, rep)
	case "sarif":
		return report.SARIF(w, rep, report.SARIFOptions{BaseDir: r.baseDir, Category: r.out.category, NoRedact: noRedact})
	case "github":
		full := "the job summary"
		if p := r.extra["sarif"]; p != "" {
			full = p
		}
		return report.GitHub(w, rep, report.GitHubOptions{BaseDir: r.baseDir, SummaryPath: r.jobSummary(),
			FullReport: full, NoRedact: noRedact, MinSeverity: r.minShown})
	case "markdown":
		return report.Markdown(w, rep, report.MarkdownOptions{BaseDir: r.baseDir, NoRedact: noRedact, MinSeverity: r.minShown})
	case "html":
		return report.HTML(w, rep, report.HTMLOptions{BaseDir: r.baseDir, NoRedact: noRedact, MinSeverity: r.minShown})
	case "dot":
		return report.DOT(w, rep, report.DOTOptions{BaseDir: r.baseDir})
	}
	return report.Text(w, rep, report.TextOptions{Color: r.colored && !toFile, Tree: r.out.tree,
		MinSeverity: r.minShown, ByLocation: r.out.sort == "location"})
}

// baselineItems keys every finding by rule, repository-relative file,
// statement fingerprint and operator — never by line or node number.
func (r *invocation) baselineItems(rep *report.Report) []baseline.Item {
	var items []baseline.Item
	for _, f := range rep.Files {
		for _, x := range f.Findings {
			path := f.Path
			if x.Location != nil {
				path = x.Location.Path
			}
			if rel, err := filepath.Rel(r.baseDir, absPath(r.workDir, path)); err == nil && !strings.HasPrefix(rel, "..") {
				path = rel
			}
			items = append(items, baseline.Item{Key: baseline.Key{
				Rule:        x.Rule,
				File:        filepath.ToSlash(path),
				Fingerprint: sqlscript.Fingerprint(statementText(f, x)),
				Node:        x.Operator,
			}, Finding: x})
		}
	}
	return items
}

func absPath(wd, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(wd, p)
}

func statementText(f *report.File, x *report.Finding) string {
	if s := f.StatementOf(x); s != nil {
		return s.Text
	}
	return ""
}

func (r *invocation) saveBaseline(rep *report.Report) error {
	entries := baseline.Entries(r.baselineItems(rep))
	if err := r.baselineFile.write(func(w io.Writer) error { return baseline.Write(w, entries) }); err != nil {
		return fmt.Errorf("--write-baseline %s: %w", r.out.writeBaseline, err)
	}
	diagf(r.env.Stderr, "", "recorded %d finding(s) in %s", len(r.baselineItems(rep)), r.out.writeBaseline)
	return nil
}

// applyBaseline removes the findings the baseline records.
func (r *invocation) applyBaseline(rep *report.Report) error {
	b, err := baseline.Load(r.out.baseline)
	if err != nil {
		return fmt.Errorf("--baseline: %w", err)
	}
	fresh, known := b.Filter(r.baselineItems(rep))
	keep := map[*report.Finding]bool{}
	for _, it := range fresh {
		keep[it.Finding.(*report.Finding)] = true
	}
	for _, f := range rep.Files {
		f.Findings = slices.DeleteFunc(f.Findings, func(x *report.Finding) bool { return !keep[x] })
	}
	if known > 0 {
		diagf(r.env.Stderr, "", "%d finding(s) hidden by the baseline %s", known, r.out.baseline)
	} else if len(b.Entries()) > 0 && len(r.baselineItems(rep)) > 0 {
		diagf(r.env.Stderr, "", "the baseline %s matched none of the %d finding(s); its paths are relative to %s (set --root to change)",
			r.out.baseline, len(r.baselineItems(rep)), r.baseDir)
	}
	analysed := map[string]bool{}
	for _, it := range r.baselineItems(rep) {
		analysed[it.File] = true
	}
	fixed := 0
	for _, e := range b.Unmatched() {
		if analysed[e.File] || fileAnalysed(rep, e.File, r.workDir, r.baseDir) {
			fixed += e.Count
		}
	}
	if fixed > 0 {
		diagf(r.env.Stderr, "", "%d baselined finding(s) no longer occur; rewrite the baseline with --write-baseline %s", fixed, r.out.baseline)
	}
	return nil
}

func fileAnalysed(rep *report.Report, file, wd, base string) bool {
	for _, f := range rep.Files {
		rel, err := filepath.Rel(base, absPath(wd, f.Path))
		if err == nil && filepath.ToSlash(rel) == file || filepath.ToSlash(f.Path) == file {
			return true
		}
	}
	return false
}

// repoRoot is the root of the git repository holding dir (where .git is,
// a directory or, in worktrees and submodules, a file), else dir.
func repoRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

package report

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/planlint/planlint/rules"
)

// DefaultAnnotationsPerLevel is how many annotations of each level GitHub
// shows for one step; more are dropped silently.
const DefaultAnnotationsPerLevel = 10

// DefaultSummaryLimit caps what GitHub writes to the job summary, well
// under GitHub's 1 MiB limit per step.
const DefaultSummaryLimit = 512 * 1024

// GitHubOptions control the workflow-command annotations.
type GitHubOptions struct {
	// BaseDir is what file paths are made relative to (the repository
	// root); "" means the working directory.
	BaseDir string
	// MaxErrors, MaxWarnings and MaxNotices cap the annotations of each
	// level: 0 means DefaultAnnotationsPerLevel, a negative value no cap.
	MaxErrors, MaxWarnings, MaxNotices int
	// FullReport says where the full report is, for the closing notice
	// about omitted annotations (e.g. "the job summary" or "planlint.sarif").
	FullReport string
	// SummaryPath, when set (the CLI passes $GITHUB_STEP_SUMMARY), receives
	// the Markdown report, appended.
	SummaryPath string
	// SummaryLimit caps the appended Markdown in bytes (0 means
	// DefaultSummaryLimit).
	SummaryLimit int
	// NoRedact keeps literals and parameter values.
	NoRedact bool
	// MinSeverity hides findings below it (0 shows all), in the
	// annotations and the summary.
	MinSeverity rules.Severity
}

// GitHub writes one workflow command per finding (::error, ::warning or
// ::notice for info) with the file and, when known, its lines; findings
// without a source location annotate the plan file. Each level is capped
// and a final ::notice says how many were left out. Inputs that could not
// be analysed are errors. With SummaryPath set, the Markdown report is
// appended to that file too.
func GitHub(w io.Writer, r *Report, opt GitHubOptions) error {
	src := r
	if !opt.NoRedact {
		src = Redacted(r)
	}
	caps := map[string]int{"error": opt.MaxErrors, "warning": opt.MaxWarnings, "notice": opt.MaxNotices}
	for k, v := range caps {
		if v == 0 {
			caps[k] = DefaultAnnotationsPerLevel
		}
	}
	shown := map[string]int{}
	omitted := map[string]int{}
	ew := &errWriter{w: w}
	emit := func(level string, props [][2]string, msg string) {
		if c := caps[level]; c >= 0 && shown[level] >= c {
			omitted[level]++
			return
		}
		shown[level]++
		ew.printf("%s\n", workflowCommand(level, props, msg))
	}
	for _, f := range src.Files {
		if f.Error == nil {
			continue
		}
		emit("error", fileProps(opt.BaseDir, f.Path, nil, "planlint could not analyse this file"), *f.Error)
	}
	for _, f := range src.Files {
		if f.Error != nil {
			continue
		}
		for _, x := range visible(f, opt.MinSeverity) {
			path, loc := f.Path, x.Location
			if loc == nil {
				if s := findingStatement(f, x); s != nil && s.Location != nil {
					loc = s.Location
				}
			}
			if loc != nil && loc.Path != "" {
				path = loc.Path
			}
			title := x.Code + " " + x.Rule
			emit(annotationLevel(x.Severity), fileProps(opt.BaseDir, path, loc, title), annotationMessage(f, x))
		}
	}
	if n := omitted["error"] + omitted["warning"] + omitted["notice"]; n > 0 {
		where := opt.FullReport
		if where == "" && opt.SummaryPath != "" {
			where = "the job summary"
		}
		if where == "" {
			where = "the planlint output (run it with --format text, json or sarif)"
		}
		ew.printf("%s\n", workflowCommand("notice", [][2]string{{"title", "planlint"}}, fmt.Sprintf(
			"%d more %s not annotated (%s over the per-level cap); the full report is in %s",
			n, plural(n, "finding"), omittedCounts(omitted), where)))
	}
	if ew.err != nil {
		return ew.err
	}
	if opt.SummaryPath != "" {
		return appendSummary(opt.SummaryPath, r, opt)
	}
	return nil
}

func annotationLevel(s rules.Severity) string {
	switch s {
	case rules.Error:
		return "error"
	case rules.Warning:
		return "warning"
	}
	return "notice"
}

func omittedCounts(m map[string]int) string {
	var parts []string
	for _, level := range []string{"error", "warning", "notice"} {
		if m[level] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", m[level], plural(m[level], level)))
		}
	}
	return strings.Join(parts, ", ")
}

// annotationMessage is the finding's message, where it sits in the plan,
// its fix and its documentation. Statement text is never echoed.
func annotationMessage(f *File, x *Finding) string {
	var b strings.Builder
	if p := planPlace(f, x); p != "" {
		b.WriteString(p + ": ")
	}
	b.WriteString(x.Message)
	if x.Fix != "" {
		b.WriteString("\nFix: " + x.Fix)
	}
	if rule := rules.Lookup(x.Code); rule != nil {
		b.WriteString("\nDocs: " + rules.DocURL(rule))
	}
	return b.String()
}

// fileProps are the file and line properties of an annotation. Columns
// are given only for a single-line range, which is all GitHub uses them
// for; endColumn is inclusive there.
func fileProps(base, path string, loc *Location, title string) [][2]string {
	var props [][2]string
	if !isPseudoPath(path) {
		props = append(props, [2]string{"file", displayPath(base, path)})
	}
	if loc != nil && loc.StartLine >= 1 {
		props = append(props, [2]string{"line", fmt.Sprint(loc.StartLine)})
		end := loc.EndLine
		if end > loc.StartLine && loc.EndCol <= 1 {
			end-- // the range ends at the start of a line
		}
		if end >= loc.StartLine {
			props = append(props, [2]string{"endLine", fmt.Sprint(end)})
		}
		if end == loc.StartLine && loc.StartCol >= 1 {
			props = append(props, [2]string{"col", fmt.Sprint(loc.StartCol)})
			if loc.EndCol-1 >= loc.StartCol {
				props = append(props, [2]string{"endColumn", fmt.Sprint(loc.EndCol - 1)})
			}
		}
	}
	return append(props, [2]string{"title", title})
}

// workflowCommand renders "::level k=v,...::message" with the Actions
// toolkit's escaping.
func workflowCommand(level string, props [][2]string, msg string) string {
	var b strings.Builder
	b.WriteString("::" + level)
	for i, p := range props {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(p[0] + "=" + EscapeProperty(p[1]))
	}
	b.WriteString("::" + EscapeData(msg))
	return b.String()
}

// EscapeData escapes a workflow command's message as the Actions toolkit
// does: "%", CR and LF.
func EscapeData(s string) string { return dataEscaper.Replace(s) }

var dataEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")

// EscapeProperty escapes a workflow command's property value: as
// EscapeData, plus ":" and ",".
func EscapeProperty(s string) string { return propertyEscaper.Replace(s) }

var propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")

// appendSummary appends the Markdown report to the job summary file.
func appendSummary(path string, r *Report, opt GitHubOptions) error {
	limit := opt.SummaryLimit
	if limit <= 0 {
		limit = DefaultSummaryLimit
	}
	var b strings.Builder
	err := Markdown(&b, r, MarkdownOptions{BaseDir: opt.BaseDir, MaxLength: limit, NoRedact: opt.NoRedact, MinSeverity: opt.MinSeverity,
		FullReport: opt.FullReport})
	if err != nil {
		return err
	}
	return appendText(path, b.String())
}

// appendText appends text to the job summary file.
func appendText(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("job summary: %w", err)
	}
	if _, err := io.WriteString(f, text); err != nil {
		f.Close()
		return fmt.Errorf("job summary %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("job summary %s: %w", path, err)
	}
	return nil
}

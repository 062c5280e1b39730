package report

import "io"

// CompareGitHub writes workflow-command annotations for the findings B
// gained, at their place in B's file, escaped and capped per level as
// GitHub does (a final notice counts the rest). With SummaryPath set, the
// Markdown comparison is appended to that file, within SummaryLimit.
// Findings B lost are in the summary only: they need no annotation.
func CompareGitHub(w io.Writer, c *Comparison, opt GitHubOptions) error {
	if c == nil || c.Result == nil {
		return errNoComparison
	}
	fb, gained := c.gained()
	f := &File{Path: fb.Path, Statements: fb.Statements, Findings: gained, Plans: fb.Plans}
	annotations := opt
	annotations.SummaryPath = ""
	if annotations.FullReport == "" && opt.SummaryPath != "" {
		annotations.FullReport = "the job summary"
	}
	if err := GitHub(w, &Report{Version: c.Version, Files: []*File{f}}, annotations); err != nil {
		return err
	}
	if opt.SummaryPath == "" {
		return nil
	}
	limit := opt.SummaryLimit
	if limit <= 0 {
		limit = DefaultSummaryLimit
	}
	return appendText(opt.SummaryPath, compareMarkdownText(c, CompareMarkdownOptions{BaseDir: opt.BaseDir, MaxLength: limit,
		NoRedact: opt.NoRedact, FullReport: opt.FullReport, MinSeverity: opt.MinSeverity}))
}

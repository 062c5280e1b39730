package report

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strings"

	"github.com/planlint/planlint/rules"
)

// MarkdownMarker starts every Markdown report so that a workflow can find
// and update its one sticky pull-request comment.
const MarkdownMarker = "<!-- planlint-report -->"

// DefaultMarkdownLength keeps a report under GitHub's 65,536-character
// limit for comments.
const DefaultMarkdownLength = 65000

// MarkdownOptions control the Markdown report.
type MarkdownOptions struct {
	// BaseDir is what file paths are made relative to; "" means the
	// working directory.
	BaseDir string
	// MaxLength caps the report in bytes (0 means DefaultMarkdownLength);
	// findings that do not fit are counted in a truncation note. The
	// summary line and the note are always written, so a cap below about
	// 1,000 bytes may be exceeded.
	MaxLength int
	// SourceURL, when set, links file locations: SourceURL + path +
	// "#L<start>-L<end>" (e.g. "https://github.com/o/r/blob/<sha>/").
	SourceURL string
	// FullReport says where the full report is, for the truncation note.
	FullReport string
	// NoRedact keeps literals and parameter values.
	NoRedact bool
	// MinSeverity hides findings below it (0 shows all); the summary
	// line still counts them.
	MinSeverity rules.Severity
}

// Markdown writes a report for pull-request comments and job summaries: a
// hidden marker, a summary line, a table of findings (most severe first)
// with rule links, fixes in collapsible sections, and the inputs that
// failed, all within MaxLength.
func Markdown(w io.Writer, r *Report, opt MarkdownOptions) error {
	src := r
	if !opt.NoRedact {
		src = Redacted(r)
	}
	limit := opt.MaxLength
	if limit <= 0 {
		limit = DefaultMarkdownLength
	}

	type row struct {
		f *File
		x *Finding
	}
	var rows []row
	for _, f := range src.Files {
		if f.Error != nil {
			continue
		}
		for _, x := range visible(f, opt.MinSeverity) {
			rows = append(rows, row{f, x})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].x.Severity > rows[j].x.Severity })

	header := markdownHeader(src)
	if note := hiddenNote(src, opt.MinSeverity); note != "" {
		header += "\n" + markdownCell(strings.ToUpper(note[:1])+note[1:]) + ".\n"
	}
	var tableRows, fixes []string
	for _, rw := range rows {
		tableRows = append(tableRows, markdownRow(rw.f, rw.x, opt))
		fix := ""
		if rw.x.Fix != "" {
			fix = markdownFix(rw.f, rw.x, opt)
		}
		fixes = append(fixes, fix)
	}
	var failed []string
	for _, f := range src.Files {
		if f.Error != nil {
			line := fmt.Sprintf("- %s: %s", markdownPath(displayPath(opt.BaseDir, f.Path)), markdownCell(*f.Error))
			if rt := f.Runtime(); rt != nil {
				line += " (" + markdownCell(runtimeBrief(rt)) + ")"
			}
			failed = append(failed, line+"\n")
		}
	}
	footer := markdownFooter(src, opt)

	// Everything fits, or the table comes first, then failed inputs, then
	// fixes, until the budget (less room for the note) is spent.
	nRows, nFailed, nFixes := len(tableRows), len(failed), 0
	for _, fx := range fixes {
		if fx != "" {
			nFixes++
		}
	}
	totalFixes := nFixes
	size := len(header) + len(footer) + sectionSize(tableRows, len(markdownTableHead)) +
		sectionSize(failed, len(markdownFailedHead)) + sectionSize(fixes, len(markdownFixesHead))
	truncated := size > limit
	if truncated {
		// The note never grows longer than with every count at its total.
		room := len(truncationNote(limit, len(tableRows), len(tableRows), totalFixes, totalFixes, len(failed), len(failed), opt.FullReport))
		budget := limit - len(header) - len(footer) - room
		take := func(items []string, head int) int {
			if len(items) == 0 || budget < head {
				return 0
			}
			used, n := head, 0
			for _, it := range items {
				if used+len(it) > budget {
					break
				}
				used += len(it)
				n++
			}
			if n == 0 {
				return 0
			}
			budget -= used
			return n
		}
		// Failed inputs first (they are short), then as many findings as
		// fit together with their fixes, so no shown finding loses its fix.
		nFailed = take(failed, len(markdownFailedHead))
		used, anyFix := 0, false
		nRows = 0
		for i, row := range tableRows {
			need := len(row) + len(fixes[i])
			if i == 0 {
				need += len(markdownTableHead)
			}
			if fixes[i] != "" && !anyFix {
				need += len(markdownFixesHead)
			}
			if used+need > budget {
				break
			}
			used += need
			anyFix = anyFix || fixes[i] != ""
			nRows++
		}
		var shownFixes []string
		for _, fx := range fixes[:nRows] {
			if fx != "" {
				shownFixes = append(shownFixes, fx)
			}
		}
		fixes = shownFixes
		nFixes = len(fixes)
	} else {
		var all []string
		for _, fx := range fixes {
			if fx != "" {
				all = append(all, fx)
			}
		}
		fixes = all
	}

	var b strings.Builder
	b.WriteString(header)
	if nRows > 0 {
		b.WriteString(markdownTableHead)
		for _, s := range tableRows[:nRows] {
			b.WriteString(s)
		}
	}
	if nFixes > 0 {
		b.WriteString(markdownFixesHead)
		for _, s := range fixes[:nFixes] {
			b.WriteString(s)
		}
	}
	if nFailed > 0 {
		b.WriteString(markdownFailedHead)
		for _, s := range failed[:nFailed] {
			b.WriteString(s)
		}
	}
	if truncated {
		b.WriteString(truncationNote(limit, nRows, len(tableRows), nFixes, totalFixes, nFailed, len(failed), opt.FullReport))
	}
	b.WriteString(footer)
	_, err := io.WriteString(w, b.String())
	return err
}

const (
	markdownTableHead  = "\n| Severity | Rule | Location | Statement / node | Message |\n| --- | --- | --- | --- | --- |\n"
	markdownFixesHead  = "\n### Fixes\n\n"
	markdownFailedHead = "\n### Inputs that could not be analysed\n\n"
)

// truncationNote says what was left out and where the rest is.
func truncationNote(limit, rows, allRows, fixes, allFixes, failed, allFailed int, fullReport string) string {
	where := fullReport
	if where == "" {
		where = "the text, JSON or SARIF output"
	}
	return fmt.Sprintf("\n> **Report truncated** to %d characters: %d of %d findings, %d of %d fixes and %d of %d failed inputs shown. The full report is in %s.\n",
		limit, rows, allRows, fixes, allFixes, failed, allFailed, markdownCell(where))
}

func sectionSize(items []string, head int) int {
	n := 0
	for _, it := range items {
		n += len(it)
	}
	if n == 0 {
		return 0
	}
	return head + n
}

func markdownHeader(r *Report) string {
	var b strings.Builder
	b.WriteString(MarkdownMarker + "\n## planlint\n\n")
	s := summarize(r)
	counts := ""
	if s.Counts != "" {
		counts = "**" + s.Counts + "** " + s.Scope
	}
	b.WriteString(upperFirst(s.join(counts, s.Failed)))
	if s.Suppressed != "" {
		b.WriteString("; " + markdownCell(s.Suppressed))
	}
	b.WriteString(".\n")
	if s.Errors+s.Warnings+s.Infos == 0 && s.Failed == "" {
		b.WriteString("\nNo findings.\n")
	}
	return b.String()
}

func markdownFooter(r *Report, opt MarkdownOptions) string {
	var parts []string
	if r.Version != "" {
		parts = append(parts, "planlint "+markdownCell(r.Version))
	}
	if !opt.NoRedact {
		parts = append(parts, "literals and parameter values redacted")
	}
	if len(parts) == 0 {
		return ""
	}
	return "\n<sub>" + strings.Join(parts, " · ") + "</sub>\n"
}

func markdownRow(f *File, x *Finding, opt MarkdownOptions) string {
	rule := markdownCell(x.Code + " " + x.Rule)
	if rr := rules.Lookup(x.Code); rr != nil {
		rule = "[" + rule + "](" + rules.DocURL(rr) + ")"
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s |\n", severityLabel(x.Severity), rule, markdownLocation(f, x, opt),
		markdownCell(planPlace(f, x)), markdownCell(x.Message))
}

func severityLabel(s rules.Severity) string {
	if s == rules.Error {
		return "**error**"
	}
	return s.String()
}

// markdownLocation is "path:line" (linked when SourceURL is set), or the
// plan file's path.
func markdownLocation(f *File, x *Finding, opt MarkdownOptions) string {
	path, loc := f.Path, x.Location
	if loc == nil {
		if s := findingStatement(f, x); s != nil {
			loc = s.Location
		}
	}
	if loc != nil && loc.Path != "" {
		path = loc.Path
	}
	p := displayPath(opt.BaseDir, path)
	if loc == nil || loc.StartLine < 1 {
		if rt := f.Runtime(); rt != nil {
			return markdownPath(p) + "<br>" + markdownCell(runtimeBrief(rt))
		}
		return markdownPath(p)
	}
	text := markdownPath(fmt.Sprintf("%s:%d", p, loc.StartLine))
	if opt.SourceURL == "" || isPseudoPath(path) || strings.HasPrefix(p, "/") {
		return text
	}
	anchor := fmt.Sprintf("#L%d", loc.StartLine)
	if loc.EndLine > loc.StartLine {
		anchor += fmt.Sprintf("-L%d", loc.EndLine)
	}
	return "[" + text + "](" + opt.SourceURL + markdownURLPath(p) + anchor + ")"
}

func markdownFix(f *File, x *Finding, opt MarkdownOptions) string {
	where := displayPath(opt.BaseDir, f.Path)
	if l := x.Location; l != nil && l.StartLine >= 1 {
		path := l.Path
		if path == "" {
			path = f.Path
		}
		where = fmt.Sprintf("%s:%d", displayPath(opt.BaseDir, path), l.StartLine)
	}
	summary := fmt.Sprintf("%s %s — %s, %s", x.Code, x.Rule, where, planPlace(f, x))
	return "<details><summary>" + markdownHTML(summary) + "</summary>\n\n" + markdownCell(x.Fix) + "\n\n" + markdownDDL(x) + "</details>\n"
}

// markdownCell escapes text for a Markdown table cell or paragraph:
// Markdown and HTML syntax, table pipes, line breaks, and "@" so that
// parameter names do not mention GitHub users.
func markdownCell(s string) string {
	return markdownBreaks.Replace(markdownEscaper.Replace(s))
}

var markdownBreaks = strings.NewReplacer("\r\n", "<br>", "\n", "<br>", "\r", "<br>")

var markdownEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "~", `\~`, "[", `\[`, "]", `\]`, "|", `\|`, "#", `\#`,
	"<", "&lt;", ">", "&gt;", "&", "&amp;", "@", "@&#8203;",
)

// markdownHTML escapes text inside an HTML element such as <summary>,
// where Markdown is not interpreted.
func markdownHTML(s string) string {
	return strings.ReplaceAll(html.EscapeString(s), "@", "@&#8203;")
}

// markdownPath shows a path as code when it can be, else escaped.
func markdownPath(p string) string {
	if p == "" || strings.ContainsAny(p, "`\r\n|") {
		return markdownCell(p)
	}
	return "`" + p + "`"
}

var urlPathEscaper = strings.NewReplacer("%", "%25", " ", "%20", "(", "%28", ")", "%29", "#", "%23", "?", "%3F")

// markdownURLPath percent-escapes a relative path for a link.
func markdownURLPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = urlPathEscaper.Replace(s)
	}
	return strings.Join(parts, "/")
}

// markdownDDL renders the finding's proposed index (evidence create_index)
// as a SQL block to copy, or "" when it proposes none.
func markdownDDL(x *Finding) string {
	ddl, _ := x.Evidence["create_index"].(string)
	if ddl == "" || strings.Contains(ddl, "```") {
		return ""
	}
	return "```sql\n" + ddl + "\n```\n\n"
}

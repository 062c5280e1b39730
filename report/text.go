package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"
	"github.com/planlint/planlint/rules"
)

// TextOptions control the human-readable report.
type TextOptions struct {
	Color bool
	Tree  bool // print each statement's operator tree after its findings
}

// styles are the colours of one render, enabled or not as a whole.
type styles struct {
	err, warn, info, dim, bold, hot, warm *color.Color
}

func newStyles(enabled bool) styles {
	s := styles{
		err:  color.New(color.FgRed, color.Bold),
		warn: color.New(color.FgYellow),
		info: color.New(color.FgCyan),
		dim:  color.New(color.Faint),
		bold: color.New(color.Bold),
		hot:  color.New(color.FgRed),
		warm: color.New(color.FgYellow),
	}
	for _, c := range []*color.Color{s.err, s.warn, s.info, s.dim, s.bold, s.hot, s.warm} {
		if enabled {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return s
}

func (s styles) severity(v rules.Severity) string {
	switch v {
	case rules.Error:
		return s.err.Sprint(v.String())
	case rules.Warning:
		return s.warn.Sprint(v.String())
	}
	return s.info.Sprint(v.String())
}

// Place renders where a finding sits: "stmt 1 node 3", with the batch when
// the document has more than one.
func Place(batch, statementID int, nodeID *int, multiBatch bool) string {
	var b strings.Builder
	if multiBatch {
		fmt.Fprintf(&b, "batch %d ", batch)
	}
	fmt.Fprintf(&b, "stmt %d", statementID)
	if nodeID != nil {
		fmt.Fprintf(&b, " node %d", *nodeID)
	}
	return b.String()
}

func multiBatch(f *File) bool {
	for _, s := range f.Statements {
		if s.Batch > 1 {
			return true
		}
	}
	return false
}

// Prefix is the "path:" or "path:line:col:" a finding starts with.
func Prefix(f *File, x *Finding) string {
	if l := x.Location; l != nil {
		return fmt.Sprintf("%s:%d:%d", l.Path, l.StartLine, l.StartCol)
	}
	return f.Path
}

// Text writes findings one per line (`file: stmt N node M: severity [code
// name] message`), each followed by its fix, then a summary line.
func Text(w io.Writer, r *Report, opt TextOptions) error {
	st := newStyles(opt.Color)
	ew := &errWriter{w: w}
	for _, f := range r.Files {
		if f.Error != nil {
			continue
		}
		mb := multiBatch(f)
		for _, x := range f.Findings {
			ew.printf("%s: %s: %s %s %s\n", st.bold.Sprint(Prefix(f, x)), Place(x.Batch, x.StatementID, x.NodeID, mb),
				st.severity(x.Severity), st.dim.Sprintf("[%s %s]", x.Code, x.Rule), x.Message)
			if x.Fix != "" {
				ew.printf("    %s %s\n", st.dim.Sprint("fix:"), x.Fix)
			}
		}
		if opt.Tree {
			writeTree(ew, f, st, mb)
		}
	}
	e, wn, i := r.Counts()
	summary := fmt.Sprintf("%d %s, %d %s, %d %s in %d %s", e, plural(e, "error"), wn, plural(wn, "warning"), i, plural(i, "info"),
		len(r.Files), plural(len(r.Files), "file"))
	if n := r.Failed(); n > 0 {
		summary += fmt.Sprintf(" (%d could not be analysed)", n)
	}
	if len(r.Files) > 0 {
		ew.printf("\n")
	}
	ew.printf("%s\n", summary)
	return ew.err
}

func plural(n int, word string) string {
	if n == 1 || word == "info" {
		if word == "info" && n != 1 {
			return "infos"
		}
		return word
	}
	return word + "s"
}

// errWriter keeps the first write error so renderers can print freely.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err != nil {
		return
	}
	_, e.err = fmt.Fprintf(e.w, format, args...)
}

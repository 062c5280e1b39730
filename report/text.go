package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/fatih/color"
	"github.com/planlint/planlint/rules"
)

// TextOptions control the human-readable report.
type TextOptions struct {
	Color bool
	Tree  bool // print each statement's operator tree after its findings
	// MinSeverity hides findings below it (0 shows all); the summary
	// still counts them.
	MinSeverity rules.Severity
	// ByLocation keeps each file's findings in plan order instead of
	// worst first.
	ByLocation bool
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

// StatementPlace is Place for a statement of f: "stmt 33#2" names the
// second statement of its batch with StatementId 33, as real plans can
// repeat one.
func (f *File) StatementPlace(s *Statement, nodeID *int) string {
	idx := indexOf(f)
	p := Place(s.Batch, s.StatementID, nil, idx.multiBatch)
	if ords := idx.repeated[stmtKey{s.Batch, s.StatementID}]; len(ords) > 1 {
		// the how-manyth of the statements with this batch and id
		p += "#" + strconv.Itoa(sort.SearchInts(ords, s.Ordinal+1))
	}
	if nodeID != nil {
		p += " node " + strconv.Itoa(*nodeID)
	}
	return p
}

// FindingPlace is where a finding sits, as StatementPlace.
func (f *File) FindingPlace(x *Finding) string {
	if s := f.StatementOf(x); s != nil {
		return f.StatementPlace(s, x.NodeID)
	}
	if x.Batch == 0 && x.StatementID == 0 && x.Ordinal == 0 && x.NodeID == nil {
		return "" // about no statement: an unused suppression
	}
	return Place(x.Batch, x.StatementID, x.NodeID, indexOf(f).multiBatch)
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
	printed := false
	for i, f := range r.Files {
		if rt := f.Runtime(); rt != nil {
			if i > 0 {
				ew.printf("\n")
			}
			writeRuntime(ew, f, rt, st)
			printed = true
		}
		if f.Error != nil {
			continue
		}
		mb := multiBatch(f)
		shown := visible(f, opt.MinSeverity)
		if !opt.ByLocation {
			shown = byImpact(f, shown)
		}
		for _, x := range shown {
			printed = true
			place := f.FindingPlace(x)
			if place != "" {
				place += ": "
			}
			ew.printf("%s: %s%s %s %s\n", st.bold.Sprint(Prefix(f, x)), place,
				st.severity(x.Severity), st.dim.Sprintf("[%s %s]", x.Code, x.Rule), x.Message)
			if x.Fix != "" {
				ew.printf("    %s %s\n", st.dim.Sprint("fix:"), x.Fix)
			}
		}
		if opt.Tree && writeTree(ew, f, st, mb) {
			printed = true
		}
	}
	sum := summarize(r)
	summary := sum.String()
	if note := hiddenNote(r, opt.MinSeverity); note != "" {
		summary += "; " + note
	}
	if sum.Suppressed != "" {
		summary += "; " + sum.Suppressed
	}
	if printed {
		ew.printf("\n")
	}
	ew.printf("%s\n", summary)
	if sum.Errors+sum.Warnings+sum.Infos > 0 {
		ew.printf("%s\n", st.dim.Sprint("Each rule's documentation: planlint rules NAME"))
	}
	return ew.err
}

// writeRuntime writes the header of a statement from the plan cache or
// Query Store: its name and text, one line of figures, and why it has no
// plan when it has none.
func writeRuntime(ew *errWriter, f *File, rt *Runtime, st styles) {
	head := st.bold.Sprint(f.Path)
	if rt.Database != "" {
		head += " " + st.dim.Sprint("["+rt.Database+"]")
	}
	for _, s := range f.Statements {
		if s.Runtime == rt && s.Text != "" {
			head += " " + Snippet(s.Text, 100)
			break
		}
	}
	ew.printf("%s\n    %s\n", head, RuntimeLine(rt))
	if f.Error != nil {
		ew.printf("    %s\n", st.warn.Sprint(*f.Error))
	}
}

// Snippet is text on one line, white space collapsed, cut to at most
// limit characters with an ellipsis.
func Snippet(text string, limit int) string {
	s := strings.Join(strings.Fields(text), " ")
	if r := []rune(s); len(r) > limit && limit > 0 {
		s = string(r[:limit-1]) + "…"
	}
	return s
}

// runtimeBrief is the few runtime figures that rank a pulled statement.
func runtimeBrief(rt *Runtime) string {
	return fmt.Sprintf("%s %s, avg CPU %s ms, avg duration %s ms, avg reads %s", FormatCount(float64(rt.Executions)),
		plural(int(min(rt.Executions, 2)), "execution"), fmtFloat(rt.AvgCPUMs), fmtFloat(rt.AvgDurationMs), fmtFloat(rt.AvgLogicalReads))
}

// RuntimeLine renders runtime figures on one line.
func RuntimeLine(rt *Runtime) string {
	var parts []string
	if rt.Source == SourceQueryStore {
		p := fmt.Sprintf("query %d plan %d", rt.QueryID, rt.PlanID)
		if rt.Forced != nil && *rt.Forced {
			p += ", forced"
		}
		if rt.PlanType != "" && !strings.EqualFold(rt.PlanType, "Compiled Plan") {
			p += ", " + rt.PlanType
		}
		if rt.ParentQueryID != 0 {
			p += fmt.Sprintf(" of query %d", rt.ParentQueryID)
		}
		if rt.LastForceFailure != "" {
			p += fmt.Sprintf(", forcing failed %d× (last: %s)", rt.ForceFailureCount, rt.LastForceFailure)
		}
		parts = append(parts, p)
	}
	parts = append(parts, fmt.Sprintf("%s %s", FormatCount(float64(rt.Executions)), plural(int(min(rt.Executions, 2)), "execution")))
	withMax := func(total, avg float64, peak *float64, unit string) string {
		s := fmt.Sprintf("%s%s (avg %s", fmtFloat(total), unit, fmtFloat(avg))
		if peak != nil {
			s += ", max " + fmtFloat(*peak)
		}
		return s + ")"
	}
	parts = append(parts, "CPU "+withMax(rt.CPUMs, rt.AvgCPUMs, rt.MaxCPUMs, " ms"),
		"duration "+withMax(rt.DurationMs, rt.AvgDurationMs, rt.MaxDurationMs, " ms"),
		"reads "+withMax(rt.LogicalReads, rt.AvgLogicalReads, rt.MaxLogicalReads, ""))
	if rt.AvgRows != nil || rt.MinRows != nil || rt.MaxRows != nil {
		var rows []string
		if rt.AvgRows != nil {
			rows = append(rows, "avg "+fmtFloat(*rt.AvgRows))
		}
		if rt.MinRows != nil {
			rows = append(rows, "min "+FormatCount(float64(*rt.MinRows)))
		}
		if rt.MaxRows != nil {
			rows = append(rows, "max "+FormatCount(float64(*rt.MaxRows)))
		}
		parts = append(parts, "rows "+strings.Join(rows, " "))
	}
	if rt.SpilledPages != nil {
		parts = append(parts, "spilled "+FormatCount(float64(*rt.SpilledPages))+" pages")
	}
	if rt.MaxGrantKB != nil {
		parts = append(parts, "grant max "+FormatCount(float64(*rt.MaxGrantKB))+" KB")
	}
	if rt.MaxUsedMemoryKB != nil {
		parts = append(parts, "memory used max "+FormatCount(float64(*rt.MaxUsedMemoryKB))+" KB")
	}
	if rt.LastExecution != nil {
		parts = append(parts, "last run "+rt.LastExecution.UTC().Format("2006-01-02 15:04:05Z"))
	}
	if rt.Compiled != nil {
		parts = append(parts, "compiled "+rt.Compiled.UTC().Format("2006-01-02 15:04:05Z"))
	}
	return strings.Join(parts, " · ")
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

// countOf is a count as FormatCount writes it with its noun, singular
// when it reads 1: "1 execution", "1,250 rows", "0.5 rows".
func countOf(v float64, noun string) string {
	n := FormatCount(v)
	if n == "1" {
		return n + " " + noun
	}
	return n + " " + noun + "s"
}

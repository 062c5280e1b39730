package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/planlint/planlint/compare"
	"github.com/planlint/planlint/rules"
)

// CompareMarkdownMarker starts every Markdown comparison so that a workflow
// can find and update its one sticky pull-request comment; it differs from
// MarkdownMarker so that a check report and a comparison can both be kept.
const CompareMarkdownMarker = "<!-- planlint-compare -->"

// Comparison is a plan comparison with the two analysed files, for the
// shared renderers (Markdown, GitHub) that point at findings in them.
type Comparison struct {
	Version string
	Result  *compare.Result
	// A and B are the analysed plan files: their statement summaries and
	// their findings in the order the compare.Sides gave them, located in
	// the file. Either may be nil; findings are then shown unlocated.
	A, B *File
}

// gained returns the findings B gained as report findings of B's file, and
// that file; lost does the same for the findings A lost.
func (c *Comparison) gained() (*File, []*Finding) {
	return sideFindings(c.B, c.Result.B, c.Result.Findings.New, c.Result.Findings.NewAt)
}

func (c *Comparison) lost() (*File, []*Finding) {
	return sideFindings(c.A, c.Result.A, c.Result.Findings.Gone, c.Result.Findings.GoneAt)
}

func sideFindings(f *File, name string, fs []rules.Finding, at []int) (*File, []*Finding) {
	if f != nil && len(at) == len(fs) {
		out := make([]*Finding, 0, len(at))
		ok := true
		for _, i := range at {
			if i < 0 || i >= len(f.Findings) {
				ok = false
				break
			}
			out = append(out, f.Findings[i])
		}
		if ok {
			return f, out
		}
	}
	if f == nil {
		f = &File{Path: name}
	}
	return f, Wrap(fs)
}

// RedactedComparison returns a copy of c for sharing: both files as
// Redacted masks them, the findings B gained and lost likewise, and the
// compiled parameter values of parameter-value changes replaced by Mask.
// c is not modified.
func RedactedComparison(c *Comparison) *Comparison {
	if c == nil {
		return nil
	}
	out := &Comparison{Version: c.Version}
	if c.A != nil {
		out.A = redactFile(c.A)
	}
	if c.B != nil {
		out.B = redactFile(c.B)
	}
	if c.Result == nil {
		return out
	}
	r := *c.Result
	r.Statements = make([]*compare.StatementDiff, len(c.Result.Statements))
	for i, s := range c.Result.Statements {
		ns := *s
		ns.Changes = make([]compare.Change, len(s.Changes))
		for j, ch := range s.Changes {
			if ch.Kind == "parameter-value" {
				if ch.ValueA != "" {
					ch.ValueA = Mask
				}
				if ch.ValueB != "" {
					ch.ValueB = Mask
				}
				ch.Detail = compare.ParameterDetail(ch.Parameter, ch.ValueA, ch.ValueB)
			}
			ns.Changes[j] = ch
		}
		r.Statements[i] = &ns
	}
	all := append(Wrap(c.Result.Findings.New), Wrap(c.Result.Findings.Gone)...)
	keep := schemaTexts(all)
	mask := func(fs []rules.Finding) []rules.Finding {
		if fs == nil {
			return nil
		}
		out := make([]rules.Finding, len(fs))
		for i := range fs {
			out[i] = redactFinding(&Finding{Finding: fs[i]}, keep).Finding
		}
		return out
	}
	r.Findings.New, r.Findings.Gone = mask(c.Result.Findings.New), mask(c.Result.Findings.Gone)
	out.Result = &r
	return out
}

var errNoComparison = errors.New("no comparison to render")

// CompareMarkdownOptions control the Markdown comparison.
type CompareMarkdownOptions struct {
	// BaseDir is what file paths are made relative to; "" means the
	// working directory.
	BaseDir string
	// MaxLength caps the comparison in bytes (0 means
	// DefaultMarkdownLength); what does not fit is counted in a
	// truncation note. The summary and the note are always written.
	MaxLength int
	// FullReport says where the full comparison is, for the truncation
	// note.
	FullReport string
	// NoRedact keeps literals and parameter values.
	NoRedact bool
	// MinSeverity hides the gained and lost findings below it (0 shows
	// all); the summary still counts them and a note says how many are
	// hidden.
	MinSeverity rules.Severity
}

// mdPart is one piece of the comparison in a section; mdUnit is what is
// kept or dropped together (a finding's row and its fix).
type mdPart struct {
	section int
	text    string
}

type mdUnit struct {
	parts []mdPart
	kind  string // what the truncation note counts it as
	prio  int    // lower is kept first
	dep   int    // the unit it is shown only with, -1 for none
}

// CompareMarkdown writes a comparison for a pull-request comment or a job
// summary: a hidden marker, a summary of the findings B gained and lost,
// per matched statement its figures side by side, its shape and setting
// changes and the operators whose figures changed, then the findings B
// gained and lost with their fixes, all within MaxLength. What does not
// fit is left out whole and counted in a note: statements are kept first
// (in at most half the room), then the findings B gained with their fixes,
// then operator rows, then the findings B lost.
func CompareMarkdown(w io.Writer, c *Comparison, opt CompareMarkdownOptions) error {
	if c == nil || c.Result == nil {
		return errNoComparison
	}
	_, err := io.WriteString(w, compareMarkdownText(c, opt))
	return err
}

func compareMarkdownText(c *Comparison, opt CompareMarkdownOptions) string {
	if !opt.NoRedact {
		c = RedactedComparison(c)
	}
	limit := opt.MaxLength
	if limit <= 0 {
		limit = DefaultMarkdownLength
	}
	r := c.Result
	mopt := MarkdownOptions{BaseDir: opt.BaseDir, NoRedact: true} // already masked
	fb, gained := c.gained()
	fa, lost := c.lost()
	bySeverity := func(xs []*Finding) {
		sort.SliceStable(xs, func(i, j int) bool { return xs[i].Severity > xs[j].Severity })
	}
	bySeverity(gained)
	bySeverity(lost)
	atOrAbove := func(xs []*Finding) []*Finding {
		var out []*Finding
		for _, x := range xs {
			if x.Severity >= opt.MinSeverity {
				out = append(out, x)
			}
		}
		return out
	}

	var heads []string
	section := func(head string) int {
		heads = append(heads, head)
		return len(heads) - 1
	}
	var units []mdUnit

	header := compareMarkdownHeader(c, opt.BaseDir, gained, lost)
	if note := compareHiddenNote(r, opt.MinSeverity); note != "" {
		header += "\n" + markdownCell(strings.ToUpper(note[:1])+note[1:]) + ".\n"
	}
	gained, lost = atOrAbove(gained), atOrAbove(lost)
	for _, s := range r.Statements {
		rows, same := changedOperators(s)
		text := statementMarkdown(s)
		switch {
		case len(rows) == 0 && same > 0:
			text += "\nEvery operator has the same figures on both sides.\n"
		case same > 0:
			text += fmt.Sprintf("\nOperators whose figures changed (%d more %s the same figures on both sides):\n", same, pluralWord(same, "has", "have"))
		}
		dep := len(units)
		units = append(units, mdUnit{parts: []mdPart{{section(""), text}}, kind: "statements", prio: 0, dep: -1})
		if len(rows) > 0 {
			opSec := section(operatorTableHead(s))
			for _, o := range rows {
				units = append(units, mdUnit{parts: []mdPart{{opSec, operatorRow(s, o)}}, kind: "operator rows", prio: 3, dep: dep})
			}
		}
	}
	if n := len(r.OnlyInA) + len(r.OnlyInB); n > 0 {
		sec := section("\n### Statements on one side only\n\n")
		for _, s := range r.OnlyInA {
			units = append(units, mdUnit{parts: []mdPart{{sec, fmt.Sprintf("- only in A: batch %d stmt %d (%s)\n", s.Batch, s.StatementID, markdownCell(s.Type))}}, kind: "statements", prio: 0, dep: -1})
		}
		for _, s := range r.OnlyInB {
			units = append(units, mdUnit{parts: []mdPart{{sec, fmt.Sprintf("- only in B: batch %d stmt %d (%s)\n", s.Batch, s.StatementID, markdownCell(s.Type))}}, kind: "statements", prio: 0, dep: -1})
		}
	}
	findingUnits := func(title, kind string, f *File, xs []*Finding, prio int) {
		if len(xs) == 0 {
			return
		}
		rowSec := section("\n### " + title + "\n" + markdownTableHead)
		fixSec := section("\n#### Fixes\n\n")
		for _, x := range xs {
			u := mdUnit{parts: []mdPart{{rowSec, markdownRow(f, x, mopt)}}, kind: kind, prio: prio, dep: -1}
			if x.Fix != "" {
				u.parts = append(u.parts, mdPart{fixSec, markdownFix(f, x, mopt)})
			}
			units = append(units, u)
		}
	}
	findingUnits("Findings B gained", "gained findings", fb, gained, 1)
	findingUnits("Findings B lost", "lost findings", fa, lost, 4)

	footer := markdownFooter(&Report{Version: c.Version}, MarkdownOptions{NoRedact: opt.NoRedact})
	keep := fitUnits(units, heads, limit-len(header)-len(footer), func(shown, all map[string]int) int {
		return len(compareTruncationNote(limit, shown, all, opt.FullReport))
	})

	var b strings.Builder
	b.WriteString(header)
	opened := make([]bool, len(heads))
	shown, all := map[string]int{}, map[string]int{}
	bySection := make([][]string, len(heads))
	for i, u := range units {
		all[u.kind]++
		if !keep[i] {
			continue
		}
		shown[u.kind]++
		for _, p := range u.parts {
			bySection[p.section] = append(bySection[p.section], p.text)
		}
	}
	for i, texts := range bySection {
		if len(texts) == 0 {
			continue
		}
		if !opened[i] {
			b.WriteString(heads[i])
			opened[i] = true
		}
		for _, t := range texts {
			b.WriteString(t)
		}
	}
	for k, n := range all {
		if shown[k] < n {
			b.WriteString(compareTruncationNote(limit, shown, all, opt.FullReport))
			break
		}
	}
	b.WriteString(footer)
	return b.String()
}

// fitUnits chooses the units that fit in budget bytes with their section
// heads and the truncation note (noteSize, given what is shown): by
// priority, in order within one; once a unit of a kind does not fit, the
// later ones of that kind are dropped too, so nothing is shown out of
// order. Lower priorities fill the room higher ones leave.
func fitUnits(units []mdUnit, heads []string, budget int, noteSize func(shown, all map[string]int) int) []bool {
	keep := make([]bool, len(units))
	size := 0
	all := map[string]int{}
	for _, u := range units {
		all[u.kind]++
	}
	opened := make([]bool, len(heads))
	cost := func(u mdUnit) int {
		n := 0
		seen := map[int]bool{}
		for _, p := range u.parts {
			n += len(p.text)
			if !opened[p.section] && !seen[p.section] {
				n += len(heads[p.section])
				seen[p.section] = true
			}
		}
		return n
	}
	total := 0
	counted := make([]bool, len(heads))
	for _, u := range units {
		for _, p := range u.parts {
			total += len(p.text)
			if !counted[p.section] {
				total += len(heads[p.section])
				counted[p.section] = true
			}
		}
	}
	if total <= budget {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	// The note is never longer than with every count at its total.
	budget -= noteSize(all, all)
	full := map[string]bool{}
	// Statements come first but take at most half the room, so that a
	// plan of many statements still shows the findings B gained.
	room := map[string]int{"statements": budget / 2}
	spent := map[string]int{}
	maxPrio := 0
	for _, u := range units {
		maxPrio = max(maxPrio, u.prio)
	}
	for prio := 0; prio <= maxPrio; prio++ {
		for i, u := range units {
			if u.prio != prio || full[u.kind] || u.dep >= 0 && !keep[u.dep] {
				continue
			}
			n := cost(u)
			if r, capped := room[u.kind]; size+n > budget || capped && spent[u.kind]+n > r {
				full[u.kind] = true
				continue
			}
			size += n
			spent[u.kind] += n
			keep[i] = true
			for _, p := range u.parts {
				opened[p.section] = true
			}
		}
	}
	return keep
}

func compareTruncationNote(limit int, shown, all map[string]int, fullReport string) string {
	where := fullReport
	if where == "" {
		where = "the text or JSON output of planlint compare"
	}
	var parts []string
	for _, k := range []string{"gained findings", "statements", "operator rows", "lost findings"} {
		if all[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d %s", shown[k], all[k], k))
		}
	}
	return fmt.Sprintf("\n> **Comparison truncated** to %d characters: %s shown. The full comparison is in %s.\n",
		limit, strings.Join(parts, ", "), markdownCell(where))
}

func compareMarkdownHeader(c *Comparison, base string, gained, lost []*Finding) string {
	r := c.Result
	var b strings.Builder
	b.WriteString(CompareMarkdownMarker + "\n## planlint compare\n\n")
	fmt.Fprintf(&b, "A: %s  \nB: %s\n\n", markdownPath(displayPath(base, r.A)), markdownPath(displayPath(base, r.B)))
	e, wn, i := severityCounts(gained)
	if e+wn+i == 0 {
		b.WriteString("**B gains no finding**")
	} else {
		fmt.Fprintf(&b, "**B gains %d %s, %d %s, %d %s**", e, plural(e, "error"), wn, plural(wn, "warning"), i, plural(i, "info"))
	}
	fmt.Fprintf(&b, "; it loses %d %s; %d in both. ", len(lost), plural(len(lost), "finding"), r.Findings.Kept)
	n := len(r.Statements)
	fmt.Fprintf(&b, "%d %s matched", n, pluralWord(n, "statement", "statements"))
	if by := matchedBy(r.Statements); by != "" {
		b.WriteString(" (" + by + ")")
	}
	if len(r.OnlyInA)+len(r.OnlyInB) > 0 {
		fmt.Fprintf(&b, ", %d only in A, %d only in B", len(r.OnlyInA), len(r.OnlyInB))
	}
	b.WriteString(".\n")
	return b.String()
}

// matchedBy says how the statements were paired: "by query hash", or
// "2 by query hash, 1 by position".
func matchedBy(ss []*compare.StatementDiff) string {
	counts := map[string]int{}
	var order []string
	for _, s := range ss {
		if counts[s.MatchedBy] == 0 {
			order = append(order, s.MatchedBy)
		}
		counts[s.MatchedBy]++
	}
	if len(order) == 1 {
		return "by " + strings.ReplaceAll(order[0], "_", " ")
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%d by %s", counts[k], strings.ReplaceAll(k, "_", " ")))
	}
	return strings.Join(parts, ", ")
}

// statementMarkdown is a statement's heading, its figures side by side and
// its changes.
func statementMarkdown(s *compare.StatementDiff) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s ↔ %s (%s), matched by %s\n\n", Place(s.A.Batch, s.A.StatementID, nil, true),
		Place(s.B.Batch, s.B.StatementID, nil, true), markdownCell(s.A.Type), strings.ReplaceAll(s.MatchedBy, "_", " "))
	b.WriteString("| | A | B | B/A |\n| --- | ---: | ---: | ---: |\n")
	figure := func(name string, a, bv *float64, unit string) {
		side := func(v *float64) string {
			if v == nil {
				return "—"
			}
			return fmtFloat(*v) + unit
		}
		ratio := ""
		if a != nil && bv != nil {
			ratio = ratioText(*a, *bv)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, side(a), side(bv), ratio)
	}
	fp := func(v float64) *float64 { return &v }
	figure("cost", fp(s.Cost.A), fp(s.Cost.B), "")
	if s.MemoryGrantKB.A != 0 || s.MemoryGrantKB.B != 0 {
		figure("memory grant", fp(s.MemoryGrantKB.A), fp(s.MemoryGrantKB.B), " KB")
	}
	if s.DOP.A != s.DOP.B {
		figure("degree of parallelism", fp(s.DOP.A), fp(s.DOP.B), "")
	}
	if a := s.Actual; a != nil {
		get := func(t *compare.RunTotals, v func(*compare.RunTotals) float64) *float64 {
			if t == nil {
				return nil
			}
			return fp(v(t))
		}
		for _, f := range []struct {
			name, unit string
			v          func(*compare.RunTotals) float64
		}{
			{"elapsed", " ms", func(t *compare.RunTotals) float64 { return t.ElapsedMs }},
			{"CPU", " ms", func(t *compare.RunTotals) float64 { return t.CPUMs }},
			{"logical reads", "", func(t *compare.RunTotals) float64 { return t.LogicalReads }},
			{"rows read", "", func(t *compare.RunTotals) float64 { return t.RowsRead }},
		} {
			figure(f.name, get(a.A, f.v), get(a.B, f.v), f.unit)
		}
	}
	if len(s.Changes) == 0 {
		b.WriteString("\nSame shape and settings.\n")
	} else {
		b.WriteString("\n")
		for _, c := range s.Changes {
			fmt.Fprintf(&b, "- **%s** %s\n", markdownCell(c.Kind), markdownCell(c.Detail))
		}
	}
	return b.String()
}

// ratioText is "×3.5" or "÷2" for a figure that changed, "" otherwise.
func ratioText(a, b float64) string {
	if a <= 0 || b <= 0 || a == b {
		return ""
	}
	if r := b / a; r >= 1 {
		return "×" + fmtFloat(r)
	}
	return "÷" + fmtFloat(a/b)
}

// changedOperators are the operators of s present on one side only or
// whose estimated or actual rows, logical reads or rounded cost share
// differ; same counts the others.
func changedOperators(s *compare.StatementDiff) (changed []compare.OperatorDiff, same int) {
	for _, o := range s.Operators {
		if o.NodeA == nil || o.NodeB == nil || !sameFloat(o.EstimatedRows.A, o.EstimatedRows.B) ||
			!sameCount(o.ActualRowsA, o.ActualRowsB) || !sameCount(o.LogicalReadsA, o.LogicalReadsB) ||
			optShare(o.CostShare.A) != optShare(o.CostShare.B) {
			changed = append(changed, o)
			continue
		}
		same++
	}
	return changed, same
}

func sameFloat(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return math.Abs(*a-*b) <= 1e-9*math.Max(math.Abs(*a), math.Abs(*b))
}

func sameCount(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func operatorTableHead(s *compare.StatementDiff) string {
	h := "\n| Node A → B | Operator | Object | Est. rows A → B | Actual rows A → B | Cost A → B |"
	sep := "\n| --- | --- | --- | ---: | ---: | ---: |"
	if s.Actual != nil {
		h += " Reads A → B |"
		sep += " ---: |"
	}
	return h + sep + "\n"
}

func operatorRow(s *compare.StatementDiff, o compare.OperatorDiff) string {
	dash := func(v string) string {
		if v == "-" {
			return "—"
		}
		return v
	}
	pair := func(a, b string) string { return dash(a) + " → " + dash(b) }
	row := fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", pair(optNode(o.NodeA), optNode(o.NodeB)), markdownCell(o.Operator),
		markdownCell(o.Object), pair(optRows(o.EstimatedRows.A), optRows(o.EstimatedRows.B)),
		pair(optCount(o.ActualRowsA), optCount(o.ActualRowsB)), pair(optShare(o.CostShare.A), optShare(o.CostShare.B)))
	if s.Actual != nil {
		row += " " + pair(optCount(o.LogicalReadsA), optCount(o.LogicalReadsB)) + " |"
	}
	return row + "\n"
}

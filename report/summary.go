package report

import (
	"fmt"
	"slices"
)

// Summary is what the summary line of every human format (text, Markdown,
// GitHub's job summary, HTML) says, in parts that each renderer styles.
// It is built in one place, summarize, so every format says the same.
type Summary struct {
	Errors, Warnings, Infos int
	// Counts is "1 error, 0 warnings, 3 infos", or "" when no input could
	// be analysed (counts of nothing mean nothing).
	Counts string
	// Scope is what the counts are over: "in 2 files"; "" with Counts.
	Scope string
	// Failed is "1 of 3 files could not be analysed", "no file could be
	// analysed", "none of the 3 files could be analysed" or, when there
	// was no input at all, "nothing to analyse"; "" when every input was
	// analysed.
	Failed string
	// Suppressed is "3 suppressed by .planlint.yaml"; "" for none.
	Suppressed string
}

// summarize builds the summary of r.
func summarize(r *Report) Summary {
	e, w, i := r.Counts()
	s := Summary{Errors: e, Warnings: w, Infos: i, Suppressed: suppressedNote(r)}
	total, failed := r.Inputs(), r.Failed()
	analysed := total - failed
	// Inputs pulled from the plan cache or Query Store are statements.
	noun := "file"
	if total > 0 && !slices.ContainsFunc(r.Files, func(f *File) bool { return !f.Config && f.Runtime() == nil }) {
		noun = "statement"
	}
	if analysed > 0 {
		s.Counts = fmt.Sprintf("%d %s, %d %s, %d %s", e, plural(e, "error"), w, plural(w, "warning"), i, plural(i, "info"))
		s.Scope = fmt.Sprintf("in %d %s", analysed, plural(analysed, noun))
	}
	switch {
	case total == 0: // every input excluded, or none given
		s.Failed = "nothing to analyse"
	case failed == 0:
	case total == 1:
		s.Failed = "no " + noun + " could be analysed"
	case analysed == 0:
		s.Failed = fmt.Sprintf("none of the %d %ss could be analysed", total, noun)
	default:
		s.Failed = fmt.Sprintf("%d of %d %ss could not be analysed", failed, total, noun)
	}
	return s
}

// String is the summary as one plain line:
// "1 error, 0 warnings, 3 infos in 2 files; 1 of 3 files could not be analysed".
func (s Summary) String() string {
	return s.join(s.Counts+" "+s.Scope, s.Failed)
}

// join puts the counts part and the failed part together as String does,
// for renderers that style the parts first.
func (s Summary) join(counts, failed string) string {
	switch {
	case s.Counts == "":
		return failed
	case s.Failed == "":
		return counts
	}
	return counts + "; " + failed
}

// upperFirst capitalises the first letter of a summary that starts a
// sentence ("No file could be analysed.").
func upperFirst(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

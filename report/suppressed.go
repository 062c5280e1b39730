package report

import "fmt"

// suppressedNote says how many findings suppress entries of the
// configuration file moved out of the report, "" for none.
func suppressedNote(r *Report) string {
	n := r.SuppressedCount()
	if n == 0 {
		return ""
	}
	by := r.SuppressedBy
	if by == "" {
		by = "the config file"
	}
	return fmt.Sprintf("%d suppressed by %s", n, by)
}

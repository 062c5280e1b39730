package report

import (
	"fmt"
	"sort"

	"github.com/planlint/planlint/rules"
)

// visible are the findings of f at or above min (all when min is 0), in
// their given order.
func visible(f *File, min rules.Severity) []*Finding {
	var out []*Finding
	for _, x := range f.Findings {
		if x.Severity >= min {
			out = append(out, x)
		}
	}
	return out
}

// hiddenCount counts the findings below min over the report.
func hiddenCount(r *Report, min rules.Severity) int {
	n := 0
	for _, f := range r.Files {
		if f.Error == nil {
			n += len(f.Findings) - len(visible(f, min))
		}
	}
	return n
}

// hiddenNote says how many findings below min are not shown, "" for none.
func hiddenNote(r *Report, min rules.Severity) string {
	return notShownNote(hiddenCount(r, min), min, "")
}

// notShownNote says that n findings below min are not shown, "" for none;
// detail (such as "1 gained, 2 lost; ") goes before the hint.
func notShownNote(n int, min rules.Severity, detail string) string {
	if n == 0 {
		return ""
	}
	below := "info"
	if min > rules.Warning {
		below = "warning and info"
	}
	return fmt.Sprintf("%d %s %s not shown (%s--min-severity %s shows them)", n, below, plural(n, "finding"), detail, rules.Severity(min-1))
}

// byImpact orders findings worst first: by severity, then by what their
// statement costs (its runtime CPU from the plan cache or Query Store,
// else its estimated cost), then by the operator's cost share when the
// rule measured it; ties keep their order.
func byImpact(f *File, xs []*Finding) []*Finding {
	out := append([]*Finding(nil), xs...)
	weight := func(x *Finding) (float64, float64) {
		var stmt, share float64
		if s := f.StatementOf(x); s != nil {
			stmt = s.Cost
			if s.Runtime != nil {
				stmt = 1e9 + s.Runtime.CPUMs
			}
		}
		if v, ok := x.Evidence["cost_share"].(float64); ok {
			share = v
		}
		return stmt, share
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		sa, ca := weight(a)
		sb, cb := weight(b)
		if sa != sb {
			return sa > sb
		}
		return ca > cb
	})
	return out
}

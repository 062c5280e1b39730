package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/planlint/planlint/compare"
	"github.com/planlint/planlint/rules"
)

// CompareJSON writes a plan comparison as indented JSON. Empty lists are
// written as [], never null.
func CompareJSON(w io.Writer, r *compare.Result) error {
	if r.Statements == nil {
		r.Statements = []*compare.StatementDiff{}
	}
	for _, s := range r.Statements {
		if s.Changes == nil {
			s.Changes = []compare.Change{}
		}
	}
	for _, l := range []*[]compare.StatementRef{&r.OnlyInA, &r.OnlyInB} {
		if *l == nil {
			*l = []compare.StatementRef{}
		}
	}
	for _, l := range []*[]rules.Finding{&r.Findings.New, &r.Findings.Gone} {
		if *l == nil {
			*l = []rules.Finding{}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		SchemaVersion int `json:"schema_version"`
		*compare.Result
	}{SchemaVersion, r})
}

func fmtFloat(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 1000:
		return FormatCount(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func deltaText(d compare.Delta, unit string) string {
	s := fmt.Sprintf("%s → %s%s", fmtFloat(d.A), fmtFloat(d.B), unit)
	if d.A > 0 && d.B > 0 && d.A != d.B {
		r := d.B / d.A
		if r >= 1 {
			s += fmt.Sprintf(" (×%s)", fmtFloat(r))
		} else {
			s += fmt.Sprintf(" (÷%s)", fmtFloat(1/r))
		}
	}
	return s
}

func optCount(v *int64) string {
	if v == nil {
		return "-"
	}
	return FormatCount(float64(*v))
}

func optNode(v *int) string {
	if v == nil {
		return "-"
	}
	return strconv.Itoa(*v)
}

// CompareText writes a plan comparison for people: per statement the cost,
// grant and shape changes and a table of paired operators, then the
// findings B gained and lost.
func CompareText(w io.Writer, r *compare.Result, opt TextOptions) error {
	st := newStyles(opt.Color)
	ew := &errWriter{w: w}
	ew.printf("%s\n  A: %s\n  B: %s\n", st.bold.Sprint("planlint compare"), r.A, r.B)
	for _, s := range r.Statements {
		ew.printf("\n%s  %s ↔ stmt %d (batch %d), matched by %s\n", st.bold.Sprint(Place(s.A.Batch, s.A.StatementID, nil, true)),
			s.A.Type, s.B.StatementID, s.B.Batch, strings.ReplaceAll(s.MatchedBy, "_", " "))
		ew.printf("  cost %s\n", deltaText(s.Cost, ""))
		if s.MemoryGrantKB.A != 0 || s.MemoryGrantKB.B != 0 {
			ew.printf("  memory grant %s\n", deltaText(s.MemoryGrantKB, " KB"))
		}
		if s.DOP.A != s.DOP.B {
			ew.printf("  degree of parallelism %s\n", deltaText(s.DOP, ""))
		}
		if a := s.Actual; a != nil {
			ew.printf("  actual: %s\n", actualText(a))
		}
		if len(s.Changes) == 0 {
			ew.printf("  same shape and settings\n")
		}
		for _, c := range s.Changes {
			ew.printf("  %-17s %s\n", st.warn.Sprint(c.Kind), c.Detail)
		}
		if ew.err != nil {
			return ew.err
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		head := "  node A→B\toperator\tobject\test rows A → B\tactual A → B\tcost A → B"
		if s.Actual != nil {
			head += "\treads A → B"
		}
		fmt.Fprintln(tw, head)
		for _, o := range s.Operators {
			fmt.Fprintf(tw, "  %s → %s\t%s\t%s\t%s → %s\t%s → %s\t%s → %s", optNode(o.NodeA), optNode(o.NodeB), o.Operator, o.Object,
				optRows(o.EstimatedRows.A), optRows(o.EstimatedRows.B), optCount(o.ActualRowsA), optCount(o.ActualRowsB),
				optShare(o.CostShare.A), optShare(o.CostShare.B))
			if s.Actual != nil {
				fmt.Fprintf(tw, "\t%s → %s", optCount(o.LogicalReadsA), optCount(o.LogicalReadsB))
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, s := range r.OnlyInA {
		ew.printf("\nonly in A: batch %d stmt %d (%s)\n", s.Batch, s.StatementID, s.Type)
	}
	for _, s := range r.OnlyInB {
		ew.printf("\nonly in B: batch %d stmt %d (%s)\n", s.Batch, s.StatementID, s.Type)
	}
	f := r.Findings
	ew.printf("\nfindings: %d new in B, %d gone, %d in both", len(f.New), len(f.Gone), f.Kept)
	if note := compareHiddenNote(r, opt.MinSeverity); note != "" {
		ew.printf("; %s", note)
	}
	ew.printf("\n")
	for _, x := range atLeast(f.New, opt.MinSeverity) {
		ew.printf("  %s %s: %s %s %s\n", st.err.Sprint("new "), Place(x.Batch, x.StatementID, x.NodeID, true), st.severity(x.Severity), st.dim.Sprintf("[%s %s]", x.Code, x.Rule), x.Message)
	}
	for _, x := range atLeast(f.Gone, opt.MinSeverity) {
		ew.printf("  %s %s: %s %s %s\n", st.info.Sprint("gone"), Place(x.Batch, x.StatementID, x.NodeID, true), st.severity(x.Severity), st.dim.Sprintf("[%s %s]", x.Code, x.Rule), x.Message)
	}
	return ew.err
}

// atLeast are the findings at or above min (all when min is 0), in their
// given order.
func atLeast(xs []rules.Finding, min rules.Severity) []rules.Finding {
	var out []rules.Finding
	for _, x := range xs {
		if x.Severity >= min {
			out = append(out, x)
		}
	}
	return out
}

// compareHiddenNote says how many of the findings B gained and lost are
// below min and not shown, "" for none.
func compareHiddenNote(r *compare.Result, min rules.Severity) string {
	gained := len(r.Findings.New) - len(atLeast(r.Findings.New, min))
	lost := len(r.Findings.Gone) - len(atLeast(r.Findings.Gone, min))
	return notShownNote(gained+lost, min, fmt.Sprintf("%d gained, %d lost; ", gained, lost))
}

// actualText renders the runtime totals of both sides; "-" marks an
// estimated side.
func actualText(a *compare.ActualDiff) string {
	figure := func(name, unit string, get func(*compare.RunTotals) float64) string {
		if a.A == nil || a.B == nil {
			side := func(t *compare.RunTotals) string {
				if t == nil {
					return "-"
				}
				return fmtFloat(get(t))
			}
			return fmt.Sprintf("%s %s → %s%s", name, side(a.A), side(a.B), unit)
		}
		return name + " " + deltaText(compare.Delta{A: get(a.A), B: get(a.B)}, unit)
	}
	return strings.Join([]string{
		figure("elapsed", " ms", func(t *compare.RunTotals) float64 { return t.ElapsedMs }),
		figure("CPU", " ms", func(t *compare.RunTotals) float64 { return t.CPUMs }),
		figure("logical reads", "", func(t *compare.RunTotals) float64 { return t.LogicalReads }),
		figure("rows read", "", func(t *compare.RunTotals) float64 { return t.RowsRead }),
	}, ", ")
}

// optRows and optShare print a side's figure, "-" where the operator is
// absent.
func optRows(v *float64) string {
	if v == nil {
		return "-"
	}
	return FormatCount(*v)
}

func optShare(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.Itoa(int(math.Round(*v*100))) + "%"
}

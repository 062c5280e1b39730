package report

import (
	"strings"

	"github.com/planlint/planlint/plan"
)

// glyphFor names the operator's icon (a symbol in assets/glyphs.svg).
func glyphFor(n *plan.RelOp) string {
	op := n.PhysicalOp
	switch {
	case n.IsLookup():
		return "g-lookup"
	case op == "Constant Scan":
		return "g-const"
	case strings.HasSuffix(op, "Spool"):
		return "g-spool"
	case strings.Contains(op, "Seek"):
		return "g-seek"
	case strings.Contains(op, "Scan"):
		return "g-scan"
	case op == "Nested Loops":
		return "g-loops"
	case op == "Hash Match":
		return "g-hash"
	case op == "Merge Join" || op == "Adaptive Join" || op == "Merge Interval":
		return "g-join"
	case op == "Sort":
		return "g-sort"
	case strings.Contains(op, "Aggregate"):
		return "g-agg"
	case op == "Compute Scalar" || op == "Sequence Project" || op == "Segment" || op == "Window Spool":
		return "g-compute"
	case op == "Filter" || op == "Assert":
		return "g-filter"
	case op == "Top":
		return "g-top"
	case op == "Parallelism":
		return "g-parallel"
	case op == "Concatenation" || op == "Switch":
		return "g-concat"
	case op == "Bitmap":
		return "g-bitmap"
	case strings.Contains(op, "Insert") || strings.Contains(op, "Update") || strings.Contains(op, "Delete") ||
		op == "Merge" || op == "Split" || op == "Collapse":
		return "g-write"
	case strings.Contains(op, "Function") || op == "UDX" || strings.Contains(op, "Remote"):
		return "g-func"
	}
	return "g-op"
}

// hasPlanWarnings reports whether the operator carries a Warnings element
// with something in it (spill, missing statistics, conversion, no join
// predicate, ...).
func hasPlanWarnings(n *plan.RelOp) bool {
	return n.Warnings != nil && warningsText(n.Warnings) != ""
}

// wrapLabel breaks s into at most maxLines lines of at most width
// characters, at spaces where it can; only text beyond the last line is
// cut, with an ellipsis.
func wrapLabel(s string, width, maxLines int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		for len([]rune(w)) > width { // a word longer than a line is split
			if cur != "" {
				lines = append(lines, cur)
				cur = ""
			}
			r := []rune(w)
			lines = append(lines, string(r[:width]))
			w = string(r[width:])
		}
		switch {
		case cur == "":
			cur = w
		case len([]rune(cur))+1+len([]rune(w)) <= width:
			cur += " " + w
		default:
			lines = append(lines, cur)
			cur = w
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	if len(lines) > maxLines {
		last := []rune(lines[maxLines-1])
		if len(last) >= width {
			last = last[:width-1]
		}
		lines = append(lines[:maxLines-1], string(last)+"…")
	}
	return lines
}

// actualOfEstimated is SSMS's row label on actual plans: "1,234 of 1,000
// (123%)", the actual rows of all executions (summed over threads) against
// the estimate for all estimated executions.
func actualOfEstimated(n *plan.RelOp) string {
	rt := n.RunTime
	if rt == nil {
		return ""
	}
	est := n.EstimatedRowsAllExecutions()
	s := FormatCount(float64(rt.ActualRows)) + " of " + FormatCount(est)
	if est > 0 {
		s += " (" + FormatCount(float64(rt.ActualRows)/est*100) + "%)"
	}
	return s
}

package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/planlint/planlint/internal/units"
	"github.com/planlint/planlint/plan"
)

// Skew is the estimate error of an operator: Factor ≥ 1, Under when more
// rows came than estimated. OK is false without runtime counters.
type Skew struct {
	Factor float64
	Under  bool
	OK     bool
}

// OperatorSkew is the estimate error per execution, with executions and
// rows counted the way the estimate counts them (plan.RelOp.EstimateSkew):
// the factor row-estimate-skew reports.
func OperatorSkew(n *plan.RelOp) Skew {
	s, ok := n.EstimateSkew()
	if !ok {
		return Skew{}
	}
	return Skew{Factor: s.Factor, Under: s.Under, OK: true}
}

// CostShare is the operator's own cost as a share of its plan's cost.
func CostShare(q *plan.QueryPlan, n *plan.RelOp) float64 {
	if q.Cost() <= 0 {
		return 0
	}
	return math.Min(1, n.OwnCost()/q.Cost())
}

// FormatCount renders a row count with thousands separators (see
// units.Count: the rules format their figures the same way).
func FormatCount(v float64) string { return units.Count(v) }

// nodeFindings maps (statement ordinal, node) to the rule codes reported
// there.
func nodeFindings(f *File) map[[2]int][]string {
	m := map[[2]int][]string{}
	for _, x := range f.Findings {
		if x.NodeID == nil {
			continue
		}
		k := [2]int{statementOrdinal(f, x), *x.NodeID}
		m[k] = append(m[k], x.Code)
	}
	return m
}

// writeTree prints the operator tree of every statement with a plan and
// reports whether it printed anything.
func writeTree(ew *errWriter, f *File, st styles, mb bool) bool {
	marks := nodeFindings(f)
	printed := false
	for _, s := range f.Statements {
		src := s.Source
		if src == nil {
			continue
		}
		plans := src.Plans()
		if len(plans) == 0 {
			continue
		}
		printed = true
		ew.printf("\n%s  %s  %s  cost %s\n", st.bold.Sprint(f.StatementPlace(s, nil)), s.Type, s.Kind,
			strconv.FormatFloat(s.Cost, 'g', 4, 64))
		for _, line := range propertyLines(s.Properties) {
			ew.printf("  %s\n", st.dim.Sprint(line))
		}
		for _, q := range plans {
			if q.Label != "" {
				ew.printf("  cursor %s\n", q.Label)
			}
			writeNode(ew, q.QueryPlan, q.Root, "  ", "", st, func(n *plan.RelOp) []string {
				return marks[[2]int{s.Ordinal, n.NodeID}]
			})
		}
	}
	return printed
}

func writeNode(ew *errWriter, q *plan.QueryPlan, n *plan.RelOp, indent, branch string, st styles, marks func(*plan.RelOp) []string) {
	writeTreeNode(ew, q, n, &treeIndent{base: indent}, branch, st, marks)
}

func writeTreeNode(ew *errWriter, q *plan.QueryPlan, n *plan.RelOp, indent *treeIndent, branch string, st styles, marks func(*plan.RelOp) []string) {
	if n == nil {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s[%d] %s", indent, branch, n.NodeID, n.DisplayName())
	if o := n.Access.Object(); o.Table != "" {
		name := o.TableName(false)
		if o.Index != "" {
			name += "." + o.Index
		}
		fmt.Fprintf(&b, " %s", st.dim.Sprint(name))
	}
	fmt.Fprintf(&b, "  est %s", FormatCount(n.EstimatedRowsAllExecutions()))
	if n.RunTime != nil {
		act, _ := n.ActualRowCount()
		fmt.Fprintf(&b, " act %s", FormatCount(act))
		if ex, _ := n.ActualExecutionCount(); ex > 1 {
			fmt.Fprintf(&b, " in %s execs", FormatCount(ex))
		}
		if sk := OperatorSkew(n); sk.Factor >= 2 {
			dir := "over"
			if sk.Under {
				dir = "under"
			}
			txt := fmt.Sprintf("(%s× %s)", FormatCount(sk.Factor), dir)
			switch {
			case sk.Factor >= 1000:
				txt = st.err.Sprint(txt)
			case sk.Factor >= 100:
				txt = st.hot.Sprint(txt)
			case sk.Factor >= 10:
				txt = st.warm.Sprint(txt)
			}
			b.WriteString(" " + txt)
		}
	}
	share := CostShare(q, n)
	cost := fmt.Sprintf("cost %d%%", int(math.Round(share*100)))
	switch {
	case share >= 0.9:
		cost = st.err.Sprint(cost)
	case share >= 0.5:
		cost = st.hot.Sprint(cost)
	case share >= 0.1:
		cost = st.warm.Sprint(cost)
	}
	b.WriteString("  " + cost)
	if t := selfTimeText(n); t != "" {
		b.WriteString("  " + t)
	}
	if m := marks(n); len(m) > 0 {
		b.WriteString("  " + st.bold.Sprint("← "+strings.Join(m, ", ")))
	}
	ew.printf("%s\n", b.String())
	pushed := true
	switch branch {
	case "├─ ":
		indent.levels = append(indent.levels, "│  ")
	case "└─ ":
		indent.levels = append(indent.levels, "   ")
	default:
		pushed = false
	}
	for i, c := range n.Children {
		br := "├─ "
		if i == len(n.Children)-1 {
			br = "└─ "
		}
		writeTreeNode(ew, q, c, indent, br, st, marks)
	}
	if pushed {
		indent.levels = indent.levels[:len(indent.levels)-1]
	}
}

// statementOrdinal is the ordinal of the statement a finding is about, -1
// when the file has no such statement.
func statementOrdinal(f *File, x *Finding) int {
	if s := f.StatementOf(x); s != nil {
		return s.Ordinal
	}
	return -1
}

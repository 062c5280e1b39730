package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/planlint/planlint/plan"
)

// DOTOptions control the Graphviz output.
type DOTOptions struct {
	// BaseDir is what file paths in cluster labels are made relative to;
	// "" means the working directory.
	BaseDir string
}

// DOT writes one Graphviz digraph for the report with a cluster per
// statement plan. Nodes show operator, object, rows and cost; edges run
// from parent to child drawn with the arrow at the parent (data flows
// right to left, as in SSMS), their width growing with the rows carried.
// Operators with findings are highlighted. Only statements whose plans
// were kept are drawn. Labels hold no literal values.
func DOT(w io.Writer, r *Report, opt DOTOptions) error {
	ew := &errWriter{w: w}
	ew.printf("digraph planlint {\n")
	ew.printf("  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=10, nodesep=0.2, ranksep=0.4];\n")
	ew.printf("  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", color=\"#555555\", fontname=\"Helvetica\", fontsize=9];\n")
	ew.printf("  edge [dir=back, color=\"#888888\", arrowsize=0.6];\n")
	for fi, f := range r.Files {
		path := displayPath(opt.BaseDir, f.Path)
		if f.Error != nil {
			ew.printf("  // %s: could not be analysed\n", dotComment(path))
			continue
		}
		marks := nodeFindings(f)
		for si, s := range f.Statements {
			if s.Source == nil {
				continue
			}
			plans := s.Source.Plans()
			if len(plans) == 0 {
				continue
			}
			var stmtCodes []string
			for _, x := range f.Findings {
				if x.NodeID == nil && f.StatementOf(x) == s {
					stmtCodes = append(stmtCodes, x.Code)
				}
			}
			label := fmt.Sprintf("%s: %s %s (%s, cost %s)", path, f.StatementPlace(s, nil), s.Type, s.Kind,
				strconv.FormatFloat(s.Cost, 'g', 4, 64))
			if len(stmtCodes) > 0 {
				label += "\n⚠ " + strings.Join(stmtCodes, ", ")
			}
			ew.printf("  subgraph %s {\n", dotQuote(fmt.Sprintf("cluster_f%d_s%d", fi, si)))
			ew.printf("    label=%s; labeljust=l; style=rounded; color=\"#bbbbbb\";\n", dotQuote(label))
			if len(stmtCodes) > 0 {
				ew.printf("    fontcolor=\"#b71c1c\";\n")
			}
			for pi, q := range plans {
				prefix := fmt.Sprintf("f%d_s%d_p%d_", fi, si, pi)
				ids := map[*plan.RelOp]string{}
				for i, n := range q.Nodes {
					ids[n] = prefix + strconv.Itoa(i)
				}
				for _, n := range q.Nodes {
					codes := marks[[2]int{s.Ordinal, n.NodeID}]
					ew.printf("    %s [label=%s", dotQuote(ids[n]), dotQuote(dotLabel(q, n, codes)))
					if len(codes) > 0 {
						ew.printf(", color=\"#c62828\", penwidth=2, fillcolor=\"#fdecea\"")
					} else if share := CostShare(q.QueryPlan, n); share >= 0.5 {
						ew.printf(", fillcolor=\"#fff3e0\"")
					}
					ew.printf("];\n")
				}
				for _, n := range q.Nodes {
					for _, c := range n.Children {
						if ids[c] == "" {
							continue
						}
						rows := flowRows(c)
						ew.printf("    %s -> %s [penwidth=%s, tooltip=%s];\n", dotQuote(ids[n]), dotQuote(ids[c]),
							strconv.FormatFloat(edgeWidth(rows), 'f', 1, 64), dotQuote(countOf(rows, "row")))
					}
				}
			}
			ew.printf("  }\n")
		}
	}
	ew.printf("}\n")
	return ew.err
}

// dotLabel is the node's text: operator, object, rows, cost and findings.
func dotLabel(q plan.LabeledPlan, n *plan.RelOp, codes []string) string {
	lines := []string{n.DisplayName()}
	if obj := objectLabel(n); obj != "" {
		lines = append(lines, obj)
	}
	rows := "est " + FormatCount(n.EstimatedRowsAllExecutions())
	if n.RunTime != nil {
		rows += " · act " + FormatCount(float64(n.RunTime.ActualRows))
	}
	lines = append(lines, rows)
	cost := fmt.Sprintf("cost %d%% · node %d", int(math.Round(CostShare(q.QueryPlan, n)*100)), n.NodeID)
	if q.Label != "" && n == q.Root {
		cost += " · " + q.Label
	}
	lines = append(lines, cost)
	if len(codes) > 0 {
		lines = append(lines, "⚠ "+strings.Join(codes, ", "))
	}
	return strings.Join(lines, "\n")
}

// objectLabel is "schema.table.index" of the operator's object, if any.
func objectLabel(n *plan.RelOp) string {
	o := n.Access.Object()
	name := o.TableName(false)
	if o.Index != "" {
		if name != "" {
			name += "."
		}
		name += o.Index
	}
	return name
}

// flowRows is the number of rows an operator passes to its parent: actual
// rows (summed over threads) in an actual plan, else the estimate for all
// executions.
func flowRows(n *plan.RelOp) float64 {
	if n.RunTime != nil {
		return float64(n.RunTime.ActualRows)
	}
	return n.EstimatedRowsAllExecutions()
}

// edgeWidth grows with the logarithm of the rows: 1 for a row or none, 12
// at most.
func edgeWidth(rows float64) float64 {
	if rows < 1 || math.IsNaN(rows) {
		return 1
	}
	return math.Min(12, 1+1.5*math.Log10(rows))
}

// dotQuote renders s as a DOT quoted string; line breaks become \n.
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// dotComment keeps a // comment on one line.
func dotComment(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

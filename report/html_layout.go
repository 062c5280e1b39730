package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/planlint/planlint/plan"
)

// Operator graph geometry, in SVG user units.
const (
	layoutNodeW  = 196
	layoutNodeH  = 100
	layoutColGap = 56
	layoutRowGap = 18
	layoutMargin = 16
)

// planLayout places a plan's operators left to right as SSMS does: the
// root at the left, each child one column to the right, siblings stacked
// below one another. Every leaf gets a row of its own and a parent sits on
// its first child's row, so boxes never overlap; the cost is linear in the
// number of operators.
type planLayout struct {
	Width, Height int
	pos           map[*plan.RelOp]layoutPos
}

type layoutPos struct {
	X, Y int
}

func layoutPlan(root *plan.RelOp, nodes []*plan.RelOp) planLayout {
	l := planLayout{pos: map[*plan.RelOp]layoutPos{}}
	rows, maxDepth := 0, 0
	var place func(n *plan.RelOp, depth int) int
	place = func(n *plan.RelOp, depth int) int {
		l.pos[n] = layoutPos{} // placed below; marked now so a cycle ends here
		if depth > maxDepth {
			maxDepth = depth
		}
		row := -1
		for _, c := range n.Children {
			if c == nil {
				continue
			}
			if _, seen := l.pos[c]; seen {
				continue // a malformed plan that shares a node or loops
			}
			r := place(c, depth+1)
			if row < 0 {
				row = r
			}
		}
		if row < 0 {
			row = rows
			rows++
		}
		l.pos[n] = layoutPos{X: layoutMargin + depth*(layoutNodeW+layoutColGap), Y: layoutMargin + row*(layoutNodeH+layoutRowGap)}
		return row
	}
	if root != nil {
		place(root, 0)
	}
	for _, n := range nodes { // operators the tree does not reach, if any
		if _, seen := l.pos[n]; !seen && n != nil {
			place(n, 0)
		}
	}
	if rows == 0 {
		rows = 1
	}
	l.Width = 2*layoutMargin + (maxDepth+1)*(layoutNodeW+layoutColGap) - layoutColGap
	l.Height = 2*layoutMargin + rows*(layoutNodeH+layoutRowGap) - layoutRowGap
	return l
}

// edgeShape is the path of an edge from the child's left side to the
// parent's right side, with one vertical step halfway across the gap, and
// the arrowhead at the parent, sized to the line's width.
func edgeShape(parent, child layoutPos, width float64) (path, arrow string) {
	half := math.Max(4, width/2+3)
	length := math.Round(half * 1.3)
	x1, y1 := child.X, child.Y+layoutNodeH/2
	tip, y2 := parent.X+layoutNodeW, parent.Y+layoutNodeH/2
	x2 := tip + int(length)
	if y1 == y2 {
		path = fmt.Sprintf("M%d %dH%d", x1, y1, x2)
	} else {
		mid := tip + layoutColGap/2
		path = fmt.Sprintf("M%d %dH%dV%dH%d", x1, y1, mid, y2, x2)
	}
	arrow = fmt.Sprintf("%d,%d %d,%s %d,%s", tip, y2, x2, fmtOffset(y2, -half), x2, fmtOffset(y2, half))
	return path, arrow
}

func fmtOffset(y int, d float64) string { return strconv.FormatFloat(float64(y)+d, 'f', 1, 64) }

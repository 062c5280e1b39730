package report

import (
	"strconv"
	"strings"
)

// maxTreeLevels is how many levels of tree indentation a line shows; the
// levels above them fold into a count, so a plan nested 10,000 deep prints
// lines of bounded width instead of output that grows with depth².
const maxTreeLevels = 40

// treeIndent is the indentation of the current tree line: a base and one
// string per level, pushed and popped as the walk goes down and up.
type treeIndent struct {
	base   string
	levels []string
}

func (t *treeIndent) String() string {
	var b strings.Builder
	b.WriteString(t.base)
	levels := t.levels
	if hidden := len(levels) - maxTreeLevels; hidden > 0 {
		b.WriteString("… " + strconv.Itoa(hidden) + " levels … ")
		levels = levels[hidden:]
	}
	for _, l := range levels {
		b.WriteString(l)
	}
	return b.String()
}

package config

import (
	"fmt"
	"strings"
)

// Error is one problem with a configuration file.
type Error struct {
	Path string
	// Line and Column are 1-based; 0 when the position is unknown.
	Line, Column int
	Msg          string
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem found in one file, in file order.
type Errors []*Error

// MaxShown is how many problems Errors.Error lists; the rest are counted.
const MaxShown = 20

func (es Errors) Error() string {
	lines := make([]string, 0, min(len(es), MaxShown)+1)
	for _, e := range es[:min(len(es), MaxShown)] {
		lines = append(lines, e.Error())
	}
	if n := len(es) - MaxShown; n > 0 {
		lines = append(lines, fmt.Sprintf("%s: %d more problems not shown", es[MaxShown].Path, n))
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As and errors.Is see each problem.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

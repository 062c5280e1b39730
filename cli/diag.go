package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/planlint/planlint/sqlscript"
)

// diag writes a problem to w (standard error) in the one form every command
// uses: each line starts "planlint: ", then the file when the problem has
// one, then the problem. Errors need no "error: "; a warning or note starts
// the problem with "warning: " or "note: ". A problem of several lines (a
// script's diagnostics) gives each line the prefix.
func diag(w io.Writer, file, problem string) {
	var b strings.Builder
	for i, line := range strings.Split(strings.TrimRight(problem, "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		b.WriteString("planlint: ")
		if file != "" && i == 0 {
			b.WriteString(file + ": ")
		}
		b.WriteString(strings.TrimPrefix(line, "planlint: "))
		b.WriteString("\n")
	}
	io.WriteString(w, b.String())
}

// diagf is diag with a formatted problem.
func diagf(w io.Writer, file, format string, args ...any) {
	diag(w, file, fmt.Sprintf(format, args...))
}

// diagnosticLine is a script diagnostic as diag prints it:
// "FILE:LINE:COL: problem", with "warning: " before a warning's problem.
func diagnosticLine(d sqlscript.Diagnostic) string {
	if d.Severity == sqlscript.SeverityWarning {
		return fmt.Sprintf("%s:%d:%d: warning: %s", d.Path, d.Range.Start.Line, d.Range.Start.Column, d.Message)
	}
	return d.String()
}

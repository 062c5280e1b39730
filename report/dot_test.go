package report

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/planlint/planlint/plan"
)

func renderDOT(t *testing.T, r *Report, opt DOTOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := DOT(&b, r, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// hostileReport has names with quotes, backslashes and line breaks.
func hostileReport() *Report {
	op := &plan.RelOp{NodeID: 0, PhysicalOp: `Index "Scan"\`, EstimateRows: 3, SubtreeCost: 1,
		Access: &plan.Access{Objects: []plan.ObjectRef{{Schema: "dbo", Table: "we\"ird\ntable", Index: `ix\n{}`}}}}
	st := &plan.Statement{Kind: "StmtSimple", Batch: 1, ID: 1, Type: "SELECT", QueryPlan: &plan.QueryPlan{Root: op, Nodes: []*plan.RelOp{op}}}
	doc := &plan.Document{Batches: []*plan.Batch{{Index: 1, Statements: []*plan.Statement{st}}}}
	return &Report{Tool: "planlint", Files: []*File{{Path: `odd "dir"/a\b {x}.sqlplan`, Statements: Summarize(doc), Plans: []*plan.Document{doc}}}}
}

func TestDOTQuote(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`say "hi"`, `"say \"hi\""`},
		{`back\slash`, `"back\\slash"`},
		{"two\nlines\r\n", `"two\nlines\n"`},
		{"{ } ; ->", `"{ } ; ->"`},
	}
	for _, c := range cases {
		if got := dotQuote(c.in); got != c.want {
			t.Errorf("dotQuote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestDOTContent(t *testing.T) {
	out := renderDOT(t, explainReport(), DOTOptions{})
	for _, want := range []string{
		"digraph planlint {",
		`subgraph "cluster_f0_s0" {`,
		`label="queries/poll.sql: stmt 1 SELECT (actual, cost 403.5)"`,
		`"f0_s0_p0_2" [label="Clustered Index Scan\ndbo.Work.PK_Work\nest 200 · act 1,250,000\ncost 62% · node 2\n⚠ PL201", color="#c62828"`,
		`"f0_s0_p0_1" -> "f0_s0_p0_2" [penwidth=10.1, tooltip="1,250,000 rows"];`,
		`label="queries/poll.sql: stmt 2 SELECT (actual, cost 0.0033)\n⚠ PL204"`,
		"// plans/broken.sqlplan: could not be analysed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("DOT output lacks %s", want)
		}
	}
	for _, secret := range secretValues {
		if strings.Contains(out, secret) {
			t.Errorf("DOT output shows the value %q", secret)
		}
	}
}

// TestDOTIsValid runs Graphviz on the output when it is installed, and
// checks the syntax by hand otherwise.
func TestDOTIsValid(t *testing.T) {
	reports := map[string]*Report{"queue": queueFixtureReport(t), "explain": explainReport(), "hostile names": hostileReport(),
		"empty": {Tool: "planlint"}}
	dot, err := exec.LookPath("dot")
	for name, r := range reports {
		out := renderDOT(t, r, DOTOptions{BaseDir: ".."})
		if msg := dotSyntaxProblem(out); msg != "" {
			t.Errorf("%s: %s", name, msg)
		}
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, dot, "-Tsvg")
		cmd.Stdin = strings.NewReader(out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		svg, runErr := cmd.Output()
		cancel()
		if runErr != nil || stderr.Len() > 0 {
			t.Errorf("%s: dot rejected the graph: %v %s", name, runErr, stderr.String())
		} else if !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("%s: dot produced no SVG", name)
		}
	}
	if err != nil {
		t.Logf("Graphviz dot not found (%v): checked the syntax only", err)
	}
}

// dotSyntaxProblem checks what the renderer must get right: quoted strings
// are closed (backslash escapes honoured), braces balance, and every
// statement ends its line.
func dotSyntaxProblem(s string) string {
	depth, inQuote := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote && c == '\\':
			i++
		case inQuote && c == '"':
			inQuote = false
		case inQuote && c == '\n':
			return "a quoted string spans lines"
		case inQuote:
		case c == '"':
			inQuote = true
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth < 0 {
				return "a closing brace without an opening one"
			}
		}
	}
	if inQuote {
		return "an unclosed quoted string"
	}
	if depth != 0 {
		return "unbalanced braces"
	}
	return ""
}

func TestDOTSyntaxCheckerCatchesErrors(t *testing.T) {
	for _, bad := range []string{`digraph { "a }`, `digraph { a -> b `, "digraph { \"a\nb\" }", `digraph { } }`} {
		if dotSyntaxProblem(bad) == "" {
			t.Errorf("the checker accepted %q", bad)
		}
	}
}

func TestDOTGolden(t *testing.T) {
	checkGolden(t, "queue.dot", []byte(renderDOT(t, queueFixtureReport(t), DOTOptions{BaseDir: ".."})))
	checkGolden(t, "explain.dot", []byte(renderDOT(t, explainReport(), DOTOptions{})))
}

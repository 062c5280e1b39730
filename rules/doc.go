package rules

import (
	"fmt"
	"strings"
)

// DocBase is where the generated rule pages are published.
const DocBase = "https://github.com/planlint/planlint/blob/main/docs/rules/"

// DocURL is the address of the rule's documentation page.
func DocURL(r *Rule) string { return DocBase + r.Name + ".md" }

// Markdown renders the rule's documentation page (docs/rules/NAME.md and
// SARIF help are generated from it).
func Markdown(r *Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s\n\n", r.Code, r.Name)
	fmt.Fprintf(&b, "%s.\n\n", r.Summary)
	fmt.Fprintf(&b, "| Code | Name | Highest severity | Needs |\n|---|---|---|---|\n| %s | %s | %s | %s |\n\n", r.Code, r.Name, r.Severity, needs(r, true))
	section := func(title, body string) {
		if body != "" {
			fmt.Fprintf(&b, "## %s\n\n%s\n\n", title, strings.TrimSpace(body))
		}
	}
	section("Problem", r.Doc.Problem)
	section("How the plan shows it", r.Doc.Evidence)
	section("Example", r.Doc.Example)
	section("Fix", r.Doc.Fix)
	section("When it is a false alarm", r.Doc.FalseAlarms)
	if len(r.Params) > 0 {
		b.WriteString("## Thresholds\n\nSet in `.planlint.yaml` under `rules: {" + r.Name + ": {...}}`.\n\n| Parameter | Default | Meaning |\n|---|---|---|\n")
		for _, p := range r.Params {
			fmt.Fprintf(&b, "| `%s` | %g | %s |\n", p.Name, p.Default, p.Help)
		}
		b.WriteString("\n")
	}
	if r.RunQuery != nil {
		// Reported about pulled plans only: they have no file to match.
		fmt.Fprintf(&b, "## Suppression\n\nPlans pulled from the plan cache or Query Store have no file path, so a "+
			"`.planlint.yaml` entry names the statement by the `statement_fingerprint` that `--format json` gives the finding:\n\n"+
			"```yaml\nsuppress:\n  - rule: %s\n    statement: 0123456789abcdef\n    reason: why this is acceptable here\n```\n\n", r.Name)
	} else {
		fmt.Fprintf(&b, "## Suppression\n\nIn a `.sql` file (`planlint explain`), on or above the statement:\n\n"+
			"```sql\n-- planlint-ignore %s -- reason why this is acceptable here\n```\n\n"+
			"For saved plans (`check`, `cache`, `querystore`), in `.planlint.yaml` (paths relative to it; "+
			"`operator:` and `statement:` take a finding's `fingerprint` and `statement_fingerprint` from `--format json`):\n\n"+
			"```yaml\nsuppress:\n  - rule: %s\n    paths: [plans/nightly/**]\n    reason: why this is acceptable here\n```\n\n", r.Name, r.Name)
	}
	if len(r.Doc.References) > 0 {
		b.WriteString("## References\n\n")
		for _, ref := range r.Doc.References {
			fmt.Fprintf(&b, "- %s\n", ref)
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// Text renders the documentation for a terminal: Markdown without tables'
// pipes or fences, wrapped paragraphs kept as written.
func Text(r *Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (highest severity: %s)\n%s.\n", r.Code, r.Name, r.Severity, r.Summary)
	if r.Catalog {
		b.WriteString("Needs catalog facts: run it through 'planlint explain', or 'planlint check --schema'.\n")
	}
	section := func(title, body string) {
		if body == "" {
			return
		}
		fmt.Fprintf(&b, "\n%s\n", strings.ToUpper(title))
		for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
			if strings.HasPrefix(line, "```") {
				continue
			}
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	section("Problem", r.Doc.Problem)
	section("How the plan shows it", r.Doc.Evidence)
	section("Example", r.Doc.Example)
	section("Fix", r.Doc.Fix)
	section("When it is a false alarm", r.Doc.FalseAlarms)
	if len(r.Params) > 0 {
		b.WriteString("\nTHRESHOLDS\n")
		for _, p := range r.Params {
			fmt.Fprintf(&b, "  %-18s %-10g %s\n", p.Name, p.Default, p.Help)
		}
	}
	fmt.Fprintf(&b, "\nSUPPRESS\n  in a .sql file:   -- planlint-ignore %s -- reason\n"+
		"  in .planlint.yaml: suppress: [{rule: %s, paths: [GLOB], reason: ...}]\n\nMORE\n  %s\n", r.Name, r.Name, DocURL(r))
	return b.String()
}

// Index renders docs/rules/README.md: every rule with its page.
func Index() string {
	var b strings.Builder
	b.WriteString("# planlint rules\n\nGenerated from the rule definitions (`go test ./rules -update`); `planlint rules NAME` prints the same text.\n\n")
	b.WriteString("| Code | Name | Highest severity | Needs | Summary |\n|---|---|---|---|---|\n")
	for _, r := range All() {
		fmt.Fprintf(&b, "| %s | [%s](%s.md) | %s | %s | %s |\n", r.Code, r.Name, r.Name, r.Severity, needs(r, false), r.Summary)
	}
	return b.String()
}

// NeedsBrief is the input a rule requires as the rules table says it
// ("plan", "plan + catalog", "explain (.sql)"), for 'planlint rules'.
func NeedsBrief(r *Rule) string { return needs(r, false) }

// needs says what input a rule requires, at length or briefly.
func needs(r *Rule, long bool) string {
	switch {
	case r.RunQuery != nil && long:
		return "several plans of one query with their runtime figures (`planlint cache`, `planlint querystore`)"
	case r.RunQuery != nil:
		return "cache or Query Store figures"
	case r.Run == nil && long:
		return "a .sql file analysed by `planlint explain`, or a `suppress` entry of `.planlint.yaml`"
	case r.Run == nil:
		return "explain (.sql), or .planlint.yaml"
	case r.Catalog && long:
		return "the plan and catalog facts (`explain`, or `check --schema`)"
	case r.Catalog:
		return "plan + catalog"
	case long:
		return "the plan"
	}
	return "plan"
}

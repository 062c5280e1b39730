package config

import (
	"strconv"
	"strings"

	"github.com/planlint/planlint/rules"
)

// Starter returns the commented configuration file `planlint init` writes.
// Every setting in it is commented out and shows its default, so loading it
// gives the defaults; each rule is listed with its code, summary, default
// severity and parameters.
func Starter() string { return starter(false) }

// starter writes the starter file; with active set, the commented-out
// settings are written as settings instead.
func starter(active bool) string {
	w := &starterWriter{active: active}
	w.comment("", "planlint configuration.")
	w.comment("", "")
	w.comment("", "planlint reads the first "+FileName+" (or "+AltFileName+") found in the working")
	w.comment("", "directory or its parents; --config FILE or the "+EnvVar+" environment variable")
	w.comment("", "name one instead. Command-line flags beat the settings here. Each setting below")
	w.comment("", `is commented out and shows its default: remove the "# " in front to change it.`)
	w.blank()
	w.comment("", "Exit with status 1 when a finding is at or above this severity: error,")
	w.comment("", "warning, info, or none to never fail because of findings.")
	w.setting("", "fail_on: "+DefaultFailOn)
	w.blank()
	w.comment("", "Mask literals and parameter values in outputs meant to be shared (sarif,")
	w.comment("", "github, markdown, html).")
	w.setting("", "redact: "+strconv.FormatBool(DefaultRedact))
	w.blank()
	w.comment("", "Paths not analysed (none by default): globs relative to this file's")
	w.comment("", `directory. "*" matches within one path segment, "**" any number of`)
	w.comment("", "segments, and a glob that matches a directory excludes everything below it.")
	w.setting("", "exclude:")
	w.setting("", "  - legacy/**")
	w.blank()
	w.comment("", `Rules, by name or code. Give a rule a severity (error, warning, info) or "off",`)
	w.comment("", `or a mapping of parameters and, optionally, "severity: ...". A severity set`)
	w.comment("", "here grades every finding of the rule; without one the rule grades each")
	w.comment("", "finding itself, up to the severity shown.")
	w.line("rules:")
	for i, r := range rules.All() {
		if i > 0 {
			w.blank()
		}
		w.comment("  ", r.Code+" "+r.Name+": "+sentence(r.Summary))
		w.comment("  ", "Severity by default: up to "+r.Severity.String()+".")
		if len(r.Params) == 0 {
			w.setting("  ", r.Name+": "+r.Severity.String())
			continue
		}
		w.setting("  ", r.Name+":")
		for _, p := range r.Params {
			w.setting("  ", "  "+p.Name+": "+strconv.FormatFloat(p.Default, 'f', -1, 64)+"  # "+p.Help)
		}
	}
	w.blank()
	w.comment("", "Findings accepted for a reason (none by default). Each entry names a rule (name or")
	w.comment("", "code, or a list), a reason, and where: paths (globs relative to this file's")
	w.comment("", "directory, as for exclude), and optionally operator (a finding's \"fingerprint\"")
	w.comment("", "in --format json, SARIF's primaryLocationLineHash) and statement (its")
	w.comment("", "\"statement_fingerprint\"); every condition given must hold. Suppressed findings")
	w.comment("", "leave the report and the exit code; summaries count them, JSON lists them under")
	w.comment("", "\"suppressed\" and SARIF marks them suppressed. An entry that matches nothing is")
	w.comment("", "reported as PL001 unused-suppression once every plan file its paths match was")
	w.comment("", "analysed in the run.")
	w.setting("", "suppress:")
	w.setting("", "  - rule: key-lookup")
	w.setting("", "    paths: [reports/monthly/**]")
	w.setting("", "    reason: the monthly report reads a few hundred rows; the lookup is cheap")
	return w.b.String()
}

// sentence ends s with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}

type starterWriter struct {
	b      strings.Builder
	active bool
}

func (w *starterWriter) line(s string) {
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

func (w *starterWriter) blank() { w.line("") }

func (w *starterWriter) comment(indent, text string) {
	if text == "" {
		w.line(indent + "#")
		return
	}
	w.line(indent + "# " + text)
}

func (w *starterWriter) setting(indent, text string) {
	if w.active {
		w.line(indent + text)
		return
	}
	w.line(indent + "# " + text)
}

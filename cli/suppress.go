package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/planlint/planlint/config"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/report"
	"github.com/planlint/planlint/rules"
)

// applySuppressions moves the findings that a suppress entry of the config
// file matches to their file's Suppressed list, reports the entries that
// matched nothing as unused-suppression findings on the config file (see
// unusedEntries for when), and sets every finding's fingerprints when
// entries or JSON output need them.
func (r *invocation) applySuppressions(rep *report.Report) {
	cfg := r.cfg
	if len(cfg.Suppress) == 0 {
		if r.out != nil && (r.out.format == "json" || r.extra["json"] != "") {
			report.SetFingerprints(rep, r.baseDir) // for JSON output only
		}
		return
	}
	// The operator fingerprints entries name are computed as JSON and
	// SARIF output show them.
	report.SetFingerprints(rep, r.baseDir)
	source := r.configDisplay()
	used := make([]bool, len(cfg.Suppress))
	for _, f := range rep.Files {
		if f.Error != nil {
			continue
		}
		kept := f.Findings[:0]
		for _, x := range f.Findings {
			path := suppressionPath(f, x)
			first := -1
			for i := range cfg.Suppress {
				if cfg.Matches(&cfg.Suppress[i], x.Rule, path, x.Fingerprint, x.StatementFingerprint) {
					used[i] = true
					if first < 0 {
						first = i
					}
				}
			}
			if first < 0 {
				kept = append(kept, x)
				continue
			}
			e := &cfg.Suppress[first]
			x.Suppression = &report.Suppression{Kind: "config", Reason: e.Reason,
				Location: &report.Location{Path: source, StartLine: e.Line, StartCol: e.Column, EndLine: e.Line, EndCol: e.Column}}
			f.Suppressed = append(f.Suppressed, x)
		}
		f.Findings = kept
	}
	rep.SuppressedBy = source
	if unused := r.unusedEntries(rep, used, source); len(unused) > 0 {
		f := &report.File{Path: source, Statements: []*report.Statement{}, Findings: unused, Config: true}
		report.SetFingerprints(&report.Report{Files: []*report.File{f}}, r.baseDir)
		rep.Files = append(rep.Files, f)
	}
}

// unusedEntries reports the entries that matched no finding as
// unused-suppression findings at the entry. An entry is reported only when
// this run could have seen every finding it is about: it has paths, they
// match at least one input file the command reads (r.unusedScope: for
// check the --include names, for explain .sql files) below the config
// file's directory that exclude does not drop, and every such file was
// analysed without error in this run. Entries without paths, and runs
// that read no files (cache, querystore), report nothing.
func (r *invocation) unusedEntries(rep *report.Report, used []bool, source string) []*report.Finding {
	if r.unusedScope == nil {
		return nil
	}
	analysed := map[string]bool{}
	for _, f := range rep.Files {
		if f.Error == nil && !isPseudoInput(f.Path) {
			analysed[filepath.Clean(absPath(r.workDir, f.Path))] = true
		}
	}
	cfg := r.cfg
	rule := rules.UnusedSuppression
	var out []*report.Finding
	for i := range cfg.Suppress {
		e := &cfg.Suppress[i]
		if used[i] || e.Paths == nil {
			continue
		}
		files, err := cfg.SuppressionFiles(e, r.unusedScope)
		if err != nil || len(files) == 0 {
			continue
		}
		all := true
		for _, p := range files {
			all = all && analysed[p]
		}
		if !all {
			continue
		}
		what := fmt.Sprintf("%s in %s", strings.Join(e.Rules, ", "), strings.Join(e.Paths, ", "))
		if e.Operator != "" {
			what += " on operator " + e.Operator
		}
		if e.Statement != "" {
			what += " in statement " + e.Statement
		}
		graded := r.rulesConfig().Grade(rule, []rules.Finding{{Rule: rule.Name, Code: rule.Code, Severity: rule.Severity,
			Message: fmt.Sprintf("suppress entry %d (%s) matches no finding in the %s its paths cover, all analysed in this run",
				i+1, what, countFiles(len(files))),
			Fix:      "delete the entry or correct it",
			Evidence: map[string]any{"rules": e.Rules, "paths": e.Paths, "reason": e.Reason, "files": len(files)}}})
		for _, g := range graded {
			out = append(out, &report.Finding{Finding: g,
				Location: &report.Location{Path: source, StartLine: e.Line, StartCol: e.Column, EndLine: e.Line, EndCol: e.Column}})
		}
	}
	return out
}

// configDisplay names the config file as paths in the report are named:
// relative to the working directory.
func (r *invocation) configDisplay() string { return configName(r.cfg, r.workDir) }

func configName(cfg *config.Config, wd string) string {
	p := cfg.Path
	if rel, err := filepath.Rel(wd, p); err == nil && filepath.IsAbs(p) {
		return rel
	}
	return p
}

// suppressionPath is the file a finding is in for suppress entries' paths;
// "" for standard input and plans from the plan cache or Query Store.
func suppressionPath(f *report.File, x *report.Finding) string {
	p := f.Path
	if x.Location != nil && x.Location.Path != "" {
		p = x.Location.Path
	}
	if isPseudoInput(p) {
		return ""
	}
	return p
}

// isPseudoInput reports input names that are no file: "<stdin>", and the
// names of plans pulled from the plan cache or Query Store.
func isPseudoInput(p string) bool {
	return p == "" || strings.HasPrefix(p, "<") || strings.HasPrefix(p, "cache:") || strings.HasPrefix(p, "querystore:")
}

// includeScope is the unused-suppression scope of a command that reads
// files whose names match patterns.
func includeScope(patterns []string) func(string) bool {
	return func(name string) bool {
		for _, pat := range patterns {
			if ok, _ := filepath.Match(pat, name); ok {
				return true
			}
		}
		return false
	}
}

func countFiles(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// suppressCompared drops the findings of one side of a comparison that a
// suppress entry matches, as check would, and returns how many it
// dropped. compare reads two named files, so it reports no unused entries.
func suppressCompared(cfg *config.Config, baseDir, path string, doc *plan.Document, fs []rules.Finding) ([]rules.Finding, int) {
	if len(cfg.Suppress) == 0 || len(fs) == 0 {
		return fs, 0
	}
	f := &report.File{Path: path, Statements: report.Summarize(doc), Findings: report.Wrap(fs)}
	report.SetFingerprints(&report.Report{Files: []*report.File{f}}, baseDir)
	var kept []rules.Finding
	for i, x := range f.Findings {
		matched := false
		for j := range cfg.Suppress {
			if cfg.Matches(&cfg.Suppress[j], x.Rule, suppressionPath(f, x), x.Fingerprint, x.StatementFingerprint) {
				matched = true
				break
			}
		}
		if !matched {
			kept = append(kept, fs[i])
		}
	}
	return kept, len(fs) - len(kept)
}

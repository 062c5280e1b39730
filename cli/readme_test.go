package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readmeBlock is a fenced code block of README.md.
type readmeBlock struct {
	lang  string
	line  int // of the opening fence
	lines []string
}

// readmeBlocks returns README.md's text and its fenced code blocks, with
// the indentation of blocks inside list items removed.
func readmeBlocks(t *testing.T) (string, []readmeBlock) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(rootDir(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	var cur *readmeBlock
	indent := ""
	for i, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if strings.HasPrefix(trimmed, "```") {
			if cur == nil {
				indent = line[:len(line)-len(trimmed)]
				cur = &readmeBlock{lang: strings.TrimPrefix(trimmed, "```"), line: i + 1}
			} else {
				blocks = append(blocks, *cur)
				cur = nil
			}
			continue
		}
		if cur != nil {
			cur.lines = append(cur.lines, strings.TrimPrefix(line, indent))
		}
	}
	if cur != nil {
		t.Fatalf("README.md:%d: code block not closed", cur.line)
	}
	return string(b), blocks
}

// readmeArgs splits a README command line into arguments (no quoting is
// used in the commands the README shows).
func readmeArgs(cmd string) []string {
	if i := strings.Index(cmd, " #"); i >= 0 {
		cmd = cmd[:i]
	}
	return strings.Fields(cmd)
}

// TestReadmeCommands runs every command in README.md's code blocks that
// needs no server — check on the fixtures, the CI steps' check, the config
// file shown — and the offline commands its prose names (rules, init,
// version, completion), and compares what README shows of their output and
// exit codes with what planlint does.
func TestReadmeCommands(t *testing.T) {
	inRoot(t)
	text, blocks := readmeBlocks(t)
	ran := 0
	for _, b := range blocks {
		switch b.lang {
		case "sh":
			// go run . ARGS   # … (exit N: …)
			for _, l := range b.lines {
				if !strings.HasPrefix(l, "go run . ") {
					continue
				}
				args := readmeArgs(strings.TrimPrefix(l, "go run . "))
				m := regexp.MustCompile(`\(exit (\d)`).FindStringSubmatch(l)
				if m == nil {
					t.Errorf("README.md:%d: %q does not say its exit code", b.line, l)
					continue
				}
				want, _ := strconv.Atoi(m[1])
				_, errOut, code := run(t, "", args...)
				ran++
				if code != want {
					t.Errorf("README.md:%d: %v exits %d, README says %d (stderr %q)", b.line, args, code, want, errOut)
				}
			}
		case "text":
			// $ planlint ARGS, then the output.
			if len(b.lines) == 0 || !strings.HasPrefix(b.lines[0], "$ planlint ") {
				continue
			}
			args := readmeArgs(strings.TrimPrefix(b.lines[0], "$ planlint "))
			out, _, _ := run(t, "", append([]string{"--color", "never"}, args...)...)
			ran++
			got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			shown := b.lines[1:]
			if len(shown) == 0 || got[0] != shown[0] {
				t.Errorf("README.md:%d: the first line of %v is\n%s\nREADME shows\n%s", b.line, args, got[0], strings.Join(shown[:min(1, len(shown))], ""))
			}
			// Every line shown is in the output, in order.
			i := 0
			for _, s := range shown {
				for i < len(got) && got[i] != s {
					i++
				}
				if i == len(got) {
					t.Errorf("README.md:%d: %v does not print the line README shows: %q\noutput:\n%s", b.line, args, s, out)
					break
				}
			}
		case "json":
			checkReadmeJSON(t, b)
			ran++
		case "yaml":
			if body := strings.Join(b.lines, "\n"); strings.Contains(body, "steps:") || strings.Contains(body, "uses: ") || strings.Contains(body, "run: planlint ") {
				ran += checkReadmeWorkflow(t, b)
				continue
			}
			// The config file example: planlint accepts it.
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, ".planlint.yaml"), []byte(strings.Join(b.lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			plan := filepath.Join(rootDir(t), "fixtures", "queue", "param.sqlplan")
			_, errOut, code := runIn(t, dir, nil, "check", plan)
			ran++
			if code == ExitError {
				t.Errorf("README.md:%d: planlint refuses the README's config file: %s", b.line, errOut)
			}
		}
	}
	if ran < 6 {
		t.Errorf("only %d README blocks were run; the README's layout changed", ran)
	}

	// Offline commands named in the README's prose.
	initDir := t.TempDir()
	tests := []struct {
		readme string // what README says
		args   []string
		dir    string
		first  string // the first line of stdout
	}{
		{"`planlint version`", []string{"version"}, "", "planlint " + Version()},
		{"`planlint rules [RULE]`", []string{"rules"}, "", "CODE   NAME"},
		{"`planlint rules [RULE]`", []string{"rules", "PL201"}, "", "PL201 filtered-index-parameterized (highest severity: error)"},
		{"`planlint rules [RULE]`", []string{"rules", "filtered-index-parameterized"}, "", "PL201 filtered-index-parameterized (highest severity: error)"},
		{"`--markdown` for the page, or without RULE the rules table", []string{"rules", "--markdown"}, "", "# planlint rules"},
		{"`--markdown` for the page, or without RULE the rules table", []string{"rules", "--markdown", "PL201"}, "", "# PL201: filtered-index-parameterized"},
		{"Each rule's documentation: planlint rules NAME", []string{"rules", "PL102"}, "", "PL102 key-lookup (highest severity: error)"},
		{"`planlint init`", []string{"init"}, initDir, "wrote " + filepath.Join(initDir, ".planlint.yaml")},
		{"`planlint completion bash\\|zsh\\|fish\\|powershell`", []string{"completion", "bash"}, "", "# bash completion V2 for planlint "},
		{"`planlint completion bash\\|zsh\\|fish\\|powershell`", []string{"completion", "zsh"}, "", "#compdef planlint"},
		{"`planlint completion bash\\|zsh\\|fish\\|powershell`", []string{"completion", "fish"}, "", "# fish completion for planlint "},
		{"`planlint completion bash\\|zsh\\|fish\\|powershell`", []string{"completion", "powershell"}, "", "# powershell completion for planlint "},
		{"`--min-severity info` shows them", []string{"check", "--min-severity", "info", "--schema", "fixtures/queue/schema.sql", "fixtures/queue/param.sqlplan"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if !strings.Contains(text, tt.readme) {
				t.Fatalf("README no longer says %q", tt.readme)
			}
			var out, errOut string
			var code int
			if tt.dir != "" {
				out, errOut, code = runIn(t, tt.dir, nil, tt.args...)
			} else {
				out, errOut, code = run(t, "", tt.args...)
			}
			if tt.first == "" { // the check with --min-severity info
				if code != ExitFindings || !strings.Contains(out, ": info [PL204 queue-claim-not-atomic]") {
					t.Errorf("exit %d, output lacks the info findings:\n%s", code, out)
				}
				return
			}
			if code != ExitOK {
				t.Errorf("exit %d, stderr %q", code, errOut)
			}
			if first, _, _ := strings.Cut(out, "\n"); !strings.HasPrefix(first, tt.first) {
				t.Errorf("first line %q, want it to start %q", first, tt.first)
			}
		})
	}
	// What init wrote is a config file planlint reads.
	if _, errOut, code := runIn(t, initDir, nil, "check", filepath.Join(rootDir(t), "fixtures", "queue", "param.sqlplan")); code == ExitError {
		t.Errorf("planlint refuses the file init wrote: %s", errOut)
	}
}

// checkReadmeJSON runs the command the line before the JSON layout names
// and compares the README's sample with the real output key by key: every
// key shown exists with a value of the same kind (strings shortened with
// "…" match their start), and an object shown without a "…" key has no
// other keys. Findings are matched by code.
func checkReadmeJSON(t *testing.T, b readmeBlock) {
	t.Helper()
	var sample map[string]any
	if err := json.Unmarshal([]byte(strings.Join(b.lines, "\n")), &sample); err != nil {
		t.Fatalf("README.md:%d: the JSON layout is not JSON: %v", b.line, err)
	}
	args := []string{"check", "--format", "json", "--schema", "fixtures/queue/schema.sql", "fixtures/queue/param.sqlplan"}
	text, _ := readmeBlocks(t)
	if !strings.Contains(text, "`planlint "+strings.Join(args, " ")+"`, shortened") {
		t.Fatalf("README no longer names the command of its JSON layout as `planlint %s`", strings.Join(args, " "))
	}
	out, errOut, _ := run(t, "", args...)
	var real map[string]any
	if err := json.Unmarshal([]byte(out), &real); err != nil {
		t.Fatalf("%v: %v (%s)", args, err, errOut)
	}
	delete(sample, "version") // a release's version, not this build's
	delete(real, "version")
	compareJSON(t, "", sample, real)
}

func compareJSON(t *testing.T, path string, sample, real any) {
	t.Helper()
	switch s := sample.(type) {
	case map[string]any:
		r, ok := real.(map[string]any)
		if !ok {
			t.Errorf("README JSON %s: an object, planlint writes %T", path, real)
			return
		}
		_, open := s["…"]
		for k, v := range s {
			if k == "…" {
				continue
			}
			rv, ok := r[k]
			if !ok {
				t.Errorf("README JSON %s.%s: planlint writes no such key", path, k)
				continue
			}
			compareJSON(t, path+"."+k, v, rv)
		}
		if !open {
			for k := range r {
				if _, ok := s[k]; !ok {
					t.Errorf("README JSON %s: planlint also writes %q, which the README leaves out without a \"…\"", path, k)
				}
			}
		}
	case []any:
		r, ok := real.([]any)
		if !ok {
			t.Errorf("README JSON %s: an array, planlint writes %T", path, real)
			return
		}
		for i, v := range s {
			match := -1
			if code, ok := v.(map[string]any)["code"]; ok { // a finding: by code
				for j, rv := range r {
					if m, ok := rv.(map[string]any); ok && m["code"] == code {
						match = j
					}
				}
			} else if i < len(r) {
				match = i
			}
			if match < 0 {
				t.Errorf("README JSON %s[%d]: planlint writes no such element", path, i)
				continue
			}
			compareJSON(t, path+"["+strconv.Itoa(i)+"]", v, r[match])
		}
	case string:
		r, ok := real.(string)
		prefix, cut := strings.CutSuffix(s, " …")
		if !cut {
			prefix, cut = strings.CutSuffix(s, "…")
		}
		switch {
		case !ok:
			t.Errorf("README JSON %s: a string, planlint writes %T", path, real)
		case cut && !strings.HasPrefix(r, prefix):
			t.Errorf("README JSON %s: %q does not start as planlint's %q", path, s, r)
		case !cut && r != s:
			t.Errorf("README JSON %s: %q, planlint writes %q", path, s, r)
		}
	default:
		if sample != real {
			t.Errorf("README JSON %s: %v, planlint writes %v", path, sample, real)
		}
	}
}

// checkReadmeWorkflow runs the planlint steps of a README workflow (the
// action's args and the by-hand check) in a folder laid out as the
// workflow expects (db/schema.sql, plans/), and checks the actions it uses.
func checkReadmeWorkflow(t *testing.T, b readmeBlock) int {
	t.Helper()
	wf := strings.Join(b.lines, "\n")
	for _, want := range []string{"actions/checkout@", "actions/setup-go@"} {
		// A lone step (no steps: list) joins a workflow shown above it.
		if strings.Contains(wf, "steps:") && !strings.Contains(wf, want) {
			t.Errorf("README.md:%d: the workflow lacks %s", b.line, want)
		}
	}
	if strings.Contains(wf, "upload-sarif") && strings.Contains(wf, "permissions:") && !strings.Contains(wf, "security-events: write") {
		t.Errorf("README.md:%d: the workflow uploads SARIF without security-events: write", b.line)
	}
	dir := t.TempDir()
	layout := map[string]string{"schema.sql": "db/schema.sql", "param.sqlplan": "plans/param.sqlplan",
		"literal.sqlplan": "plans/before.sqlplan", "status-index.sqlplan": "plans/after.sqlplan"}
	for src, dst := range layout {
		data, err := os.ReadFile(filepath.Join(rootDir(t), "fixtures", "queue", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(dst)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ran := 0
	for _, l := range b.lines {
		l = strings.TrimSpace(l)
		var args []string
		switch {
		case strings.HasPrefix(l, "- run: planlint "):
			args = readmeArgs(strings.TrimPrefix(l, "- run: planlint "))
		case strings.HasPrefix(l, "args: "):
			args = append([]string{"check"}, readmeArgs(strings.TrimPrefix(l, "args: "))...)
		default:
			continue
		}
		_, errOut, code := runIn(t, dir, map[string]string{"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md")}, args...)
		ran++
		if code == ExitError {
			t.Errorf("README.md:%d: planlint %v: exit 2: %s", b.line, args, errOut)
		}
		for _, a := range args {
			if p, ok := strings.CutPrefix(a, "sarif="); ok {
				if data, err := os.ReadFile(filepath.Join(dir, p)); err != nil || !json.Valid(data) {
					t.Errorf("README.md:%d: planlint %v wrote no SARIF file %s (%v)", b.line, args, p, err)
				}
			}
		}
	}
	return ran
}

// TestDocsDoNotPromiseShippedFeatures: SARIF output exists, so no page
// says it needs a future version.
func TestDocsDoNotPromiseShippedFeatures(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(rootDir(t), "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs pages: %v", err)
	}
	pages = append(pages, filepath.Join(rootDir(t), "README.md"))
	promise := regexp.MustCompile(`(?i)sarif[^.]*\b(future|later|next|upcoming|coming) (version|release)|(future|later|next|upcoming) (version|release)[^.]*\bsarif`)
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := promise.FindString(string(b)); m != "" {
			t.Errorf("%s: %q", filepath.Base(p), m)
		}
	}
}

// TestDocsNameRealVariables: every PLANLINT_* variable README, docs/*.md
// and action.yml name is one that planlint, its tests or the action's
// script reads.
func TestDocsNameRealVariables(t *testing.T) {
	root := rootDir(t)
	name := regexp.MustCompile(`PLANLINT_[A-Z_]+`)
	read := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".sh") || strings.HasPrefix(p, filepath.Join(root, ".ci")+string(filepath.Separator))) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, v := range name.FindAllString(string(b), -1) {
			read[v] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, p := range append(docs, filepath.Join(root, "README.md"), filepath.Join(root, "action.yml")) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range name.FindAllString(string(b), -1) {
			if !read[v] {
				t.Errorf("%s names %s, which nothing reads", filepath.Base(p), v)
			}
		}
	}
}

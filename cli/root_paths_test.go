package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPathsRelativeToRepoRoot: SARIF locations and baseline keys are
// relative to the git root, from whatever folder planlint runs in, and
// --root overrides it; a baseline that matches nothing says so.
func TestPathsRelativeToRepoRoot(t *testing.T) {
	plan, err := os.ReadFile(fixture(t, "status-index.sqlplan"))
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(repo, "plans")
	abs := filepath.Join(sub, "status-index.sqlplan")
	writeFile(t, abs, string(plan))

	out, _, _ := runIn(t, sub, nil, "check", "--format", "sarif", abs)
	if !strings.Contains(out, `"uri": "plans/status-index.sqlplan"`) {
		t.Errorf("SARIF from a subfolder is not repository-relative:\n%s", grepLines(out, `"uri"`))
	}
	out, _, _ = runIn(t, sub, nil, "check", "--format", "sarif", "--root", sub, abs)
	if !strings.Contains(out, `"uri": "status-index.sqlplan"`) {
		t.Errorf("--root is not honoured:\n%s", grepLines(out, `"uri"`))
	}

	// A baseline written at the root matches from the subfolder.
	bl := filepath.Join(repo, "planlint-baseline.json")
	if _, errOut, code := runIn(t, repo, nil, "check", "--write-baseline", bl, "plans/status-index.sqlplan"); code != 0 {
		t.Fatalf("writing the baseline: exit %d: %s", code, errOut)
	}
	_, errOut, code := runIn(t, sub, nil, "check", "--baseline", bl, "status-index.sqlplan")
	if code != 0 || !strings.Contains(errOut, "hidden by the baseline") {
		t.Errorf("baseline from a subfolder: exit %d, stderr %q", code, errOut)
	}
	// With another root nothing matches, and planlint says why.
	_, errOut, _ = runIn(t, sub, nil, "check", "--baseline", bl, "--root", sub, "status-index.sqlplan")
	if !strings.Contains(errOut, "matched none of the 2 finding(s); its paths are relative to "+sub) {
		t.Errorf("a baseline that matches nothing is not reported: %q", errOut)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

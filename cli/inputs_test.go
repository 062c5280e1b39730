package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckDirectoriesAndGlobs: check reads a directory recursively
// (.sqlplan and .xml, or --include), and quoted globs with **, relative to
// the working directory; what expands to nothing is a clear error.
func TestCheckDirectoriesAndGlobs(t *testing.T) {
	plan, err := os.ReadFile(fixture(t, "status-index.sqlplan"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, p := range []string{"plans/a.sqlplan", "plans/deep/er/b.sqlplan", "plans/c.xml", "plans/d.showplan", "other/e.sqlplan"} {
		writeFile(t, filepath.Join(dir, p), string(plan))
	}
	writeFile(t, filepath.Join(dir, "plans/notes.txt"), "not a plan")
	checked := func(out string) []string {
		var files []string
		for _, l := range strings.Split(out, "\n") {
			if i := strings.Index(l, ":69:21: stmt 1 node 3"); i > 0 {
				files = append(files, filepath.ToSlash(l[:i]))
			}
		}
		return files
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"plans"}, "plans/a.sqlplan plans/c.xml plans/deep/er/b.sqlplan"},
		{[]string{"plans", "--include", "*.showplan"}, "plans/d.showplan"},
		{[]string{"plans/**/*.sqlplan"}, "plans/a.sqlplan plans/deep/er/b.sqlplan"},
		{[]string{"**/e.sqlplan"}, "other/e.sqlplan"},
		{[]string{"plans/*.xml", "other"}, "plans/c.xml other/e.sqlplan"},
		{[]string{filepath.Join(dir, "plans", "*.sqlplan")}, filepath.ToSlash(filepath.Join(dir, "plans", "a.sqlplan"))},
	}
	for _, tt := range tests {
		out, errOut, code := runIn(t, dir, nil, append([]string{"check", "--fail-on", "none", "--color", "never"}, tt.args...)...)
		if code != 0 || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q", tt.args, code, errOut)
		}
		if got := strings.Join(checked(out), " "); got != tt.want {
			t.Errorf("%v: checked %q, want %q", tt.args, got, tt.want)
		}
	}
	for arg, want := range map[string]string{
		"nothing/*.sqlplan": "planlint: nothing/*.sqlplan: no file matches this pattern",
		"other/[":           "planlint: other/[: not a valid pattern",
	} {
		_, errOut, code := runIn(t, dir, nil, "check", arg)
		if code != ExitError || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", arg, code, errOut, want)
		}
	}
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	if _, errOut, code := runIn(t, dir, nil, "check", "empty"); code != ExitError || !strings.Contains(errOut, "empty: is a directory with no plan files (*.sqlplan, *.xml)") {
		t.Errorf("empty directory: exit %d, stderr %q", code, errOut)
	}
}

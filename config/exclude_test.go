package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestExcluded(t *testing.T) {
	root := filepath.FromSlash("/repo")
	c, err := Parse(filepath.Join(root, FileName), []byte(`exclude:
  - legacy/**
  - generated
  - "*.bak.sql"
  - db/**/migrations/*.sql
  - 'vendor\third_party\'
  - reports/202?/q[12]/*.sqlplan
`))
	if err != nil {
		t.Fatal(err)
	}
	c.WorkDir = filepath.Join(root, "db")
	tests := []struct {
		path string
		want bool
	}{
		// legacy/**: the directory and everything below it.
		{"/repo/legacy", true},
		{"/repo/legacy/a.sql", true},
		{"/repo/legacy/deep/down/b.sqlplan", true},
		{"/repo/legacyx/a.sql", false},
		{"/repo/src/legacy/a.sql", false},
		// generated: a bare directory name excludes what is below it.
		{"/repo/generated/x.sql", true},
		{"/repo/generated.sql", false},
		// *: one segment, anchored at the config directory.
		{"/repo/old.bak.sql", true},
		{"/repo/sub/old.bak.sql", false},
		// ** in the middle: zero or more segments.
		{"/repo/db/migrations/001.sql", true},
		{"/repo/db/app/v2/migrations/001.sql", true},
		{"/repo/db/migrations/sub/001.sql", false},
		{"/repo/db/migrations/001.sqlplan", false},
		// A glob written with backslashes.
		{"/repo/vendor/third_party/q.sql", true},
		{"/repo/vendor/other/q.sql", false},
		// ? and classes.
		{"/repo/reports/2024/q1/a.sqlplan", true},
		{"/repo/reports/2024/q3/a.sqlplan", false},
		{"/repo/reports/20245/q1/a.sqlplan", false},
		// Relative paths are taken from WorkDir (/repo/db).
		{"migrations/002.sql", true},
		{"../legacy/c.sql", true},
		{"../src/c.sql", false},
		// Windows separators in the input.
		{`..\legacy\c.sql`, true},
		{`\repo\legacy\w.sql`, true},
		{`/repo/src\ok.sql`, false},
		// Outside the config directory, and the directory itself.
		{"/other/legacy/a.sql", false},
		{"/repo", false},
		{"/", false},
	}
	for _, tt := range tests {
		if got := c.Excluded(filepath.FromSlash(tt.path)); got != tt.want {
			t.Errorf("Excluded(%q) = %v; want %v", tt.path, got, tt.want)
		}
	}
}

func TestExcludedNothing(t *testing.T) {
	c := Default(filepath.FromSlash("/repo"))
	if c.Excluded(filepath.FromSlash("/repo/legacy/a.sql")) {
		t.Error("default config excludes a path")
	}
}

func TestMatchPrefix(t *testing.T) {
	tests := []struct {
		glob, path string
		want       bool
	}{
		{"**", "a", true},
		{"**", "a/b/c", true},
		{"**/x", "x", true},
		{"**/x", "a/b/x", true},
		{"**/x", "a/b/y", false},
		{"a/**/b/**/c", "a/b/c", true},
		{"a/**/b/**/c", "a/1/b/2/3/c/d", true},
		{"a/**/b/**/c", "a/1/2/c", false},
		{"**/**/**/z", "a/b/c/d/e/f/g/h/i/j/k/z", true},
		{"*", "a/b", true}, // a directory holding the path
		{"a/b/c", "a/b", false},
		{"a*b", "axxb", true},
		{"a*b", "a/b", false},
	}
	for _, tt := range tests {
		_, g, err := compileGlob(tt.glob)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", tt.glob, err)
		}
		if got := matchPrefix(g, strings.Split(tt.path, "/")); got != tt.want {
			t.Errorf("matchPrefix(%q, %q) = %v; want %v", tt.glob, tt.path, got, tt.want)
		}
	}
}

func BenchmarkExcluded(b *testing.B) {
	c, err := Parse("/repo/"+FileName, []byte("exclude: [legacy/**, '**/generated/**', 'db/**/migrations/*.sql', '*.bak']\n"))
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.FromSlash("/repo/src/app/queue/handlers/poll_pending_jobs.sql")
	for b.Loop() {
		if c.Excluded(p) {
			b.Fatal("excluded")
		}
	}
}

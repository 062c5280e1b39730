// Package sharedtest locates the shared, read-only test material (the real
// showplan corpus and Microsoft's showplan schemas) that lives beside the
// repository rather than in it.
package sharedtest

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// EnvVar names the environment variable that points at the shared folder.
const EnvVar = "PLANLINT_SHARED"

// Root returns the repository root (the directory holding go.mod), found by
// walking up from the working directory, or "" when there is none.
func Root() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Dir returns the shared folder: $PLANLINT_SHARED, else "../shared" next
// to the repository root. It returns "" when the folder does not exist.
func Dir() string {
	if d := os.Getenv(EnvVar); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
		return ""
	}
	root := Root()
	if root == "" {
		return ""
	}
	d := filepath.Join(filepath.Dir(root), "shared")
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		return d
	}
	return ""
}

// Require returns the shared folder's subdirectory sub, skipping the test
// with a clear message when it is absent.
func Require(t testing.TB, sub string) string {
	t.Helper()
	d := Dir()
	if d == "" {
		t.Skipf("shared test material not found: set %s or place it in ../shared next to the repository", EnvVar)
	}
	p := filepath.Join(d, sub)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared test material %s not found: %v", sub, err)
	}
	return p
}

// Files lists the regular files of a shared subdirectory, sorted, skipping
// the test when it is absent.
func Files(t testing.TB, sub string) []string {
	t.Helper()
	dir := Require(t, sub)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading %s: %v", dir, err)
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Skipf("no files in shared folder %s", sub)
	}
	return out
}

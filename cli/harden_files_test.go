package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputNeverWritesThroughSymlink: a committed symbolic link where an
// output file goes is refused, and the file it points at is untouched.
func TestOutputNeverWritesThroughSymlink(t *testing.T) {
	inRoot(t)
	dir := t.TempDir()
	precious := filepath.Join(dir, "precious")
	const content = "do not truncate me\n"
	plan := "fixtures/queue/literal.sqlplan"
	for _, c := range []struct{ name, flag string }{
		{"out.sarif", "--output=sarif="},
		{"out.html", "--output=html="},
		{"out.json", "--output=json="},
		{"baseline.json", "--write-baseline="},
	} {
		if err := os.WriteFile(precious, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, c.name)
		if err := os.Symlink(precious, link); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := run(t, "", "check", c.flag+link, plan)
		if code != ExitError || !strings.Contains(errOut, "is a symbolic link") {
			t.Errorf("%s: exit %d, stderr %q; want a refusal", c.flag, code, errOut)
		}
		if b, _ := os.ReadFile(precious); string(b) != content {
			t.Errorf("%s: the link's target now holds %q", c.flag, b)
		}
		os.Remove(link)
		// A dangling link is not followed either.
		dangling := filepath.Join(dir, "new-"+c.name)
		if err := os.Symlink(filepath.Join(dir, "created-through-link"), dangling); err != nil {
			t.Fatal(err)
		}
		if _, _, code := run(t, "", "check", c.flag+dangling, plan); code != ExitError {
			t.Errorf("%s dangling link: exit %d", c.flag, code)
		}
		if _, err := os.Lstat(filepath.Join(dir, "created-through-link")); err == nil {
			t.Errorf("%s: a file was created through a dangling link", c.flag)
		}
		os.Remove(dangling)
	}
	// A link to a device is how /dev/stdout works: it stays allowed, and an
	// existing regular file is still overwritten.
	devnull := filepath.Join(dir, "null.sarif")
	if err := os.Symlink(os.DevNull, devnull); err != nil {
		t.Fatal(err)
	}
	regular := filepath.Join(dir, "regular.sarif")
	if err := os.WriteFile(regular, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{devnull, regular} {
		if _, errOut, code := run(t, "", "check", "--output=sarif="+path, plan); code == ExitError {
			t.Errorf("%s: exit %d, stderr %q", path, code, errOut)
		}
	}
	if b, _ := os.ReadFile(regular); !strings.Contains(string(b), `"version": "2.1.0"`) {
		t.Errorf("regular file not rewritten: %.80q", b)
	}
}

// TestInputBytesNeverEchoed: a "plan" that is really a secret (a symbolic
// link to an environment or credentials file) is refused without quoting
// any of it in any format.
func TestInputBytesNeverEchoed(t *testing.T) {
	inRoot(t)
	dir := t.TempDir()
	secret := filepath.Join(dir, "credentials")
	if err := os.WriteFile(secret, []byte("MYTOKEN=ghp_SECRETSECRETSECRET\nOTHER=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "plan.sqlplan")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	trailing := filepath.Join(dir, "trailing.sqlplan")
	doc, err := os.ReadFile("fixtures/queue/literal.sqlplan")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trailing, append(doc, "MYTOKEN=ghp_SECRETSECRETSECRET"...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json", "sarif", "markdown", "html", "github"} {
		out, errOut, code := run(t, "", "check", "--format", format, link, trailing)
		if code != ExitError {
			t.Errorf("%s: exit %d, want %d", format, code, ExitError)
		}
		for _, leak := range []string{"MYTOKEN", "ghp_", "SECRET"} {
			if strings.Contains(out, leak) || strings.Contains(errOut, leak) {
				t.Errorf("%s: %q echoed:\n%s\n%s", format, leak, out, errOut)
			}
		}
		if !strings.Contains(out+errOut, "found text") {
			t.Errorf("%s: does not say what was found:\n%s\n%s", format, out, errOut)
		}
	}
}

package rules

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

// The plans written for the access-path tests are valid showplans: they
// validate against the SQL Server 2022 showplan schema.
func TestWrittenAccessPlansValidate(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint not found in PATH (Debian package libxml2-utils)")
	}
	xsd := filepath.Join(sharedtest.Require(t, "xsd"), "showplanxml-1.571-sql2022.xsd")
	if _, err := os.Stat(xsd); err != nil {
		t.Skipf("schema not available: %v", err)
	}
	paths, err := filepath.Glob(filepath.Join("testdata", "access", "*.sqlplan"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no written plans: %v", err)
	}
	for _, path := range paths {
		cmd := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsd, path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("%s does not validate (%v):\n%s", path, err, stderr.String())
		}
	}
}

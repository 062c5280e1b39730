package rules

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

// TestFixturePlansValidate checks the hand-written plans in testdata/plans
// against the showplan schema of their version (SQL Server 2022's).
func TestFixturePlansValidate(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint not found (Debian package libxml2-utils)")
	}
	xsd := filepath.Join(sharedtest.Require(t, "xsd"), "showplanxml-1.571-sql2022.xsd")
	if _, err := os.Stat(xsd); err != nil {
		t.Skip(err)
	}
	files, _ := filepath.Glob(fixturePlan("*.sqlplan"))
	if len(files) == 0 {
		t.Fatal("no plans in testdata/plans")
	}
	for _, f := range files {
		out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", xsd, f).CombinedOutput()
		if err != nil {
			t.Errorf("%s does not validate: %v\n%s", f, err, out)
		}
	}
}

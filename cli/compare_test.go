package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

// TestCompareGolden pins `planlint compare` on fixture pairs: the literal
// query against its @Status twin, an estimated plan against its actual
// backlog capture, and (when the shared corpus is present) two real plans
// of different shape.
func TestCompareGolden(t *testing.T) {
	inRoot(t)
	q := "fixtures/queue/"
	cases := []struct {
		name, a, b string
		schema     bool
		want       int
	}{
		{"literal-vs-param", q + "literal.sqlplan", q + "param.sqlplan", true, ExitFindings},
		{"param-vs-param-actual", q + "param.sqlplan", q + "param-actual.sqlplan", false, ExitFindings},
		{"param-vs-literal", q + "param.sqlplan", q + "literal.sqlplan", true, ExitOK},
		{"status-index-vs-literal", q + "status-index.sqlplan", q + "literal.sqlplan", false, ExitOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"compare", "--color", "never"}
			if c.schema {
				args = append(args, "--schema", q+"schema.sql")
			}
			out, errOut, code := run(t, "", append(args, c.a, c.b)...)
			if code != c.want {
				t.Errorf("exit %d, want %d; stderr %s", code, c.want, errOut)
			}
			golden(t, "compare/"+c.name+".txt", out)
			js, _, _ := run(t, "", append(append(args, "--format", "json"), c.a, c.b)...)
			golden(t, "compare/"+c.name+".json", js)
		})
	}
}

func TestCompareCorpusGolden(t *testing.T) {
	dir := sharedtest.Require(t, "corpus/plans")
	inRoot(t)
	pairs := [][3]string{
		{"corpus-key-vs-rid-lookup", "hqp__test_plans__KeyLookup.sqlplan", "hqp__test_plans__rid_lookup.sqlplan"},
		{"corpus-estimated-vs-actual", "hqp__test_plans__adaptive_join_estimated.sqlplan", "hqp__test_plans__adaptive_join.sqlplan"},
	}
	for _, p := range pairs {
		a, b := filepath.Join(dir, p[1]), filepath.Join(dir, p[2])
		out, errOut, code := run(t, "", "compare", "--color", "never", "--fail-on", "none", a, b)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", p[0], code, errOut)
		}
		out = strings.ReplaceAll(out, dir+string(filepath.Separator), "corpus/plans/")
		golden(t, "compare/"+p[0]+".txt", out)
	}
}

func TestCompareErrors(t *testing.T) {
	inRoot(t)
	for _, args := range [][]string{
		{"compare", "fixtures/queue/literal.sqlplan"},
		{"compare", "fixtures/queue/literal.sqlplan", "fixtures/bad/empty.sqlplan"},
		{"compare", "--format", "sarif", "fixtures/queue/literal.sqlplan", "fixtures/queue/param.sqlplan"},
	} {
		_, errOut, code := run(t, "", args...)
		if code != ExitError || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

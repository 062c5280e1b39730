package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
)

// accessRules are the access-path rules whose findings the golden file
// holds.
var accessRules = []*Rule{EagerIndexSpool, NestedLoopsRepetition, NoJoinPredicate, JoinOrClause, LateFilter, RowCountSpoolNotIn, ManyToManyMerge}

// accessGoldenPlans are the real plans where these rules fire or must not,
// and the plans written for them.
var accessGoldenPlans = []string{
	"corpus:perfstudio__tests__PlanViewer.Core.Tests__Plans__lazy_spool_plan.sqlplan",
	"corpus:hqp__test_plans__index_spool.sqlplan",
	"corpus:showplan-dotnet__tests__Showplan.Tests__plans__parallelism2.sqlplan",
	"corpus:perfstudio__tests__PlanViewer.Core.Tests__Plans__row-count-spool-slow.sqlplan",
	"corpus:perfstudio__tests__PlanViewer.Core.Tests__Plans__param-sniffing-posttypeid2.sqlplan",
	"corpus:hqp__test_plans__issue_39.sqlplan",
	"corpus:perfstudio__tests__PlanViewer.Core.Tests__Plans__join_or_clause_plan.sqlplan",
	"corpus:showplan-dotnet__tests__Showplan.Tests__plans__merge-interval-constant-scan.sqlplan",
	"corpus:perfstudio__tests__PlanViewer.Core.Tests__Plans__many_to_many_merge_plan.sqlplan",
	"corpus:perfstudio__tests__PlanViewer.Core.Tests__Plans__slow-multi-seek.sqlplan",
	"corpus:hqp__test_plans__Not showing Seek Predicates.sqlplan",
	"plans:loop-inner-scan.sqlplan",
	"plans:cross-join.sqlplan",
	"plans:join-or-residual.sqlplan",
	"plans:late-filter-anti-join.sqlplan",
}

// TestAccessFindingsGolden renders the access-path rules' findings on those
// plans; regenerate with -update and review the diff.
func TestAccessFindingsGolden(t *testing.T) {
	corpus := sharedtest.Require(t, "corpus/plans")
	var b strings.Builder
	for _, ref := range accessGoldenPlans {
		kind, name, _ := strings.Cut(ref, ":")
		path := fixturePlan(name)
		if kind == "corpus" {
			path = filepath.Join(corpus, name)
		}
		fmt.Fprintf(&b, "== %s\n", ref)
		for _, r := range accessRules {
			for _, f := range fileFindings(t, path, r) {
				node := "-"
				if f.NodeID != nil {
					node = fmt.Sprint(*f.NodeID)
				}
				fmt.Fprintf(&b, "stmt %d node %s %s [%s %s] %s\n", f.Ordinal, node, f.Severity, f.Code, f.Rule, f.Message)
				if f.Fix != "" {
					fmt.Fprintf(&b, "    fix: %s\n", f.Fix)
				}
			}
		}
	}
	golden := filepath.Join("testdata", "golden", "access-findings.txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(rerun with -update and review the diff)", golden, i+1, g, w)
			}
		}
	}
}

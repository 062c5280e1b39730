package report

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
)

// TestStatementPropertiesCorpus checks the properties against figures read
// from the XML of real plans.
func TestStatementPropertiesCorpus(t *testing.T) {
	dir := sharedtest.Require(t, "corpus/plans")
	f64 := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		file  string
		want  StatementProperties
		lines []string
	}{
		{
			// StmtSimple StatementOptmLevel="FULL" CardinalityEstimationModelVersion="140"; QueryPlan DegreeOfParallelism="8"
			// CompileTime="2" CompileCPU="2" CompileMemory="632" CachedPlanSize="96"; MemoryGrantInfo DesiredMemory="51087936"
			// RequestedMemory="10851312" GrantWaitTime="1000" GrantedMemory="10851312" MaxUsedMemory="10232840"
			// MaxQueryMemory="10851312"; MaxCompileMemory="47067952"; QueryTimeStats CpuTime="76230" ElapsedTime="26819"; 10 waits, CXSYNC_PORT 202414 ms first.
			file: "perfstudio__tests__PlanViewer.Core.Tests__Plans__memory_grant_wait_plan.sqlplan",
			want: StatementProperties{OptimizationLevel: "FULL", CEModelVersion: 140, DegreeOfParallelism: 8,
				Compile:     &CompileStats{CPUMs: 2, TimeMs: 2, MemoryKB: 632, MaxCompileMemoryKB: 47067952, CachedPlanSizeKB: 96},
				MemoryGrant: &MemoryGrantStats{DesiredKB: 51087936, RequestedKB: 10851312, GrantedKB: f64(10851312), MaxUsedKB: f64(10232840), GrantWaitS: f64(1000), MaxQueryMemoryKB: 10851312},
				QueryTime:   &QueryTimeStats{CPUMs: 76230, ElapsedMs: 26819}, QueryHash: "0xF00E4B0A5D9CD2E5"},
			lines: []string{"optimization FULL · CE 140 · DOP 8", "granted 10.3 GB, used 9.8 GB (94%), waited 1000 s",
				// From ten seconds on, whole seconds as the rules write them (units.Ms).
				"time: 27 s elapsed, 76 s CPU", "waits: CXSYNC_PORT 202 s, CXPACKET 133 s"},
		},
		{
			// StatementOptmEarlyAbortReason="MemoryLimitExceeded", NonParallelPlanReason="NonParallelizableIntrinsicFunction",
			// CompileTime="5" CompileCPU="5" CompileMemory="1336", MaxCompileMemory="47067952", GrantedMemory="0" MaxUsedMemory="0".
			file: "perfstudio__tests__PlanViewer.Core.Tests__Plans__compile_memory_exceeded_plan.sqlplan",
			want: StatementProperties{OptimizationLevel: "FULL", EarlyAbortReason: "MemoryLimitExceeded", CEModelVersion: 160,
				NonParallelPlanReason: "NonParallelizableIntrinsicFunction",
				Compile:               &CompileStats{CPUMs: 5, TimeMs: 5, MemoryKB: 1336, MaxCompileMemoryKB: 47067952, CachedPlanSizeKB: 48},
				MemoryGrant:           &MemoryGrantStats{}, QueryHash: "0x4D7193A18FDB8E33"},
			lines: []string{"optimization FULL (MemoryLimitExceeded) · CE 160 · serial: NonParallelizableIntrinsicFunction · compile 5 ms CPU, 5 ms, 1 MB"},
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			d, err := plan.ParseFile(filepath.Join(dir, tc.file), plan.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := statementProperties(d.Statements()[0])
			waits := got.Waits
			got.Waits, got.Threads = nil, nil
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("properties\n got %s\nwant %s", dump(got), dump(&tc.want))
			}
			got.Waits = waits
			text := strings.Join(propertyLines(got), "\n")
			for _, l := range tc.lines {
				if !strings.Contains(text, l) {
					t.Errorf("header lines lack %q:\n%s", l, text)
				}
			}
		})
	}
}

func dump(p *StatementProperties) string {
	s := fmt.Sprintf("%s|%s|%s|CE %d|DOP %d", p.OptimizationLevel, p.EarlyAbortReason, p.NonParallelPlanReason, p.CEModelVersion, p.DegreeOfParallelism)
	if p.Compile != nil {
		s += fmt.Sprintf(" compile %+v", *p.Compile)
	}
	if m := p.MemoryGrant; m != nil {
		s += fmt.Sprintf(" grant %+v", *m)
		for _, v := range []*float64{m.GrantedKB, m.MaxUsedKB, m.GrantWaitS} {
			if v != nil {
				s += fmt.Sprintf(" %g", *v)
			}
		}
	}
	if p.QueryTime != nil {
		s += fmt.Sprintf(" time %+v", *p.QueryTime)
	}
	return s
}

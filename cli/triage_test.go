package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
	"github.com/planlint/planlint/catalog"
)

// Statement markers of the pulls, as package capture writes them.
const (
	cacheListMark  = "/* planlint: plan cache statements */"
	cacheOtherMark = "/* planlint: other cached plans of the listed queries */"
	cachePlanMark  = "/* planlint: cached plan */"
	storeStateMark = "/* planlint: query store state */"
	storeListMark  = "/* planlint: query store plans */"
	storeOtherMark = "/* planlint: other query store plans of the listed queries */"
	storePlanMark  = "/* planlint: query store plan */"
)

var triageLastRun = time.Date(2025, 11, 3, 2, 0, 41, 0, time.UTC)

// pulledPlan is one statement of a fake plan cache or Query Store.
type pulledPlan struct {
	queryHash, planHash, handle string
	queryID, planID, parent     int64
	planType                    string
	forced                      bool
	db, text                    string
	exec, cpu, reads            int64
	plan                        *string // nil: NULL
	// dur is the total duration in microseconds (0: 1.5 times cpu for
	// Query Store, twice cpu for the plan cache); maxReads and
	// maxDur the largest of one execution (0: NULL), stdevReads the
	// standard deviation of reads (Query Store; 0: NULL).
	dur, maxReads, maxDur, stdevReads int64
}

// total is the plan's total duration in microseconds; factor is what the
// fake source multiplies CPU by when dur is not set.
func (p pulledPlan) total(factor float64) float64 {
	if p.dur != 0 {
		return float64(p.dur)
	}
	return float64(p.cpu) * factor
}

// orNull is v, or NULL for 0.
func orNull(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

// fakeTriage answers the plan cache and Query Store requests with fixed
// statements, in the order given (the server's ranking is tested in
// package capture).
type fakeTriage struct {
	plans      []pulledPlan
	storeState string
	listError  *tdstest.Message
	version    string
	catalog    *catalog.Catalog // nil: the queue catalog
}

func strPtr(s string) *string { return &s }

func rpcParam(r *tdstest.Request, name string) any {
	for _, p := range r.Params {
		if strings.EqualFold(p.Name, name) {
			return p.Value
		}
	}
	return nil
}

func (ft *fakeTriage) handler(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
	if ft.listError != nil && (strings.Contains(r.SQL, cacheListMark) || strings.Contains(r.SQL, storeStateMark)) {
		return tdstest.ErrorResponse(*ft.listError)
	}
	switch {
	case strings.Contains(r.SQL, cacheListMark) || strings.Contains(r.SQL, cacheOtherMark):
		top, _ := rpcParam(r, "@top").(int64)
		hashes, other := rpcParam(r, "@hashes").(string)
		rs := tdstest.NewResultSet(tdstest.NVarChar("query_hash", 18), tdstest.NVarChar("query_plan_hash", 18),
			tdstest.NVarChar("plan_handle", 130), tdstest.Int("statement_start_offset"), tdstest.Int("statement_end_offset"),
			tdstest.NVarChar("database_name", 128), tdstest.NVarCharMax("statement_text"), tdstest.BigInt("execution_count"),
			tdstest.BigInt("total_worker_time"), tdstest.BigInt("max_worker_time"), tdstest.BigInt("total_elapsed_time"),
			tdstest.BigInt("max_elapsed_time"), tdstest.BigInt("total_logical_reads"), tdstest.Float("avg_rows"),
			tdstest.BigInt("min_rows"), tdstest.BigInt("max_rows"), tdstest.BigInt("max_grant_kb"), tdstest.BigInt("total_spills"),
			tdstest.DateTime2("last_execution_time", 3), tdstest.DateTime2("creation_time", 3), tdstest.BigInt("max_logical_reads"))
		n := int64(0)
		for _, p := range ft.plans {
			if other && !strings.Contains(hashes, ","+p.queryHash+",") {
				continue
			}
			if n >= top {
				break
			}
			n++
			maxDur := p.cpu
			if p.maxDur != 0 {
				maxDur = p.maxDur
			}
			rs.Row(p.queryHash, p.planHash, p.handle, 0, -1, p.db, p.text, p.exec, p.cpu, p.cpu/int64(max(p.exec, 1))*3,
				int64(p.total(2)), maxDur, p.reads, 20.0, int64(0), int64(20), int64(1024), int64(0), triageLastRun, triageLastRun.Add(-time.Hour),
				orNull(p.maxReads))
		}
		return tdstest.NewResponse().Result(rs)
	case strings.Contains(r.SQL, cachePlanMark):
		handle, _ := rpcParam(r, "@plan_handle").(string)
		rs := tdstest.NewResultSet(tdstest.NVarCharMax("query_plan"), tdstest.BigInt("plan_chars"))
		for _, p := range ft.plans {
			if p.handle == handle {
				if p.plan == nil {
					rs.Row(nil, nil)
				} else {
					rs.Row(*p.plan, int64(len([]rune(*p.plan))))
				}
			}
		}
		return tdstest.NewResponse().Result(rs)
	case strings.Contains(r.SQL, storeStateMark):
		rs := tdstest.NewResultSet(tdstest.Int("actual_state"), tdstest.NVarChar("actual_state_desc", 60),
			tdstest.NVarChar("desired_state_desc", 60), tdstest.Int("readonly_reason")).Row(2, ft.storeState, "READ_WRITE", 0)
		return tdstest.NewResponse().Result(rs)
	case strings.Contains(r.SQL, storeListMark) || strings.Contains(r.SQL, storeOtherMark):
		queryID, _ := rpcParam(r, "@query_id").(int64)
		ids, other := rpcParam(r, "@query_ids").(string)
		top, _ := rpcParam(r, "@top").(int64)
		n := int64(0)
		rs := tdstest.NewResultSet(tdstest.BigInt("query_id"), tdstest.BigInt("plan_id"), tdstest.NVarChar("database_name", 128),
			tdstest.NVarCharMax("statement_text"), tdstest.Bit("is_forced_plan"), tdstest.BigInt("force_failure_count"),
			tdstest.NVarChar("last_force_failure_reason_desc", 60), tdstest.NVarChar("plan_type_desc", 60), tdstest.BigInt("parent_query_id"),
			tdstest.BigInt("executions"), tdstest.Float("cpu_us"), tdstest.Float("duration_us"), tdstest.Float("logical_reads"),
			tdstest.Float("avg_rows"), tdstest.BigInt("max_used_memory_kb"), tdstest.DateTime2("last_execution_time", 3),
			tdstest.BigInt("plan_chars"), tdstest.NVarChar("query_hash", 18), tdstest.NVarChar("query_plan_hash", 18),
			tdstest.Float("max_duration_us"), tdstest.Float("max_logical_reads"), tdstest.Float("logical_reads_sq"))
		for _, p := range ft.plans {
			if queryID != 0 && p.queryID != queryID && p.parent != queryID {
				continue
			}
			if other && !strings.Contains(ids, fmt.Sprintf(",%d,", p.queryID)) && !strings.Contains(ids, fmt.Sprintf(",%d,", p.parent)) {
				continue
			}
			if n >= top {
				break
			}
			n++
			var parent, chars any
			if p.parent != 0 {
				parent = p.parent
			}
			if p.plan != nil {
				chars = int64(len([]rune(*p.plan)))
			}
			var maxDur, maxReads, readsSq any
			if p.maxDur != 0 {
				maxDur = float64(p.maxDur)
			}
			if p.maxReads != 0 {
				maxReads = float64(p.maxReads)
			}
			if p.stdevReads != 0 && p.exec > 0 {
				avg := float64(p.reads) / float64(p.exec)
				readsSq = float64(p.exec) * (float64(p.stdevReads)*float64(p.stdevReads) + avg*avg)
			}
			var queryHash, planHash any
			if p.queryHash != "" {
				queryHash, planHash = p.queryHash, p.planHash
			}
			rs.Row(p.queryID, p.planID, "WorkDb", p.text, p.forced, int64(0), "NONE", p.planType, parent, p.exec,
				float64(p.cpu), p.total(1.5), float64(p.reads), 20.0, int64(512), triageLastRun, chars, queryHash, planHash,
				maxDur, maxReads, readsSq)
		}
		return tdstest.NewResponse().Result(rs)
	case strings.Contains(r.SQL, storePlanMark):
		id, _ := rpcParam(r, "@plan_id").(int64)
		rs := tdstest.NewResultSet(tdstest.NVarCharMax("query_plan"), tdstest.BigInt("plan_chars"))
		for _, p := range ft.plans {
			if p.planID == id && p.plan != nil {
				rs.Row(*p.plan, int64(len([]rune(*p.plan))))
			}
		}
		return tdstest.NewResponse().Result(rs)
	}
	return nil
}

// start starts the fake server with the queue catalog.
func (ft *fakeTriage) start(t *testing.T) *tdstest.Server {
	t.Helper()
	cat := ft.catalog
	if cat == nil {
		cat = capturetest.QueueCatalog(t)
	}
	return capturetest.Start(t, capturetest.Config{Catalog: cat, ProductVersion: ft.version, Statement: ft.handler})
}

// triagePlans are the queue fixtures as cached statements: the
// parameterized poll (a scan and sort), the literal poll (a seek), a NULL
// plan, a plan declaring utf-16 with non-ASCII names, and a plan of
// another database.
func triagePlans(t *testing.T) []pulledPlan {
	param := capturetest.Fixture(t, "queue/param.sqlplan")
	literal := capturetest.Fixture(t, "queue/literal.sqlplan")
	u16 := `<?xml version="1.0" encoding="utf-16"?>` + "\n" + strings.ReplaceAll(literal, `Table="[Work]"`, `Table="[Wörk_工作]"`)
	other := strings.ReplaceAll(literal, "[WorkDb]", "[OtherDb]")
	poll := "SELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE Status = @Status ORDER BY CreatedAt, WorkId"
	return []pulledPlan{
		{queryHash: "0x5C3B9E8D7A6F1402", planHash: "0xA47E21C95D3B8F60", handle: "0x0601", queryID: 42, planID: 7, planType: "Compiled Plan",
			forced: true, db: "WorkDb", text: poll, exec: 1204, cpu: 3_412_000, reads: 12_345_678, plan: &param},
		{queryHash: "0x5C3B9E8D7A6F1402", planHash: "0x0B1C2D3E4F506172", handle: "0x0602", queryID: 42, planID: 8, planType: "Compiled Plan",
			db: "WorkDb", text: "SELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE Status = 0 ORDER BY CreatedAt, WorkId",
			exec: 300, cpu: 30_000, reads: 1200, plan: &literal},
		{queryHash: "0x3333333333333333", planHash: "0x4444444444444444", handle: "0x0603", queryID: 60, planID: 11, planType: "Compiled Plan",
			db: "WorkDb", text: "UPDATE dbo.Work SET ClaimedAt = SYSUTCDATETIME() WHERE WorkId = @Id", exec: 7, cpu: 700, reads: 21},
		{queryHash: "0x5555555555555555", planHash: "0x6666666666666666", handle: "0x0604", queryID: 61, planID: 12, planType: "Compiled Plan",
			db: "WorkDb", text: "SELECT TOP (20) WorkId FROM dbo.Wörk_工作 WHERE Status = 0", exec: 3, cpu: 300, reads: 3, plan: &u16},
		{queryHash: "0x7777777777777777", planHash: "0x8888888888888888", handle: "0x0605", queryID: 62, planID: 13, planType: "Compiled Plan",
			db: "OtherDb", text: "SELECT TOP (20) WorkId FROM dbo.Work WHERE Status = 0", exec: 1, cpu: 100, reads: 1, plan: &other},
	}
}

// triageJSON is the part of a cache or querystore JSON report the tests
// read.
type triageJSON struct {
	Files []struct {
		Path       string  `json:"path"`
		Error      *string `json:"error"`
		Statements []struct {
			Text    string         `json:"text"`
			Runtime map[string]any `json:"runtime"`
			Capture *struct {
				Method   string `json:"method"`
				Database string `json:"database"`
				Note     string `json:"note"`
			} `json:"capture"`
		} `json:"statements"`
		Findings []jsonFinding `json:"findings"`
	} `json:"files"`
}

func decodeTriage(t *testing.T, out string) triageJSON {
	t.Helper()
	var rep triageJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	return rep
}

func TestParseSince(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"24h", 24 * time.Hour, ""},
		{"90m", 90 * time.Minute, ""},
		{"7d", 7 * 24 * time.Hour, ""},
		{"1d12h", 36 * time.Hour, ""},
		{" 2h ", 2 * time.Hour, ""},
		{"3650d", 3650 * 24 * time.Hour, ""},
		{"3651d", 0, "at most 3650 days"},
		{"0s", 0, "want 1s to 3650 days"},
		{"-1h", 0, "want a duration"},
		{"d", 0, "want a duration"},
		{"yesterday", 0, "want a duration"},
		{"1d-2h", 0, "want a duration"},
	}
	for _, tc := range tests {
		got, err := parseSince(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("parseSince(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseSince(%q) error = %v, want %q", tc.in, err, tc.err)
		}
	}
}

// FuzzParseSince: any --since value is a duration within the bounds or an
// error naming the flag.
func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"24h", "7d", "1d12h", "d", "99999999999999999999d", "1d1d", "-5m", "1.5h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseSince(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--since ") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		if d < time.Second || d > 3650*24*time.Hour {
			t.Fatalf("parseSince(%q) = %v, out of bounds", s, d)
		}
	})
}

func TestSinceText(t *testing.T) {
	for d, want := range map[time.Duration]string{24 * time.Hour: "1d", 2 * time.Hour: "2h", 90 * time.Minute: "1h30m",
		36*time.Hour + 5*time.Second: "1d12h5s", time.Second: "1s", 7 * 24 * time.Hour: "7d"} {
		if got := sinceText(d); got != want {
			t.Errorf("sinceText(%v) = %q, want %q", d, got, want)
		}
	}
}

package capture

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
	"github.com/planlint/planlint/plan"
)

// cachedStatement is one statement of the fake plan cache.
type cachedStatement struct {
	queryHash, planHash, handle string
	start, end                  int
	db, text                    string
	exec                        int64
	cpu, maxCPU, dur, reads     int64
	totalRows, minRows, maxRows int64
	grant, spills               int64
	last                        time.Time
	plan                        *string // nil: sys.dm_exec_text_query_plan returns NULL
	noPlanRow                   bool    // the function returns no row at all
}

// fakeCache answers the plan cache requests the way SQL Server does for a
// server whose sys.dm_exec_query_stats lacks the missing columns: naming
// one of them fails with error 207.
type fakeCache struct {
	stmts   []cachedStatement
	missing []string // e.g. "total_spills"
	// listError fails the list request.
	listError *tdstest.Message
	// ignoreLimit sends every plan whatever its length (a server whose
	// character count passes the limit while the UTF-8 text does not).
	ignoreLimit bool
	delay       time.Duration
}

func param(r *tdstest.Request, name string) any {
	for _, p := range r.Params {
		if strings.EqualFold(p.Name, name) {
			return p.Value
		}
	}
	return nil
}

// likeMatch is T-SQL LIKE with % and _ under a case-insensitive collation.
func likeMatch(pattern, s string) bool {
	var re strings.Builder
	re.WriteString("(?is)^")
	for _, r := range pattern {
		switch r {
		case '%':
			re.WriteString(".*")
		case '_':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString("$")
	return regexp.MustCompile(re.String()).MatchString(s)
}

var orderBy = regexp.MustCompile(`ORDER BY (\w+)\.(\w+) DESC`)

func (fc *fakeCache) handler(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
	switch {
	case strings.Contains(r.SQL, cacheListMarker) || strings.Contains(r.SQL, cacheOtherMarker):
		for _, col := range fc.missing {
			if strings.Contains(r.SQL, "qs."+col) {
				return tdstest.ErrorResponse(tdstest.Message{Number: 207, State: 1, Class: 16, Line: 1, Text: fmt.Sprintf("Invalid column name '%s'.", col)})
			}
		}
		if fc.listError != nil {
			return tdstest.ErrorResponse(*fc.listError)
		}
		return fc.list(r).Delay(fc.delay)
	case strings.Contains(r.SQL, cachePlanMarker):
		return fc.plan(r)
	}
	return nil
}

func (fc *fakeCache) list(r *tdstest.Request) *tdstest.Response {
	top, _ := param(r, "@top").(int64)
	db, _ := param(r, "@database").(string)
	like, _ := param(r, "@like").(string)
	hashes, other := param(r, "@hashes").(string)
	var keep []cachedStatement
	for _, c := range fc.stmts {
		if other && !strings.Contains(hashes, ","+c.queryHash+",") {
			continue
		}
		if (db == "" || strings.EqualFold(c.db, db)) && (like == "" || likeMatch(like, c.text)) {
			keep = append(keep, c)
		}
	}
	m := orderBy.FindStringSubmatch(r.SQL)
	key := func(c cachedStatement) int64 {
		switch m[2] {
		case "total_elapsed_time":
			return c.dur
		case "total_logical_reads":
			return c.reads
		case "execution_count":
			return c.exec
		case "max_grant_kb":
			return c.grant
		}
		return c.cpu
	}
	for i := 1; i < len(keep); i++ { // stable insertion sort, descending
		for j := i; j > 0 && key(keep[j]) > key(keep[j-1]); j-- {
			keep[j], keep[j-1] = keep[j-1], keep[j]
		}
	}
	if int64(len(keep)) > top {
		keep = keep[:top]
	}
	name := func(n string, l int) tdstest.Column { return tdstest.NVarChar(n, l) }
	rs := tdstest.NewResultSet(name("query_hash", 18), name("query_plan_hash", 18), name("plan_handle", 130),
		tdstest.Int("statement_start_offset"), tdstest.Int("statement_end_offset"), name("database_name", 128),
		tdstest.NVarCharMax("statement_text"), tdstest.BigInt("execution_count"), tdstest.BigInt("total_worker_time"),
		tdstest.BigInt("max_worker_time"), tdstest.BigInt("total_elapsed_time"), tdstest.BigInt("max_elapsed_time"),
		tdstest.BigInt("total_logical_reads"), tdstest.Float("avg_rows"), tdstest.BigInt("min_rows"), tdstest.BigInt("max_rows"),
		tdstest.BigInt("max_grant_kb"), tdstest.BigInt("total_spills"), tdstest.DateTime2("last_execution_time", 3),
		tdstest.DateTime2("creation_time", 3), tdstest.BigInt("min_logical_reads"), tdstest.BigInt("max_logical_reads"))
	has := func(col string) bool { return strings.Contains(r.SQL, "qs."+col) }
	for _, c := range keep {
		var avgRows, minRows, maxRows, grant, spills any
		if has("total_rows") {
			avgRows, minRows, maxRows = float64(c.totalRows)/float64(max(c.exec, 1)), c.minRows, c.maxRows
		}
		if has("max_grant_kb") {
			grant = c.grant
		}
		if has("total_spills") {
			spills = c.spills
		}
		var dbName any
		if c.db != "" {
			dbName = c.db
		}
		rs.Row(c.queryHash, c.planHash, c.handle, c.start, c.end, dbName, c.text, c.exec, c.cpu, c.maxCPU, c.dur, c.dur,
			c.reads, avgRows, minRows, maxRows, grant, spills, c.last, c.last.Add(-time.Hour), c.reads/max(c.exec, 1)/2, c.reads/max(c.exec, 1)*40)
	}
	return tdstest.NewResponse().Result(rs)
}

func (fc *fakeCache) plan(r *tdstest.Request) *tdstest.Response {
	handle, _ := param(r, "@plan_handle").(string)
	start, _ := param(r, "@start").(int64)
	end, _ := param(r, "@end").(int64)
	limit, _ := param(r, "@max_chars").(int64)
	rs := tdstest.NewResultSet(tdstest.NVarCharMax("query_plan").Chunked(1000), tdstest.BigInt("plan_chars"))
	for _, c := range fc.stmts {
		if c.handle != handle || int64(c.start) != start || int64(c.end) != end || c.noPlanRow {
			continue
		}
		if c.plan == nil {
			rs.Row(nil, nil)
			break
		}
		chars := int64(len(utf16Units(*c.plan)))
		if chars > limit && !fc.ignoreLimit {
			rs.Row(nil, chars)
		} else {
			rs.Row(*c.plan, chars)
		}
		break
	}
	return tdstest.NewResponse().Result(rs)
}

func utf16Units(s string) []int {
	var out []int
	for _, r := range s {
		out = append(out, 1)
		if r >= 0x10000 {
			out = append(out, 1)
		}
	}
	return out
}

// startCache starts a fake server with the queue catalog and the given
// plan cache.
func startCache(t *testing.T, version string, handler tdstest.Handler, params url.Values) (*tdstest.Server, *Session) {
	t.Helper()
	srv := queueServer(t, capturetest.Config{ProductVersion: version, Statement: handler})
	s, err := Open(testContext(t), Options{ConnectionString: srv.DSN(params)}, SessionOptions{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	assertTLSLogin(t, srv)
	return srv, s
}

var lastRun = time.Date(2025, 11, 3, 2, 0, 41, 120_000_000, time.UTC)

// utf16Plan is literal.sqlplan as Query Store and the plan cache hand it
// over: with an XML declaration saying utf-16, and with non-ASCII
// identifiers (one outside the Basic Multilingual Plane).
func utf16Plan(t testing.TB) string {
	p := capturetest.Fixture(t, "queue/literal.sqlplan")
	p = strings.ReplaceAll(p, `Table="[Work]"`, `Table="[Wörk_工作_𝒲]"`)
	return `<?xml version="1.0" encoding="utf-16"?>` + "\n" + p
}

func queueCache(t testing.TB) []cachedStatement {
	param := capturetest.Fixture(t, "queue/param.sqlplan")
	literal := capturetest.Fixture(t, "queue/literal.sqlplan")
	u16 := utf16Plan(t)
	return []cachedStatement{
		{queryHash: "0x5C3B9E8D7A6F1402", planHash: "0xA47E21C95D3B8F60", handle: "0x06000500AA", start: 54, end: 300,
			db: "WorkDb", text: "SELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE Status = @Status ORDER BY CreatedAt, WorkId",
			exec: 1204, cpu: 3_412_000, maxCPU: 40_000, dur: 5_100_000, reads: 12_345_678, totalRows: 24080, minRows: 0, maxRows: 20,
			grant: 1024, spills: 0, last: lastRun, plan: &param},
		{queryHash: "0x1111111111111111", planHash: "0x2222222222222222", handle: "0x06000500BB", start: 0, end: -1,
			db: "WorkDb", text: "SELECT TOP (20) WorkId FROM dbo.Work WHERE Status = 0", exec: 50, cpu: 9_000_000, maxCPU: 500_000,
			dur: 9_500_000, reads: 100, totalRows: 1000, maxRows: 20, grant: 0, spills: 12, last: lastRun, plan: &literal},
		{queryHash: "0x3333333333333333", planHash: "0x4444444444444444", handle: "0x06000500CC", start: 0, end: -1,
			db: "WorkDb", text: "UPDATE dbo.Work SET ClaimedAt = SYSUTCDATETIME() WHERE WorkId = @Id", exec: 7, cpu: 100, dur: 200,
			reads: 21, last: lastRun, plan: nil},
		{queryHash: "0x5555555555555555", planHash: "0x6666666666666666", handle: "0x06000500DD", start: 0, end: -1,
			db: "WorkDb", text: "SELECT TOP (20) WorkId FROM dbo.Wörk_工作_𝒲 WHERE Status = 0", exec: 3, cpu: 50, dur: 60,
			reads: 3, last: lastRun, plan: &u16},
		{queryHash: "0x7777777777777777", planHash: "0x8888888888888888", handle: "0x06000500EE", start: 0, end: -1,
			db: "OtherDb", text: "SELECT 1 FROM dbo.Elsewhere", exec: 1, cpu: 10, dur: 10, reads: 1, last: lastRun, noPlanRow: true},
	}
}

// TestPlanCachePull: the top statements come back in CPU order with their
// figures and parsed plans; a NULL plan and a plan with a utf-16
// declaration and non-ASCII identifiers are handled; every request is a
// parameterized RPC on one connection; catalog facts are read once.
func TestPlanCachePull(t *testing.T) {
	fc := &fakeCache{stmts: queueCache(t)}
	srv, s := startCache(t, "16.0.4215.2", fc.handler, nil)
	var progress []string
	pull, err := s.PlanCache(testContext(t), CacheOptions{Top: 10, OrderBy: OrderCPU,
		Progress: func(n, total int) { progress = append(progress, fmt.Sprintf("%d/%d", n, total)) }})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pull.Statements {
		names = append(names, p.Name)
	}
	want := []string{"cache:0x1111111111111111 plan 0x2222222222222222", "cache:0x5C3B9E8D7A6F1402 plan 0xA47E21C95D3B8F60",
		"cache:0x3333333333333333 plan 0x4444444444444444", "cache:0x5555555555555555 plan 0x6666666666666666",
		"cache:0x7777777777777777 plan 0x8888888888888888"}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Fatalf("statements (by CPU):\n%s\nwant\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	if got := strings.Join(progress, " "); got != "1/5 2/5 3/5 4/5 5/5" {
		t.Errorf("progress = %s", got)
	}
	p := pull.Statements[1]
	rt := p.Runtime
	if p.Doc == nil || p.Err != nil || rt.Executions != 1204 || rt.CPUMicros != 3_412_000 || *rt.MaxCPUMicros != 40_000 ||
		rt.LogicalReads != 12_345_678 || *rt.AvgRows != 20 || *rt.MinRows != 0 || *rt.MaxRows != 20 ||
		*rt.MaxGrantKB != 1024 || *rt.SpilledPages != 0 || !rt.LastExecution.Equal(lastRun) || rt.MaxUsedMemoryKB != nil ||
		*rt.MinLogicalReads != 5126 || *rt.MaxLogicalReads != 410_120 || rt.StdevLogicalReads != nil {
		t.Errorf("param statement: doc %v err %v runtime %+v", p.Doc != nil, p.Err, rt)
	}
	if p.Cache.PlanHandle != "0x06000500AA" || p.Cache.StatementStart != 54 || p.Cache.StatementEnd != 300 || p.Database != "WorkDb" {
		t.Errorf("cache entry %+v database %q", p.Cache, p.Database)
	}
	if p.XML != capturetest.Fixture(t, "queue/param.sqlplan") {
		t.Error("the plan text was not kept as sent")
	}
	if e := pull.Statements[2].Err; e == nil || e.Problem != PlanMissing || pull.Statements[2].Doc != nil ||
		!strings.Contains(e.Error(), "sys.dm_exec_text_query_plan returned nothing") {
		t.Errorf("NULL plan: err %v", e)
	}
	if e := pull.Statements[4].Err; e == nil || e.Problem != PlanMissing {
		t.Errorf("evicted plan (no row): err %v", e)
	}
	u := pull.Statements[3]
	if u.Doc == nil {
		t.Fatalf("utf-16 declared plan: %v", u.Err)
	}
	local, _ := TablesOf([]*plan.Document{u.Doc}, "WorkDb")
	if len(local) != 1 || local[0].Name != "Wörk_工作_𝒲" {
		t.Errorf("non-ASCII table name = %+v", local)
	}

	reqs := capturetest.Requests(srv, 0)
	var lists, others, plans, catalogs int
	for _, r := range reqs {
		if r.Conn != 1 {
			t.Errorf("request on connection %d: the session must stay pinned", r.Conn)
		}
		switch {
		case strings.Contains(r.SQL, cacheListMarker):
			lists++
			if r.Kind != tdstest.KindRPC || r.ParamDecl != cacheListParams {
				t.Errorf("list sent as %s with declaration %q", r.Kind, r.ParamDecl)
			}
			for _, p := range r.Params[2:] {
				if p.Name == "@top" && (p.Type != "int" || p.Value != int64(10)) {
					t.Errorf("@top sent as %s %v", p.Type, p.Value)
				}
			}
		case strings.Contains(r.SQL, cacheOtherMarker):
			others++
			hashes, _ := param(&r, "@hashes").(string)
			if r.Kind != tdstest.KindRPC || r.ParamDecl != cacheOtherParams || hashes != ",0x1111111111111111,0x5C3B9E8D7A6F1402,0x3333333333333333,0x5555555555555555,0x7777777777777777," {
				t.Errorf("other plans asked as %s with declaration %q, @hashes %q", r.Kind, r.ParamDecl, hashes)
			}
		case strings.Contains(r.SQL, cachePlanMarker):
			plans++
			if r.Kind != tdstest.KindRPC || r.ParamDecl != cachePlanParams {
				t.Errorf("plan read sent as %s with declaration %q", r.Kind, r.ParamDecl)
			}
		case capturetest.Classify(r) == capturetest.KindCatalog:
			catalogs++
			if got := capturetest.RequestedTables(r.SQL); len(got) != 2 {
				t.Errorf("catalog facts asked for %v, want dbo.Work and dbo.Wörk_工作_𝒲", got)
			}
		case capturetest.Classify(r) == capturetest.KindSetup:
		default:
			t.Errorf("unexpected request %s", r.Describe())
		}
		if strings.Contains(strings.ToUpper(r.SQL), "SHOWPLAN") || strings.Contains(strings.ToUpper(r.SQL), "STATISTICS XML") {
			t.Errorf("a pull must not compile or run statements: %s", r.Describe())
		}
	}
	if lists != 1 || others != 1 || plans != 5 || catalogs != 1 {
		t.Errorf("requests: %d list, %d other plans, %d plan, %d catalog; want 1, 1, 5, 1", lists, others, plans, catalogs)
	}
	if cat := s.Catalog(); cat.FindTable("WorkDb", "dbo", "Work") == nil {
		t.Error("catalog facts of dbo.Work were not read")
	}
}

// TestPlanCacheShapes: the list asks only for the columns the server
// version has (a missing column fails with error 207), and figures the
// version does not keep stay unknown.
func TestPlanCacheShapes(t *testing.T) {
	tests := []struct {
		version              string
		rows, grant, spills  bool
		missingOnServer      []string
		spillNote, grantFail bool
	}{
		{version: "10.0.5500.0", missingOnServer: []string{"total_rows", "min_rows", "max_rows", "max_grant_kb", "total_spills"}, spillNote: true, grantFail: true},
		{version: "10.50.2500.0", rows: true, missingOnServer: []string{"max_grant_kb", "total_spills"}, spillNote: true, grantFail: true},
		{version: "11.0.5058.0", rows: true, missingOnServer: []string{"max_grant_kb", "total_spills"}, spillNote: true, grantFail: true},
		{version: "11.0.7001.0", rows: true, grant: true, missingOnServer: []string{"total_spills"}, spillNote: true},
		{version: "13.0.4001.0", rows: true, grant: true, missingOnServer: []string{"total_spills"}, spillNote: true},
		{version: "13.0.5026.0", rows: true, grant: true, spills: true},
		{version: "14.0.3006.16", rows: true, grant: true, missingOnServer: []string{"total_spills"}, spillNote: true},
		{version: "14.0.3015.40", rows: true, grant: true, spills: true},
		{version: "17.0.1000.7", rows: true, grant: true, spills: true},
	}
	for _, tc := range tests {
		t.Run(tc.version, func(t *testing.T) {
			fc := &fakeCache{stmts: queueCache(t)[:1], missing: tc.missingOnServer}
			_, s := startCache(t, tc.version, fc.handler, nil)
			pull, err := s.PlanCache(testContext(t), CacheOptions{Top: 5})
			if err != nil {
				t.Fatal(err)
			}
			rt := pull.Statements[0].Runtime
			if (rt.AvgRows != nil) != tc.rows || (rt.MaxRows != nil) != tc.rows || (rt.MaxGrantKB != nil) != tc.grant || (rt.SpilledPages != nil) != tc.spills {
				t.Errorf("rows %v grant %v spills %v; want %v %v %v", rt.AvgRows != nil, rt.MaxGrantKB != nil, rt.SpilledPages != nil, tc.rows, tc.grant, tc.spills)
			}
			if hasNote := len(pull.Notes) > 0 && strings.Contains(pull.Notes[0], "no spill counts"); hasNote != tc.spillNote {
				t.Errorf("notes = %q", pull.Notes)
			}
			_, err = s.PlanCache(testContext(t), CacheOptions{Top: 5, OrderBy: OrderGrant})
			var ce *Error
			if gotFail := errors.As(err, &ce) && ce.Kind == ErrStatement && strings.Contains(ce.Message, "--order-by grant"); gotFail != tc.grantFail {
				t.Errorf("--order-by grant: %v", err)
			}
		})
	}
}

// TestPlanCacheCloud: Azure SQL Database reports version 12 but has every
// column.
func TestPlanCacheCloud(t *testing.T) {
	fc := &fakeCache{stmts: queueCache(t)[:1]}
	cfg := capturetest.Config{Catalog: capturetest.QueueCatalog(t), ProductVersion: "12.0.2000.8", Statement: fc.handler}
	base := capturetest.Handler(cfg)
	srv := tdstest.Start(t, tdstest.Config{Database: "WorkDb", Handler: func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
		if capturetest.Classify(*r) == capturetest.KindSetup {
			rs := tdstest.NewResultSet(tdstest.NVarChar("database_name", 128), tdstest.NVarChar("product_version", 128),
				tdstest.NVarChar("edition", 128), tdstest.Int("engine_edition"), tdstest.Int("compatibility_level"),
				tdstest.Bit("is_parameterization_forced"), tdstest.Bit("is_read_committed_snapshot_on"),
				tdstest.NVarChar("snapshot_isolation_state_desc", 60)).
				Row(s.Database, "12.0.2000.8", "SQL Azure", 5, 160, false, true, "ON")
			return tdstest.NewResponse().Result(rs)
		}
		return base(s, r)
	}})
	s := openSession(t, srv, SessionOptions{})
	pull, err := s.PlanCache(testContext(t), CacheOptions{Top: 1, OrderBy: OrderGrant})
	if err != nil {
		t.Fatal(err)
	}
	if rt := pull.Statements[0].Runtime; rt.SpilledPages == nil || rt.MaxGrantKB == nil || len(pull.Notes) != 0 {
		t.Errorf("Azure SQL Database: runtime %+v notes %q", rt, pull.Notes)
	}
}

// TestPlanCacheFilters: --database, --like and --order-by reach the server
// as typed parameter values and a fixed ORDER BY column, never as SQL text.
func TestPlanCacheFilters(t *testing.T) {
	tests := []struct {
		name string
		o    CacheOptions
		want []string // query hashes
	}{
		{"like substring", CacheOptions{Top: 10, Like: "Status = 0"}, []string{"0x1111111111111111", "0x5555555555555555"}},
		{"like pattern", CacheOptions{Top: 10, Like: "UPDATE%"}, []string{"0x3333333333333333"}},
		{"database", CacheOptions{Top: 10, Database: "OtherDb"}, []string{"0x7777777777777777"}},
		{"reads", CacheOptions{Top: 2, OrderBy: OrderReads}, []string{"0x5C3B9E8D7A6F1402", "0x1111111111111111"}},
		{"executions", CacheOptions{Top: 1, OrderBy: OrderExecutions}, []string{"0x5C3B9E8D7A6F1402"}},
		{"duration", CacheOptions{Top: 1, OrderBy: OrderDuration}, []string{"0x1111111111111111"}},
		{"grant", CacheOptions{Top: 1, OrderBy: OrderGrant}, []string{"0x5C3B9E8D7A6F1402"}},
		{"quote in like", CacheOptions{Top: 10, Like: "x'; DROP TABLE dbo.Work; --"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fc := &fakeCache{stmts: queueCache(t)}
			srv, s := startCache(t, "16.0.4215.2", fc.handler, nil)
			pull, err := s.PlanCache(testContext(t), tc.o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pull.Statements {
				got = append(got, p.Cache.QueryHash)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("statements %v, want %v", got, tc.want)
			}
			for _, r := range capturetest.Requests(srv, 0) {
				if !strings.Contains(r.SQL, cacheListMarker) {
					continue
				}
				if tc.o.Like != "" && strings.Contains(r.SQL, tc.o.Like) || tc.o.Database != "" && strings.Contains(r.SQL, tc.o.Database) {
					t.Errorf("a filter value was written into the SQL text:\n%s", r.SQL)
				}
				if like := param(&r, "@like"); like != LikePattern(tc.o.Like) {
					t.Errorf("@like = %q, want %q", like, LikePattern(tc.o.Like))
				}
				if db := param(&r, "@database"); db != tc.o.Database {
					t.Errorf("@database = %q", db)
				}
			}
		})
	}
}

func TestLikePattern(t *testing.T) {
	for in, want := range map[string]string{"": "", "dbo.Work": "%dbo.Work%", "%Work": "%Work", "Work%": "Work%", "IX_Work": "%IX_Work%"} {
		if got := LikePattern(in); got != want {
			t.Errorf("LikePattern(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPlanCacheTooLarge: a plan over the limit is not transferred (the
// server leaves it out) and one whose UTF-8 text exceeds the limit is
// caught while parsing; both are kept with PlanTooLarge.
func TestPlanCacheTooLarge(t *testing.T) {
	literal := capturetest.Fixture(t, "queue/literal.sqlplan")
	wide := strings.Replace(literal, "<BatchSequence>", "<!-- "+strings.Repeat("工", 2000)+" --><BatchSequence>", 1)
	limit := int64(len(utf16Units(wide)) + 10) // characters fit, UTF-8 bytes do not
	for _, tc := range []struct {
		name        string
		plan        string
		ignoreLimit bool
		limit       int64
		want        string
	}{
		{"server-side", literal, false, 100, "the plan has"},
		{"client-side", wide, true, limit, "maximum file size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stmts := queueCache(t)[:1]
			stmts[0].plan = &tc.plan
			fc := &fakeCache{stmts: stmts, ignoreLimit: tc.ignoreLimit}
			_, s := startCache(t, "16.0.4215.2", fc.handler, nil)
			pull, err := s.PlanCache(testContext(t), CacheOptions{Top: 1, Limits: plan.Options{MaxBytes: tc.limit}})
			if err != nil {
				t.Fatal(err)
			}
			p := pull.Statements[0]
			if p.Err == nil || p.Err.Problem != PlanTooLarge || !strings.Contains(p.Err.Message, tc.want) || p.Doc != nil {
				t.Errorf("err = %v", p.Err)
			}
			if tc.name == "server-side" && p.XML != "" {
				t.Error("an over-limit plan was transferred")
			}
		})
	}
}

// TestPlanCacheInvalidPlan: a plan text that does not parse is kept with
// PlanInvalid and the parser's position.
func TestPlanCacheInvalidPlan(t *testing.T) {
	broken := capturetest.Fixture(t, "queue/literal.sqlplan")
	broken = broken[:len(broken)/2]
	stmts := queueCache(t)[:1]
	stmts[0].plan = &broken
	fc := &fakeCache{stmts: stmts}
	_, s := startCache(t, "16.0.4215.2", fc.handler, nil)
	pull, err := s.PlanCache(testContext(t), CacheOptions{Top: 1})
	if err != nil {
		t.Fatal(err)
	}
	if e := pull.Statements[0].Err; e == nil || e.Problem != PlanInvalid || !strings.Contains(e.Message, "line ") {
		t.Errorf("err = %v", e)
	}
}

// TestPlanCacheManyRows: a list and plans larger than the packet size
// arrive whole.
func TestPlanCacheManyRows(t *testing.T) {
	param := capturetest.Fixture(t, "queue/param.sqlplan")
	var stmts []cachedStatement
	for i := range 150 {
		stmts = append(stmts, cachedStatement{queryHash: fmt.Sprintf("0x%016X", i), planHash: fmt.Sprintf("0x%016X", 1000+i),
			handle: fmt.Sprintf("0x0600%04X", i), end: -1, db: "WorkDb", text: strings.Repeat("SELECT 1; ", 20),
			exec: int64(i + 1), cpu: int64(1000 * (i + 1)), last: lastRun, plan: &param})
	}
	fc := &fakeCache{stmts: stmts}
	_, s := startCache(t, "16.0.4215.2", fc.handler, url.Values{"packet size": {"512"}})
	pull, err := s.PlanCache(testContext(t), CacheOptions{Top: 150})
	if err != nil {
		t.Fatal(err)
	}
	if len(pull.Statements) != 150 {
		t.Fatalf("%d statements, want 150", len(pull.Statements))
	}
	for i, p := range pull.Statements {
		if p.Doc == nil || p.Runtime.Executions != int64(150-i) {
			t.Fatalf("statement %d: executions %d, err %v", i, p.Runtime.Executions, p.Err)
		}
	}
}

// TestPlanCacheNamesUnique: the same query and plan hash cached twice (two
// databases, other SET options) get distinct names.
func TestPlanCacheNamesUnique(t *testing.T) {
	stmts := queueCache(t)[:2]
	stmts[1].queryHash, stmts[1].planHash = stmts[0].queryHash, stmts[0].planHash
	fc := &fakeCache{stmts: stmts}
	_, s := startCache(t, "16.0.4215.2", fc.handler, nil)
	pull, err := s.PlanCache(testContext(t), CacheOptions{Top: 2})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := pull.Statements[0].Name, pull.Statements[1].Name; a == b || !strings.HasSuffix(b, " #2") {
		t.Errorf("names %q and %q", a, b)
	}
}

// TestPlanCacheErrors: permission errors name the GRANT to ask for, a slow
// list hits the statement timeout, and an answer of the wrong shape is a
// server error.
func TestPlanCacheErrors(t *testing.T) {
	denied := &tdstest.Message{Number: 300, State: 1, Class: 14, Line: 1,
		Text: "VIEW SERVER STATE permission was denied on object 'server', database 'master'."}
	tests := []struct {
		name    string
		version string
		fc      *fakeCache
		timeout time.Duration
		kind    ErrorKind
		want    string
	}{
		{"permission", "15.0.4153.1", &fakeCache{listError: denied}, 0, ErrPermission, "GRANT VIEW SERVER STATE TO [sa]"},
		{"permission 2022", "16.0.4215.2", &fakeCache{listError: denied}, 0, ErrPermission, "GRANT VIEW SERVER PERFORMANCE STATE TO [sa]"},
		{"timeout", "16.0.4215.2", &fakeCache{delay: 5 * time.Second}, 300 * time.Millisecond, ErrTimeout, "no complete answer within 300ms"},
		{"old server", "9.00.5000.00", &fakeCache{}, 0, ErrStatement, "SQL Server 2008 and later"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := queueServer(t, capturetest.Config{ProductVersion: tc.version, Statement: tc.fc.handler})
			s := openSession(t, srv, SessionOptions{QueryTimeout: tc.timeout})
			_, err := s.PlanCache(testContext(t), CacheOptions{Top: 5})
			var ce *Error
			if !errors.As(err, &ce) || ce.Kind != tc.kind || !strings.Contains(ce.Error(), tc.want) {
				t.Fatalf("err = %v, want kind %v containing %q", err, tc.kind, tc.want)
			}
		})
	}
	t.Run("wrong column type", func(t *testing.T) {
		srv := queueServer(t, capturetest.Config{Statement: func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
			rs := tdstest.NewResultSet(tdstest.Int("plan_handle"), tdstest.Int("statement_start_offset"), tdstest.Int("statement_end_offset")).Row(1, 0, -1)
			return tdstest.NewResponse().Result(rs)
		}})
		s := openSession(t, srv, SessionOptions{})
		_, err := s.PlanCache(testContext(t), CacheOptions{Top: 5})
		var ce *Error
		if !errors.As(err, &ce) || ce.Kind != ErrServer || !strings.Contains(ce.Message, "unexpected answer: column plan_handle: want text") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("top", func(t *testing.T) {
		srv := queueServer(t, capturetest.Config{})
		s := openSession(t, srv, SessionOptions{})
		for _, top := range []int{0, MaxTop + 1} {
			if _, err := s.PlanCache(testContext(t), CacheOptions{Top: top}); err == nil || !strings.Contains(err.Error(), "--top") {
				t.Errorf("--top %d: err = %v", top, err)
			}
		}
	})
}

func TestParseOrder(t *testing.T) {
	for i, n := range OrderNames {
		o, err := ParseOrder(strings.ToUpper(n))
		if err != nil || o != Order(i+1) || o.String() != n {
			t.Errorf("ParseOrder(%q) = %v, %v", n, o, err)
		}
	}
	if _, err := ParseOrder("io"); err == nil || !strings.Contains(err.Error(), "cpu, duration, reads, executions, grant") {
		t.Errorf("ParseOrder(io) = %v", err)
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in         string
		major, min int
		build      int
	}{{"16.0.4215.2", 16, 0, 4215}, {"10.50.2500.0", 10, 50, 2500}, {"9.00.5000.00", 9, 0, 5000}, {"", 0, 0, 0}, {"x.1", 0, 0, 0}}
	for _, tc := range tests {
		if v := parseVersion(tc.in); v != (version{tc.major, tc.min, tc.build}) {
			t.Errorf("parseVersion(%q) = %+v", tc.in, v)
		}
	}
}

// fuzzValue builds a driver value of a type chosen by b.
func fuzzValue(b byte, s string, n int64) any {
	switch b % 7 {
	case 0:
		return nil
	case 1:
		return s
	case 2:
		return n
	case 3:
		return float64(n) / 3
	case 4:
		return []byte(s)
	case 5:
		return n%2 == 0
	}
	return time.Unix(n%1e10, 0)
}

// FuzzDecodeRows: whatever types and values a server sends, decoding a
// list row returns a statement or an error, never panics.
func FuzzDecodeRows(f *testing.F) {
	f.Add([]byte{1, 1, 1, 2, 2, 2, 2, 2, 2}, "0x01", int64(5))
	f.Add([]byte{0, 0, 0, 0}, "", int64(-1))
	f.Add([]byte{4, 3, 6, 5, 1, 2}, "12.5", int64(1<<40))
	cacheCols := []string{"query_hash", "query_plan_hash", "plan_handle", "statement_start_offset", "statement_end_offset",
		"database_name", "statement_text", "execution_count", "total_worker_time", "max_worker_time", "total_elapsed_time",
		"max_elapsed_time", "total_logical_reads", "avg_rows", "min_rows", "max_rows", "max_grant_kb", "total_spills",
		"last_execution_time", "creation_time", "min_worker_time", "min_elapsed_time", "min_logical_reads", "max_logical_reads"}
	storeCols := []string{"query_id", "plan_id", "database_name", "statement_text", "is_forced_plan", "force_failure_count",
		"last_force_failure_reason_desc", "plan_type_desc", "parent_query_id", "executions", "cpu_us", "max_cpu_us",
		"duration_us", "max_duration_us", "logical_reads", "avg_rows", "min_rows", "max_rows", "max_used_memory_kb",
		"last_execution_time", "compiled", "plan_chars", "query_hash", "query_plan_hash", "min_cpu_us", "min_duration_us",
		"duration_sq_us", "min_logical_reads", "max_logical_reads", "logical_reads_sq"}
	f.Fuzz(func(t *testing.T, types []byte, s string, n int64) {
		for _, cols := range [][]string{cacheCols, storeCols} {
			r := namedRow{}
			for i, c := range cols {
				if i < len(types) {
					r[c] = fuzzValue(types[i], s, n+int64(i))
				}
			}
			var p *Pulled
			var err error
			if len(cols) == len(cacheCols) {
				p, err = decodeCacheRow(r)
			} else {
				p, err = decodeStoreRow(r)
			}
			if (p == nil) == (err == nil) {
				t.Fatalf("decode returned %v and %v", p, err)
			}
			if p != nil && p.Name == "" {
				t.Fatal("a decoded statement has no name")
			}
		}
	})
}

// FuzzParsePlan: any plan text a server sends yields a document or a plan
// error, never a panic.
func FuzzParsePlan(f *testing.F) {
	f.Add(capturetest.Fixture(f, "queue/literal.sqlplan"), int64(0))
	f.Add(utf16Plan(f), int64(0))
	f.Add("\uFEFF<ShowPlanXML", int64(10))
	f.Add("", int64(1))
	f.Fuzz(func(t *testing.T, text string, limit int64) {
		p := &Pulled{}
		parsePlan(p, text, plan.Options{MaxBytes: limit % (1 << 20)})
		if (p.Doc == nil) == (p.Err == nil) {
			t.Fatalf("doc %v err %v", p.Doc != nil, p.Err)
		}
	})
}

// BenchmarkPlanCachePull: one pull of 20 statements with their plans
// through the fake server, after login.
func BenchmarkPlanCachePull(b *testing.B) {
	param := capturetest.Fixture(b, "queue/param.sqlplan")
	var stmts []cachedStatement
	for i := range 20 {
		stmts = append(stmts, cachedStatement{queryHash: fmt.Sprintf("0x%016X", i), planHash: "0x01", handle: fmt.Sprintf("0x%04X", i),
			end: -1, db: "WorkDb", text: "SELECT 1", exec: 1, cpu: int64(i), last: lastRun, plan: &param})
	}
	fc := &fakeCache{stmts: stmts}
	srv := capturetest.Start(b, capturetest.Config{Catalog: capturetest.QueueCatalog(b), Statement: fc.handler})
	s, err := Open(b.Context(), Options{ConnectionString: srv.DSN(url.Values{"encrypt": {"disable"}})}, SessionOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.PlanCache(b.Context(), CacheOptions{Top: 20}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPlanCacheOtherPlans: the other cached plans of the listed queries
// (same query_hash and database) are pulled too, marked Sibling, at most
// --top of them, most executed first; a listed statement is not pulled
// twice, and a plan of the same query in another database is another
// query.
func TestPlanCacheOtherPlans(t *testing.T) {
	stmts := queueCache(t)
	costly := stmts[0]
	cheap := stmts[0]
	cheap.planHash, cheap.handle, cheap.exec, cheap.cpu, cheap.reads = "0x0B1C2D3E4F506172", "0x06000500AB", 300, 30_000, 1200
	rare := cheap
	rare.planHash, rare.handle, rare.exec = "0x0C1C2D3E4F506173", "0x06000500AC", 2
	elsewhere := cheap
	elsewhere.handle, elsewhere.db = "0x06000500AD", "WorkDb_backlog"
	zero := stmts[2]
	zero.queryHash = "0x0000000000000000"
	zeroOther := zero
	zeroOther.handle = "0x06000500CD"
	for _, tc := range []struct {
		name  string
		stmts []cachedStatement
		top   int
		want  []string // handles, listed first; * marks a sibling
		asked bool
	}{
		{"cheap plan outside the top", []cachedStatement{costly, cheap, rare}, 1, []string{"0x06000500AA", "0x06000500AB*"}, true},
		{"at most --top others", []cachedStatement{costly, stmts[1], rare, cheap}, 2, []string{"0x06000500BB", "0x06000500AA", "0x06000500AB*", "0x06000500AC*"}, true},
		{"already listed", []cachedStatement{costly, cheap}, 2, []string{"0x06000500AA", "0x06000500AB"}, true},
		{"another database", []cachedStatement{costly, elsewhere}, 1, []string{"0x06000500AA"}, true},
		{"no query hash", []cachedStatement{zero, zeroOther}, 1, []string{"0x06000500CC"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := &fakeCache{stmts: tc.stmts}
			srv, s := startCache(t, "16.0.4215.2", fc.handler, nil)
			pull, err := s.PlanCache(testContext(t), CacheOptions{Top: tc.top, OrderBy: OrderCPU})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pull.Statements {
				h := p.Cache.PlanHandle
				if p.Sibling {
					h += "*"
					if p.Doc == nil {
						t.Errorf("%s: the other plan was not read: %v", p.Name, p.Err)
					}
				}
				got = append(got, h)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("pulled %v, want %v", got, tc.want)
			}
			asked := false
			for _, r := range capturetest.Requests(srv, 0) {
				asked = asked || strings.Contains(r.SQL, cacheOtherMarker)
			}
			if asked != tc.asked {
				t.Errorf("other plans asked: %v, want %v", asked, tc.asked)
			}
		})
	}
}

package capture

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
	"github.com/planlint/planlint/plan"
)

// storedPlan is one plan of the fake Query Store with its runtime
// statistics over the requested period (exec 0: not executed in it).
type storedPlan struct {
	queryID, planID, parent int64
	planType                string
	forced                  bool
	failure                 string
	failures                int64
	text                    string
	exec                    int64
	cpu, dur, reads         float64 // totals
	usedKB                  int64
	last                    time.Time
	plan                    *string // nil: query_plan is NULL
	chars                   int64   // plan length to report instead of the text's
}

// fakeStore answers Query Store requests. Without variants it is a server
// before SQL Server 2022: naming plan_type_desc or
// sys.query_store_query_variant fails as SQL Server does.
type fakeStore struct {
	actual, desired string
	readonlyReason  int64
	noStateRow      bool
	stateError      *tdstest.Message
	plans           []storedPlan
	noVariants      bool
}

var storeOrder = regexp.MustCompile(`ORDER BY s\.(\w+) DESC`)

func (fs *fakeStore) handler(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
	switch {
	case strings.Contains(r.SQL, storeStateMarker):
		if fs.stateError != nil {
			return tdstest.ErrorResponse(*fs.stateError)
		}
		rs := tdstest.NewResultSet(tdstest.Int("actual_state"), tdstest.NVarChar("actual_state_desc", 60),
			tdstest.NVarChar("desired_state_desc", 60), tdstest.Int("readonly_reason"))
		if !fs.noStateRow {
			codes := map[string]int{"OFF": 0, "READ_ONLY": 1, "READ_WRITE": 2, "ERROR": 3}
			rs.Row(codes[fs.actual], fs.actual, fs.desired, fs.readonlyReason)
		}
		return tdstest.NewResponse().Result(rs)
	case strings.Contains(r.SQL, storeListMarker) || strings.Contains(r.SQL, storeOtherMarker):
		if fs.noVariants {
			if strings.Contains(r.SQL, "plan_type_desc") && !strings.Contains(r.SQL, "CAST(NULL AS nvarchar(60)) AS plan_type_desc") {
				return tdstest.ErrorResponse(tdstest.Message{Number: 207, State: 1, Class: 16, Line: 1, Text: "Invalid column name 'plan_type_desc'."})
			}
			if strings.Contains(r.SQL, "query_store_query_variant") {
				return tdstest.ErrorResponse(tdstest.ErrInvalidObject("sys.query_store_query_variant"))
			}
		}
		return fs.list(r)
	case strings.Contains(r.SQL, storePlanMarker):
		id, _ := param(r, "@plan_id").(int64)
		limit, _ := param(r, "@max_chars").(int64)
		rs := tdstest.NewResultSet(tdstest.NVarCharMax("query_plan"), tdstest.BigInt("plan_chars"))
		for _, p := range fs.plans {
			if p.planID != id {
				continue
			}
			switch n := int64(len(utf16Units(deref(p.plan)))); {
			case p.plan == nil:
				rs.Row(nil, nil)
			case n > limit:
				rs.Row(nil, n)
			default:
				rs.Row(*p.plan, n)
			}
		}
		return tdstest.NewResponse().Result(rs)
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (fs *fakeStore) list(r *tdstest.Request) *tdstest.Response {
	top, _ := param(r, "@top").(int64)
	like, _ := param(r, "@like").(string)
	queryID, _ := param(r, "@query_id").(int64)
	byQuery := strings.Contains(r.SQL, "AND (q.query_id = @query_id") || strings.Contains(r.SQL, "AND q.query_id = @query_id")
	withVariants := strings.Contains(r.SQL, "v.parent_query_id = @query_id")
	ids, other := param(r, "@query_ids").(string)
	in := func(id int64) bool { return strings.Contains(ids, fmt.Sprintf(",%d,", id)) }
	var keep []storedPlan
	for _, p := range fs.plans {
		switch {
		case other && !in(p.queryID) && !(strings.Contains(r.SQL, "v.parent_query_id AS nvarchar") && in(p.parent)):
		case like != "" && !likeMatch(like, p.text):
		case byQuery && p.queryID != queryID && !(withVariants && p.parent == queryID):
		case !byQuery && p.exec == 0:
		default:
			keep = append(keep, p)
		}
	}
	col := storeOrder.FindStringSubmatch(r.SQL)[1]
	key := func(p storedPlan) float64 {
		switch col {
		case "duration_us":
			return p.dur
		case "logical_reads":
			return p.reads
		case "executions":
			return float64(p.exec)
		case "max_used_memory_kb":
			return float64(p.usedKB)
		}
		return p.cpu
	}
	for i := 1; i < len(keep); i++ {
		for j := i; j > 0 && key(keep[j]) > key(keep[j-1]); j-- {
			keep[j], keep[j-1] = keep[j-1], keep[j]
		}
	}
	if int64(len(keep)) > top {
		keep = keep[:top]
	}
	rs := tdstest.NewResultSet(tdstest.BigInt("query_id"), tdstest.BigInt("plan_id"), tdstest.NVarChar("database_name", 128),
		tdstest.NVarCharMax("statement_text"), tdstest.NVarChar("query_hash", 18), tdstest.NVarChar("query_plan_hash", 18),
		tdstest.Bit("is_forced_plan"), tdstest.BigInt("force_failure_count"), tdstest.NVarChar("last_force_failure_reason_desc", 128),
		tdstest.NVarChar("plan_type_desc", 60), tdstest.BigInt("parent_query_id"), tdstest.BigInt("executions"),
		tdstest.Float("cpu_us"), tdstest.Float("max_cpu_us"), tdstest.Float("duration_us"), tdstest.Float("max_duration_us"),
		tdstest.Float("logical_reads"), tdstest.Float("avg_rows"), tdstest.BigInt("min_rows"), tdstest.BigInt("max_rows"),
		tdstest.BigInt("max_used_memory_kb"), tdstest.DateTime2("last_execution_time", 3), tdstest.DateTime2("compiled", 3),
		tdstest.BigInt("plan_chars"), tdstest.Float("min_duration_us"), tdstest.Float("min_logical_reads"),
		tdstest.Float("max_logical_reads"), tdstest.Float("duration_sq_us"), tdstest.Float("logical_reads_sq"))
	for _, p := range keep {
		var planType, parent any
		if !fs.noVariants {
			planType = p.planType
			if p.parent != 0 {
				parent = p.parent
			}
		}
		failure := "NONE"
		if p.failure != "" {
			failure = p.failure
		}
		var chars any
		if p.plan != nil {
			chars = int64(len(utf16Units(*p.plan)))
		}
		if p.chars != 0 {
			chars = p.chars
		}
		stats := []any{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
		if p.exec > 0 {
			stats = []any{p.exec, p.cpu, p.cpu / float64(p.exec) * 2, p.dur, p.dur / float64(p.exec) * 2, p.reads, 20.0,
				int64(0), int64(20), p.usedKB, p.last}
		}
		row := append([]any{p.queryID, p.planID, "WorkDb", p.text, "0x5C3B9E8D7A6F1402", "0xA47E21C95D3B8F60", p.forced,
			p.failures, failure, planType, parent}, stats...)
		spread := []any{nil, nil, nil, nil, nil}
		if p.exec > 0 {
			// every execution's duration is the average or three times
			// it, half each: a standard deviation of the average.
			avg := p.dur / float64(p.exec)
			spread = []any{avg, p.reads / float64(p.exec), p.reads / float64(p.exec) * 3, float64(p.exec) * 5 * avg * avg,
				float64(p.exec) * p.reads / float64(p.exec) * p.reads / float64(p.exec)}
		}
		rs.Row(append(append(row, lastRun.Add(-24*time.Hour), chars), spread...)...)
	}
	return tdstest.NewResponse().Result(rs)
}

func queueStore(t testing.TB) []storedPlan {
	param := capturetest.Fixture(t, "queue/param.sqlplan")
	literal := capturetest.Fixture(t, "queue/literal.sqlplan")
	u16 := utf16Plan(t)
	poll := "SELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE Status = @Status ORDER BY CreatedAt, WorkId"
	return []storedPlan{
		{queryID: 42, planID: 7, planType: "Compiled Plan", forced: true, failure: "NO_INDEX", failures: 2, text: poll,
			exec: 1204, cpu: 3_412_000, dur: 5_100_000, reads: 12_345_678, usedKB: 512, last: lastRun, plan: &param},
		{queryID: 42, planID: 8, planType: "Compiled Plan", text: poll, exec: 30, cpu: 9_000_000, dur: 9_100_000, reads: 600,
			usedKB: 0, last: lastRun, plan: &literal},
		{queryID: 50, planID: 9, planType: "Dispatcher Plan", text: "SELECT * FROM dbo.Work WHERE CustomerId = @c", exec: 10,
			cpu: 1000, dur: 1200, reads: 50, last: lastRun, plan: &literal},
		{queryID: 51, planID: 10, parent: 50, planType: "Query Variant Plan", text: "SELECT * FROM dbo.Work WHERE CustomerId = @c option (PLAN PER VALUE(...))",
			exec: 9, cpu: 900, dur: 950, reads: 45, last: lastRun, plan: &u16},
		{queryID: 60, planID: 11, planType: "Compiled Plan", text: "DELETE dbo.Work WHERE Status = 1", exec: 2, cpu: 500, dur: 600, reads: 9, last: lastRun},
		{queryID: 61, planID: 12, planType: "Compiled Plan", text: "SELECT huge", exec: 1, cpu: 400, dur: 400, reads: 1, last: lastRun,
			plan: &literal, chars: 1 << 40},
		{queryID: 42, planID: 13, planType: "Compiled Plan", text: poll, exec: 0, plan: &param},
	}
}

func startStore(t *testing.T, version string, fs *fakeStore) (*tdstest.Server, *Session) {
	t.Helper()
	return startCache(t, version, fs.handler, nil)
}

func storeRequests(srv *tdstest.Server, marker string) []tdstest.Request {
	var out []tdstest.Request
	for _, r := range capturetest.Requests(srv, 0) {
		if strings.Contains(r.SQL, marker) {
			out = append(out, r)
		}
	}
	return out
}

// TestQueryStorePull: the top plans over --since in CPU order, with forcing,
// PSP types, a NULL plan and an oversized one (neither transferred) and a
// plan with a utf-16 declaration; every request is a parameterized RPC.
func TestQueryStorePull(t *testing.T) {
	fs := &fakeStore{actual: "READ_WRITE", desired: "READ_WRITE", plans: queueStore(t)}
	srv, s := startStore(t, "16.0.4215.2", fs)
	var progress int
	pull, err := s.QueryStore(testContext(t), StoreOptions{Top: 10, Since: 2 * time.Hour, Limits: plan.Options{MaxBytes: 1 << 30},
		Progress: func(n, total int) { progress = n }})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pull.Statements {
		names = append(names, p.Name)
	}
	want := "querystore:query 42 plan 8,querystore:query 42 plan 7,querystore:query 50 plan 9,querystore:query 51 plan 10,querystore:query 60 plan 11,querystore:query 61 plan 12"
	if strings.Join(names, ",") != want {
		t.Fatalf("plans %s\nwant  %s", strings.Join(names, ","), want)
	}
	if progress != 6 || len(pull.Notes) != 0 {
		t.Errorf("progress %d, notes %q", progress, pull.Notes)
	}
	forced := pull.Statements[1]
	if st := forced.Store; !st.Forced || st.LastForceFailure != "NO_INDEX" || st.ForceFailureCount != 2 || st.QueryID != 42 || st.PlanID != 7 {
		t.Errorf("forced plan: %+v", st)
	}
	if rt := forced.Runtime; rt.Executions != 1204 || rt.CPUMicros != 3_412_000 || *rt.MaxUsedMemoryKB != 512 || rt.MaxGrantKB != nil ||
		rt.SpilledPages != nil || !rt.LastExecution.Equal(lastRun) || forced.Doc == nil {
		t.Errorf("forced plan runtime %+v, doc %v", rt, forced.Doc != nil)
	}
	// sum of squares 5·n·avg² over n executions: variance 5avg² − avg² = 4avg², a standard deviation of twice the average
	if rt := forced.Runtime; rt.StdevDurationMicros == nil || math.Abs(*rt.StdevDurationMicros-2*5_100_000/1204.0) > 1e-6 ||
		rt.StdevLogicalReads == nil || math.Abs(*rt.StdevLogicalReads) > 1e-6 || *rt.MinDurationMicros != 5_100_000/1204.0 ||
		math.Abs(*rt.MaxLogicalReads-3*12_345_678/1204.0) > 1e-6 {
		t.Errorf("spread figures: %+v", rt)
	}
	if st := forced.Store; st.QueryHash != "0x5C3B9E8D7A6F1402" || st.QueryPlanHash != "0xA47E21C95D3B8F60" {
		t.Errorf("hashes %+v", st)
	}
	if st := pull.Statements[0].Store; st.LastForceFailure != "" {
		t.Errorf("NONE must read as no failure, got %q", st.LastForceFailure)
	}
	variant := pull.Statements[3]
	if variant.Store.PlanType != "Query Variant Plan" || variant.Store.ParentQueryID != 50 || variant.Doc == nil {
		t.Errorf("variant %+v, err %v", variant.Store, variant.Err)
	}
	if e := pull.Statements[4].Err; e == nil || e.Problem != PlanMissing || !strings.Contains(e.Message, "query_plan is NULL") {
		t.Errorf("NULL plan: %v", e)
	}
	if e := pull.Statements[5].Err; e == nil || e.Problem != PlanTooLarge {
		t.Errorf("oversized plan: %v", e)
	}
	lists := storeRequests(srv, storeListMarker)
	if len(lists) != 1 || lists[0].Kind != tdstest.KindRPC || lists[0].ParamDecl != storeListParams {
		t.Fatalf("list requests %+v", lists)
	}
	for _, col := range []string{"MIN(rs.min_duration) AS min_duration_us", "MAX(rs.max_logical_io_reads) AS max_logical_reads",
		"SUM(rs.count_executions * (SQUARE(rs.stdev_duration) + SQUARE(rs.avg_duration))) AS duration_sq_us",
		"SUM(rs.count_executions * (SQUARE(rs.stdev_logical_io_reads) + SQUARE(rs.avg_logical_io_reads))) AS logical_reads_sq"} {
		if !strings.Contains(lists[0].SQL, col) {
			t.Errorf("the list does not read %s", col)
		}
	}
	if v := param(&lists[0], "@since_seconds"); v != int64(7200) {
		t.Errorf("@since_seconds = %v", v)
	}
	fetched := map[int64]bool{}
	for _, r := range storeRequests(srv, storePlanMarker) {
		id, _ := param(&r, "@plan_id").(int64)
		fetched[id] = true
	}
	if len(fetched) != 4 || fetched[11] || fetched[12] {
		t.Errorf("plans fetched %v: the NULL and oversized plans must not be", fetched)
	}
	if st := storeRequests(srv, storeStateMarker); len(st) != 1 || st[0].Kind != tdstest.KindRPC {
		t.Errorf("state requests %+v", st)
	}
}

// TestQueryStoreByQuery: --query-id lists every plan of the query and of
// its variants, executed in the period or not, most executed first.
func TestQueryStoreByQuery(t *testing.T) {
	for _, tc := range []struct {
		version  string
		query    int64
		want     string
		variants bool
	}{
		{"16.0.4215.2", 42, "7 8 13", true},
		{"16.0.4215.2", 50, "9 10", true},
		{"15.0.4153.1", 50, "9", false},
	} {
		t.Run(fmt.Sprintf("%s query %d", tc.version, tc.query), func(t *testing.T) {
			fs := &fakeStore{actual: "READ_WRITE", plans: queueStore(t), noVariants: !tc.variants}
			srv, s := startStore(t, tc.version, fs)
			pull, err := s.QueryStore(testContext(t), StoreOptions{QueryID: tc.query, Since: time.Hour, OrderBy: OrderReads})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, p := range pull.Statements {
				ids = append(ids, fmt.Sprint(p.Store.PlanID))
			}
			if strings.Join(ids, " ") != tc.want {
				t.Errorf("plans %v, want %s", ids, tc.want)
			}
			r := storeRequests(srv, storeListMarker)[0]
			if v := param(&r, "@query_id"); v != tc.query {
				t.Errorf("@query_id = %v", v)
			}
			if !strings.Contains(r.SQL, "LEFT JOIN (SELECT rs.plan_id") || !strings.Contains(r.SQL, "ORDER BY s.executions DESC") {
				t.Errorf("by query, plans without executions must be listed, most executed first:\n%s", r.SQL)
			}
		})
	}
}

// TestQueryStoreShapes: before SQL Server 2022 the list names neither
// plan_type_desc nor the variant view, and the PSP fields stay empty.
func TestQueryStoreShapes(t *testing.T) {
	for _, version := range []string{"13.0.5026.0", "14.0.3015.40", "15.0.4153.1"} {
		t.Run(version, func(t *testing.T) {
			fs := &fakeStore{actual: "READ_WRITE", plans: queueStore(t), noVariants: true}
			_, s := startStore(t, version, fs)
			pull, err := s.QueryStore(testContext(t), StoreOptions{Top: 3, Since: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pull.Statements {
				if p.Store.PlanType != "" || p.Store.ParentQueryID != 0 {
					t.Errorf("%s: %+v", p.Name, p.Store)
				}
			}
		})
	}
}

// TestQueryStoreState: Query Store OFF is an error naming the database and
// the way out; READ_ONLY and ERROR are read with a note.
func TestQueryStoreState(t *testing.T) {
	tests := []struct {
		name    string
		fs      fakeStore
		wantErr string
		note    string
	}{
		{"off", fakeStore{actual: "OFF", desired: "OFF"}, "Query Store is OFF in database WorkDb", ""},
		{"no row", fakeStore{noStateRow: true}, "Query Store is OFF in database WorkDb", ""},
		{"read only", fakeStore{actual: "READ_ONLY", desired: "READ_WRITE", readonlyReason: 65536}, "", "READ_ONLY (desired READ_WRITE, readonly_reason 65536)"},
		{"error", fakeStore{actual: "ERROR", desired: "READ_WRITE"}, "", "is ERROR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := tc.fs
			fs.plans = queueStore(t)
			srv, s := startStore(t, "16.0.4215.2", &fs)
			pull, err := s.QueryStore(testContext(t), StoreOptions{Top: 1, Since: time.Hour})
			if tc.wantErr != "" {
				var ce *Error
				if !errors.As(err, &ce) || ce.Kind != ErrStatement || !strings.Contains(ce.Message, tc.wantErr) ||
					!strings.Contains(ce.Hint, "ALTER DATABASE [WorkDb] SET QUERY_STORE = ON") {
					t.Fatalf("err = %v", err)
				}
				if n := len(storeRequests(srv, storeListMarker)); n != 0 {
					t.Errorf("%d list requests sent after finding Query Store off", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(pull.Notes) != 1 || !strings.Contains(pull.Notes[0], tc.note) {
				t.Errorf("notes = %q", pull.Notes)
			}
		})
	}
}

// TestQueryStoreErrors: old servers, permissions and option bounds.
func TestQueryStoreErrors(t *testing.T) {
	denied := &tdstest.Message{Number: 300, State: 1, Class: 14, Line: 1,
		Text: "VIEW DATABASE STATE permission was denied on object 'WorkDb', database 'WorkDb'."}
	tests := []struct {
		name    string
		version string
		fs      *fakeStore
		o       StoreOptions
		kind    ErrorKind
		want    string
	}{
		{"2014", "12.0.6024.0", &fakeStore{}, StoreOptions{Top: 1, Since: time.Hour}, ErrStatement, "from SQL Server 2016 on"},
		{"permission", "15.0.4153.1", &fakeStore{stateError: denied}, StoreOptions{Top: 1, Since: time.Hour}, ErrPermission, "GRANT VIEW DATABASE STATE TO [sa]"},
		{"permission 2022", "16.0.4215.2", &fakeStore{stateError: denied}, StoreOptions{Top: 1, Since: time.Hour}, ErrPermission, "GRANT VIEW DATABASE PERFORMANCE STATE TO [sa]"},
		{"since", "16.0.4215.2", &fakeStore{}, StoreOptions{Top: 1, Since: MaxSince + time.Hour}, ErrStatement, "--since"},
		{"since zero", "16.0.4215.2", &fakeStore{}, StoreOptions{Top: 1}, ErrStatement, "--since"},
		{"query id", "16.0.4215.2", &fakeStore{}, StoreOptions{QueryID: -3, Since: time.Hour}, ErrStatement, "--query-id -3"},
		{"top", "16.0.4215.2", &fakeStore{}, StoreOptions{Top: 0, Since: time.Hour}, ErrStatement, "--top 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, s := startStore(t, tc.version, tc.fs)
			_, err := s.QueryStore(testContext(t), tc.o)
			var ce *Error
			if !errors.As(err, &ce) || ce.Kind != tc.kind || !strings.Contains(ce.Error(), tc.want) {
				t.Fatalf("err = %v, want kind %v containing %q", err, tc.kind, tc.want)
			}
			if tc.kind == ErrStatement && len(storeRequests(srv, storeStateMarker)) > 0 && tc.name != "2014" {
				t.Error("invalid options must be refused before any request")
			}
		})
	}
}

// TestPooledStdev: the standard deviation over every execution follows
// from each interval's count, average and standard deviation.
func TestPooledStdev(t *testing.T) {
	type interval struct{ n, avg, stdev float64 }
	for _, tc := range []struct {
		name      string
		intervals []interval
		want      float64 // population standard deviation of the executions
		none      bool
	}{
		// {1, 2, 3}: average 2, standard deviation √(2/3)
		{name: "one interval", intervals: []interval{{3, 2, math.Sqrt(2.0 / 3)}}, want: math.Sqrt(2.0 / 3)},
		// {1, 2, 3} and {10, 20}: {1, 2, 3, 10, 20} has average 7.2 and variance 50.96
		{name: "two intervals", intervals: []interval{{3, 2, math.Sqrt(2.0 / 3)}, {2, 15, 5}}, want: math.Sqrt(50.96)},
		{name: "all alike", intervals: []interval{{1e6, 0.1, 0}, {3, 0.1, 0}}, want: 0},
		{name: "no executions", intervals: nil, none: true},
		{name: "a total that is not a number", intervals: []interval{{2, 1, 0}}, none: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sq, total float64
			var n int64
			for _, iv := range tc.intervals {
				sq += iv.n * (iv.stdev*iv.stdev + iv.avg*iv.avg)
				total += iv.n * iv.avg
				n += int64(iv.n)
			}
			if tc.name == "a total that is not a number" {
				total = math.NaN() // a server's decimal sent as the text NaN
			}
			got := pooledStdev(sq, total, n)
			switch {
			case tc.none && got != nil:
				t.Errorf("got %v, want none", *got)
			case !tc.none && (got == nil || math.Abs(*got-tc.want) > 1e-9):
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestQueryStoreOtherPlans: the other plans of the ranked plans' queries
// that ran within --since are pulled too, marked Sibling; a variant brings
// its parent query's plans, whatever their text; --query-id reads them all
// already and asks for nothing more.
func TestQueryStoreOtherPlans(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    StoreOptions
		want string
	}{
		{"cheap plan outside the top", StoreOptions{Top: 1}, "8 7*"},
		{"variant brings its parent's plans", StoreOptions{Top: 1, Like: "PLAN PER VALUE"}, "10 9*"},
		{"all listed", StoreOptions{Top: 10}, "8 7 9 10 11 12"},
		{"by query", StoreOptions{QueryID: 42}, "7 8 13"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := &fakeStore{actual: "READ_WRITE", desired: "READ_WRITE", plans: queueStore(t)}
			srv, s := startStore(t, "16.0.4215.2", fs)
			tc.o.Since = 2 * time.Hour
			pull, err := s.QueryStore(testContext(t), tc.o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pull.Statements {
				id := fmt.Sprint(p.Store.PlanID)
				if p.Sibling {
					id += "*"
				}
				got = append(got, id)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("pulled %v, want %s", got, tc.want)
			}
			others := storeRequests(srv, storeOtherMarker)
			if tc.o.QueryID != 0 {
				if len(others) != 0 {
					t.Errorf("--query-id asked for other plans: %d requests", len(others))
				}
				return
			}
			if len(others) != 1 || others[0].ParamDecl != storeOtherParams || param(&others[0], "@like") != "" {
				t.Fatalf("other plans requests %+v", others)
			}
		})
	}
}

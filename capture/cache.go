package capture

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/planlint/planlint/plan"
)

// Order is the figure statements are ranked by, highest first.
type Order int

// Orders.
const (
	OrderCPU        Order = iota + 1 // total CPU (worker) time
	OrderDuration                    // total elapsed time
	OrderReads                       // total logical reads
	OrderExecutions                  // number of executions
	OrderGrant                       // largest memory grant (Query Store: largest memory used)
)

// OrderNames are the names ParseOrder accepts, in Order order.
var OrderNames = []string{"cpu", "duration", "reads", "executions", "grant"}

// ParseOrder reads an --order-by value.
func ParseOrder(s string) (Order, error) {
	for i, n := range OrderNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return Order(i + 1), nil
		}
	}
	return 0, fmt.Errorf("--order-by %q: want one of %s", s, strings.Join(OrderNames, ", "))
}

func (o Order) String() string {
	if o >= OrderCPU && int(o) <= len(OrderNames) {
		return OrderNames[o-1]
	}
	return fmt.Sprintf("Order(%d)", int(o))
}

// Runtime are the statistics the server keeps for a statement (plan cache)
// or a plan (Query Store). Times are in microseconds, as the server keeps
// them. A nil field is one the server version does not keep.
type Runtime struct {
	Executions        int64
	CPUMicros         float64 // total CPU (worker) time
	MinCPUMicros      *float64
	MaxCPUMicros      *float64
	DurationMicros    float64 // total elapsed time
	MinDurationMicros *float64
	MaxDurationMicros *float64
	LogicalReads      float64 // total logical reads (8 KB pages)
	// MinLogicalReads and MaxLogicalReads are the fewest and most pages
	// one execution read.
	MinLogicalReads, MaxLogicalReads *float64
	// StdevDurationMicros and StdevLogicalReads are the standard
	// deviations per execution (Query Store: pooled over the intervals
	// from each interval's stdev, average and count).
	StdevDurationMicros, StdevLogicalReads *float64
	AvgRows                                *float64
	MinRows, MaxRows                       *int64
	// SpilledPages is the total of pages spilled to tempdb (plan cache,
	// SQL Server 2016 SP2 and 2017 CU3 on).
	SpilledPages *int64
	// MaxGrantKB is the largest memory grant of one execution (plan
	// cache, SQL Server 2016 on).
	MaxGrantKB *int64
	// MaxUsedMemoryKB is the largest memory one execution used (Query
	// Store, which keeps no grant).
	MaxUsedMemoryKB *int64
	// LastExecution and Compiled are in UTC; zero when unknown.
	LastExecution time.Time
	Compiled      time.Time
}

// CacheEntry identifies a statement in the plan cache.
type CacheEntry struct {
	QueryHash, QueryPlanHash string // 0x… hexadecimal
	PlanHandle               string // 0x…, for sys.dm_exec_* functions and DBCC FREEPROCCACHE
	StatementStart           int    // byte offsets into the batch text; -1: end of batch
	StatementEnd             int
}

// StorePlan identifies a plan in Query Store.
type StorePlan struct {
	QueryID, PlanID int64
	// QueryHash and QueryPlanHash are 0x… hexadecimal.
	QueryHash, QueryPlanHash string
	Forced                   bool
	// PlanType is "Compiled Plan", "Dispatcher Plan" or "Query Variant
	// Plan" (SQL Server 2022 on; empty before).
	PlanType string
	// ParentQueryID is the query a Parameter Sensitive Plan variant
	// belongs to, 0 for other queries.
	ParentQueryID     int64
	LastForceFailure  string // last_force_failure_reason_desc; "NONE" is cleared
	ForceFailureCount int64
}

// Pulled is one statement read from the plan cache or Query Store with its
// plan. Doc is nil exactly when Err is set.
type Pulled struct {
	// Name is path-like: "cache:0x… plan 0x…" or "querystore:query 42
	// plan 7".
	Name     string
	Database string
	Text     string
	Runtime  Runtime
	Cache    *CacheEntry // plan cache statements
	Store    *StorePlan  // Query Store plans
	XML      string
	Doc      *plan.Document
	Err      *PlanError
	// Note says what a reader should know about this statement's analysis
	// (tables without catalog facts).
	Note string
	// Sibling: the statement was not in the ranked list but is another
	// plan of a query that is (plan cache: the same query_hash and
	// database; Query Store: the same query_id or parent query), pulled so
	// that the plans of one query can be compared.
	Sibling bool

	chars int64 // plan length in characters, when the list tells it
}

// PlanProblem says why a pulled statement has no analysable plan.
type PlanProblem int

// Plan problems.
const (
	// PlanMissing: the server has no plan text (evicted or recompiled
	// since the statistics were read, not cacheable, or NULL in Query
	// Store).
	PlanMissing PlanProblem = iota + 1
	// PlanTooLarge: the plan exceeds --max-file-size or --max-depth.
	PlanTooLarge
	// PlanInvalid: the plan text does not parse as showplan XML.
	PlanInvalid
)

func (p PlanProblem) String() string {
	switch p {
	case PlanMissing:
		return "no plan"
	case PlanTooLarge:
		return "plan too large"
	case PlanInvalid:
		return "invalid plan"
	}
	return fmt.Sprintf("PlanProblem(%d)", int(p))
}

// PlanError says why a pulled statement has no plan document.
type PlanError struct {
	Problem PlanProblem
	Message string
	Err     error
}

func (e *PlanError) Error() string { return e.Problem.String() + ": " + e.Message }

func (e *PlanError) Unwrap() error { return e.Err }

// Pull is the result of a plan cache or Query Store pull.
type Pull struct {
	Statements []*Pulled
	// Notes are about the pull as a whole (Query Store state, figures the
	// server version does not keep).
	Notes []string
	// OtherTables are tables whose catalog facts were not read: temporary
	// tables and tables of other databases than the session's.
	OtherTables []TableName
}

// CacheOptions choose the plan cache statements to pull.
type CacheOptions struct {
	Top     int // 1 or more
	OrderBy Order
	// Database keeps only statements compiled in that database; "" keeps
	// every database.
	Database string
	// Like keeps only statements whose text matches this LIKE pattern;
	// see LikePattern.
	Like string
	// Limits bound each plan: a plan longer than Limits.MaxBytes
	// characters is not even transferred.
	Limits plan.Options
	// Progress, when set, is called before each statement's plan is read.
	Progress func(n, total int)
}

// Markers name the statements of a pull in traces. They sit inside the
// statement, where Query Store's statement text keeps them.
const (
	cacheListMarker  = "/* planlint: plan cache statements */"
	cacheOtherMarker = "/* planlint: other cached plans of the listed queries */"
	cachePlanMarker  = "/* planlint: cached plan */"
	storeStateMarker = "/* planlint: query store state */"
	storeListMarker  = "/* planlint: query store plans */"
	storeOtherMarker = "/* planlint: other query store plans of the listed queries */"
	storePlanMarker  = "/* planlint: query store plan */"
)

// notOwn is the condition that leaves planlint's own statements out of a
// pull: the batches capture sends start with a "-- planlint: " comment,
// the pulls carry a "/* planlint: " marker, and the catalog batch's
// statements name its table variable.
func notOwn(col string) string {
	return col + " NOT LIKE N'%-- planlint: %' AND " + col + " NOT LIKE N'%/* planlint: %' AND " +
		col + " NOT LIKE N'%@planlint[_]tables%'"
}

// MaxTop bounds --top: each statement costs one round trip.
const MaxTop = 10000

// LikePattern turns a --like value into the LIKE pattern sent: it is
// wrapped in % (a substring search) unless it starts or ends with % itself.
// _ and [ ] keep their LIKE meaning.
func LikePattern(s string) string {
	if s == "" || strings.HasPrefix(s, "%") || strings.HasSuffix(s, "%") {
		return s
	}
	return "%" + s + "%"
}

// version is a parsed ProductVersion.
type version struct{ major, minor, build int }

func parseVersion(s string) version {
	var v version
	parts := strings.SplitN(s, ".", 4)
	nums := []*int{&v.major, &v.minor, &v.build}
	for i := 0; i < len(parts) && i < 3; i++ {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			break
		}
		*nums[i] = n
	}
	return v
}

// atLeast reports whether v is major.minor.build or later.
func (v version) atLeast(major, minor, build int) bool {
	if v.major != major {
		return v.major > major
	}
	if v.minor != minor {
		return v.minor > minor
	}
	return v.build >= build
}

// cloud reports an Azure SQL Database (engine edition 5) or Managed
// Instance (8): they report an old version number but have every column.
func (i ServerInfo) cloud() bool { return i.EngineEdition == 5 || i.EngineEdition == 8 }

// hasStatsProperties reports whether sys.dm_db_stats_properties exists:
// SQL Server 2012 SP1 (and 2008 R2 SP2, which planlint does not single out)
// and later, and the cloud editions.
func (i ServerInfo) hasStatsProperties() bool {
	return i.cloud() || parseVersion(i.ProductVersion).atLeast(11, 0, 3000)
}

// cacheShape says which optional sys.dm_exec_query_stats columns the
// server has.
type cacheShape struct {
	rows   bool // total_rows, min_rows, max_rows: 2008 R2 SP1 (10.50.2500) on
	grant  bool // max_grant_kb: 2012 SP3 (11.0.6020), 2014 SP2 (12.0.5000), 2016 on
	spills bool // total_spills: 2016 SP2 (13.0.5026), 2017 CU3 (14.0.3015) on
}

func cacheShapeFor(info ServerInfo) cacheShape {
	if info.cloud() {
		return cacheShape{rows: true, grant: true, spills: true}
	}
	v := parseVersion(info.ProductVersion)
	return cacheShape{
		rows: v.atLeast(10, 50, 2500),
		grant: v.atLeast(13, 0, 0) || v.major == 12 && v.atLeast(12, 0, 5000) ||
			v.major == 11 && v.atLeast(11, 0, 6020),
		spills: v.atLeast(14, 0, 3015) || v.major == 13 && v.atLeast(13, 0, 5026),
	}
}

// utcTime converts a datetime column in the server's local time to UTC
// (at the server's current offset) as datetime2(3).
func utcTime(col string) string {
	return "CAST(SWITCHOFFSET(TODATETIMEOFFSET(" + col + ", DATEPART(TZOFFSET, SYSDATETIMEOFFSET())), '+00:00') AS datetime2(3))"
}

// cacheOrderColumn is the ORDER BY column of each order: a fixed name,
// never text from the command line.
func cacheOrderColumn(o Order) string {
	switch o {
	case OrderDuration:
		return "qs.total_elapsed_time"
	case OrderReads:
		return "qs.total_logical_reads"
	case OrderExecutions:
		return "qs.execution_count"
	case OrderGrant:
		return "qs.max_grant_kb"
	}
	return "qs.total_worker_time"
}

// cacheListParams is the declaration of cacheListSQL's parameters.
const cacheListParams = "@top int, @database nvarchar(128), @like nvarchar(4000)"

// cacheOtherParams is the declaration of cacheOtherSQL's parameters.
const cacheOtherParams = cacheListParams + ", @hashes nvarchar(max)"

// cacheOtherSQL lists, most executed first, the cached statements whose
// query_hash is one of @hashes (",0x…,0x…,"), with the figures and filters
// of cacheListSQL: the other plans of the listed queries.
func cacheOtherSQL(shape cacheShape) string {
	return cacheSelectSQL(shape, cacheOtherMarker,
		"\n    AND CHARINDEX(N',' + CONVERT(nvarchar(18), qs.query_hash, 1) + N',', @hashes) > 0", "qs.execution_count")
}

// cacheListSQL lists the top statements of the plan cache with their
// figures, without plans. Statements of planlint's own batches are left
// out. @database and @like are empty for no filter.
func cacheListSQL(shape cacheShape, o Order) string {
	return cacheSelectSQL(shape, cacheListMarker, "", cacheOrderColumn(o))
}

func cacheSelectSQL(shape cacheShape, marker, filter, order string) string {
	optional := []string{
		"CAST(NULL AS float) AS avg_rows, CAST(NULL AS bigint) AS min_rows, CAST(NULL AS bigint) AS max_rows",
		"CAST(NULL AS bigint) AS max_grant_kb",
		"CAST(NULL AS bigint) AS total_spills",
	}
	if shape.rows {
		optional[0] = "CAST(qs.total_rows AS float) / NULLIF(qs.execution_count, 0) AS avg_rows, qs.min_rows, qs.max_rows"
	}
	if shape.grant {
		optional[1] = "qs.max_grant_kb"
	}
	if shape.spills {
		optional[2] = "qs.total_spills"
	}
	return `SELECT ` + marker + ` TOP (@top)
    CONVERT(nvarchar(18), qs.query_hash, 1) AS query_hash,
    CONVERT(nvarchar(18), qs.query_plan_hash, 1) AS query_plan_hash,
    CONVERT(nvarchar(130), qs.plan_handle, 1) AS plan_handle,
    qs.statement_start_offset, qs.statement_end_offset,
    CAST(DB_NAME(pa.dbid) AS nvarchar(128)) AS database_name,
    x.statement_text,
    qs.execution_count, qs.total_worker_time, qs.min_worker_time, qs.max_worker_time,
    qs.total_elapsed_time, qs.min_elapsed_time, qs.max_elapsed_time,
    qs.total_logical_reads, qs.min_logical_reads, qs.max_logical_reads,
    ` + strings.Join(optional, ",\n    ") + `,
    ` + utcTime("qs.last_execution_time") + ` AS last_execution_time,
    ` + utcTime("qs.creation_time") + ` AS creation_time
FROM sys.dm_exec_query_stats AS qs
CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) AS st
CROSS APPLY (SELECT SUBSTRING(st.text, qs.statement_start_offset / 2 + 1,
    (CASE qs.statement_end_offset WHEN -1 THEN DATALENGTH(st.text) ELSE qs.statement_end_offset END
     - qs.statement_start_offset) / 2 + 1) AS statement_text) AS x
CROSS APPLY (SELECT CONVERT(int, a.value) AS dbid FROM sys.dm_exec_plan_attributes(qs.plan_handle) AS a
    WHERE a.attribute = N'dbid') AS pa
WHERE ` + notOwn("st.text") + `
    AND (@database = N'' OR pa.dbid = DB_ID(@database))
    AND (@like = N'' OR x.statement_text LIKE @like)` + filter + `
ORDER BY ` + order + ` DESC;`
}

// cachePlanParams is the declaration of cachePlanSQL's parameters.
const cachePlanParams = "@plan_handle nvarchar(130), @start int, @end int, @max_chars bigint"

// cachePlanSQL reads one statement's plan as text (no 128-level limit, as
// the xml of sys.dm_exec_query_plan has) unless it is longer than
// @max_chars characters; plan_chars is its length either way.
const cachePlanSQL = `SELECT ` + cachePlanMarker + ` CASE WHEN DATALENGTH(p.query_plan) / 2 > @max_chars THEN NULL ELSE p.query_plan END AS query_plan,
    CAST(DATALENGTH(p.query_plan) / 2 AS bigint) AS plan_chars
FROM sys.dm_exec_text_query_plan(CONVERT(varbinary(64), @plan_handle, 1), @start, @end) AS p;`

// PlanCache pulls the top statements of the plan cache
// (sys.dm_exec_query_stats) with their figures, reads each plan as text
// (sys.dm_exec_text_query_plan) and parses it here, then reads the catalog
// facts of the session database's tables those plans touch. It only reads:
// one request for the list, one per statement for its plan, one for the
// catalog facts. A statement whose plan is missing, too large or invalid
// is kept with Err set.
func (s *Session) PlanCache(ctx context.Context, o CacheOptions) (*Pull, error) {
	const step = "reading the plan cache"
	if err := s.usable(ctx, step); err != nil {
		return nil, err
	}
	if o.Top < 1 || o.Top > MaxTop {
		return nil, &Error{Kind: ErrStatement, Step: step, Message: fmt.Sprintf("--top %d: want 1 to %d", o.Top, MaxTop)}
	}
	if o.OrderBy == 0 {
		o.OrderBy = OrderCPU
	}
	shape := cacheShapeFor(s.Info)
	if !s.Info.cloud() && !parseVersion(s.Info.ProductVersion).atLeast(10, 0, 0) {
		return nil, &Error{Kind: ErrStatement, Step: step,
			Message: fmt.Sprintf("planlint reads the plan cache of SQL Server 2008 and later; this server is %s", s.Info.ProductVersion)}
	}
	if o.OrderBy == OrderGrant && !shape.grant {
		return nil, &Error{Kind: ErrStatement, Step: step,
			Message: fmt.Sprintf("--order-by grant needs sys.dm_exec_query_stats.max_grant_kb (SQL Server 2016, 2014 SP2, 2012 SP3 and later); this server is %s", s.Info.ProductVersion),
			Hint:    "order by cpu, duration, reads or executions"}
	}
	pull := &Pull{}
	if !shape.spills {
		pull.Notes = append(pull.Notes, fmt.Sprintf("SQL Server %s keeps no spill counts in the plan cache (2016 SP2 and 2017 CU3 on do).", s.Info.ProductVersion))
	}
	err := s.query(ctx, step, cacheListSQL(shape, o.OrderBy), cacheListParams,
		[]any{sql.Named("top", int32(o.Top)), sql.Named("database", o.Database), sql.Named("like", LikePattern(o.Like))},
		func(r namedRow) error {
			p, err := decodeCacheRow(r)
			if err != nil {
				return err
			}
			pull.Statements = append(pull.Statements, p)
			return nil
		})
	if err != nil {
		return nil, s.permission(err, serverStateGrant(s.Info))
	}
	if err := s.otherCachedPlans(ctx, o, shape, pull); err != nil {
		return nil, err
	}
	uniqueNames(pull.Statements)
	for i, p := range pull.Statements {
		if o.Progress != nil {
			o.Progress(i+1, len(pull.Statements))
		}
		if err := s.cachedPlan(ctx, p, o.Limits); err != nil {
			return nil, err
		}
	}
	if err := s.pullCatalog(ctx, pull); err != nil {
		return nil, err
	}
	return pull, nil
}

// KnownQueryHash reports whether a query_hash names one query: not empty
// and not 0x0000000000000000, which the plan cache reports for statements
// it does not hash.
func KnownQueryHash(h string) bool {
	return strings.Trim(strings.TrimPrefix(strings.TrimPrefix(h, "0x"), "0X"), "0") != ""
}

// otherCachedPlans adds to the pull, marked Sibling, up to o.Top cached
// statements of the listed statements' queries (the same query_hash and
// database) that the list left out: a query's cheap plan is rarely among
// the costliest statements, yet it is what its costly plan is compared
// with. --like chose the queries, so it does not filter their plans. One
// request, whatever the number of queries.
func (s *Session) otherCachedPlans(ctx context.Context, o CacheOptions, shape cacheShape, pull *Pull) error {
	const step = "reading the other cached plans of the listed queries"
	type key struct {
		handle     string
		start, end int
	}
	pulled := map[key]bool{}
	wanted := map[string]bool{} // query hash + database
	var hashes []string
	for _, p := range pull.Statements {
		pulled[key{p.Cache.PlanHandle, p.Cache.StatementStart, p.Cache.StatementEnd}] = true
		h := p.Cache.QueryHash
		if !KnownQueryHash(h) {
			continue
		}
		if !wanted[h+"\x00"+p.Database] {
			wanted[h+"\x00"+p.Database] = true
			hashes = append(hashes, h)
		}
	}
	if len(hashes) == 0 {
		return nil
	}
	var others []*Pulled
	err := s.query(ctx, step, cacheOtherSQL(shape), cacheOtherParams,
		// the listed statements come back too: ask for that many more
		[]any{sql.Named("top", int32(o.Top+len(pull.Statements))), sql.Named("database", o.Database), sql.Named("like", ""),
			sql.Named("hashes", ","+strings.Join(hashes, ",")+",")},
		func(r namedRow) error {
			p, err := decodeCacheRow(r)
			if err != nil {
				return err
			}
			if !pulled[key{p.Cache.PlanHandle, p.Cache.StatementStart, p.Cache.StatementEnd}] && wanted[p.Cache.QueryHash+"\x00"+p.Database] {
				p.Sibling = true
				others = append(others, p)
			}
			return nil
		})
	if err != nil {
		return s.permission(err, serverStateGrant(s.Info))
	}
	if len(others) > o.Top {
		others = others[:o.Top]
	}
	pull.Statements = append(pull.Statements, others...)
	return nil
}

// cachedPlan reads and parses one statement's plan into p.
func (s *Session) cachedPlan(ctx context.Context, p *Pulled, limits plan.Options) error {
	step := "reading the plan of " + p.Name
	var text sql.NullString
	var chars sql.NullInt64
	found := false
	err := s.query(ctx, step, cachePlanSQL, cachePlanParams,
		[]any{sql.Named("plan_handle", p.Cache.PlanHandle), sql.Named("start", int32(p.Cache.StatementStart)),
			sql.Named("end", int32(p.Cache.StatementEnd)), sql.Named("max_chars", maxBytes(limits))},
		func(r namedRow) error {
			if found {
				return nil
			}
			found = true
			t, _, err := r.str("query_plan")
			if err != nil {
				return err
			}
			text.String, text.Valid = t, r["query_plan"] != nil
			n, err := r.int("plan_chars")
			if err != nil {
				return err
			}
			if n != nil {
				chars.Int64, chars.Valid = *n, true
			}
			return nil
		})
	if err != nil {
		return s.permission(err, serverStateGrant(s.Info))
	}
	switch {
	case text.Valid:
		parsePlan(p, text.String, limits)
	case chars.Valid:
		p.Err = tooLarge(chars.Int64, limits)
	default:
		p.Err = &PlanError{Problem: PlanMissing, Message: "sys.dm_exec_text_query_plan returned nothing: the plan was evicted or recompiled after the statistics were read, or the statement is never cached (bulk operations, string literals over 8 KB)"}
	}
	return nil
}

func maxBytes(limits plan.Options) int64 {
	if limits.MaxBytes <= 0 {
		return plan.DefaultMaxBytes
	}
	return limits.MaxBytes
}

func tooLarge(chars int64, limits plan.Options) *PlanError {
	return &PlanError{Problem: PlanTooLarge, Message: fmt.Sprintf("the plan has %d characters, over --max-file-size %d bytes; it was not transferred (raise --max-file-size to analyse it)", chars, maxBytes(limits))}
}

// parsePlan parses a plan sent as text into p.Doc, or sets p.Err.
func parsePlan(p *Pulled, text string, limits plan.Options) {
	text = strings.TrimPrefix(text, "\uFEFF")
	p.XML = text
	doc, err := plan.Parse(strings.NewReader(text), limits)
	if err == nil {
		p.Doc = doc
		return
	}
	var le *plan.LimitError
	if errors.As(err, &le) {
		p.Err = &PlanError{Problem: PlanTooLarge, Message: err.Error(), Err: err}
		return
	}
	p.Err = &PlanError{Problem: PlanInvalid, Message: err.Error(), Err: err}
}

// decodeCacheRow reads one row of cacheListSQL.
func decodeCacheRow(r namedRow) (*Pulled, error) {
	e := &CacheEntry{}
	p := &Pulled{Cache: e}
	var err error
	str := func(name string) string {
		if err != nil {
			return ""
		}
		var s string
		s, _, err = r.str(name)
		return s
	}
	e.QueryHash = str("query_hash")
	e.QueryPlanHash = str("query_plan_hash")
	e.PlanHandle = str("plan_handle")
	p.Database = str("database_name")
	p.Text = str("statement_text")
	if err != nil {
		return nil, err
	}
	if e.PlanHandle == "" {
		return nil, fmt.Errorf("column plan_handle: missing or NULL")
	}
	for _, c := range []struct {
		name string
		dst  *int
	}{{"statement_start_offset", &e.StatementStart}, {"statement_end_offset", &e.StatementEnd}} {
		n, err := r.int(c.name)
		if err != nil {
			return nil, err
		}
		if n == nil || *n < -1 || *n > 1<<31-1 {
			return nil, fmt.Errorf("column %s: want a byte offset, got %v", c.name, r[c.name])
		}
		*c.dst = int(*n)
	}
	if err := decodeRuntime(r, &p.Runtime, runtimeColumns{
		executions: "execution_count", cpu: "total_worker_time", minCPU: "min_worker_time", maxCPU: "max_worker_time",
		duration: "total_elapsed_time", minDuration: "min_elapsed_time", maxDuration: "max_elapsed_time",
		reads: "total_logical_reads", minReads: "min_logical_reads", maxReads: "max_logical_reads",
		avgRows: "avg_rows", minRows: "min_rows", maxRows: "max_rows", spills: "total_spills",
		grant: "max_grant_kb", last: "last_execution_time", compiled: "creation_time",
	}); err != nil {
		return nil, err
	}
	hash := e.QueryHash
	if hash == "" {
		hash = "(no query hash)"
	}
	planHash := e.QueryPlanHash
	if planHash == "" {
		planHash = e.PlanHandle
	}
	p.Name = "cache:" + hash + " plan " + planHash
	return p, nil
}

// runtimeColumns names the columns of the Runtime fields in a result set;
// an empty name is a figure the source does not keep.
type runtimeColumns struct {
	executions, cpu, minCPU, maxCPU, duration, minDuration, maxDuration string
	reads, minReads, maxReads                                           string
	// durationSq and readsSq are sums over the executions of the squared
	// figure, from which the standard deviation follows.
	durationSq, readsSq                                  string
	avgRows, minRows, maxRows, spills, grant, usedMemory string
	last, compiled                                       string
}

// decodeRuntime reads the runtime figures of a row.
func decodeRuntime(r namedRow, rt *Runtime, c runtimeColumns) error {
	req := func(name string, dst *float64) error {
		v, err := r.float(name)
		if err != nil {
			return err
		}
		if v != nil {
			*dst = *v
		}
		return nil
	}
	if n, err := r.int(c.executions); err != nil {
		return err
	} else if n != nil {
		rt.Executions = *n
	}
	for _, f := range []struct {
		name string
		dst  *float64
	}{{c.cpu, &rt.CPUMicros}, {c.duration, &rt.DurationMicros}, {c.reads, &rt.LogicalReads}} {
		if err := req(f.name, f.dst); err != nil {
			return err
		}
	}
	var err error
	for _, f := range []struct {
		name string
		dst  **float64
	}{{c.minCPU, &rt.MinCPUMicros}, {c.maxCPU, &rt.MaxCPUMicros}, {c.minDuration, &rt.MinDurationMicros},
		{c.maxDuration, &rt.MaxDurationMicros}, {c.minReads, &rt.MinLogicalReads}, {c.maxReads, &rt.MaxLogicalReads},
		{c.avgRows, &rt.AvgRows}} {
		if f.name == "" {
			continue
		}
		if *f.dst, err = r.float(f.name); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name  string
		total float64
		dst   **float64
	}{{c.durationSq, rt.DurationMicros, &rt.StdevDurationMicros}, {c.readsSq, rt.LogicalReads, &rt.StdevLogicalReads}} {
		if f.name == "" {
			continue
		}
		sq, err := r.float(f.name)
		if err != nil {
			return err
		}
		if sq != nil {
			*f.dst = pooledStdev(*sq, f.total, rt.Executions)
		}
	}
	for _, f := range []struct {
		name string
		dst  **int64
	}{{c.minRows, &rt.MinRows}, {c.maxRows, &rt.MaxRows}, {c.spills, &rt.SpilledPages},
		{c.grant, &rt.MaxGrantKB}, {c.usedMemory, &rt.MaxUsedMemoryKB}} {
		if *f.dst, err = r.int(f.name); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{c.last, &rt.LastExecution}, {c.compiled, &rt.Compiled}} {
		t, err := r.time(f.name)
		if err != nil {
			return err
		}
		if t != nil {
			*f.dst = t.UTC()
		}
	}
	return nil
}

// pooledStdev is the standard deviation per execution of a figure from
// the sum of its squares and its total over n executions; nil without
// executions. Rounding can make the variance slightly negative: it is 0.
func pooledStdev(sumSq, total float64, n int64) *float64 {
	if n <= 0 || math.IsNaN(sumSq) || math.IsInf(sumSq, 0) {
		return nil
	}
	mean := total / float64(n)
	v := math.Sqrt(math.Max(sumSq/float64(n)-mean*mean, 0))
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// uniqueNames numbers statements that would share a name (the same query
// and plan hash cached for several databases or SET options).
func uniqueNames(ps []*Pulled) {
	seen := map[string]int{}
	for _, p := range ps {
		seen[p.Name]++
		if n := seen[p.Name]; n > 1 {
			p.Name += fmt.Sprintf(" #%d", n)
		}
	}
}

// pullCatalog reads, in one request, the catalog facts of the session
// database's tables the pulled plans touch, and notes the statements whose
// tables it cannot read.
func (s *Session) pullCatalog(ctx context.Context, pull *Pull) error {
	var docs []*plan.Document
	for _, p := range pull.Statements {
		if p.Doc != nil {
			docs = append(docs, p.Doc)
		}
	}
	local, other := TablesOf(docs, s.Info.Database)
	pull.OtherTables = other
	for _, p := range pull.Statements {
		if p.Doc == nil {
			continue
		}
		_, o := TablesOf([]*plan.Document{p.Doc}, s.Info.Database)
		if len(o) == 0 {
			continue
		}
		names := make([]string, len(o))
		for i, t := range o {
			names[i] = t.String()
		}
		p.Note = fmt.Sprintf("No catalog facts for %s: planlint reads the facts of the session's database (%s) only; connect with -d to another database to read its tables.",
			strings.Join(names, ", "), s.Info.Database)
	}
	return s.readCatalog(ctx, local)
}

// usable checks that the session can still send requests.
func (s *Session) usable(ctx context.Context, step string) error {
	if s.broken || s.closed {
		return &Error{Kind: ErrConnectionLost, Step: step, Message: "the session is closed"}
	}
	if err := ctx.Err(); err != nil {
		return s.fail(err, step, false)
	}
	return nil
}

// query sends one read-only statement as an RPC to sp_executesql by name,
// with a fixed parameter declaration (so the server reuses one plan for
// every run) and typed values, and passes each row of every result set to
// fn.
func (s *Session) query(ctx context.Context, step, stmt, decl string, params []any, fn func(namedRow) error) error {
	args := []any{sql.Named("stmt", stmt)}
	if decl != "" {
		args = append(args, sql.Named("params", decl))
	}
	args = append(args, params...)
	qctx, done := s.timed(ctx)
	rows, err := s.conn.QueryContext(qctx, "sp_executesql", args...)
	if err != nil {
		return s.fail(err, step, done())
	}
	err = eachRow(rows, fn)
	rows.Close()
	timedOut := done()
	if err == nil {
		return nil
	}
	var de *decodeError
	if errors.As(err, &de) {
		return &Error{Kind: ErrServer, Step: step, Message: "unexpected answer: " + de.Error(), Err: err}
	}
	return s.fail(err, step, timedOut)
}

// decodeError is a row the server sent that planlint cannot read.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return e.err.Error() }

func (e *decodeError) Unwrap() error { return e.err }

// namedRow is one result row keyed by lower-case column name, holding the
// values as the driver returned them.
type namedRow map[string]any

// eachRow passes every row of every result set to fn.
func eachRow(rows *sql.Rows, fn func(namedRow) error) error {
	for {
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			r := make(namedRow, len(cols))
			for i, c := range cols {
				r[strings.ToLower(c)] = vals[i]
			}
			if err := fn(r); err != nil {
				return &decodeError{err}
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if !rows.NextResultSet() {
			return rows.Err()
		}
	}
}

// str returns a string column; present is false for a missing column or
// NULL.
func (r namedRow) str(name string) (s string, present bool, err error) {
	switch v := r[name].(type) {
	case nil:
		return "", false, nil
	case string:
		return v, true, nil
	case []byte:
		return string(v), true, nil
	}
	return "", false, fmt.Errorf("column %s: want text, got %T", name, r[name])
}

// int returns an integer column, nil for a missing column or NULL.
func (r namedRow) int(name string) (*int64, error) {
	switch v := r[name].(type) {
	case nil:
		return nil, nil
	case int64:
		return &v, nil
	case bool:
		n := int64(0)
		if v {
			n = 1
		}
		return &n, nil
	case float64:
		if v == float64(int64(v)) {
			n := int64(v)
			return &n, nil
		}
	case []byte: // decimal and numeric
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return &n, nil
		}
	}
	return nil, fmt.Errorf("column %s: want an integer, got %T %v", name, r[name], r[name])
}

// float returns a numeric column, nil for a missing column or NULL.
func (r namedRow) float(name string) (*float64, error) {
	switch v := r[name].(type) {
	case nil:
		return nil, nil
	case float64:
		return &v, nil
	case int64:
		f := float64(v)
		return &f, nil
	case []byte: // decimal and numeric
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return &f, nil
		}
	}
	return nil, fmt.Errorf("column %s: want a number, got %T %v", name, r[name], r[name])
}

// bool returns a bit column, nil for a missing column or NULL.
func (r namedRow) bool(name string) (*bool, error) {
	switch v := r[name].(type) {
	case nil:
		return nil, nil
	case bool:
		return &v, nil
	case int64:
		b := v != 0
		return &b, nil
	}
	return nil, fmt.Errorf("column %s: want a bit, got %T %v", name, r[name], r[name])
}

// time returns a date and time column, nil for a missing column or NULL.
func (r namedRow) time(name string) (*time.Time, error) {
	switch v := r[name].(type) {
	case nil:
		return nil, nil
	case time.Time:
		return &v, nil
	}
	return nil, fmt.Errorf("column %s: want a date and time, got %T %v", name, r[name], r[name])
}

// serverStateGrant is the permission the plan cache DMVs need.
func serverStateGrant(info ServerInfo) string {
	switch {
	case info.EngineEdition == 5:
		return "VIEW DATABASE PERFORMANCE STATE (VIEW DATABASE STATE on older service levels), granted in the database"
	case parseVersion(info.ProductVersion).major >= 16:
		return "VIEW SERVER PERFORMANCE STATE (SQL Server 2022 and later; VIEW SERVER STATE also includes it)"
	}
	return "VIEW SERVER STATE"
}

// permission turns a permission error of a pull into ErrPermission with the
// GRANT to ask for.
func (s *Session) permission(err error, grant string) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	var me mssql.Error
	if !errors.As(e.Err, &me) {
		return err
	}
	switch me.Number {
	case 229, 297, 300: // permission denied on an object, for an action, on the server or database
	default:
		return err
	}
	e.Kind = ErrPermission
	perm, _, _ := strings.Cut(grant, " (")
	perm, _, _ = strings.Cut(perm, ",")
	to := quoteName(s.c.userName())
	e.Hint = fmt.Sprintf("this needs %s: ask an administrator to run GRANT %s TO %s", grant, perm, to)
	return e
}

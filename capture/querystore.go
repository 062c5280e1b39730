package capture

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/planlint/planlint/plan"
)

// StoreOptions choose the Query Store plans to pull from the session's
// database.
type StoreOptions struct {
	// Top and OrderBy rank plans by their figures over Since; ignored
	// with QueryID.
	Top     int
	OrderBy Order
	// Since is how far back runtime statistics are summed (intervals
	// ending within it).
	Since time.Duration
	// Like keeps only queries whose text matches this LIKE pattern; see
	// LikePattern.
	Like string
	// QueryID, when not 0, pulls every plan of that query (and of its
	// Parameter Sensitive Plan variants), most executed first, including
	// plans not executed within Since.
	QueryID int64
	// Limits bound each plan: a plan longer than Limits.MaxBytes
	// characters is not even transferred.
	Limits plan.Options
	// Progress, when set, is called before each plan is read.
	Progress func(n, total int)
}

// MaxSince bounds --since (DATEADD takes an int number of seconds).
const MaxSince = 3650 * 24 * time.Hour

// StoreState is the Query Store state of the session's database.
type StoreState struct {
	Actual, Desired string // OFF, READ_ONLY, READ_WRITE, ERROR
	ReadOnlyReason  int64
}

// storeStateSQL reads the Query Store state of the current database.
const storeStateSQL = `SELECT ` + storeStateMarker + ` CAST(o.actual_state AS int) AS actual_state,
    o.actual_state_desc, o.desired_state_desc, CAST(o.readonly_reason AS int) AS readonly_reason
FROM sys.database_query_store_options AS o;`

// storeShape says which optional Query Store columns the server has.
type storeShape struct {
	// variants: sys.query_store_plan.plan_type_desc and
	// sys.query_store_query_variant (Parameter Sensitive Plan
	// optimization), SQL Server 2022 (16.x) on.
	variants bool
}

func storeShapeFor(info ServerInfo) storeShape {
	return storeShape{variants: info.cloud() || parseVersion(info.ProductVersion).major >= 16}
}

// storeOrderColumn is the ORDER BY column of each order: a fixed name,
// never text from the command line.
func storeOrderColumn(o Order) string {
	switch o {
	case OrderDuration:
		return "s.duration_us"
	case OrderReads:
		return "s.logical_reads"
	case OrderExecutions:
		return "s.executions"
	case OrderGrant:
		return "s.max_used_memory_kb"
	}
	return "s.cpu_us"
}

// storeListParams is the declaration of storeListSQL's parameters.
const storeListParams = "@top int, @since_seconds int, @like nvarchar(4000), @query_id bigint"

// storeListSQL lists Query Store plans with their figures summed over the
// runtime statistics intervals that end within @since_seconds, without the
// plans themselves. With byQuery, it lists every plan of @query_id (and of
// its variants), executed in that time or not.
func storeListSQL(shape storeShape, o Order, byQuery bool) string {
	queryFilter := "q.query_id = @query_id"
	if shape.variants {
		queryFilter = "(q.query_id = @query_id OR v.parent_query_id = @query_id)"
	}
	if byQuery {
		return storeSelectSQL(shape, storeListMarker, "LEFT JOIN", "\n    AND "+queryFilter, "s.executions")
	}
	return storeSelectSQL(shape, storeListMarker, "JOIN", "", storeOrderColumn(o))
}

// storeOtherParams is the declaration of storeOtherSQL's parameters.
const storeOtherParams = storeListParams + ", @query_ids nvarchar(max)"

// storeOtherSQL lists, most executed first, the plans executed within
// @since_seconds of the queries in @query_ids (",42,60,") and of their
// variants: the other plans of the listed queries.
func storeOtherSQL(shape storeShape) string {
	in := func(col string) string {
		return "CHARINDEX(N',' + CAST(" + col + " AS nvarchar(20)) + N',', @query_ids) > 0"
	}
	filter := in("q.query_id")
	if shape.variants {
		filter = "(" + filter + " OR " + in("v.parent_query_id") + ")"
	}
	return storeSelectSQL(shape, storeOtherMarker, "JOIN", "\n    AND "+filter, "s.executions")
}

func storeSelectSQL(shape storeShape, marker, join, filter, order string) string {
	variantCols := "CAST(NULL AS nvarchar(60)) AS plan_type_desc, CAST(NULL AS bigint) AS parent_query_id"
	variantJoin := ""
	if shape.variants {
		variantCols = "p.plan_type_desc, v.parent_query_id"
		variantJoin = "\nLEFT JOIN sys.query_store_query_variant AS v ON v.query_variant_query_id = q.query_id"
	}
	return `SELECT ` + marker + ` TOP (@top)
    q.query_id, p.plan_id,
    CAST(DB_NAME() AS nvarchar(128)) AS database_name,
    qt.query_sql_text AS statement_text,
    CONVERT(nvarchar(18), q.query_hash, 1) AS query_hash,
    CONVERT(nvarchar(18), p.query_plan_hash, 1) AS query_plan_hash,
    p.is_forced_plan, p.force_failure_count, p.last_force_failure_reason_desc,
    ` + variantCols + `,
    s.executions, s.cpu_us, s.min_cpu_us, s.max_cpu_us, s.duration_us, s.min_duration_us, s.max_duration_us,
    s.duration_sq_us, s.logical_reads, s.min_logical_reads, s.max_logical_reads, s.logical_reads_sq,
    s.avg_rows, s.min_rows, s.max_rows, s.max_used_memory_kb, s.last_execution_time,
    CAST(SWITCHOFFSET(p.last_compile_start_time, '+00:00') AS datetime2(3)) AS compiled,
    CAST(DATALENGTH(p.query_plan) / 2 AS bigint) AS plan_chars
FROM sys.query_store_plan AS p
JOIN sys.query_store_query AS q ON q.query_id = p.query_id
JOIN sys.query_store_query_text AS qt ON qt.query_text_id = q.query_text_id` + variantJoin + `
` + join + ` (SELECT rs.plan_id,
        SUM(rs.count_executions) AS executions,
        SUM(rs.avg_cpu_time * rs.count_executions) AS cpu_us,
        MIN(rs.min_cpu_time) AS min_cpu_us, MAX(rs.max_cpu_time) AS max_cpu_us,
        SUM(rs.avg_duration * rs.count_executions) AS duration_us,
        MIN(rs.min_duration) AS min_duration_us, MAX(rs.max_duration) AS max_duration_us,
        SUM(rs.count_executions * (SQUARE(rs.stdev_duration) + SQUARE(rs.avg_duration))) AS duration_sq_us,
        SUM(rs.avg_logical_io_reads * rs.count_executions) AS logical_reads,
        MIN(rs.min_logical_io_reads) AS min_logical_reads, MAX(rs.max_logical_io_reads) AS max_logical_reads,
        SUM(rs.count_executions * (SQUARE(rs.stdev_logical_io_reads) + SQUARE(rs.avg_logical_io_reads))) AS logical_reads_sq,
        SUM(rs.avg_rowcount * rs.count_executions) / NULLIF(SUM(rs.count_executions), 0) AS avg_rows,
        MIN(rs.min_rowcount) AS min_rows, MAX(rs.max_rowcount) AS max_rows,
        MAX(rs.max_query_max_used_memory) * 8 AS max_used_memory_kb,
        CAST(SWITCHOFFSET(MAX(rs.last_execution_time), '+00:00') AS datetime2(3)) AS last_execution_time
    FROM sys.query_store_runtime_stats AS rs
    JOIN sys.query_store_runtime_stats_interval AS i ON i.runtime_stats_interval_id = rs.runtime_stats_interval_id
    WHERE i.end_time > DATEADD(second, -@since_seconds, SYSDATETIMEOFFSET())
    GROUP BY rs.plan_id) AS s ON s.plan_id = p.plan_id
WHERE ` + notOwn("qt.query_sql_text") + `
    AND (@like = N'' OR qt.query_sql_text LIKE @like)` + filter + `
ORDER BY ` + order + ` DESC, p.plan_id;`
}

// storePlanParams is the declaration of storePlanSQL's parameters.
const storePlanParams = "@plan_id bigint, @max_chars bigint"

// storePlanSQL reads one plan's showplan text unless it is longer than
// @max_chars characters.
const storePlanSQL = `SELECT ` + storePlanMarker + ` CASE WHEN DATALENGTH(p.query_plan) / 2 > @max_chars THEN NULL ELSE p.query_plan END AS query_plan,
    CAST(DATALENGTH(p.query_plan) / 2 AS bigint) AS plan_chars
FROM sys.query_store_plan AS p
WHERE p.plan_id = @plan_id;`

// QueryStore pulls plans from the Query Store of the session's database
// (sys.query_store_plan with runtime statistics summed over o.Since),
// reads each plan as text and parses it here, then reads the catalog facts
// of the tables those plans touch. It only reads: one request for the
// state, one for the list, one per plan, one for the catalog facts. A plan
// that is missing, too large or invalid is kept with Err set.
func (s *Session) QueryStore(ctx context.Context, o StoreOptions) (*Pull, error) {
	const step = "reading Query Store"
	if err := s.usable(ctx, step); err != nil {
		return nil, err
	}
	byQuery := o.QueryID != 0
	top := o.Top
	switch {
	case byQuery:
		top = MaxTop
	case top < 1 || top > MaxTop:
		return nil, &Error{Kind: ErrStatement, Step: step, Message: fmt.Sprintf("--top %d: want 1 to %d", top, MaxTop)}
	}
	if o.Since < time.Second || o.Since > MaxSince {
		return nil, &Error{Kind: ErrStatement, Step: step, Message: fmt.Sprintf("--since %s: want 1s to %s", o.Since, MaxSince)}
	}
	if o.QueryID < 0 {
		return nil, &Error{Kind: ErrStatement, Step: step, Message: fmt.Sprintf("--query-id %d: query ids are positive", o.QueryID)}
	}
	if o.OrderBy == 0 {
		o.OrderBy = OrderCPU
	}
	if !s.Info.cloud() && parseVersion(s.Info.ProductVersion).major < 13 {
		return nil, &Error{Kind: ErrStatement, Step: step,
			Message: fmt.Sprintf("Query Store exists from SQL Server 2016 on; this server is %s", s.Info.ProductVersion),
			Hint:    "read the plan cache with planlint cache instead"}
	}
	pull := &Pull{}
	state, err := s.storeState(ctx)
	if err != nil {
		return nil, err
	}
	switch state.Actual {
	case "READ_WRITE":
	case "OFF", "":
		return nil, &Error{Kind: ErrStatement, Step: step,
			Message: fmt.Sprintf("Query Store is OFF in database %s (sys.database_query_store_options.actual_state, desired %s)", s.Info.Database, orUnknown(state.Desired)),
			Hint:    fmt.Sprintf("connect to the database whose Query Store to read (-d), turn it on with ALTER DATABASE %s SET QUERY_STORE = ON, or read the plan cache with planlint cache", quoteName(s.Info.Database))}
	default:
		pull.Notes = append(pull.Notes, fmt.Sprintf("Query Store of database %s is %s (desired %s, readonly_reason %d): it holds what it captured until then, and records nothing new.",
			s.Info.Database, state.Actual, orUnknown(state.Desired), state.ReadOnlyReason))
	}
	shape := storeShapeFor(s.Info)
	err = s.query(ctx, step, storeListSQL(shape, o.OrderBy, byQuery), storeListParams,
		[]any{sql.Named("top", int32(top)), sql.Named("since_seconds", int32(o.Since/time.Second)),
			sql.Named("like", LikePattern(o.Like)), sql.Named("query_id", o.QueryID)},
		func(r namedRow) error {
			p, err := decodeStoreRow(r)
			if err != nil {
				return err
			}
			pull.Statements = append(pull.Statements, p)
			return nil
		})
	if err != nil {
		return nil, s.permission(err, databaseStateGrant(s.Info))
	}
	if !byQuery {
		if err := s.otherStoredPlans(ctx, o, shape, top, pull); err != nil {
			return nil, err
		}
	}
	uniqueNames(pull.Statements)
	for i, p := range pull.Statements {
		if o.Progress != nil {
			o.Progress(i+1, len(pull.Statements))
		}
		if p.Err == nil && p.chars > maxBytes(o.Limits) {
			p.Err = tooLarge(p.chars, o.Limits)
		}
		if err := s.storedPlan(ctx, p, o.Limits); err != nil {
			return nil, err
		}
	}
	if err := s.pullCatalog(ctx, pull); err != nil {
		return nil, err
	}
	return pull, nil
}

// otherStoredPlans adds to the pull, marked Sibling, up to top plans of
// the listed plans' queries (a variant's parent query counts for the
// variant) that executed within o.Since and were left out of the ranking,
// whatever their text (a variant's text differs from its parent's): --like
// chose the queries. One request, whatever the number of queries.
func (s *Session) otherStoredPlans(ctx context.Context, o StoreOptions, shape storeShape, top int, pull *Pull) error {
	const step = "reading the other plans of the listed queries"
	pulled := map[int64]bool{}
	queries := map[int64]bool{}
	var ids []string
	for _, p := range pull.Statements {
		pulled[p.Store.PlanID] = true
		q := p.Store.QueryID
		if p.Store.ParentQueryID != 0 {
			q = p.Store.ParentQueryID
		}
		if !queries[q] {
			queries[q] = true
			ids = append(ids, strconv.FormatInt(q, 10))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var others []*Pulled
	err := s.query(ctx, step, storeOtherSQL(shape), storeOtherParams,
		// the listed plans come back too: ask for that many more
		[]any{sql.Named("top", int32(top+len(pull.Statements))), sql.Named("since_seconds", int32(o.Since/time.Second)),
			sql.Named("like", ""), sql.Named("query_id", int64(0)), sql.Named("query_ids", ","+strings.Join(ids, ",")+",")},
		func(r namedRow) error {
			p, err := decodeStoreRow(r)
			if err != nil {
				return err
			}
			q := p.Store.QueryID
			if p.Store.ParentQueryID != 0 {
				q = p.Store.ParentQueryID
			}
			if !pulled[p.Store.PlanID] && queries[q] {
				p.Sibling = true
				others = append(others, p)
			}
			return nil
		})
	if err != nil {
		return s.permission(err, databaseStateGrant(s.Info))
	}
	if len(others) > top {
		others = others[:top]
	}
	pull.Statements = append(pull.Statements, others...)
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// storeState reads the Query Store state of the session's database.
func (s *Session) storeState(ctx context.Context) (StoreState, error) {
	const step = "reading the Query Store state"
	var st StoreState
	err := s.query(ctx, step, storeStateSQL, "", nil, func(r namedRow) error {
		a, _, err := r.str("actual_state_desc")
		if err != nil {
			return err
		}
		d, _, err := r.str("desired_state_desc")
		if err != nil {
			return err
		}
		n, err := r.int("readonly_reason")
		if err != nil {
			return err
		}
		st.Actual, st.Desired = strings.ToUpper(strings.TrimSpace(a)), strings.ToUpper(strings.TrimSpace(d))
		if n != nil {
			st.ReadOnlyReason = *n
		}
		return nil
	})
	if err != nil {
		return st, s.permission(err, databaseStateGrant(s.Info))
	}
	return st, nil
}

// databaseStateGrant is the permission Query Store's views need.
func databaseStateGrant(info ServerInfo) string {
	if info.cloud() || parseVersion(info.ProductVersion).major >= 16 {
		return "VIEW DATABASE PERFORMANCE STATE (SQL Server 2022 and Azure; VIEW DATABASE STATE also includes it), granted in the database"
	}
	return "VIEW DATABASE STATE, granted in the database"
}

// storedPlan reads and parses one Query Store plan into p.
func (s *Session) storedPlan(ctx context.Context, p *Pulled, limits plan.Options) error {
	if p.Err != nil {
		return nil // known from the list: NULL or over the limit
	}
	step := "reading the plan of " + p.Name
	var text string
	var valid, found bool
	var chars *int64
	err := s.query(ctx, step, storePlanSQL, storePlanParams,
		[]any{sql.Named("plan_id", p.Store.PlanID), sql.Named("max_chars", maxBytes(limits))},
		func(r namedRow) error {
			if found {
				return nil
			}
			found = true
			var err error
			if text, valid, err = r.str("query_plan"); err != nil {
				return err
			}
			chars, err = r.int("plan_chars")
			return err
		})
	if err != nil {
		return s.permission(err, databaseStateGrant(s.Info))
	}
	switch {
	case valid:
		parsePlan(p, text, limits)
	case chars != nil:
		p.Err = tooLarge(*chars, limits)
	default:
		p.Err = storeMissing(found)
	}
	return nil
}

func storeMissing(planRow bool) *PlanError {
	if planRow {
		return &PlanError{Problem: PlanMissing, Message: "sys.query_store_plan.query_plan is NULL"}
	}
	return &PlanError{Problem: PlanMissing, Message: "the plan left Query Store after the list was read (cleanup or a manual purge)"}
}

// decodeStoreRow reads one row of storeListSQL.
func decodeStoreRow(r namedRow) (*Pulled, error) {
	sp := &StorePlan{}
	p := &Pulled{Store: sp}
	for _, c := range []struct {
		name string
		dst  *int64
		req  bool
	}{{"query_id", &sp.QueryID, true}, {"plan_id", &sp.PlanID, true}, {"parent_query_id", &sp.ParentQueryID, false},
		{"force_failure_count", &sp.ForceFailureCount, false}} {
		n, err := r.int(c.name)
		if err != nil {
			return nil, err
		}
		if n == nil && c.req {
			return nil, fmt.Errorf("column %s: missing or NULL", c.name)
		}
		if n != nil {
			*c.dst = *n
		}
	}
	forced, err := r.bool("is_forced_plan")
	if err != nil {
		return nil, err
	}
	sp.Forced = forced != nil && *forced
	for _, c := range []struct {
		name string
		dst  *string
	}{{"database_name", &p.Database}, {"statement_text", &p.Text}, {"plan_type_desc", &sp.PlanType},
		{"query_hash", &sp.QueryHash}, {"query_plan_hash", &sp.QueryPlanHash},
		{"last_force_failure_reason_desc", &sp.LastForceFailure}} {
		v, _, err := r.str(c.name)
		if err != nil {
			return nil, err
		}
		*c.dst = v
	}
	if strings.EqualFold(sp.LastForceFailure, "NONE") {
		sp.LastForceFailure = ""
	}
	if err := decodeRuntime(r, &p.Runtime, runtimeColumns{
		executions: "executions", cpu: "cpu_us", minCPU: "min_cpu_us", maxCPU: "max_cpu_us", duration: "duration_us",
		minDuration: "min_duration_us", maxDuration: "max_duration_us", durationSq: "duration_sq_us",
		reads: "logical_reads", minReads: "min_logical_reads", maxReads: "max_logical_reads", readsSq: "logical_reads_sq",
		avgRows: "avg_rows", minRows: "min_rows",
		maxRows: "max_rows", usedMemory: "max_used_memory_kb", last: "last_execution_time", compiled: "compiled",
	}); err != nil {
		return nil, err
	}
	chars, err := r.int("plan_chars")
	if err != nil {
		return nil, err
	}
	if chars == nil {
		p.Err = storeMissing(true)
	} else {
		p.chars = *chars
	}
	p.Name = fmt.Sprintf("querystore:query %d plan %d", sp.QueryID, sp.PlanID)
	return p, nil
}

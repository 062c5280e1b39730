package capture

import (
	"context"
	"fmt"
	"strings"

	"github.com/planlint/planlint/sqlscript"
)

// Check status values.
const (
	CheckOK   = "ok"   // works
	CheckWarn = "warn" // does not work; a command other than explain needs it
	CheckFail = "fail" // does not work and explain needs it
	CheckInfo = "info" // a fact about the server or database
)

// Check is one line of the doctor's table.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	// Fix says what to grant or change when Status is fail or warn.
	Fix string `json:"fix,omitempty"`
}

// DoctorReport is what Doctor found.
type DoctorReport struct {
	Checks []Check `json:"checks"`
	// ExplainWorks is true when everything explain needs works.
	ExplainWorks bool `json:"explain_works"`
}

// doctorMarker starts every batch Doctor sends, so that it is recognisable
// in traces and by test servers.
const doctorMarker = "-- planlint: doctor "

// doctorProbe is the parameterized statement whose estimated plan Doctor
// asks for: an RPC, then through the temporary procedure.
const doctorProbe = "-- @planlint_p int = 42\nSELECT @planlint_p AS planlint_value;"

// doctorViews are the catalog views and DMVs the capture commands read,
// with the command that needs each.
var doctorViews = []struct{ view, need string }{
	{"sys.dm_exec_query_stats", "cache"},
	{"sys.dm_exec_cached_plans", "cache"},
	{"sys.query_store_query", "querystore"},
	{"sys.query_store_plan", "querystore"},
	{"sys.query_store_runtime_stats", "querystore"},
}

// Doctor checks, on the user's server, every assumption the capture
// commands rely on. It changes nothing on the server: the only object it
// creates is the session's temporary procedure, dropped at the end. An error
// is returned only when the session cannot be opened; the report then
// holds the failed login check.
func Doctor(ctx context.Context, o Options, so SessionOptions) (*DoctorReport, error) {
	r := &DoctorReport{}
	s, err := Open(ctx, o, so)
	if err != nil {
		r.add(Check{Name: "login", Status: CheckFail, Detail: err.Error(), Fix: loginFix(err)})
		return r, err
	}
	defer s.Close()
	r.add(Check{Name: "login", Status: CheckOK, Detail: "connected to database " + s.Info.Database})
	r.add(Check{Name: "version", Status: CheckInfo, Detail: fmt.Sprintf("SQL Server %s, %s (engine edition %d)", s.Info.ProductVersion, s.Info.Edition, s.Info.EngineEdition)})
	r.add(Check{Name: "database settings", Status: CheckInfo, Detail: fmt.Sprintf("compatibility level %d, parameterization %s, READ_COMMITTED_SNAPSHOT %s, snapshot isolation %s",
		s.Info.CompatibilityLevel, map[bool]string{true: "FORCED", false: "SIMPLE"}[s.Info.ParameterizationForced],
		onOff(s.Info.ReadCommittedSnapshot), s.Info.SnapshotIsolation)})
	s.doctorPermissions(ctx, r)
	batchPlan := s.doctorBatchPlan(ctx, r)
	procPlan := s.doctorParameterized(ctx, r)
	s.doctorTemplate(ctx, r)
	catalogOK := s.doctorCatalog(ctx, r)
	s.doctorViews(ctx, r)
	s.doctorQueryStore(ctx, r)
	r.ExplainWorks = batchPlan && procPlan && catalogOK
	for _, c := range r.Checks {
		if c.Status == CheckFail {
			r.ExplainWorks = false
		}
	}
	return r, nil
}

func (r *DoctorReport) add(c Check) { r.Checks = append(r.Checks, c) }

func onOff(b bool) string {
	if b {
		return "ON"
	}
	return "OFF"
}

func loginFix(err error) string {
	if e, ok := err.(*Error); ok {
		if e.Hint != "" {
			return e.Hint
		}
		if e.Kind == ErrLogin {
			return "check the login name, password and default database; the login needs CONNECT SQL and access to the database"
		}
	}
	return ""
}

// doctorPermissions reads the permissions the commands need, without using them.
func (s *Session) doctorPermissions(ctx context.Context, r *DoctorReport) {
	const q = doctorMarker + `permissions
SELECT HAS_PERMS_BY_NAME(DB_NAME(), 'DATABASE', 'SHOWPLAN') AS showplan,
    HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE') AS view_server_state,
    HAS_PERMS_BY_NAME(DB_NAME(), 'DATABASE', 'VIEW DATABASE STATE') AS view_database_state,
    SUSER_SNAME() AS login_name, USER_NAME() AS user_name;`
	qctx, done := s.timed(ctx)
	defer done()
	var showplan, vss, vds *int64
	var login, user *string
	row := s.conn.QueryRowContext(qctx, q)
	if err := row.Scan(&showplan, &vss, &vds, &login, &user); err != nil {
		r.add(Check{Name: "permissions", Status: CheckFail, Detail: "cannot read the permissions: " + s.fail(err, "reading permissions", false).Error()})
		return
	}
	who := func(p *string, def string) string {
		if p == nil || *p == "" {
			return def
		}
		return "[" + strings.ReplaceAll(*p, "]", "]]") + "]"
	}
	has := func(p *int64) bool { return p != nil && *p == 1 }
	db := "[" + strings.ReplaceAll(s.Info.Database, "]", "]]") + "]"
	add := func(name string, ok bool, status, need, fix string) {
		c := Check{Name: name, Status: CheckOK, Detail: "granted (" + need + ")"}
		if !ok {
			c.Status, c.Detail, c.Fix = status, "not granted ("+need+")", fix
		}
		r.add(c)
	}
	add("SHOWPLAN permission", has(showplan), CheckFail, "explain needs it in database "+s.Info.Database,
		fmt.Sprintf("USE %s; GRANT SHOWPLAN TO %s;", db, who(user, "[the user]")))
	add("VIEW SERVER STATE", has(vss), CheckWarn, "cache reads the plan cache with it",
		fmt.Sprintf("GRANT VIEW SERVER STATE TO %s; (SQL Server 2022 and later: GRANT VIEW SERVER PERFORMANCE STATE)", who(login, "[the login]")))
	add("VIEW DATABASE STATE", has(vds), CheckWarn, "querystore reads Query Store with it",
		fmt.Sprintf("USE %s; GRANT VIEW DATABASE STATE TO %s;", db, who(user, "[the user]")))
}

// doctorBatchPlan asks for the estimated plan of a plain batch.
func (s *Session) doctorBatchPlan(ctx context.Context, r *DoctorReport) bool {
	req := sqlscript.Request{Kind: sqlscript.SQLBatch, Text: doctorMarker + "batch plan\nSELECT 1 AS planlint_value;"}
	plans, err := s.underShowplan(ctx, func(ctx context.Context) ([]string, error) {
		return s.send(ctx, req, "compiling a batch", true)
	})
	switch {
	case err != nil:
		r.add(Check{Name: "SHOWPLAN_XML plan of a batch", Status: CheckFail, Detail: err.Error(), Fix: errFix(err)})
		return false
	case len(plans) == 0:
		r.add(Check{Name: "SHOWPLAN_XML plan of a batch", Status: CheckFail, Detail: "the server returned no plan document"})
		return false
	}
	r.add(Check{Name: "SHOWPLAN_XML plan of a batch", Status: CheckOK, Detail: "one plan document"})
	return true
}

func errFix(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Hint
	}
	return ""
}

// doctorParameterized asks for the plan of a parameterized statement: as
// an sp_executesql RPC, then through the temporary procedure, checking the
// procedure plan carries the parameter's compiled value.
func (s *Session) doctorParameterized(ctx context.Context, r *DoctorReport) bool {
	script, err := sqlscript.Parse("doctor.sql", []byte(doctorProbe))
	if err != nil || len(script.Batches) != 1 {
		r.add(Check{Name: "SHOWPLAN_XML plan of an RPC", Status: CheckFail, Detail: fmt.Sprintf("internal: probe statement: %v", err)})
		return false
	}
	req := script.Batches[0].Request()
	plans, err := s.underShowplan(ctx, func(ctx context.Context) ([]string, error) {
		return s.send(ctx, req, "compiling an sp_executesql RPC", true)
	})
	switch {
	case err != nil:
		r.add(Check{Name: "SHOWPLAN_XML plan of an RPC", Status: CheckWarn, Detail: err.Error()})
	case len(plans) == 0:
		r.add(Check{Name: "SHOWPLAN_XML plan of an RPC", Status: CheckInfo,
			Detail: "no plan, as SQL Server answers sp_executesql under SHOWPLAN_XML; explain uses the temporary procedure"})
	default:
		r.add(Check{Name: "SHOWPLAN_XML plan of an RPC", Status: CheckOK, Detail: "one plan document"})
	}
	res := &Result{Sent: req}
	if err := s.probe(ctx, res, "doctor"); err != nil {
		fix := errFix(err)
		if e, ok := err.(*Error); !ok || e.Kind != ErrPermission {
			fix = joinHints(fix, "the login needs to create temporary procedures (any login can, unless a trigger or policy forbids it)")
		}
		r.add(Check{Name: "temporary-procedure plan", Status: CheckFail, Detail: err.Error(), Fix: fix})
		return false
	}
	compiled := false
	for _, p := range res.Plans {
		compiled = compiled || strings.Contains(p.XML, `ParameterCompiledValue="(42)"`)
	}
	if !compiled {
		r.add(Check{Name: "temporary-procedure plan", Status: CheckWarn,
			Detail: "a plan, but without @planlint_p's compiled value 42: the values in EXEC are not sniffed here, so estimates are for unknown values"})
		return true
	}
	r.add(Check{Name: "temporary-procedure plan", Status: CheckOK, Detail: "a plan with the parameter's compiled value"})
	return true
}

// doctorTemplate tries sp_get_query_template on a sample statement.
func (s *Session) doctorTemplate(ctx context.Context, r *DoctorReport) {
	const sample = "SELECT name FROM sys.objects WHERE object_id = 42"
	tpl, err := s.queryTemplate(ctx, sample)
	if err != nil {
		r.add(Check{Name: "sp_get_query_template", Status: CheckWarn, Detail: err.Error() + " (--parameterization forced needs it)"})
		return
	}
	r.add(Check{Name: "sp_get_query_template", Status: CheckOK, Detail: fmt.Sprintf("%q with %q", tpl.Text, tpl.Declaration)})
}

// doctorCatalog runs the catalog batch explain sends, for a table that
// does not exist: the views and columns it reads must answer.
func (s *Session) doctorCatalog(ctx context.Context, r *DoctorReport) bool {
	err := s.readCatalog(ctx, []TableName{{Schema: "dbo", Name: "planlint_doctor_no_such_table"}})
	if err != nil {
		r.add(Check{Name: "catalog views", Status: CheckFail, Detail: err.Error(), Fix: "the login needs VIEW DEFINITION on the tables it explains (or db_datareader)"})
		return false
	}
	detail := "sys.tables, sys.columns, sys.indexes, sys.index_columns, sys.partitions, sys.allocation_units"
	if s.Info.hasStatsProperties() {
		detail += ", sys.dm_db_stats_properties"
	} else {
		detail += " (sys.dm_db_stats_properties needs SQL Server 2008 R2 SP2 or 2012 SP1: statistics facts are skipped)"
	}
	r.add(Check{Name: "catalog views", Status: CheckOK, Detail: detail})
	return true
}

// doctorViews checks the DMVs of cache and querystore answer.
func (s *Session) doctorViews(ctx context.Context, r *DoctorReport) {
	for _, v := range doctorViews {
		q := doctorMarker + "view\nSELECT TOP (0) * FROM " + v.view + ";"
		qctx, done := s.timed(ctx)
		rows, err := s.conn.QueryContext(qctx, q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		timedOut := done()
		if err != nil {
			e := s.fail(err, "reading "+v.view, timedOut)
			fix := "GRANT VIEW SERVER STATE TO the login"
			if v.need == "querystore" {
				fix = "GRANT VIEW DATABASE STATE TO the user (Query Store needs SQL Server 2016 or later, enabled on the database)"
			}
			r.add(Check{Name: v.view, Status: CheckWarn, Detail: e.Error() + " (" + v.need + " needs it)", Fix: fix})
			continue
		}
		r.add(Check{Name: v.view, Status: CheckOK, Detail: "answers (" + v.need + ")"})
	}
}

// doctorQueryStore reads whether Query Store is on in the database.
func (s *Session) doctorQueryStore(ctx context.Context, r *DoctorReport) {
	const q = doctorMarker + "query store\nSELECT actual_state_desc FROM sys.database_query_store_options;"
	qctx, done := s.timed(ctx)
	var state *string
	err := s.conn.QueryRowContext(qctx, q).Scan(&state)
	timedOut := done()
	db := "[" + strings.ReplaceAll(s.Info.Database, "]", "]]") + "]"
	switch {
	case err != nil:
		r.add(Check{Name: "Query Store", Status: CheckWarn, Detail: s.fail(err, "reading the Query Store state", timedOut).Error() + " (querystore needs it)",
			Fix: "Query Store needs SQL Server 2016 or later and VIEW DATABASE STATE"})
	case state == nil || *state == "OFF" || *state == "ERROR":
		st := "OFF"
		if state != nil {
			st = *state
		}
		r.add(Check{Name: "Query Store", Status: CheckWarn, Detail: st + " in database " + s.Info.Database + " (querystore needs it)",
			Fix: "ALTER DATABASE " + db + " SET QUERY_STORE = ON;"})
	default:
		r.add(Check{Name: "Query Store", Status: CheckOK, Detail: *state + " in database " + s.Info.Database})
	}
}

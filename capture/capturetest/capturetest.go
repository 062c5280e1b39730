// Package capturetest scripts a fake SQL Server, on top of tdstest, that
// answers the batches package capture sends besides the captured statement:
// the session setup, the catalog facts (from a catalog.Catalog, typically
// read from a CREATE TABLE script), the temporary probe procedure and
// sp_get_query_template. The captured statement itself is answered by an
// Answer (or any handler the test supplies), which refuses to run the
// statement outside SHOWPLAN_XML or a STATISTICS XML transaction.
package capturetest

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planlint/planlint/capture/tdstest"
	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/internal/sharedtest"
)

// Config describes the fake server.
type Config struct {
	// Catalog answers the catalog batch; tables it lacks are not returned.
	Catalog *catalog.Catalog
	// Database is the current database (default "WorkDb").
	Database string
	// ProductVersion is SERVERPROPERTY('ProductVersion') (default
	// "16.0.4215.2").
	ProductVersion string
	// CompatibilityLevel defaults to 160.
	CompatibilityLevel     int
	ParameterizationForced bool
	ReadCommittedSnapshot  bool
	// Statement answers every other request: the captured statement, the
	// EXEC of the probe procedure. Nil leaves them unhandled.
	Statement tdstest.Handler
	// Template answers sp_get_query_template with a template and parameter
	// list, or with fail set, an error.
	Template func(query string) (template, params string, fail *tdstest.Message)
	// User and Password of the login (Password empty: any password).
	User, Password string
	// RejectLogin fails logins (error 18456).
	RejectLogin func(tdstest.Login) bool
	// Denied lists the permissions the login lacks, as doctor reads them:
	// "SHOWPLAN", "VIEW SERVER STATE", "VIEW DATABASE STATE".
	Denied []string
	// ProbeNoSniff makes the plan of doctor's probe procedure carry no
	// compiled value, as a server that does not sniff EXEC's literals
	// under SHOWPLAN_XML would (unverified either way).
	ProbeNoSniff bool
	// QueryStoreState is sys.database_query_store_options.actual_state_desc
	// as doctor reads it (default READ_WRITE).
	QueryStoreState string
	// RPCPlan lets an sp_executesql RPC under SHOWPLAN_XML reach Statement,
	// which then returns a plan ("variant A"). By default the server answers
	// it as SQL Server does, with no plan, and capture falls back to the
	// temporary procedure.
	RPCPlan bool
	// Misbehave is tdstest.Config.Misbehave: a request it returns a
	// misbehaviour for, planlint's own SET and transaction batches
	// included, gets that instead of an answer.
	Misbehave func(tdstest.Request) *tdstest.Misbehaviour
}

// Start starts a fake server for the test, closed at cleanup (which fails
// the test on protocol errors or unhandled requests).
func Start(t testing.TB, cfg Config) *tdstest.Server {
	t.Helper()
	db := cfg.Database
	if db == "" {
		db = "WorkDb"
	}
	return tdstest.Start(t, tdstest.Config{Handler: Handler(cfg), Database: db, User: cfg.User,
		Password: cfg.Password, RejectLogin: cfg.RejectLogin, PlanForRPC: cfg.RPCPlan, Misbehave: cfg.Misbehave})
}

// Marker comments of the batches package capture sends.
const (
	setupMarker   = "-- planlint: session setup"
	catalogMarker = "-- planlint: catalog facts"
	probeName     = "#planlint_probe"
)

// Kinds of request package capture sends, as Classify names them.
const (
	KindSetup     = "setup"
	KindCatalog   = "catalog"
	KindCreate    = "create probe"
	KindDrop      = "drop probe"
	KindTemplate  = "template"
	KindProbeExec = "probe exec"
	KindShowplan  = "showplan"  // SET SHOWPLAN_XML ON or OFF
	KindBegin     = "begin"     // BEGIN TRANSACTION; SET STATISTICS XML ON
	KindRollback  = "rollback"  // SET STATISTICS XML OFF; IF @@TRANCOUNT > 0 ROLLBACK
	KindStatement = "statement" // the captured statement
	KindOther     = "other"     // prelogin, login, attention
)

// Classify names what a recorded request is, for round-trip counts.
func Classify(r tdstest.Request) string {
	sql := strings.TrimSpace(r.SQL)
	switch {
	case r.Kind != tdstest.KindBatch && r.Kind != tdstest.KindRPC:
		return KindOther
	case r.Kind == tdstest.KindRPC && strings.EqualFold(r.Proc, "sp_get_query_template"):
		return KindTemplate
	case r.Kind == tdstest.KindRPC:
		return KindStatement
	case strings.HasPrefix(sql, setupMarker):
		return KindSetup
	case strings.HasPrefix(sql, doctorMarker):
		return KindDoctor
	case strings.HasPrefix(sql, catalogMarker):
		return KindCatalog
	case strings.HasPrefix(sql, "CREATE PROCEDURE "+probeName):
		return KindCreate
	case strings.HasPrefix(sql, "DROP PROCEDURE "+probeName):
		return KindDrop
	case strings.HasPrefix(sql, "EXEC "+probeName):
		return KindProbeExec
	case strings.HasPrefix(sql, "SET SHOWPLAN_XML"):
		return KindShowplan
	case strings.HasPrefix(sql, "BEGIN TRANSACTION"):
		return KindBegin
	case strings.HasPrefix(sql, "SET STATISTICS XML OFF"):
		return KindRollback
	}
	return KindStatement
}

// Handler answers planlint's own batches and passes the rest to
// cfg.Statement.
func Handler(cfg Config) tdstest.Handler {
	return func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
		kind := Classify(*r)
		if kind == KindDoctor {
			return doctorResponse(cfg, s, r)
		}
		if s.ShowplanXML && kind == KindProbeExec && strings.Contains(r.SQL, "@planlint_p") {
			if denied(cfg, "SHOWPLAN") {
				return tdstest.ErrorResponse(tdstest.ErrShowplanDenied(s.Database))
			}
			plan, err := doctorProbePlan(r.SQL, !cfg.ProbeNoSniff)
			if err != nil {
				return tdstest.ErrorResponse(tdstest.Message{Number: 50000, Class: 16, Text: err.Error()})
			}
			return tdstest.EstimatedPlan(plan)
		}
		if s.ShowplanXML && (kind == KindSetup || kind == KindCatalog || kind == KindTemplate || kind == KindCreate || kind == KindDrop) {
			// A real server would return a plan instead of running it (or,
			// for CREATE PROCEDURE, create nothing): leave it unhandled so
			// that the test fails.
			return nil
		}
		switch kind {
		case KindSetup:
			return setupResponse(cfg, s)
		case KindCatalog:
			return catalogResponse(cfg.Catalog, r.SQL)
		case KindCreate, KindDrop:
			if cfg.Statement != nil {
				cfg.Statement(s, r) // lets an Answer see the procedure's text
			}
			return tdstest.NewResponse().Statement(tdstest.CmdNone)
		case KindTemplate:
			template := cfg.Template
			if template == nil {
				template = defaultTemplate
			}
			var query string
			for _, p := range r.Params {
				if strings.EqualFold(p.Name, "@querytext") {
					query, _ = p.Value.(string)
				}
			}
			tmpl, params, fail := template(query)
			if fail != nil {
				return tdstest.ErrorResponse(*fail)
			}
			return tdstest.NewResponse().
				ReturnValue("@templatetext", tdstest.NVarCharMax(""), tmpl).
				ReturnValue("@parameters", tdstest.NVarCharMax(""), params)
		}
		if cfg.Statement == nil {
			return nil
		}
		return cfg.Statement(s, r)
	}
}

func setupResponse(cfg Config, s tdstest.Session) *tdstest.Response {
	version := cfg.ProductVersion
	if version == "" {
		version = "16.0.4215.2"
	}
	compat := cfg.CompatibilityLevel
	if compat == 0 {
		compat = 160
	}
	rs := tdstest.NewResultSet(
		tdstest.NVarChar("database_name", 128), tdstest.NVarChar("product_version", 128),
		tdstest.NVarChar("edition", 128), tdstest.Int("engine_edition"), tdstest.Int("compatibility_level"),
		tdstest.Bit("is_parameterization_forced"), tdstest.Bit("is_read_committed_snapshot_on"),
		tdstest.NVarChar("snapshot_isolation_state_desc", 60),
	).Row(s.Database, version, "Developer Edition (64-bit)", 3, compat, cfg.ParameterizationForced, cfg.ReadCommittedSnapshot, "OFF")
	return tdstest.NewResponse().Result(rs)
}

var tablePair = regexp.MustCompile(`\(N'((?:[^']|'')*)', N'((?:[^']|'')*)'\)`)

// RequestedTables returns the schema and table names a catalog batch asks
// for.
func RequestedTables(sql string) [][2]string {
	values := sql
	if i := strings.Index(sql, "(VALUES "); i >= 0 {
		values = sql[i:]
		if j := strings.Index(values, ") AS w("); j >= 0 {
			values = values[:j+1]
		}
	}
	var out [][2]string
	for _, m := range tablePair.FindAllStringSubmatch(values, -1) {
		out = append(out, [2]string{strings.ReplaceAll(m[1], "''", "'"), strings.ReplaceAll(m[2], "''", "'")})
	}
	return out
}

// catalogResponse answers the catalog batch with the three result sets
// package capture reads, for the requested tables cat knows.
func catalogResponse(cat *catalog.Catalog, sql string) *tdstest.Response {
	name := func(n string) tdstest.Column { return tdstest.NVarChar(n, 128) }
	cols := tdstest.NewResultSet(name("schema_name"), name("table_name"), name("column_name"), name("type_name"),
		tdstest.Int("max_length"), tdstest.Int("precision"), tdstest.Int("scale"), tdstest.Bit("is_nullable"), tdstest.Bit("is_computed"))
	idx := tdstest.NewResultSet(name("schema_name"), name("table_name"), tdstest.Int("index_id"), name("index_name"),
		tdstest.NVarChar("type_desc", 60), tdstest.Bit("is_unique"), tdstest.Bit("is_primary_key"), tdstest.Bit("is_disabled"),
		tdstest.Bit("has_filter"), tdstest.NVarCharMax("filter_definition"),
		tdstest.BigInt("row_count"), tdstest.BigInt("used_pages"), tdstest.DateTime2("last_updated", 3),
		tdstest.BigInt("rows"), tdstest.BigInt("rows_sampled"), tdstest.BigInt("modification_counter"))
	ixCols := tdstest.NewResultSet(name("schema_name"), name("table_name"), tdstest.Int("index_id"), name("column_name"),
		tdstest.Int("key_ordinal"), tdstest.Bit("is_included_column"), tdstest.Bit("is_descending_key"))
	for _, req := range RequestedTables(sql) {
		schema := req[0]
		if schema == "" {
			schema = "dbo"
		}
		t := cat.FindTable("", schema, req[1])
		if t == nil {
			continue
		}
		for _, c := range t.Columns {
			typ, prec, scale := splitType(c.Type)
			cols.Row(t.Schema, t.Name, c.Name, typ, c.MaxLength, prec, scale, c.Nullable, c.Computed)
		}
		next := 2
		for _, ix := range orderIndexes(t) {
			ixID := next
			if ix == t.Clustered() {
				ixID = 1
			} else {
				next++
			}
			var filter any
			if ix.FilterDefinition != "" {
				filter = ix.FilterDefinition
			}
			size := []any{nil, nil}
			if ix.Size != nil {
				size = []any{ix.Size.Rows, ix.Size.UsedPages}
			}
			stats := []any{nil, nil, nil, nil}
			if s := ix.Statistics; s != nil {
				var updated any
				if tm, err := time.Parse("2006-01-02T15:04:05.999", s.LastUpdated); err == nil {
					updated = tm
				}
				stats = []any{updated, s.Rows, s.RowsSampled, s.ModificationCounter}
			}
			row := append([]any{t.Schema, t.Name, ixID, ix.Name, ix.Type, ix.Unique, ix.PrimaryKey, ix.Disabled, ix.FilterDefinition != "", filter}, size...)
			idx.Row(append(row, stats...)...)
			for k, key := range ix.Keys {
				ixCols.Row(t.Schema, t.Name, ixID, key.Name, k+1, false, key.Descending)
			}
			for _, inc := range ix.Includes {
				ixCols.Row(t.Schema, t.Name, ixID, inc, 0, true, false)
			}
		}
	}
	return tdstest.NewResponse().Result(cols).Result(idx).Result(ixCols)
}

// orderIndexes puts the clustered index first, as index_id 1 is.
func orderIndexes(t *catalog.Table) []*catalog.Index {
	var out []*catalog.Index
	if c := t.Clustered(); c != nil {
		out = append(out, c)
	}
	for _, ix := range t.Indexes {
		if ix != t.Clustered() {
			out = append(out, ix)
		}
	}
	return out
}

// splitType returns the sys.types name and the precision and scale of a
// declared type such as "decimal(18,2)" or "datetime2(0)".
func splitType(decl string) (name string, prec, scale int) {
	name = decl
	var args []int
	if i := strings.IndexByte(decl, '('); i >= 0 && strings.HasSuffix(decl, ")") {
		name = decl[:i]
		for _, a := range strings.Split(decl[i+1:len(decl)-1], ",") {
			n, _ := strconv.Atoi(strings.TrimSpace(a))
			args = append(args, n)
		}
	}
	switch name {
	case "decimal", "numeric":
		if len(args) > 0 {
			prec = args[0]
		}
		if len(args) > 1 {
			scale = args[1]
		}
	case "datetime2", "time", "datetimeoffset":
		scale = 7
		if len(args) > 0 {
			scale = args[0]
		}
	}
	return name, prec, scale
}

// Answer answers the captured statement the way a real server would,
// refusing to run it unless a plan is being captured.
type Answer struct {
	// Estimated is the document returned under SHOWPLAN_XML: for a batch,
	// for an RPC when the server passes it on (Config.RPCPlan), and wrapped
	// in the procedure for the EXEC of the probe procedure.
	Estimated string
	// Actual is the document returned under STATISTICS XML inside a
	// transaction; Rows are the statement's own rows (nil: a DML row count).
	Actual string
	Rows   *tdstest.ResultSet
	// Fail makes the statement fail with this error (after Delay).
	Fail *tdstest.Message
	// Delay holds the reply back (an attention cuts it short).
	Delay time.Duration
	// CloseAfterMetadata closes the connection mid-reply.
	CloseAfterMetadata bool
	// ProbeShape is the shape of the probe procedure's plan (default
	// ProbeCurrent).
	ProbeShape ProbeShape
}

// ProbeShape is how a server lays out the plan of EXEC of a procedure.
type ProbeShape int

// Probe plan shapes.
const (
	// ProbeCurrent: one EXECUTE PROC StmtSimple holding the StoredProc.
	ProbeCurrent ProbeShape = iota
	// Probe2008R2: SQL Server 2008 R2's shape, two Statements blocks: the
	// EXECUTE PROC statement alone, then a bare StmtSimple around the
	// StoredProc whose first statement text starts with the procedure's
	// CREATE header.
	Probe2008R2
)

// Handler answers the statement.
func (a Answer) Handler() tdstest.Handler {
	var mu sync.Mutex
	created := map[int]string{} // connection → last CREATE PROCEDURE of the probe
	return func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
		var resp *tdstest.Response
		kind := Classify(*r)
		if kind == KindCreate {
			mu.Lock()
			created[r.Conn] = r.SQL
			mu.Unlock()
			return nil
		}
		probe := kind == KindProbeExec
		switch {
		case s.ShowplanXML && a.Fail != nil, s.StatisticsXML && s.TranCount > 0 && a.Fail != nil:
			resp = tdstest.ErrorResponse(*a.Fail)
		case s.ShowplanXML && probe:
			mu.Lock()
			create := created[r.Conn]
			mu.Unlock()
			wrap := WrapInProcedure
			if a.ProbeShape == Probe2008R2 {
				wrap = func(planXML, call string) (string, error) { return WrapInProcedure2008R2(planXML, call, create) }
			}
			wrapped, err := wrap(a.Estimated, r.SQL)
			if err != nil {
				return tdstest.ErrorResponse(tdstest.Message{Number: 50000, Class: 16, Text: err.Error()})
			}
			resp = tdstest.EstimatedPlan(wrapped)
		case s.ShowplanXML:
			resp = tdstest.EstimatedPlan(a.Estimated)
		case s.StatisticsXML && s.TranCount > 0 && a.Rows != nil:
			resp = tdstest.ActualPlanSelect(a.Rows, a.Actual)
		case s.StatisticsXML && s.TranCount > 0:
			resp = tdstest.ActualPlanDML(tdstest.CmdUpdate, 1, a.Actual)
		default:
			return nil // the statement would run: leave it unhandled, which fails the test
		}
		if a.CloseAfterMetadata {
			resp = resp.CloseAfterMetadata()
		}
		return resp.Delay(a.Delay)
	}
}

var statementID = regexp.MustCompile(`StatementId="(\d+)"`)

// WrapInProcedure turns an estimated plan into the plan of EXEC call of
// the probe procedure: one EXECUTE PROC statement whose StoredProc holds
// the original statements (renumbered after it).
func WrapInProcedure(planXML, call string) (string, error) {
	open := strings.Index(planXML, "<Statements>")
	end := strings.LastIndex(planXML, "</Statements>")
	if open < 0 || end < open {
		return "", fmt.Errorf("plan has no <Statements> element")
	}
	inner := planXML[open+len("<Statements>") : end]
	inner = statementID.ReplaceAllStringFunc(inner, func(m string) string {
		n, _ := strconv.Atoi(statementID.FindStringSubmatch(m)[1])
		return fmt.Sprintf(`StatementId="%d"`, n+1)
	})
	var text strings.Builder
	if err := xml.EscapeText(&text, []byte(call)); err != nil {
		return "", err
	}
	stmt := `<StmtSimple StatementText="` + text.String() +
		`" StatementId="1" StatementCompId="1" StatementType="EXECUTE PROC" RetrievedFromCache="false">` +
		`<StoredProc ProcName="` + probeName + `"><Statements>` + inner + `</Statements></StoredProc></StmtSimple>`
	return planXML[:open] + "<Statements>" + stmt + planXML[end:], nil
}

// WrapInProcedure2008R2 is WrapInProcedure in SQL Server 2008 R2's shape:
// a Statements block with the bare EXECUTE PROC statement, then one with a
// StmtSimple without attributes around the StoredProc, whose first
// statement text starts with create's header (up to and including AS).
func WrapInProcedure2008R2(planXML, call, create string) (string, error) {
	open := strings.Index(planXML, "<Statements>")
	end := strings.LastIndex(planXML, "</Statements>")
	if open < 0 || end < open {
		return "", fmt.Errorf("plan has no <Statements> element")
	}
	inner := planXML[open+len("<Statements>") : end]
	inner = statementID.ReplaceAllStringFunc(inner, func(m string) string {
		n, _ := strconv.Atoi(statementID.FindStringSubmatch(m)[1])
		return fmt.Sprintf(`StatementId="%d"`, n+1)
	})
	header := create
	if i := strings.Index(strings.ToUpper(create), "\nAS\n"); i >= 0 {
		header = create[:i+len("\nAS\n")]
	}
	if i := strings.Index(inner, `StatementText="`); i >= 0 && header != "" {
		var h strings.Builder
		if err := xml.EscapeText(&h, []byte(header)); err != nil {
			return "", err
		}
		at := i + len(`StatementText="`)
		inner = inner[:at] + h.String() + inner[at:]
	}
	var text strings.Builder
	if err := xml.EscapeText(&text, []byte(call)); err != nil {
		return "", err
	}
	stmts := `<Statements><StmtSimple StatementText="` + text.String() +
		`" StatementId="1" StatementCompId="1" StatementType="EXECUTE PROC" RetrievedFromCache="false"/></Statements>` +
		`<Statements><StmtSimple><StoredProc ProcName="` + probeName + `"><Statements>` + inner + `</Statements></StoredProc></StmtSimple></Statements>`
	return planXML[:open] + stmts + planXML[end+len("</Statements>"):], nil
}

// Fixture reads a file of the repository's fixtures folder, e.g.
// "queue/param.sqlplan".
func Fixture(t testing.TB, name string) string {
	t.Helper()
	root := sharedtest.Root()
	if root == "" {
		t.Fatal("repository root (go.mod) not found")
	}
	b, err := os.ReadFile(filepath.Join(root, "fixtures", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// QueueCatalog is the catalog of fixtures/queue/schema.sql.
func QueueCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	cat, diags, err := catalog.ParseScript("schema.sql", strings.NewReader(Fixture(t, "queue/schema.sql")))
	if err != nil || len(diags) > 0 {
		t.Fatalf("schema.sql: %v %v", err, diags)
	}
	return cat
}

// Requests returns the recorded batches and RPCs of a connection (0: all),
// the round trips after login.
func Requests(s *tdstest.Server, conn int) []tdstest.Request {
	var out []tdstest.Request
	for _, r := range s.Requests() {
		if (conn == 0 || r.Conn == conn) && (r.Kind == tdstest.KindBatch || r.Kind == tdstest.KindRPC || r.Kind == tdstest.KindTransaction) {
			out = append(out, r)
		}
	}
	return out
}

package capture

import (
	"strings"
	"testing"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/sqlscript"
)

// TestEstimatedBatch: a plain batch is sent as a SQL batch under
// SHOWPLAN_XML, switched on just before it and off just after it on the
// same connection, and the whole capture costs five round trips.
func TestEstimatedBatch(t *testing.T) {
	plan := capturetest.Fixture(t, "queue/literal.sqlplan")
	srv := queueServer(t, capturetest.Config{Statement: capturetest.Answer{Estimated: plan}.Handler()})
	s := openSession(t, srv, SessionOptions{})
	req := fixtureRequest(t, "literal")
	res, err := s.Explain(testContext(t), req, CaptureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{capturetest.KindSetup, capturetest.KindShowplan, capturetest.KindStatement, capturetest.KindShowplan, capturetest.KindCatalog}
	if got := kinds(srv); !sameStrings(got, want) {
		t.Fatalf("round trips = %q, want %q", got, want)
	}
	reqs := capturetest.Requests(srv, 0)
	for i, r := range reqs {
		if r.Conn != reqs[0].Conn {
			t.Errorf("request %d (%s) on connection %d, want all on %d", i+1, r.Describe(), r.Conn, reqs[0].Conn)
		}
		if r.Reset != (i == 0) {
			t.Errorf("request %d (%s): RESETCONNECTION = %v; only the first request after login may reset", i+1, r.Describe(), r.Reset)
		}
		// Only the statement, and the SET that ends it, run under SHOWPLAN_XML.
		if underShowplan := r.Session.ShowplanXML; underShowplan != (i == 2 || i == 3) {
			t.Errorf("request %d (%s) ran with SHOWPLAN_XML %v", i+1, r.Describe(), underShowplan)
		}
	}
	stmt := reqs[2]
	if stmt.Kind != tdstest.KindBatch || stmt.SQL != req.Text {
		t.Errorf("statement sent as %s %q, want the batch %q", stmt.Kind, stmt.SQL, req.Text)
	}
	if !reqs[1].After.ShowplanXML || reqs[3].After.ShowplanXML {
		t.Error("SHOWPLAN_XML was not switched on and then off around the statement")
	}
	if res.Method != MethodShowplanBatch || len(res.Plans) != 1 || res.Plans[0].XML != plan {
		t.Fatalf("method %q, %d plans", res.Method, len(res.Plans))
	}
	if got := res.Plans[0].Doc.Statements()[0].Text; !strings.Contains(got, "WHERE Status = 0") {
		t.Errorf("parsed plan statement = %q", got)
	}
	work := s.Catalog().FindTable("WorkDb", "dbo", "Work")
	if work == nil || work.Database != "WorkDb" {
		t.Fatalf("catalog lacks WorkDb.dbo.Work: %+v", s.Catalog().Tables)
	}
	ix := work.FindIndex("IX_Work_Pending")
	if ix == nil || ix.Filter == nil || len(ix.Keys) != 2 || ix.Keys[0].Name != "CreatedAt" || len(ix.Includes) != 1 {
		t.Errorf("IX_Work_Pending = %+v", ix)
	}
}

// TestSessionSetup: the first batch sets all seven options explicitly,
// with the driver defaults, the SSMS preset or explicit overrides, and
// reads the database facts.
func TestSessionSetup(t *testing.T) {
	tests := []struct {
		name string
		set  func() SetOptions
		want map[string]string
	}{
		{"driver", DriverSetOptions, map[string]string{"ARITHABORT": "OFF", "ANSI_WARNINGS": "ON", "NUMERIC_ROUNDABORT": "OFF", "QUOTED_IDENTIFIER": "ON"}},
		{"ssms", SSMSSetOptions, map[string]string{"ARITHABORT": "ON", "ANSI_NULLS": "ON"}},
		{"explicit", func() SetOptions {
			o := DriverSetOptions()
			if err := o.Apply("ansi_nulls=off"); err != nil {
				t.Fatal(err)
			}
			return o
		}, map[string]string{"ANSI_NULLS": "OFF", "ARITHABORT": "OFF"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := queueServer(t, capturetest.Config{ParameterizationForced: true, CompatibilityLevel: 150, ProductVersion: "15.0.4355.3"})
			s := openSession(t, srv, SessionOptions{SetOptions: tt.set()})
			setup := requestsOf(srv, capturetest.KindSetup)
			if len(setup) != 1 {
				t.Fatalf("%d setup batches", len(setup))
			}
			for _, name := range SetOptionNames {
				if n := strings.Count(setup[0].SQL, "SET "+name+" "); n != 1 {
					t.Errorf("setup sets %s %d times, want once", name, n)
				}
			}
			for name, v := range tt.want {
				if !strings.Contains(setup[0].SQL, "SET "+name+" "+v+";") {
					t.Errorf("setup lacks SET %s %s:\n%s", name, v, setup[0].SQL)
				}
			}
			info := s.Info
			if info.Database != "WorkDb" || !info.ParameterizationForced || info.CompatibilityLevel != 150 || info.MajorVersion != 15 {
				t.Errorf("Info = %+v", info)
			}
			db := s.Catalog().FindDatabase("WorkDb")
			if db == nil || !db.ParameterizationForced || s.Catalog().Server.ProductVersion != "15.0.4355.3" {
				t.Errorf("catalog database/server = %+v / %+v", db, s.Catalog().Server)
			}
		})
	}
}

// TestRPCByName: an EXEC sp_executesql call arrives as an RPC to
// sp_executesql by name, with the user's declaration and typed values.
func TestRPCByName(t *testing.T) {
	plan := capturetest.Fixture(t, "queue/param.sqlplan")
	tests := []struct {
		name      string
		req       func(t *testing.T) sqlscript.Request
		wantDecl  string
		wantValue any
	}{
		{"sp_executesql call", func(t *testing.T) sqlscript.Request { return fixtureRequest(t, "param") }, "@Status tinyint", int64(0)},
		{"annotation", func(t *testing.T) sqlscript.Request {
			return request(t, "-- @Status tinyint = 0\nSELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE Status = @Status ORDER BY CreatedAt, WorkId")
		}, "@Status tinyint", int64(0)},
		{"--param override", func(t *testing.T) sqlscript.Request {
			return request(t, capturetest.Fixture(t, "queue/param.sql"), "@Status=1")
		}, "@Status tinyint", int64(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := queueServer(t, capturetest.Config{RPCPlan: true, Statement: capturetest.Answer{Estimated: plan}.Handler()})
			s := openSession(t, srv, SessionOptions{})
			req := tt.req(t)
			res, err := s.Explain(testContext(t), req, CaptureOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Method != MethodShowplanRPC {
				t.Errorf("method = %q", res.Method)
			}
			if got := kinds(srv); len(got) != 5 {
				t.Errorf("round trips = %q, want 5", got)
			}
			rpcs := requestsOf(srv, capturetest.KindStatement)
			if len(rpcs) != 1 {
				t.Fatalf("%d statement requests", len(rpcs))
			}
			r := rpcs[0]
			if r.Kind != tdstest.KindRPC || r.Proc != "sp_executesql" || r.ProcID != 0 {
				t.Fatalf("statement sent as %s (proc %q, id %d), want an RPC to sp_executesql by name", r.Kind, r.Proc, r.ProcID)
			}
			if !r.Session.ShowplanXML {
				t.Error("RPC not under SHOWPLAN_XML")
			}
			if r.SQL != req.Text || r.ParamDecl != tt.wantDecl {
				t.Errorf("stmt/params = %q / %q", r.SQL, r.ParamDecl)
			}
			if len(r.Params) != 3 || r.Params[0].Name != "@stmt" || r.Params[1].Name != "@params" || r.Params[2].Name != "@Status" {
				t.Fatalf("params = %+v", r.Params)
			}
			if r.Params[2].Value != tt.wantValue {
				t.Errorf("@Status = %#v, want %#v", r.Params[2].Value, tt.wantValue)
			}
		})
	}
}

// TestNoPlanFallback: when the RPC under SHOWPLAN_XML returns no plan, the
// statement is compiled as the temporary probe procedure with the same
// declaration and values; later RPCs of the session go there directly.
func TestNoPlanFallback(t *testing.T) {
	for _, shape := range []struct {
		name  string
		shape capturetest.ProbeShape
	}{{"current shape", capturetest.ProbeCurrent}, {"SQL Server 2008 R2 shape", capturetest.Probe2008R2}} {
		t.Run(shape.name, func(t *testing.T) { testNoPlanFallback(t, shape.shape) })
	}
}

func testNoPlanFallback(t *testing.T, shape capturetest.ProbeShape) {
	plan := capturetest.Fixture(t, "queue/param.sqlplan")
	srv := queueServer(t, capturetest.Config{Statement: capturetest.Answer{Estimated: plan, ProbeShape: shape}.Handler()})
	s := openSession(t, srv, SessionOptions{})
	req := fixtureRequest(t, "param")
	res, err := s.Explain(testContext(t), req, CaptureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{capturetest.KindSetup,
		capturetest.KindShowplan, capturetest.KindStatement, capturetest.KindShowplan,
		capturetest.KindCreate, capturetest.KindShowplan, capturetest.KindProbeExec, capturetest.KindShowplan, capturetest.KindDrop,
		capturetest.KindCatalog}
	if got := kinds(srv); !sameStrings(got, want) {
		t.Fatalf("round trips = %q, want %q", got, want)
	}
	create := requestsOf(srv, capturetest.KindCreate)[0]
	if wantCreate := "CREATE PROCEDURE #planlint_probe\n    @Status tinyint\nAS\n" + req.Text; create.SQL != wantCreate || create.Session.ShowplanXML {
		t.Errorf("create = %q (under SHOWPLAN_XML %v), want %q", create.SQL, create.Session.ShowplanXML, wantCreate)
	}
	exec := requestsOf(srv, capturetest.KindProbeExec)[0]
	if exec.SQL != "EXEC #planlint_probe @Status = 0;" || !exec.Session.ShowplanXML || exec.Kind != tdstest.KindBatch {
		t.Errorf("probe exec = %s %q (SHOWPLAN_XML %v)", exec.Kind, exec.SQL, exec.Session.ShowplanXML)
	}
	if drop := requestsOf(srv, capturetest.KindDrop)[0]; drop.Session.ShowplanXML {
		t.Error("DROP PROCEDURE sent under SHOWPLAN_XML")
	}
	if res.Method != MethodShowplanProc || !strings.Contains(res.Note(), "no plan for the sp_executesql RPC") {
		t.Errorf("method %q, note %q", res.Method, res.Note())
	}
	stmts := res.Plans[0].Doc.Statements()
	wantText := req.Text
	if shape == capturetest.Probe2008R2 {
		// The bare StmtSimple around the StoredProc is a statement of its
		// own, without text or type; the first inner statement's text
		// starts with the CREATE header.
		if len(stmts) != 3 || stmts[1].Type != "" || stmts[1].Text != "" {
			t.Fatalf("plan statements = %d, want EXECUTE PROC, the bare StmtSimple and the statement", len(stmts))
		}
		stmts = append(stmts[:1], stmts[2])
		wantText = "CREATE PROCEDURE #planlint_probe\n    @Status tinyint\nAS\n" + req.Text
	}
	if len(stmts) != 2 || stmts[0].Type != "EXECUTE PROC" || stmts[1].Text != wantText {
		t.Fatalf("plan statements = %d (%+v)", len(stmts), stmts)
	}
	if stmts[1].QueryPlan == nil {
		t.Errorf("the procedure's statement has no query plan")
	}

	// The second RPC of the session skips the doomed attempt and needs no
	// catalog facts.
	before := len(kinds(srv))
	if _, err := s.Explain(testContext(t), req, CaptureOptions{}); err != nil {
		t.Fatal(err)
	}
	want = []string{capturetest.KindCreate, capturetest.KindShowplan, capturetest.KindProbeExec, capturetest.KindShowplan, capturetest.KindDrop}
	if got := kinds(srv)[before:]; !sameStrings(got, want) {
		t.Errorf("second capture = %q, want %q", got, want)
	}
}

// TestForcedParameterization: --parameterization forced on a SIMPLE
// database compiles the template with the statement's literals; a FORCED
// database gets the batch as is.
func TestForcedParameterization(t *testing.T) {
	const template = "select top ( 20 ) WorkId , CreatedAt , CustomerId from dbo . Work where Status = @0 order by CreatedAt , WorkId"
	forced := capturetest.Fixture(t, "queue/forced.sqlplan")
	emulated := strings.Replace(forced, `StatementParameterizationType="3"`, `StatementParameterizationType="1"`, 1)
	templateFn := func(query string) (string, string, *tdstest.Message) {
		if !strings.Contains(query, "WHERE Status = 0") {
			return "", "", &tdstest.Message{Number: 8155, Class: 16, Text: "unexpected query"}
		}
		return template, "@0 int", nil
	}

	t.Run("emulated", func(t *testing.T) {
		srv := queueServer(t, capturetest.Config{Template: templateFn,
			RPCPlan: true, Statement: capturetest.Answer{Estimated: emulated}.Handler()})
		s := openSession(t, srv, SessionOptions{})
		req := fixtureRequest(t, "forced")
		res, err := s.Explain(testContext(t), req, CaptureOptions{Parameterization: EmulateForced})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{capturetest.KindSetup, capturetest.KindTemplate, capturetest.KindShowplan,
			capturetest.KindStatement, capturetest.KindShowplan, capturetest.KindCatalog}
		if got := kinds(srv); !sameStrings(got, want) {
			t.Fatalf("round trips = %q, want %q", got, want)
		}
		tpl := requestsOf(srv, capturetest.KindTemplate)[0]
		if tpl.Params[0].Value != req.Text || tpl.Session.ShowplanXML {
			t.Errorf("sp_get_query_template got %+v", tpl.Params[0])
		}
		rpc := requestsOf(srv, capturetest.KindStatement)[0]
		if rpc.Kind != tdstest.KindRPC || rpc.SQL != template || rpc.ParamDecl != "@0 int" {
			t.Fatalf("sent %s %q / %q", rpc.Kind, rpc.SQL, rpc.ParamDecl)
		}
		// @0 is not a name database/sql accepts, so the values go by position.
		if len(rpc.Params) != 3 || rpc.Params[2].Name != "" || rpc.Params[2].Value != int64(0) {
			t.Errorf("params = %+v, want the literal 0 third, unnamed", rpc.Params)
		}
		if res.Template == nil || !strings.Contains(res.Note(), "Forced parameterization emulated") {
			t.Errorf("template %+v, note %q", res.Template, res.Note())
		}
		if got := res.Plans[0].Doc.Statements()[0].ParameterizationType; got.String() != "user" {
			t.Errorf("StatementParameterizationType = %v, want user (1)", got)
		}
	})

	t.Run("emulated, no plan for the RPC", func(t *testing.T) {
		srv := queueServer(t, capturetest.Config{Template: templateFn,
			Statement: capturetest.Answer{Estimated: emulated}.Handler()})
		s := openSession(t, srv, SessionOptions{})
		res, err := s.Explain(testContext(t), fixtureRequest(t, "forced"), CaptureOptions{Parameterization: EmulateForced})
		if err != nil {
			t.Fatal(err)
		}
		create := requestsOf(srv, capturetest.KindCreate)
		exec := requestsOf(srv, capturetest.KindProbeExec)
		if len(create) != 1 || create[0].SQL != "CREATE PROCEDURE #planlint_probe\n    @0 int\nAS\n"+template ||
			len(exec) != 1 || exec[0].SQL != "EXEC #planlint_probe @0 = 0;" {
			t.Fatalf("probe requests = %q", kinds(srv))
		}
		if res.Method != MethodShowplanProc || !strings.Contains(res.Note(), "Forced parameterization emulated") {
			t.Errorf("method %q, note %q", res.Method, res.Note())
		}
	})

	t.Run("database forced", func(t *testing.T) {
		srv := queueServer(t, capturetest.Config{ParameterizationForced: true,
			Statement: capturetest.Answer{Estimated: forced}.Handler()})
		s := openSession(t, srv, SessionOptions{})
		req := fixtureRequest(t, "forced")
		res, err := s.Explain(testContext(t), req, CaptureOptions{Parameterization: EmulateForced})
		if err != nil {
			t.Fatal(err)
		}
		if got := kinds(srv); len(got) != 5 || len(requestsOf(srv, capturetest.KindTemplate)) != 0 {
			t.Errorf("round trips = %q, want 5 without sp_get_query_template", got)
		}
		if stmt := requestsOf(srv, capturetest.KindStatement)[0]; stmt.Kind != tdstest.KindBatch || stmt.SQL != req.Text {
			t.Errorf("statement sent as %s %q", stmt.Kind, stmt.SQL)
		}
		if !strings.Contains(res.Note(), "uses PARAMETERIZATION FORCED") {
			t.Errorf("note = %q", res.Note())
		}
	})

	t.Run("template does not match", func(t *testing.T) {
		srv := queueServer(t, capturetest.Config{Template: func(string) (string, string, *tdstest.Message) {
			return "select 1 where 2 = @0", "@0 int", nil
		}})
		s := openSession(t, srv, SessionOptions{})
		_, err := s.Explain(testContext(t), fixtureRequest(t, "forced"), CaptureOptions{Parameterization: EmulateForced})
		e, ok := err.(*Error)
		if !ok || e.Kind != ErrStatement || !strings.Contains(e.Error(), "cannot match the template") {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("server refuses", func(t *testing.T) {
		srv := queueServer(t, capturetest.Config{Template: func(string) (string, string, *tdstest.Message) {
			return "", "", &tdstest.Message{Number: 8155, State: 1, Class: 16, Text: "The query cannot be parameterized."}
		}})
		s := openSession(t, srv, SessionOptions{})
		_, err := s.Explain(testContext(t), fixtureRequest(t, "forced"), CaptureOptions{Parameterization: EmulateForced})
		e, ok := err.(*Error)
		if !ok || e.Number != 8155 || e.Step != "sp_get_query_template" {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestCatalogFactsInOneBatch: the facts of every table the plan touches
// come from one batch, equal the facts of the schema script, and are not
// read twice.
func TestCatalogFactsInOneBatch(t *testing.T) {
	cat := capturetest.QueueCatalog(t)
	work := cat.FindTable("", "dbo", "Work")
	work.Clustered().Size = &catalog.IndexSize{Rows: 5_000_000, UsedPages: 384_615}
	pending := work.FindIndex("IX_Work_Pending")
	pending.Size = &catalog.IndexSize{Rows: 60_000, UsedPages: 193}
	pending.Statistics = &catalog.StatisticsFacts{LastUpdated: "2025-11-01T02:00:14.87", Rows: 200, RowsSampled: 200, ModificationCounter: 61_500}
	srv := queueServer(t, capturetest.Config{Catalog: cat,
		RPCPlan: true, Statement: capturetest.Answer{Estimated: capturetest.Fixture(t, "queue/claim-racy.sqlplan")}.Handler()})
	s := openSession(t, srv, SessionOptions{})
	req := fixtureRequest(t, "claim-racy")
	for i := 0; i < 2; i++ {
		if _, err := s.Explain(testContext(t), req, CaptureOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	batches := requestsOf(srv, capturetest.KindCatalog)
	if len(batches) != 1 {
		t.Fatalf("%d catalog batches, want 1 for two captures of the same table", len(batches))
	}
	if got := capturetest.RequestedTables(batches[0].SQL); len(got) != 1 || got[0] != [2]string{"dbo", "Work"} {
		t.Errorf("requested tables = %q", got)
	}
	if !strings.Contains(batches[0].SQL, "sys.dm_db_stats_properties(i.object_id, i.index_id)") {
		t.Errorf("the catalog batch does not read the statistics' freshness:\n%s", batches[0].SQL)
	}
	// The facts read back equal the script's, apart from the database.
	for _, tb := range cat.Tables {
		tb.Database = "WorkDb"
	}
	var want, got strings.Builder
	if err := catalog.Write(&want, &catalog.Catalog{Tables: cat.Tables}); err != nil {
		t.Fatal(err)
	}
	if err := catalog.Write(&got, &catalog.Catalog{Tables: s.Catalog().Tables}); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("catalog facts differ from schema.sql:\n--- got\n%s\n--- want\n%s", got.String(), want.String())
	}
	for _, ix := range s.Catalog().FindTable("", "dbo", "Work").Indexes {
		if ix.FilterDefinition != "" && ix.Filter == nil {
			t.Errorf("index %s: filter %q not parsed: %s", ix.Name, ix.FilterDefinition, ix.FilterError)
		}
	}
}

// TestCatalogSQLEscapesNames: names travel as N'…' literals, so quotes
// and brackets in them cannot change the batch.
func TestCatalogSQLEscapesNames(t *testing.T) {
	tables := []TableName{{Schema: "dbo", Name: "Work"}, {Schema: "we'ird]", Name: "x'); DROP TABLE t; --"}, {Schema: "", Name: "Ünï"}}
	sql := catalogSQL(tables, true)
	got := capturetest.RequestedTables(sql)
	if len(got) != 3 || got[1] != [2]string{"we'ird]", "x'); DROP TABLE t; --"} || got[2] != [2]string{"", "Ünï"} {
		t.Fatalf("names read back = %q", got)
	}
	if !strings.Contains(sql, "N'x''); DROP TABLE t; --'") {
		t.Errorf("quote not doubled:\n%s", sql)
	}
	// Outside the literals the batch is the same whatever the names.
	strip := func(s string) string {
		var b strings.Builder
		for _, tok := range sqlscript.CodeTokens(s) {
			if tok.Literal == nil {
				b.WriteString(tok.Text + " ")
			}
		}
		return b.String()
	}
	if strip(sql) != strip(catalogSQL([]TableName{{"", "a", "b"}, {"", "c", "d"}, {"", "e", "f"}}, true)) {
		t.Error("names changed the code of the batch")
	}
}

func TestTablesOf(t *testing.T) {
	planXML := capturetest.Fixture(t, "queue/claim-atomic.sqlplan")
	res := &Result{}
	if err := (&Session{}).addPlans(res, []string{planXML}); err != nil {
		t.Fatal(err)
	}
	local, other := TablesOf([]*plan.Document{res.Plans[0].Doc}, "WorkDb")
	if len(local) != 1 || local[0].Name != "Work" || local[0].Schema != "dbo" || len(other) != 0 {
		t.Errorf("local %v, other %v", local, other)
	}
	local, other = TablesOf([]*plan.Document{res.Plans[0].Doc}, "OtherDb")
	if len(local) != 0 || len(other) != 1 {
		t.Errorf("in another database: local %v, other %v", local, other)
	}
}

// TestCatalogAnswerChecked: a catalog answer that is not the three
// expected result sets is an error, not an empty catalog.
func TestCatalogAnswerChecked(t *testing.T) {
	name := func(n string) tdstest.Column { return tdstest.NVarChar(n, 128) }
	columns := func() *tdstest.ResultSet {
		return tdstest.NewResultSet(name("schema_name"), name("table_name"), name("column_name"), name("type_name"),
			tdstest.Int("max_length"), tdstest.Int("precision"), tdstest.Int("scale"), tdstest.Bit("is_nullable"), tdstest.Bit("is_computed"))
	}
	tests := []struct {
		name   string
		answer *tdstest.Response
		want   string
	}{
		{"wrong columns", tdstest.NewResponse().Result(tdstest.NewResultSet(name("schema_name")).Row("dbo")), "reading catalog facts: unexpected column row"},
		{"one result set", tdstest.NewResponse().Result(columns()), "the catalog batch returned 1 result sets, want 3 (no indexes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := capturetest.Handler(capturetest.Config{Catalog: capturetest.QueueCatalog(t),
				Statement: capturetest.Answer{Estimated: capturetest.Fixture(t, "queue/literal.sqlplan")}.Handler()})
			srv := tdstest.Start(t, tdstest.Config{Database: "WorkDb", Handler: func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
				if capturetest.Classify(*r) == capturetest.KindCatalog {
					return tt.answer
				}
				return base(s, r)
			}})
			s := openSession(t, srv, SessionOptions{})
			_, err := s.Explain(testContext(t), fixtureRequest(t, "literal"), CaptureOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestCatalogWithoutStatsProperties: before SQL Server 2012 SP1 the batch
// does not name sys.dm_db_stats_properties, which would fail it.
func TestCatalogWithoutStatsProperties(t *testing.T) {
	srv := queueServer(t, capturetest.Config{ProductVersion: "10.50.4000.0",
		Statement: capturetest.Answer{Estimated: capturetest.Fixture(t, "queue/literal.sqlplan")}.Handler()})
	s := openSession(t, srv, SessionOptions{})
	if _, err := s.Explain(testContext(t), fixtureRequest(t, "literal"), CaptureOptions{}); err != nil {
		t.Fatal(err)
	}
	batches := requestsOf(srv, capturetest.KindCatalog)
	if len(batches) != 1 {
		t.Fatalf("%d catalog batches", len(batches))
	}
	if strings.Contains(batches[0].SQL, "dm_db_stats_properties") || !strings.Contains(batches[0].SQL, "CAST(NULL AS bigint) AS modification_counter") {
		t.Errorf("catalog batch for SQL Server 2008 R2:\n%s", batches[0].SQL)
	}
}

// TestCatalogUnderShowplanIsRefused: the fake server does not answer
// planlint's own batches under SHOWPLAN_XML (a real server would return
// their plan, not their rows), so a capture that forgot SHOWPLAN_XML OFF
// cannot pass.
func TestCatalogUnderShowplanIsRefused(t *testing.T) {
	srv, err := tdstest.NewServer(tdstest.Config{Handler: capturetest.Handler(capturetest.Config{Catalog: capturetest.QueueCatalog(t)}), Database: "WorkDb"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s := openSession(t, srv, SessionOptions{})
	ctx := testContext(t)
	if err := s.exec(ctx, "SET SHOWPLAN_XML ON", "SET SHOWPLAN_XML ON"); err != nil {
		t.Fatal(err)
	}
	if err := s.readCatalog(ctx, []TableName{{Schema: "dbo", Name: "Work"}}); err == nil {
		t.Fatal("the catalog batch was answered under SHOWPLAN_XML")
	}
	if u := srv.Unhandled(); len(u) != 1 || capturetest.Classify(u[0]) != capturetest.KindCatalog {
		t.Errorf("unhandled = %v, want the catalog batch", u)
	}
}

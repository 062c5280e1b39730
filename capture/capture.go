package capture

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/sqlscript"
)

// ShowplanColumn is the name SQL Server gives the column of a showplan
// result set, for SHOWPLAN_XML and STATISTICS XML alike.
const ShowplanColumn = "Microsoft SQL Server 2005 XML Showplan"

// ProbeProcedure is the temporary procedure of the no-plan fallback.
const ProbeProcedure = "#planlint_probe"

// Mode says whether the statement runs.
type Mode int

// Modes.
const (
	// Estimated compiles the statement under SET SHOWPLAN_XML ON without
	// running it.
	Estimated Mode = iota
	// Actual runs the statement under SET STATISTICS XML ON inside a
	// transaction that is always rolled back.
	Actual
)

// Parameterization says how a statement's literals are compiled.
type Parameterization int

// Parameterizations.
const (
	// AsSent sends the statement as the application does: a database with
	// PARAMETERIZATION FORCED parameterizes a plain batch itself.
	AsSent Parameterization = iota
	// EmulateForced compiles a plain batch as forced parameterization
	// would, even in a database with SIMPLE parameterization: the template
	// from sp_get_query_template is sent through sp_executesql with the
	// statement's own literals as values.
	EmulateForced
)

// Methods say how a plan was produced (report.Capture.Method).
const (
	MethodShowplanBatch   = "showplan_xml batch"
	MethodShowplanRPC     = "showplan_xml rpc sp_executesql"
	MethodShowplanProc    = "showplan_xml temporary procedure"
	MethodStatisticsBatch = "statistics_xml batch"
	MethodStatisticsRPC   = "statistics_xml rpc sp_executesql"
)

// CaptureOptions choose how a statement is captured.
type CaptureOptions struct {
	Mode             Mode
	Parameterization Parameterization
}

// Plan is one showplan document: as the server sent it, and parsed.
type Plan struct {
	XML string
	Doc *plan.Document
}

// Result is the capture of one request.
type Result struct {
	// Plans are the documents in the order the server sent them: one for
	// an estimated plan, one per statement for an actual plan.
	Plans []Plan
	// Method is one of the Method constants.
	Method string
	// Notes explain anything about the capture a reader should know:
	// the fallback, emulated or database-forced parameterization, tables
	// without catalog facts.
	Notes []string
	// Sent is what was compiled: the request given, or for emulated forced
	// parameterization the template with its parameters.
	Sent sqlscript.Request
	// Template is set when forced parameterization was emulated.
	Template *Template
	// OtherTables are tables the plans touch whose facts were not read:
	// temporary tables and tables of other databases.
	OtherTables []TableName
}

// Note joins the notes into one paragraph.
func (r *Result) Note() string { return strings.Join(r.Notes, " ") }

// Explain captures the plan of one request the way the options say and
// reads the catalog facts of the tables its plans touch (those not read
// before in this session). After login, an estimated plan of one statement
// costs five round trips, the session setup included: setup, SHOWPLAN_XML
// ON, the statement, SHOWPLAN_XML OFF, catalog. An actual plan costs the
// same five with BEGIN TRANSACTION and ROLLBACK riding on the ON and OFF
// batches.
func (s *Session) Explain(ctx context.Context, req sqlscript.Request, o CaptureOptions) (*Result, error) {
	if s.broken {
		return nil, &Error{Kind: ErrConnectionLost, Step: "capturing", Message: "the session was closed after a failed rollback"}
	}
	if err := ctx.Err(); err != nil {
		return nil, s.fail(err, "capturing", false)
	}
	res := &Result{Sent: req}
	if err := s.parameterize(ctx, res, o.Parameterization); err != nil {
		return res, err
	}
	var err error
	if o.Mode == Actual {
		err = s.actual(ctx, res)
	} else {
		err = s.estimated(ctx, res)
	}
	if err != nil {
		return res, err
	}
	docs := make([]*plan.Document, len(res.Plans))
	for i := range res.Plans {
		docs[i] = res.Plans[i].Doc
	}
	local, other := TablesOf(docs, s.Info.Database)
	res.OtherTables = other
	if len(other) > 0 {
		names := make([]string, len(other))
		for i, t := range other {
			names[i] = t.String()
		}
		res.Notes = append(res.Notes, fmt.Sprintf("No catalog facts for %s (temporary tables and other databases are not read).", strings.Join(names, ", ")))
	}
	if err := s.readCatalog(ctx, local); err != nil {
		return res, err
	}
	return res, nil
}

// parameterize applies the parameterization option to res.Sent.
func (s *Session) parameterize(ctx context.Context, res *Result, p Parameterization) error {
	req := res.Sent
	switch {
	case req.Kind == sqlscript.RPC && p == EmulateForced:
		res.Notes = append(res.Notes, "--parameterization forced has no effect here: the statement is already sent with parameters.")
	case req.Kind == sqlscript.SQLBatch && s.Info.ParameterizationForced:
		res.Notes = append(res.Notes, fmt.Sprintf("Database %s uses PARAMETERIZATION FORCED: the server parameterized the batch's literals, as it does for the application.", s.Info.Database))
	case req.Kind == sqlscript.SQLBatch && p == EmulateForced:
		if !hasLiteral(req.Text) {
			res.Notes = append(res.Notes, "--parameterization forced has no effect here: the statement has no literal to parameterize.")
			return nil
		}
		if len(req.Statements) > 1 {
			return &Error{Kind: ErrStatement, Step: "emulating forced parameterization",
				Message: fmt.Sprintf("the batch has %d statements; sp_get_query_template parameterizes one statement", len(req.Statements)),
				Hint:    "put each statement in its own batch (separate them with GO)"}
		}
		tpl, err := s.queryTemplate(ctx, req.Text)
		if err != nil {
			return err
		}
		res.Template = tpl
		res.Sent = tpl.Request(req)
		res.Notes = append(res.Notes, fmt.Sprintf("Forced parameterization emulated (database %s uses SIMPLE): sp_get_query_template gave %q with parameters %q, sent through sp_executesql with the statement's literals as values; expect StatementParameterizationType 1 rather than 3.",
			s.Info.Database, tpl.Text, tpl.Declaration))
	}
	return nil
}

func hasLiteral(text string) bool {
	for _, t := range sqlscript.CodeTokens(text) {
		if t.Literal != nil {
			return true
		}
	}
	return false
}

// queryTemplate asks sp_get_query_template for the parameterized form of a
// statement and aligns it with the statement.
func (s *Session) queryTemplate(ctx context.Context, text string) (*Template, error) {
	const step = "sp_get_query_template"
	var tmpl, params string
	qctx, done := s.timed(ctx)
	_, err := s.conn.ExecContext(qctx, "sp_get_query_template", sql.Named("querytext", text),
		sql.Named("templatetext", sql.Out{Dest: &tmpl}), sql.Named("parameters", sql.Out{Dest: &params}))
	if timedOut := done(); err != nil {
		e := s.fail(err, step, timedOut)
		if e.Kind == ErrServer && e.Hint == "" {
			e.Hint = "the statement must compile and hold a literal forced parameterization would replace"
		}
		return nil, e
	}
	tpl, err := AlignTemplate(text, tmpl, params)
	if err != nil {
		return nil, &Error{Kind: ErrStatement, Step: step, Err: err,
			Message: fmt.Sprintf("cannot match the template %q to the statement: %v", tmpl, err)}
	}
	return tpl, nil
}

// estimated captures under SHOWPLAN_XML, falling back to the temporary
// procedure when an RPC gives no plan.
func (s *Session) estimated(ctx context.Context, res *Result) error {
	req := res.Sent
	if req.Kind == sqlscript.RPC && s.rpcNoPlan {
		return s.probe(ctx, res, "Earlier in this session the server returned no plan for an sp_executesql RPC under SHOWPLAN_XML")
	}
	plans, err := s.underShowplan(ctx, func(ctx context.Context) ([]string, error) {
		return s.send(ctx, req, "compiling the statement", true)
	})
	if err != nil {
		return err
	}
	if len(plans) == 0 {
		if req.Kind == sqlscript.RPC {
			s.rpcNoPlan = true
			return s.probe(ctx, res, "The server returned no plan for the sp_executesql RPC under SHOWPLAN_XML")
		}
		return &Error{Kind: ErrNoPlan, Step: "compiling the statement", Message: "the server returned no showplan document for the batch"}
	}
	res.Method = MethodShowplanBatch
	if req.Kind == sqlscript.RPC {
		res.Method = MethodShowplanRPC
	}
	return s.addPlans(res, plans)
}

// underShowplan runs fn between SET SHOWPLAN_XML ON and OFF; OFF is sent
// even when fn fails or the context is cancelled.
func (s *Session) underShowplan(ctx context.Context, fn func(context.Context) ([]string, error)) ([]string, error) {
	if err := s.exec(ctx, "SET SHOWPLAN_XML ON", "SET SHOWPLAN_XML ON"); err != nil {
		return nil, err
	}
	plans, err := fn(ctx)
	offErr := s.exec(cleanupContext(ctx), "SET SHOWPLAN_XML OFF", "SET SHOWPLAN_XML OFF")
	var e *Error
	if why := s.dialer.current().cutReason(); err != nil && offErr != nil && why != "" && errors.As(err, &e) &&
		!strings.Contains(e.Hint, why) {
		e.Hint = joinHints(e.Hint, "planlint closed the connection during SET SHOWPLAN_XML OFF because "+why)
	}
	if err != nil {
		return plans, err
	}
	return plans, offErr
}

// probe compiles an RPC's statement as the temporary procedure
// ProbeProcedure with the same declaration, and EXECs it with the same
// values under SHOWPLAN_XML: the parameters stay parameters and are sniffed
// as sp_executesql's are.
func (s *Session) probe(ctx context.Context, res *Result, why string) error {
	req := res.Sent
	create := "CREATE PROCEDURE " + ProbeProcedure
	if strings.TrimSpace(req.Declaration) != "" {
		create += "\n    " + req.Declaration
	}
	create += "\nAS\n" + req.Text
	if err := s.exec(ctx, "creating the temporary procedure "+ProbeProcedure, create); err != nil {
		return err
	}
	defer s.exec(cleanupContext(ctx), "dropping the temporary procedure "+ProbeProcedure, "DROP PROCEDURE "+ProbeProcedure)
	call := probeCall(req)
	plans, err := s.underShowplan(ctx, func(ctx context.Context) ([]string, error) {
		return s.send(ctx, sqlscript.Request{Kind: sqlscript.SQLBatch, Text: call}, "compiling the statement as "+ProbeProcedure, true)
	})
	if err != nil {
		return err
	}
	if len(plans) == 0 {
		return &Error{Kind: ErrNoPlan, Step: "compiling the statement as " + ProbeProcedure,
			Message: "the server returned no showplan document for the RPC nor for the temporary procedure"}
	}
	res.Method = MethodShowplanProc
	res.Notes = append(res.Notes, fmt.Sprintf("%s, so the statement was compiled as the temporary procedure %s with the same parameter declaration and called with the same values (%s); procedure parameters are sniffed like sp_executesql parameters.",
		why, ProbeProcedure, call))
	return s.addPlans(res, plans)
}

// probeCall is the EXEC of ProbeProcedure with the request's values as
// literals (NULL for the variable of an OUTPUT argument).
func probeCall(req sqlscript.Request) string {
	args := make([]string, len(req.Params))
	for i, p := range req.Params {
		v := p.Value.Text
		if p.Value.Kind == sqlscript.LiteralVariable || v == "" {
			v = "NULL"
		}
		args[i] = p.Name + " = " + v
	}
	call := "EXEC " + ProbeProcedure
	if len(args) > 0 {
		call += " " + strings.Join(args, ", ")
	}
	return call + ";"
}

// actual runs the statement under STATISTICS XML inside a transaction that
// is rolled back whatever happens.
func (s *Session) actual(ctx context.Context, res *Result) error {
	req := res.Sent
	beginErr := s.exec(ctx, "starting the rollback-only transaction", "BEGIN TRANSACTION;\nSET STATISTICS XML ON;")
	var plans []string
	var err error
	if beginErr == nil {
		plans, err = s.send(ctx, req, "running the statement", false)
	}
	// SQL Server rolls back the open transaction of a session that ends.
	const byServer = "SQL Server rolls back the transaction when the connection closes"
	rolledBack := "the transaction was rolled back"
	var rbErr error
	if s.broken { // planlint closed the connection: no ROLLBACK can be sent
		rolledBack = byServer
	} else {
		rbErr = s.exec(cleanupContext(ctx), "rolling back", "SET STATISTICS XML OFF;\nIF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;")
	}
	if why := s.dialer.current().cutReason(); rbErr != nil && why != "" {
		rolledBack = "planlint closed the connection during the ROLLBACK because " + why + "; " + byServer
	} else if rbErr != nil {
		rolledBack = fmt.Sprintf("the ROLLBACK failed (%v), so planlint closed the connection, which makes SQL Server roll the transaction back", rbErr)
	}
	if s.broken || rbErr != nil {
		s.broken = true
		s.Close()
	}
	first := beginErr
	if first == nil {
		first = err
	}
	switch {
	case first != nil:
		var e *Error
		if errors.As(first, &e) {
			e.Hint = joinHints(e.Hint, rolledBack)
		}
		return first
	case rbErr != nil:
		var e *Error
		if errors.As(rbErr, &e) && s.dialer.current().cutReason() != "" {
			e.Hint = joinHints(e.Hint, byServer)
		} else if e != nil {
			e.Hint = joinHints(e.Hint, "planlint closed the connection, which makes SQL Server roll the transaction back")
		}
		return rbErr
	case len(plans) == 0:
		return &Error{Kind: ErrNoPlan, Step: "running the statement", Message: "the server returned no STATISTICS XML document (the statement was rolled back)"}
	}
	res.Method = MethodStatisticsBatch
	if req.Kind == sqlscript.RPC {
		res.Method = MethodStatisticsRPC
	}
	res.Notes = append(res.Notes, "The statement ran inside a transaction that was rolled back.")
	return s.addPlans(res, plans)
}

func joinHints(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// addPlans parses the documents into res.
func (s *Session) addPlans(res *Result, plans []string) error {
	for i, x := range plans {
		doc, err := plan.Parse(strings.NewReader(x), plan.Options{})
		if err != nil {
			return &Error{Kind: ErrServer, Step: "reading the plan", Err: err,
				Message: fmt.Sprintf("showplan document %d of %d does not parse: %v", i+1, len(plans), err)}
		}
		res.Plans = append(res.Plans, Plan{XML: x, Doc: doc})
	}
	return nil
}

// send sends the request as the application would (a SQL batch, or an RPC
// to sp_executesql by name with the request's declaration and typed values)
// and returns the showplan documents among its result sets. With
// onlyPlans, any other result set is an error: it means the statement ran.
func (s *Session) send(ctx context.Context, req sqlscript.Request, step string, onlyPlans bool) ([]string, error) {
	var args []any
	if req.Kind == sqlscript.RPC {
		var err error
		if args, err = rpcArgs(req); err != nil {
			return nil, &Error{Kind: ErrStatement, Step: step, Message: err.Error(), Err: err}
		}
	}
	qctx, done := s.timed(ctx)
	var rows *sql.Rows
	var err error
	if req.Kind == sqlscript.RPC {
		rows, err = s.conn.QueryContext(qctx, "sp_executesql", args...)
	} else {
		rows, err = s.conn.QueryContext(qctx, req.Text)
	}
	if err != nil {
		return nil, s.fail(err, step, done())
	}
	plans, others, err := readPlans(rows)
	rows.Close()
	timedOut := done()
	if err != nil {
		return plans, s.fail(err, step, timedOut)
	}
	if onlyPlans && others > 0 {
		return plans, &Error{Kind: ErrServer, Step: step,
			Message: "the server returned rows besides the plan: SHOWPLAN_XML was not in effect and the statement may have run"}
	}
	return plans, nil
}

// rpcArgs are the database/sql arguments of an RPC to sp_executesql by
// name: @stmt, @params and the values, named when every parameter name
// starts with a letter (database/sql refuses other names) and positional
// otherwise. Values keep their Go types; the declaration gives the server
// their SQL types.
func rpcArgs(req sqlscript.Request) ([]any, error) {
	vals := make([]any, len(req.Params))
	named := true
	for i, p := range req.Params {
		v, err := p.GoValue()
		if err != nil {
			return nil, err
		}
		vals[i] = v
		r, _ := utf8.DecodeRuneInString(strings.TrimPrefix(p.Name, "@"))
		named = named && unicode.IsLetter(r)
	}
	if !named {
		return append([]any{req.Text, req.Declaration}, vals...), nil
	}
	args := []any{sql.Named("stmt", req.Text)}
	if req.Declaration != "" || len(vals) > 0 {
		args = append(args, sql.Named("params", req.Declaration))
	}
	for i, p := range req.Params {
		args = append(args, sql.Named(strings.TrimPrefix(p.Name, "@"), vals[i]))
	}
	return args, nil
}

// readPlans reads every result set, keeping the showplan documents and
// counting the other result sets.
func readPlans(rows *sql.Rows) (plans []string, others int, err error) {
	for {
		cols, _ := rows.Columns()
		isPlan := len(cols) == 1 && cols[0] == ShowplanColumn
		if len(cols) > 0 && !isPlan {
			others++
		}
		for rows.Next() {
			if !isPlan {
				continue
			}
			var doc sql.NullString
			if err := rows.Scan(&doc); err != nil {
				return plans, others, err
			}
			if doc.Valid {
				plans = append(plans, strings.TrimPrefix(doc.String, "\uFEFF"))
			}
		}
		if err := rows.Err(); err != nil {
			return plans, others, err
		}
		if !rows.NextResultSet() {
			return plans, others, rows.Err()
		}
	}
}

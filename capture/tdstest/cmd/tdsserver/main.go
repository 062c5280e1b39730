// Command tdsserver runs the TDS test server with the scenario the
// conformance suite drives with clients other than go-mssqldb (tedious,
// FreeTDS). It prints "listening HOST:PORT" once ready, serves until its
// standard input closes or it is interrupted, then reports the protocol
// errors and unhandled requests it recorded and exits 1 if there were any.
//
// The scenario:
//   - planlint's own batches (session setup, catalog facts, the probe
//     procedure, sp_get_query_template) answered as package capturetest
//     does, for the table dbo.Work;
//   - under SHOWPLAN_XML ON, a batch returns one plan document listing its
//     text; an sp_executesql RPC returns no plan, as SQL Server;
//   - under STATISTICS XML ON, a statement returns its echo row, then a plan;
//   - otherwise a batch returns one row, column "echo", holding its text; an
//     sp_executesql RPC returns one row with a column per parameter (named
//     without @, values as text);
//   - a batch starting with WAITFOR is answered after a minute, so that a
//     client can cancel it;
//   - the procedure dbo.GetCount sets its OUTPUT parameter @count to 42 and
//     returns 7.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/planlint/planlint/capture"
	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
	"github.com/planlint/planlint/catalog"
)

const schema = `CREATE TABLE dbo.Work (
    WorkId bigint NOT NULL CONSTRAINT PK_Work PRIMARY KEY CLUSTERED,
    Status tinyint NOT NULL,
    CreatedAt datetime2(0) NOT NULL,
    CustomerId int NOT NULL
);
GO
CREATE INDEX IX_Work_Pending ON dbo.Work (CreatedAt, WorkId) INCLUDE (CustomerId) WHERE Status = 0;
GO
`

func main() {
	certFile := flag.String("cert", "", "write the server certificate (PEM) to this file")
	catalogFile := flag.String("catalog-sql", "", "write the catalog batch for dbo.Work to this file")
	password := flag.String("password", "", "password the login must give (empty: any)")
	verbose := flag.Bool("v", false, "list every recorded request on exit")
	flag.Parse()
	if err := run(*certFile, *catalogFile, *password, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "tdsserver:", err)
		os.Exit(1)
	}
}

func run(certFile, catalogFile, password string, verbose bool) error {
	cat, diags, err := catalog.ParseScript("schema.sql", strings.NewReader(schema))
	if err != nil || len(diags) > 0 {
		return fmt.Errorf("schema: %v %v", err, diags)
	}
	h := capturetest.Handler(capturetest.Config{
		Catalog:   cat,
		Statement: statement,
		Template: func(q string) (string, string, *tdstest.Message) {
			return "select * from dbo . Work where Status = @0", "@0 int", nil
		},
	})
	srv, err := tdstest.NewServer(tdstest.Config{Handler: h, Database: "WorkDb", Password: password})
	if err != nil {
		return err
	}
	if certFile != "" {
		if err := os.WriteFile(certFile, srv.CertificatePEM(), 0o644); err != nil {
			return err
		}
	}
	if catalogFile != "" {
		sql := capture.CatalogSQL([]capture.TableName{{Schema: "dbo", Name: "Work"}})
		if err := os.WriteFile(catalogFile, []byte(sql), 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("listening %s\n", srv.Addr())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	eof := make(chan struct{})
	go func() {
		r := bufio.NewReader(os.Stdin)
		for {
			if _, err := r.ReadByte(); err != nil {
				close(eof)
				return
			}
		}
	}()
	select {
	case <-stop:
	case <-eof:
	}
	srv.Close()
	if verbose {
		for _, r := range srv.Requests() {
			fmt.Fprintf(os.Stderr, "conn %d, request %d: %s (encryption %s)\n", r.Conn, r.Seq, r.Describe(), r.Session.Encryption)
		}
	}
	bad := 0
	for _, e := range srv.ProtocolErrors() {
		fmt.Fprintln(os.Stderr, "protocol error:", e)
		bad++
	}
	for _, r := range srv.Unhandled() {
		fmt.Fprintf(os.Stderr, "unhandled request: conn %d, request %d: %s\n", r.Conn, r.Seq, r.Describe())
		bad++
	}
	if bad > 0 {
		return fmt.Errorf("%d problems recorded", bad)
	}
	return nil
}

// statement answers every request capturetest does not.
func statement(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
	text := strings.TrimSpace(r.SQL)
	switch {
	case r.Kind == tdstest.KindRPC && strings.EqualFold(strings.TrimPrefix(r.Proc, "dbo."), "GetCount"):
		return tdstest.NewResponse().ReturnValue("@count", tdstest.Int(""), 42).ReturnStatus(7)
	case s.ShowplanXML:
		return tdstest.EstimatedPlan(plan(text))
	case strings.HasPrefix(strings.ToUpper(text), "WAITFOR"):
		return tdstest.NewResponse().Result(echo(r)).Delay(time.Minute)
	case s.StatisticsXML:
		return tdstest.ActualPlanSelect(echo(r), plan(text))
	}
	return tdstest.NewResponse().Result(echo(r))
}

// echo is the row a request returns when it runs.
func echo(r *tdstest.Request) *tdstest.ResultSet {
	if r.Kind != tdstest.KindRPC || len(r.Params) < 2 {
		return tdstest.NewResultSet(tdstest.NVarChar("echo", 4000)).Row(r.SQL)
	}
	var cols []tdstest.Column
	var vals []any
	for _, p := range r.Params {
		if strings.EqualFold(p.Name, "@stmt") || strings.EqualFold(p.Name, "@statement") ||
			strings.EqualFold(p.Name, "@params") || strings.EqualFold(p.Name, "@parameters") || p.Name == "" {
			continue
		}
		cols = append(cols, tdstest.NVarChar(strings.TrimPrefix(p.Name, "@"), 4000))
		if p.Value == nil {
			vals = append(vals, nil)
		} else {
			vals = append(vals, fmt.Sprint(p.Value))
		}
	}
	if len(cols) == 0 {
		return tdstest.NewResultSet(tdstest.NVarChar("echo", 4000)).Row(r.SQL)
	}
	return tdstest.NewResultSet(cols...).Row(vals...)
}

// plan is a showplan document for one statement text.
func plan(text string) string {
	var b strings.Builder
	for _, r := range text {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		default:
			b.WriteRune(r)
		}
	}
	return `<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.564" Build="16.0.4237.2"><BatchSequence><Batch><Statements>` +
		`<StmtSimple StatementText="` + b.String() + `" StatementId="1" StatementCompId="1" StatementType="SELECT"/>` +
		`</Statements></Batch></BatchSequence></ShowPlanXML>`
}

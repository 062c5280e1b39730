package capture

import (
	"context"
	"net/url"
	"testing"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/sqlscript"
)

// BenchmarkOpenAndExplain measures a whole capture of one statement over
// loopback TDS: login, session setup, SHOWPLAN_XML on, the statement, off,
// catalog facts, and parsing the plan.
func BenchmarkOpenAndExplain(b *testing.B) {
	srv := capturetest.Start(b, capturetest.Config{Catalog: capturetest.QueueCatalog(b),
		Statement: capturetest.Answer{Estimated: capturetest.Fixture(b, "queue/literal.sqlplan")}.Handler()})
	req := benchRequest(b, "literal")
	opts := Options{ConnectionString: srv.DSN(url.Values{"encrypt": {"disable"}})}
	for b.Loop() {
		s, err := Open(context.Background(), opts, SessionOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Explain(context.Background(), req, CaptureOptions{}); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkExplainInSession measures one more RPC in an open session
// (three round trips: the catalog facts are known).
func BenchmarkExplainInSession(b *testing.B) {
	srv := capturetest.Start(b, capturetest.Config{Catalog: capturetest.QueueCatalog(b),
		RPCPlan: true, Statement: capturetest.Answer{Estimated: capturetest.Fixture(b, "queue/param.sqlplan")}.Handler()})
	s, err := Open(context.Background(), Options{ConnectionString: srv.DSN(url.Values{"encrypt": {"disable"}})}, SessionOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	req := benchRequest(b, "param")
	for b.Loop() {
		if _, err := s.Explain(context.Background(), req, CaptureOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRequest(b *testing.B, name string) sqlscript.Request {
	b.Helper()
	return mustRequest(b, capturetest.Fixture(b, "queue/"+name+".sql"))
}

func BenchmarkCatalogSQL(b *testing.B) {
	tables := []TableName{{Schema: "dbo", Name: "Work"}, {Schema: "dbo", Name: "Customer"}, {Schema: "queue", Name: "Outbox"}}
	for b.Loop() {
		catalogSQL(tables, true)
	}
}

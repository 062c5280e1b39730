package capture

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
	"github.com/planlint/planlint/sqlscript"
)

// testContext bounds every test so that a hang fails instead of blocking.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// openSession connects to a fake server with the driver's default
// encryption (encrypt=false: TLS for the login only, as against a real
// server) and checks that the login went through TLS.
func openSession(t *testing.T, srv *tdstest.Server, so SessionOptions) *Session {
	t.Helper()
	s, err := Open(testContext(t), Options{ConnectionString: srv.DSN(nil)}, so)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	assertTLSLogin(t, srv)
	return s
}

// assertTLSLogin checks that every connection so far logged in over TLS.
func assertTLSLogin(t *testing.T, srv *tdstest.Server) {
	t.Helper()
	for _, r := range srv.Requests() {
		if r.Kind == tdstest.KindLogin && r.After.Encryption != tdstest.EncryptionLogin {
			t.Errorf("connection %d logged in with encryption %q, want the TLS login path", r.Conn, r.After.Encryption)
		}
	}
}

// queueServer starts a fake server with the queue schema's catalog.
func queueServer(t *testing.T, cfg capturetest.Config) *tdstest.Server {
	t.Helper()
	if cfg.Catalog == nil {
		cfg.Catalog = capturetest.QueueCatalog(t)
	}
	return capturetest.Start(t, cfg)
}

// mustRequest parses a one-batch script for a benchmark.
func mustRequest(tb testing.TB, src string) sqlscript.Request {
	tb.Helper()
	s, err := sqlscript.Parse("bench.sql", []byte(src))
	if err != nil || len(s.Batches) != 1 {
		tb.Fatalf("sqlscript.Parse: %v", err)
	}
	return s.Batches[0].Request()
}

// request parses a one-batch script and returns what it sends.
func request(t *testing.T, src string, overrides ...string) sqlscript.Request {
	t.Helper()
	s, err := sqlscript.Parse("test.sql", []byte(src))
	if err != nil {
		t.Fatalf("sqlscript.Parse: %v", err)
	}
	var os []sqlscript.ParamOverride
	for _, o := range overrides {
		po, err := sqlscript.ParseParamOverride(o)
		if err != nil {
			t.Fatal(err)
		}
		os = append(os, po)
	}
	if err := s.ApplyOverrides(os); err != nil {
		t.Fatal(err)
	}
	if len(s.Batches) != 1 {
		t.Fatalf("script has %d batches, want 1", len(s.Batches))
	}
	return s.Batches[0].Request()
}

// fixtureRequest is the request of a queue fixture's .sql file.
func fixtureRequest(t *testing.T, name string) sqlscript.Request {
	t.Helper()
	return request(t, capturetest.Fixture(t, "queue/"+name+".sql"))
}

// kinds classifies the recorded batches and RPCs of the server.
func kinds(srv *tdstest.Server) []string {
	var out []string
	for _, r := range capturetest.Requests(srv, 0) {
		out = append(out, capturetest.Classify(r))
	}
	return out
}

func sameStrings(a, b []string) bool {
	return strings.Join(a, "|") == strings.Join(b, "|")
}

// requestsOf returns the recorded requests of one kind.
func requestsOf(srv *tdstest.Server, kind string) []tdstest.Request {
	var out []tdstest.Request
	for _, r := range capturetest.Requests(srv, 0) {
		if capturetest.Classify(r) == kind {
			out = append(out, r)
		}
	}
	return out
}

// waitFor polls until a request of the kind has been recorded.
func waitFor(t *testing.T, srv *tdstest.Server, kind string) {
	t.Helper()
	ctx := testContext(t)
	for len(requestsOf(srv, kind)) == 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("no %s request arrived", kind)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

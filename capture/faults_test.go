package capture

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

const secret = "S3cr3t-Pa55w0rd!"

// TestConnectionFaults: every failure says what failed, with the server's
// error number where there is one, and never shows the password.
func TestConnectionFaults(t *testing.T) {
	tests := []struct {
		name    string
		opts    func(t *testing.T) Options
		kind    ErrorKind
		number  int32
		message string
	}{
		{"connection refused", func(t *testing.T) Options {
			host, port, _ := net.SplitHostPort(closedPort(t))
			return Options{Server: host + "," + port, User: "sa", Password: secret, ConnectTimeout: 5 * time.Second}
		}, ErrConnect, 0, "cannot open a TCP connection"},
		{"login failed", func(t *testing.T) Options {
			srv := capturetest.Start(t, capturetest.Config{Password: "another password"})
			return Options{ConnectionString: srv.DSN(url.Values{"encrypt": {"disable"}}), Password: secret}
		}, ErrLogin, 18456, "Login failed for user 'sa'"},
		{"unknown database", func(t *testing.T) Options {
			srv := tdstest.Start(t, tdstest.Config{Databases: []string{"master"}})
			u := srv.DSN(url.Values{"encrypt": {"disable"}})
			return Options{ConnectionString: strings.Replace(u, "sqlserver://sa@", "sqlserver://sa:"+url.QueryEscape(secret)+"@", 1), Database: "NoSuchDb"}
		}, ErrLogin, 4060, "Cannot open database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(testContext(t), tt.opts(t), SessionOptions{})
			var e *Error
			if !errors.As(err, &e) || e.Kind != tt.kind || e.Number != tt.number {
				t.Fatalf("err = %v (%T), want %v %d", err, err, tt.kind, tt.number)
			}
			if !strings.Contains(e.Error(), tt.message) || !strings.HasPrefix(e.Error(), "connecting with ") {
				t.Errorf("message %q lacks %q", e.Error(), tt.message)
			}
			if strings.Contains(e.Error(), secret) || strings.Contains(e.Error(), url.QueryEscape(secret)) {
				t.Errorf("the password leaked: %s", e.Error())
			}
		})
	}
}

// TestStatementFaults: a permission error names the GRANT; a server that
// drops the connection mid-reply is reported as such.
func TestStatementFaults(t *testing.T) {
	denied := tdstest.ErrShowplanDenied("WorkDb")
	plan := capturetest.Fixture(t, "queue/literal.sqlplan")
	tests := []struct {
		name    string
		answer  capturetest.Answer
		kind    ErrorKind
		number  int32
		message string
	}{
		{"showplan permission", capturetest.Answer{Fail: &denied}, ErrPermission, 262, "GRANT SHOWPLAN TO [sa]"},
		{"invalid object", capturetest.Answer{Fail: &tdstest.Message{Number: 208, State: 1, Class: 16, Line: 1, Text: "Invalid object name 'dbo.Wrk'."}},
			ErrServer, 208, "error 208 (severity 16, state 1, line 1): Invalid object name 'dbo.Wrk'."},
		{"connection closed mid-result", capturetest.Answer{Estimated: plan, CloseAfterMetadata: true}, ErrConnectionLost, 0, "the server closed the connection in the middle of its reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := queueServer(t, capturetest.Config{Statement: tt.answer.Handler()})
			s := openSession(t, srv, SessionOptions{})
			_, err := s.Explain(testContext(t), fixtureRequest(t, "literal"), CaptureOptions{})
			var e *Error
			if !errors.As(err, &e) || e.Kind != tt.kind || e.Number != tt.number {
				t.Fatalf("err = %v (%T), want %v %d", err, err, tt.kind, tt.number)
			}
			if !strings.Contains(e.Error(), tt.message) || !strings.HasPrefix(e.Error(), "compiling the statement: ") {
				t.Errorf("message %q lacks %q", e.Error(), tt.message)
			}
		})
	}
}

// TestEstimatedRefusesRows: rows besides the plan mean SHOWPLAN_XML was
// not in effect; that is an error, never a silent success.
func TestEstimatedRefusesRows(t *testing.T) {
	srv := queueServer(t, capturetest.Config{Statement: func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
		return tdstest.NewResponse().Result(tdstest.NewResultSet(tdstest.Int("WorkId")).Row(1)).
			Result(tdstest.ShowplanResultSet(capturetest.Fixture(t, "queue/literal.sqlplan")))
	}})
	s := openSession(t, srv, SessionOptions{})
	_, err := s.Explain(testContext(t), fixtureRequest(t, "literal"), CaptureOptions{})
	if err == nil || !strings.Contains(err.Error(), "SHOWPLAN_XML was not in effect") {
		t.Fatalf("err = %v", err)
	}
}

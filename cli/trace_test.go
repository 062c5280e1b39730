package cli

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
	"github.com/planlint/planlint/capture/trace"
)

// TestExplainTrace: --trace records every request explain sent (the
// setup, SHOWPLAN_XML on and off, the RPC, the temporary procedure, the
// catalog batch) with the shape of each response, but no row values or
// plans without --trace-data, and never the password or connection string.
func TestExplainTrace(t *testing.T) {
	inRoot(t)
	const secret = "Tr4ce-Secret"
	srv := capturetest.Start(t, capturetest.Config{Catalog: capturetest.QueueCatalog(t), Password: secret,
		Statement: capturetest.Answer{Estimated: capturetest.Fixture(t, "queue/param.sqlplan")}.Handler()})
	u, _ := url.Parse(srv.DSN(nil))
	path := filepath.Join(t.TempDir(), "t.json")
	_, errOut, code := runWith(t, map[string]string{"PLANLINT_CONNECTION": u.String()}, "", "explain", "--trace", path, "fixtures/queue/param.sql")
	if code != ExitFindings && code != ExitOK {
		t.Fatalf("explain: exit %d: %s", code, errOut)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), secret) || strings.Contains(string(raw), srv.Addr()) || strings.Contains(string(raw), "ShowPlanXML") {
		t.Fatalf("trace holds the password, the address or a plan:\n%s", raw)
	}
	tr, err := trace.Read(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	planSets := 0
	for _, q := range tr.Requests {
		what := q.Kind
		switch {
		case q.Kind == "rpc":
			what += " " + q.Proc
		case strings.HasPrefix(q.Text, "SET SHOWPLAN_XML"), strings.HasPrefix(q.Text, "EXEC #planlint_probe"):
			what += " " + strings.TrimSuffix(q.Text, ";")
		case strings.HasPrefix(q.Text, "-- planlint: "):
			what += " " + strings.SplitN(strings.TrimPrefix(q.Text, "-- planlint: "), "\n", 2)[0]
		default:
			what += " " + strings.Fields(q.Text)[0]
		}
		got = append(got, what)
		for _, rs := range q.ResultSets {
			if len(rs.Values) > 0 {
				t.Errorf("request %d kept row values without --trace-data", q.Seq)
			}
			if len(rs.Columns) == 1 && rs.Columns[0].Name == tdstest.ShowplanColumnName && rs.Rows == 1 {
				planSets++
			}
		}
	}
	want := []string{"batch session setup", "batch SET SHOWPLAN_XML ON", "rpc sp_executesql", "batch SET SHOWPLAN_XML OFF",
		"batch CREATE", "batch SET SHOWPLAN_XML ON", "batch EXEC #planlint_probe @Status = 0", "batch SET SHOWPLAN_XML OFF",
		"batch DROP", "batch catalog facts"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("traced requests:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if planSets != 1 {
		t.Errorf("%d plan result sets traced, want the probe's one", planSets)
	}
	if rpc := tr.Requests[2]; len(rpc.ResultSets) != 0 || len(rpc.Params) < 3 || rpc.Text == "" {
		t.Errorf("RPC under SHOWPLAN_XML traced as %+v, want its statement, parameters and no result set", rpc)
	}
}

// TestTriageTrace: cache and querystore take --trace too; the plan-cache
// query and the plans it pulls are in the trace, with values only under
// --trace-data.
func TestTriageTrace(t *testing.T) {
	inRoot(t)
	for _, cmd := range []string{"cache", "querystore"} {
		for _, data := range []bool{false, true} {
			ft := &fakeTriage{plans: triagePlans(t), storeState: "READ_WRITE"}
			srv := ft.start(t)
			path := filepath.Join(t.TempDir(), "t.json")
			args := []string{cmd, "--trace", path}
			if data {
				args = append(args, "--trace-data")
			}
			if _, errOut, code := runWith(t, dsnVars(srv), "", args...); code == ExitError {
				t.Fatalf("%s: exit %d: %s", cmd, code, errOut)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := trace.Read(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			rows, values := 0, 0
			for _, q := range tr.Requests {
				for _, rs := range q.ResultSets {
					rows += rs.Rows
					values += len(rs.Values)
				}
			}
			if tr.Command != cmd || len(tr.Requests) < 2 || rows == 0 || (values > 0) != data {
				t.Errorf("%s --trace-data=%v: command %q, %d requests, %d rows, %d rows with values", cmd, data, tr.Command, len(tr.Requests), rows, values)
			}
		}
	}
}

// TestTraceFileCheckedFirst: a --trace path that cannot be written stops
// explain, cache, querystore and doctor before they connect, and a
// symbolic link is never written through.
func TestTraceFileCheckedFirst(t *testing.T) {
	inRoot(t)
	dir := t.TempDir()
	precious := filepath.Join(dir, "precious")
	if err := os.WriteFile(precious, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(precious, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	missing := filepath.Join(dir, "missing", "t.json")
	for _, args := range [][]string{
		{"explain", "--trace", missing, "fixtures/queue/param.sql"},
		{"cache", "--trace", missing},
		{"querystore", "--trace", link},
		{"doctor", "--trace", link},
	} {
		srv := capturetest.Start(t, capturetest.Config{})
		_, errOut, code := runWith(t, dsnVars(srv), "", args...)
		want := "planlint: --trace " + args[2] + ": "
		if code != ExitError || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line starting %q", args, code, errOut, want)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%v: %d messages reached the server", args, n)
		}
	}
	if b, _ := os.ReadFile(precious); string(b) != "keep" {
		t.Errorf("the trace was written through the link: %q", b)
	}
}

package cli

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planlint/planlint/capture"
	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
	"github.com/planlint/planlint/capture/trace"
)

// doctorStatuses are the checks of a server on which everything works, as
// SQL Server behaves: no plan for the RPC (info), a plan with the compiled
// value through the temporary procedure.
var doctorStatuses = map[string]string{
	"login": "ok", "version": "info", "database settings": "info",
	"SHOWPLAN permission": "ok", "VIEW SERVER STATE": "ok", "VIEW DATABASE STATE": "ok",
	"SHOWPLAN_XML plan of a batch": "ok", "SHOWPLAN_XML plan of an RPC": "info", "temporary-procedure plan": "ok",
	"sp_get_query_template": "ok", "catalog views": "ok",
	"sys.dm_exec_query_stats": "ok", "sys.dm_exec_cached_plans": "ok",
	"sys.query_store_query": "ok", "sys.query_store_plan": "ok", "sys.query_store_runtime_stats": "ok",
	"Query Store": "ok",
}

func TestDoctor(t *testing.T) {
	tests := []struct {
		name     string
		cfg      capturetest.Config
		dsnUser  *url.Userinfo
		wantCode int
		changes  map[string]string // checks whose status differs from doctorStatuses
		wantFix  string
	}{
		{name: "real server, all granted", wantCode: ExitOK},
		{name: "SHOWPLAN denied", cfg: capturetest.Config{Denied: []string{"SHOWPLAN"}}, wantCode: ExitFindings,
			changes: map[string]string{"SHOWPLAN permission": "fail", "SHOWPLAN_XML plan of a batch": "fail",
				"temporary-procedure plan": "fail"},
			wantFix: "USE [WorkDb]; GRANT SHOWPLAN TO [dbo];"},
		{name: "EXEC values not sniffed", cfg: capturetest.Config{ProbeNoSniff: true}, wantCode: ExitOK,
			changes: map[string]string{"temporary-procedure plan": "warn"}},
		{name: "Query Store off", cfg: capturetest.Config{QueryStoreState: "OFF"}, wantCode: ExitOK,
			changes: map[string]string{"Query Store": "warn"}, wantFix: "ALTER DATABASE [WorkDb] SET QUERY_STORE = ON;"},
		{name: "VIEW SERVER STATE denied", cfg: capturetest.Config{Denied: []string{"VIEW SERVER STATE"}}, wantCode: ExitOK,
			changes: map[string]string{"VIEW SERVER STATE": "warn", "sys.dm_exec_query_stats": "warn", "sys.dm_exec_cached_plans": "warn"},
			wantFix: "GRANT VIEW SERVER STATE TO [sa];"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := capturetest.Start(t, tt.cfg)
			out, errOut, code := runWith(t, dsnVars(srv), "", "doctor", "--format", "json")
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr %s\n%s", code, tt.wantCode, errOut, out)
			}
			var rep capture.DoctorReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			got := map[string]string{}
			fixes := ""
			for _, c := range rep.Checks {
				got[c.Name] = c.Status
				fixes += c.Fix + "\n"
			}
			for name, want := range doctorStatuses {
				if w, ok := tt.changes[name]; ok {
					want = w
				}
				if got[name] != want {
					t.Errorf("check %q = %q, want %q", name, got[name], want)
				}
			}
			if len(got) != len(doctorStatuses) {
				t.Errorf("%d checks, want %d: %v", len(got), len(doctorStatuses), got)
			}
			if tt.wantFix != "" && !strings.Contains(fixes, tt.wantFix) {
				t.Errorf("fixes %q lack %q", fixes, tt.wantFix)
			}
			assertChangesNothing(t, srv)
		})
	}
}

// assertChangesNothing: the only objects doctor creates are its temporary
// procedures, each dropped, and no other statement could change anything.
func assertChangesNothing(t *testing.T, srv *tdstest.Server) {
	t.Helper()
	creates, drops := 0, 0
	for _, r := range capturetest.Requests(srv, 0) {
		switch k := capturetest.Classify(r); k {
		case capturetest.KindCreate:
			creates++
		case capturetest.KindDrop:
			drops++
		case capturetest.KindSetup, capturetest.KindDoctor, capturetest.KindShowplan, capturetest.KindTemplate,
			capturetest.KindCatalog, capturetest.KindProbeExec:
		case capturetest.KindStatement:
			if !r.Session.ShowplanXML {
				t.Errorf("statement sent outside SHOWPLAN_XML: %s", r.Describe())
			}
		default:
			t.Errorf("unexpected request %s (%s)", r.Describe(), k)
		}
	}
	if creates != drops {
		t.Errorf("%d temporary procedures created, %d dropped", creates, drops)
	}
}

func TestDoctorTextAndLoginFailure(t *testing.T) {
	srv := capturetest.Start(t, capturetest.Config{})
	out, _, code := runWith(t, dsnVars(srv), "", "doctor")
	if code != ExitOK || !strings.Contains(out, "CHECK") || !strings.Contains(out, "explain: everything it needs works") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	bad := capturetest.Start(t, capturetest.Config{RejectLogin: func(tdstest.Login) bool { return true }})
	out, _, code = runWith(t, dsnVars(bad), "", "doctor")
	if code != ExitFindings || !strings.Contains(out, "login  ") || !strings.Contains(out, "fail") || !strings.Contains(out, "will not work") {
		t.Fatalf("rejected login: exit %d:\n%s", code, out)
	}
}

// TestDoctorTraceReplays: the trace of doctor against a server that behaves
// like SQL Server becomes a test-server scenario that reproduces doctor's
// table, so a user's trace can be turned into a regression test.
func TestDoctorTraceReplays(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.json")
	srv := capturetest.Start(t, capturetest.Config{Denied: []string{"VIEW DATABASE STATE"}})
	want, _, code := runWith(t, dsnVars(srv), "", "doctor", "--trace", path, "--trace-data")
	if code != ExitOK {
		t.Fatalf("doctor: exit %d\n%s", code, want)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "password") || strings.Contains(string(raw), srv.Addr()) {
		t.Errorf("the trace holds a password or the server address:\n%s", raw)
	}
	tr, err := trace.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, q := range tr.Requests {
		kinds[q.Kind]++
		if q.Error != nil && q.Error.Number == 0 {
			t.Errorf("request %d: error without a number: %+v", q.Seq, q.Error)
		}
	}
	if tr.Command != "doctor" || !tr.Data || kinds["batch"] < 10 || kinds["rpc"] != 2 {
		t.Fatalf("trace: command %q, data %v, kinds %v", tr.Command, tr.Data, kinds)
	}

	replay := tdstest.Start(t, tdstest.Config{Handler: capturetest.Replay(tr), Database: "WorkDb", PlanForRPC: true})
	got, errOut, code := runWith(t, dsnVars(replay), "", "doctor")
	if code != ExitOK {
		t.Fatalf("replayed doctor: exit %d, stderr %s\n%s\nprotocol errors %v\n%s", code, errOut, got, replay.ProtocolErrors(), describeAll(replay))
	}
	if got != want {
		t.Errorf("replayed table differs:\n--- real server\n%s\n--- replay\n%s", want, got)
	}
}

func describeAll(s *tdstest.Server) string {
	var b strings.Builder
	for _, r := range s.Requests() {
		b.WriteString(r.Describe() + "\n")
	}
	return b.String()
}

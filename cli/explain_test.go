package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
	"github.com/planlint/planlint/catalog"
)

// runWith executes planlint in-process with the given environment
// variables and standard input.
func runWith(t *testing.T, vars map[string]string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
	code = Main(args, env)
	return out.String(), errb.String(), code
}

// dsnVars points PLANLINT_CONNECTION at a fake server.
func dsnVars(srv *tdstest.Server) map[string]string {
	return map[string]string{"PLANLINT_CONNECTION": srv.DSN(nil)}
}

// scenario is one queue fixture captured through a fake server.
type scenario struct {
	name   string // golden file name
	sql    string // the .sql file explained
	args   []string
	cfg    func(t *testing.T) capturetest.Config
	schema string // catalog script (default fixtures/queue/schema.sql)
	// facts, when set, changes the catalog the server answers with.
	facts func(*catalog.Catalog)
}

const forcedTemplate = "select top ( 20 ) WorkId , CreatedAt , CustomerId from dbo . Work where Status = @0 order by CreatedAt , WorkId"

// emulatedForcedPlan is forced.sqlplan as the emulated capture compiles
// it: the template as the statement text, parameterized by the user.
func emulatedForcedPlan(t *testing.T) string {
	p := capturetest.Fixture(t, "queue/forced.sqlplan")
	start := strings.Index(p, ` StatementText="`)
	end := strings.Index(p[start+len(` StatementText="`):], `"`) + start + len(` StatementText="`)
	p = p[:start] + ` StatementText="` + forcedTemplate + p[end:]
	p = strings.Replace(p, `StatementParameterizationType="3"`, `StatementParameterizationType="1"`, 1)
	if i := strings.Index(p, ` ParameterizedText="`); i >= 0 {
		j := strings.Index(p[i+len(` ParameterizedText="`):], `"`) + i + len(` ParameterizedText="`) + 1
		p = p[:i] + p[j:]
	}
	return p
}

func estimated(name string, rpcPlan bool) func(t *testing.T) capturetest.Config {
	return func(t *testing.T) capturetest.Config {
		return capturetest.Config{RPCPlan: rpcPlan, Statement: capturetest.Answer{Estimated: capturetest.Fixture(t, "queue/"+name+".sqlplan")}.Handler()}
	}
}

func queueScenarios() []scenario {
	return []scenario{
		{name: "literal", sql: "fixtures/queue/literal.sql", cfg: estimated("literal", false)},
		{name: "literal-backlog", sql: "fixtures/queue/literal.sql", cfg: estimated("literal", false), facts: backlogFacts},
		{name: "param", sql: "fixtures/queue/param.sql", cfg: estimated("param", false)},
		{name: "param-rpc-plan", sql: "fixtures/queue/param.sql", cfg: estimated("param", true)},
		{name: "param-override", sql: "fixtures/queue/param.sql", args: []string{"--param", "@Status=1"}, cfg: estimated("param", true)},
		{name: "forced", sql: "fixtures/queue/forced.sql", cfg: func(t *testing.T) capturetest.Config {
			c := estimated("forced", false)(t)
			c.ParameterizationForced = true
			return c
		}},
		{name: "forced-emulated", sql: "fixtures/queue/forced.sql", args: []string{"--parameterization", "forced"}, cfg: func(t *testing.T) capturetest.Config {
			return capturetest.Config{
				Template:  func(string) (string, string, *tdstest.Message) { return forcedTemplate, "@0 int", nil },
				RPCPlan:   true,
				Statement: capturetest.Answer{Estimated: emulatedForcedPlan(t)}.Handler(),
			}
		}},
		{name: "local-variable", sql: "fixtures/queue/local-variable.sql", cfg: estimated("local-variable", false)},
		{name: "isnull", sql: "fixtures/queue/isnull.sql", cfg: estimated("isnull", false)},
		{name: "claim-racy", sql: "fixtures/queue/claim-racy.sql", cfg: estimated("claim-racy", false)},
		{name: "claim-atomic", sql: "fixtures/queue/claim-atomic.sql", cfg: estimated("claim-atomic", false)},
		{name: "insert-driver-defaults", sql: "fixtures/queue/insert-driver-defaults.sql", cfg: estimated("insert-driver-defaults", true)},
		{name: "status-index", sql: "fixtures/queue/status-index.sql", cfg: estimated("status-index", false), schema: "fixtures/queue/schema-status-index.sql"},
		{name: "param-actual", sql: "fixtures/queue/param-actual.sql", args: []string{"--actual"}, cfg: func(t *testing.T) capturetest.Config {
			rows := tdstest.NewResultSet(tdstest.BigInt("WorkId"), tdstest.DateTime2("CreatedAt", 0), tdstest.Int("CustomerId")).
				Row(int64(7), time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC), 42)
			return capturetest.Config{Statement: capturetest.Answer{Actual: capturetest.Fixture(t, "queue/param-actual.sqlplan"), Rows: rows}.Handler()}
		}},
	}
}

// backlogFacts makes the server's catalog that of a backlog: the filtered
// index holds 60,000 rows, its statistics still describe 200.
func backlogFacts(c *catalog.Catalog) {
	work := c.FindTable("", "dbo", "Work")
	work.Clustered().Size = &catalog.IndexSize{Rows: 5_000_000, UsedPages: 384_615}
	ix := work.FindIndex("IX_Work_Pending")
	ix.Size = &catalog.IndexSize{Rows: 60_000, UsedPages: 193}
	ix.Statistics = &catalog.StatisticsFacts{LastUpdated: "2025-11-01T02:00:14.87", Rows: 200, RowsSampled: 200, ModificationCounter: 61_500}
}

// start starts the scenario's fake server with the catalog of its schema.
func (sc scenario) start(t *testing.T) *tdstest.Server {
	t.Helper()
	cfg := sc.cfg(t)
	schema := sc.schema
	if schema == "" {
		schema = "fixtures/queue/schema.sql"
	}
	cfg.Catalog = capturetest.QueueCatalog(t)
	if schema != "fixtures/queue/schema.sql" {
		cat, err := loadSchemas([]string{schema})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Catalog = cat
	}
	if sc.facts != nil {
		sc.facts(cfg.Catalog)
	}
	return capturetest.Start(t, cfg)
}

// TestExplainQueueGolden: explain on the queue scenario prints the
// expected findings at the statements' lines in the .sql files.
func TestExplainQueueGolden(t *testing.T) {
	inRoot(t)
	for _, sc := range queueScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			srv := sc.start(t)
			args := append([]string{"explain", "--color", "never"}, sc.args...)
			out, errOut, code := runWith(t, dsnVars(srv), "", append(args, sc.sql)...)
			golden(t, "explain/"+sc.name+".txt", fmt.Sprintf("%s--- stderr\n%s--- exit %d\n", out, errOut, code))
		})
	}
}

// TestExplainExpectedFindings pins the findings the scenario exists for.
func TestExplainExpectedFindings(t *testing.T) {
	inRoot(t)
	want := map[string][]string{
		"literal":         {"PL204@5"},
		"literal-backlog": {"PL204@5", "PL206@5"},
		"param":           {"PL101@5", "PL103@5", "PL201@5", "PL204@5"},
		"param-rpc-plan":  {"PL101@5", "PL103@5", "PL201@5", "PL204@5"},
		"forced":          {"PL101@5", "PL103@5", "PL201@5", "PL204@5"},
		"forced-emulated": {"PL101@5", "PL103@5", "PL201@5", "PL204@5"},
		"local-variable":  {"PL101@7", "PL103@7", "PL201@7", "PL204@7"},
		"isnull":          {"PL102@6", "PL202@6", "PL204@6"},
		"claim-racy":      {"PL204@7"},
		"claim-atomic":    {},
		"param-actual":    {"PL101@5", "PL103@5", "PL104@5", "PL201@5", "PL204@5", "PL402@5"},
	}
	for _, sc := range queueScenarios() {
		codes, ok := want[sc.name]
		if !ok {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			srv := sc.start(t)
			args := append(append([]string{"explain", "--format", "json"}, sc.args...), sc.sql)
			out, errOut, code := runWith(t, dsnVars(srv), "", args...)
			if errOut != "" {
				t.Errorf("stderr: %s", errOut)
			}
			rep := decodeReport(t, out)
			var got []string
			for _, f := range rep.Files[0].Findings {
				if f.Location == nil || f.Location.Path != sc.sql {
					t.Errorf("finding %s has no location in %s: %+v", f.Code, sc.sql, f.Location)
					continue
				}
				got = append(got, fmt.Sprintf("%s@%d", f.Code, f.Location.StartLine))
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(codes, " ") {
				t.Errorf("findings = %q, want %q", got, codes)
			}
			wantCode := ExitOK
			for _, f := range rep.Files[0].Findings {
				if f.Severity == "error" {
					wantCode = ExitFindings
				}
			}
			if code != wantCode {
				t.Errorf("exit %d, want %d", code, wantCode)
			}
			for _, st := range rep.Files[0].Statements {
				if st.Capture == nil || st.Capture.Method == "" || st.Capture.Database != "WorkDb" || len(st.Capture.SetOptions) != 7 {
					t.Errorf("statement %d: capture = %+v", st.StatementID, st.Capture)
				}
				if st.Location == nil {
					t.Errorf("statement %d has no location", st.StatementID)
				}
			}
		})
	}
}

// jsonReport is the part of the JSON report the tests read.
type jsonReport struct {
	Files []struct {
		Path       string  `json:"path"`
		Error      *string `json:"error"`
		Statements []struct {
			Batch       int    `json:"batch"`
			StatementID int    `json:"statement_id"`
			Type        string `json:"type"`
			Kind        string `json:"kind"`
			Location    *struct {
				Path      string `json:"path"`
				StartLine int    `json:"start_line"`
			} `json:"location"`
			Capture *struct {
				Method     string          `json:"method"`
				Database   string          `json:"database"`
				SetOptions map[string]bool `json:"set_options"`
				Note       string          `json:"note"`
			} `json:"capture"`
		} `json:"statements"`
		Findings []jsonFinding `json:"findings"`
	} `json:"files"`
}

type jsonFinding struct {
	Rule        string `json:"rule"`
	Code        string `json:"code"`
	Severity    string `json:"severity"`
	Batch       int    `json:"batch"`
	StatementID int    `json:"statement_id"`
	NodeID      *int   `json:"node_id"`
	Message     string `json:"message"`
	Fix         string `json:"fix"`
	Location    *struct {
		Path      string `json:"path"`
		StartLine int    `json:"start_line"`
		StartCol  int    `json:"start_column"`
	} `json:"location"`
}

func (f jsonFinding) key() string {
	node := "-"
	if f.NodeID != nil {
		node = fmt.Sprint(*f.NodeID)
	}
	return fmt.Sprintf("%s %s %s stmt %d node %s: %s | %s", f.Code, f.Rule, f.Severity, f.StatementID, node, f.Message, f.Fix)
}

func decodeReport(t *testing.T, out string) jsonReport {
	t.Helper()
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	if len(rep.Files) == 0 {
		t.Fatalf("report has no files:\n%s", out)
	}
	return rep
}

// TestExplainSaveThenCheck: the plans and catalog facts --save writes make
// `planlint check --schema` report the same findings offline.
func TestExplainSaveThenCheck(t *testing.T) {
	inRoot(t)
	for _, sc := range queueScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			srv := sc.start(t)
			dir := t.TempDir()
			args := append(append([]string{"explain", "--format", "json", "--save", dir}, sc.args...), sc.sql)
			out, errOut, _ := runWith(t, dsnVars(srv), "", args...)
			if !strings.Contains(errOut, "planlint check --schema "+filepath.Join(dir, "catalog.json")) {
				t.Errorf("stderr does not say how to re-run offline: %q", errOut)
			}
			live := decodeReport(t, out)
			plans, _ := filepath.Glob(filepath.Join(dir, "*.sqlplan"))
			if len(plans) != 1 {
				t.Fatalf("saved %d plans, want 1", len(plans))
			}
			raw, err := os.ReadFile(plans[0])
			if err != nil || !bytes.HasPrefix(raw, []byte("<ShowPlanXML")) {
				t.Fatalf("saved plan is not UTF-8 showplan XML: %v", err)
			}
			out, errOut, _ = runWith(t, nil, "", "check", "--format", "json", "--schema", filepath.Join(dir, "catalog.json"), plans[0])
			if errOut != "" {
				t.Errorf("check stderr: %s", errOut)
			}
			offline := decodeReport(t, out)
			keys := func(fs []jsonFinding) []string {
				out := []string{}
				for _, f := range fs {
					out = append(out, f.key())
				}
				sort.Strings(out)
				return out
			}
			a, b := keys(live.Files[0].Findings), keys(offline.Files[0].Findings)
			if strings.Join(a, "\n") != strings.Join(b, "\n") {
				t.Errorf("findings differ\n--- explain\n%s\n--- check\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
			}
		})
	}
}

// TestExplainMultiBatch: each GO batch is captured on its own and keeps its
// line range; findings land on their statement's lines.
func TestExplainMultiBatch(t *testing.T) {
	inRoot(t)
	literal := capturetest.Fixture(t, "queue/literal.sql")
	isnull := capturetest.Fixture(t, "queue/isnull.sql")
	src := literal + "GO\n" + isnull
	path := filepath.Join(t.TempDir(), "two.sql")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	plans := map[string]string{
		"WHERE Status = 0":        capturetest.Fixture(t, "queue/literal.sqlplan"),
		"WHERE ClaimedAt IS NULL": capturetest.Fixture(t, "queue/isnull.sqlplan"),
	}
	srv := capturetest.Start(t, capturetest.Config{Catalog: capturetest.QueueCatalog(t),
		Statement: func(s tdstest.Session, r *tdstest.Request) *tdstest.Response {
			for k, p := range plans {
				if strings.Contains(r.SQL, k) {
					return capturetest.Answer{Estimated: p}.Handler()(s, r)
				}
			}
			return nil
		}})
	out, errOut, code := runWith(t, dsnVars(srv), "", "explain", "--format", "json", path)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rep := decodeReport(t, out)
	st := rep.Files[0].Statements
	if len(st) != 2 || st[0].Batch != 1 || st[1].Batch != 2 {
		t.Fatalf("statements = %+v", st)
	}
	secondLine := strings.Count(literal, "\n") + 1 + 6 // GO line, then isnull.sql's statement line
	if st[0].Location.StartLine != 5 || st[1].Location.StartLine != secondLine {
		t.Errorf("statement lines = %d, %d; want 5, %d", st[0].Location.StartLine, st[1].Location.StartLine, secondLine)
	}
	for _, f := range rep.Files[0].Findings {
		if (f.Batch == 1) != (f.Location.StartLine == 5) {
			t.Errorf("finding %s of batch %d at line %d", f.Code, f.Batch, f.Location.StartLine)
		}
	}
	for _, r := range srv.Requests() {
		if r.Kind == tdstest.KindLogin && r.Login.AppName != "planlint/"+Version() {
			t.Errorf("login app name = %q, want planlint/%s", r.Login.AppName, Version())
		}
	}
	if len(requestsOfKind(srv, capturetest.KindCatalog)) != 1 {
		t.Error("the second batch read the catalog facts again")
	}
	text, _, _ := runWith(t, dsnVars(srv), "", "explain", "--color", "never", "--min-severity", "info", path)
	if !strings.Contains(text, fmt.Sprintf("%s:%d:1: batch 2 stmt 1 node 3: info [PL102 key-lookup]", path, secondLine)) {
		t.Errorf("text report does not place the lookup on batch 2:\n%s", text)
	}
}

func requestsOfKind(srv *tdstest.Server, kind string) []tdstest.Request {
	var out []tdstest.Request
	for _, r := range capturetest.Requests(srv, 0) {
		if capturetest.Classify(r) == kind {
			out = append(out, r)
		}
	}
	return out
}

// TestExplainSuppression: a planlint-ignore comment above the statement
// drops the named rule's findings.
func TestExplainSuppression(t *testing.T) {
	inRoot(t)
	src := "-- planlint-ignore queue-claim-not-atomic -- the poll only reads\n" + capturetest.Fixture(t, "queue/literal.sql")
	path := filepath.Join(t.TempDir(), "poll.sql")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := scenario{cfg: estimated("literal", false)}.start(t)
	out, _, code := runWith(t, dsnVars(srv), "", "explain", "--format", "json", path)
	if rep := decodeReport(t, out); code != ExitOK || len(rep.Files[0].Findings) != 0 {
		t.Errorf("exit %d, findings %+v", code, rep.Files[0].Findings)
	}
}

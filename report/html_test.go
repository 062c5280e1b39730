package report

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/rules"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func renderHTML(t testing.TB, r *Report, opt HTMLOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, r, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestHTMLSelfContained(t *testing.T) {
	out := renderHTML(t, queueFixtureReport(t), HTMLOptions{BaseDir: ".."})
	for _, banned := range []string{"<link", " src=", "@import", "url(http", "url(//", "@font-face"} {
		if strings.Contains(out, banned) {
			t.Errorf("the page loads something from outside: found %q", banned)
		}
	}
	// The only addresses are links to the rule documentation.
	for _, m := range regexp.MustCompile(`https?://[^"'\s<)]*`).FindAllStringIndex(out, -1) {
		url := out[m[0]:m[1]]
		before := out[max(0, m[0]-6):m[0]]
		if !strings.HasPrefix(url, rules.DocBase) || before != `href="` {
			t.Errorf("unexpected address %q (after %q)", url, before)
		}
	}
	if strings.Count(out, "<script>") != 1 || strings.Count(out, "<style>") != 1 {
		t.Errorf("want exactly one inline script and one style element")
	}
}

func TestHTMLEscapesEverything(t *testing.T) {
	r := hostileReport()
	r.Files[0].Statements[0].Text = `SELECT '</pre><script>alert(1)</script>'`
	r.Files[0].Findings = []*Finding{{Finding: rules.Finding{Rule: "key-lookup", Code: "PL102", Severity: rules.Error, Batch: 1, StatementID: 1,
		NodeID: rules.Node(0), Message: `<img onerror=alert(2)> & "quotes"`, Fix: `</li><script>alert(3)</script>`}}}
	out := renderHTML(t, r, HTMLOptions{NoRedact: true})
	for _, bad := range []string{"<script>alert", "<img onerror", `</li><script>`} {
		if strings.Contains(out, bad) {
			t.Errorf("unescaped markup %q in the page", bad)
		}
	}
	if !strings.Contains(out, "&lt;img onerror=alert(2)&gt; &amp; &#34;quotes&#34;") {
		t.Errorf("the message is not shown escaped")
	}
}

func TestHTMLContent(t *testing.T) {
	out := renderHTML(t, explainReport(), HTMLOptions{Title: "poll.sql"})
	for _, want := range []string{
		"<title>poll.sql</title>",
		`<svg class="plan" id="f0-s0-p0" data-operators="3"`,
		`<g class="node cost-2 skew-3 has-findings" id="f0-s0-p0-n2"`,
		`<use href="#g-scan" x="8" y="10" width="28" height="28"></use>`,
		`<span class="legend">`,
		`<g class="badge sev-error"`,
		`<a class="place" href="#f0-s0-p0-n2" data-target="f0-s0-p0-n2">stmt 1 node 2 Clustered Index Scan</a>`,
		`<div class="details" id="d-f0-s0-p0-n2" hidden>`,
		"<dt>Actual rows (all threads)</dt><dd class=\"\">1,250,000</dd>",
		"<dt>Predicate</dt><dd class=\"pre\">[WorkDb].[dbo].[Work].[Status]=[@Status] AND [WorkDb].[dbo].[Work].[Email]=N&#39;?&#39;</dd>",
		"<dt>Seek predicates</dt><dd class=\"pre\">Prefix: Work.Amount = (?)</dd>",
		`<table class="ops">`,
		"Could not be analysed: line 3, column 7",
		"Literal and parameter values are redacted (shown as ?) so the report can be shared. For a report with the values, run planlint again with <code>--no-redact</code>.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// The graph comes before the statement's findings.
	if g, f := strings.Index(out, `<svg class="plan" id="f0-s0-p0"`), strings.Index(out, `<li class="finding sev-`); g < 0 || f < 0 || g > f {
		t.Errorf("the graph (at %d) does not come before the findings (at %d)", g, f)
	}
	// Edges run from each child to its parent: two in statement 1.
	if n := strings.Count(out, `<g class="edge">`); n != 2 {
		t.Errorf("%d edges, want 2", n)
	}
}

// TestLayout checks the layout of random trees: every operator placed,
// no two boxes on the same spot (all boxes have one size on one grid, so
// that means no overlap), children one column right of their parent, the
// first child on its parent's row, and everything inside the drawing.
func TestLayout(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 200; trial++ {
		nodes := randomTree(rng, 1+rng.Intn(300))
		checkLayout(t, fmt.Sprintf("random tree %d", trial), nodes[0], nodes)
	}
	checkLayout(t, "empty plan", nil, nil)
	// A malformed plan whose node list holds an operator the tree does not
	// reach, and a loop.
	a, b, c := &plan.RelOp{NodeID: 0}, &plan.RelOp{NodeID: 1}, &plan.RelOp{NodeID: 2}
	a.Children = []*plan.RelOp{b}
	b.Children = []*plan.RelOp{a}
	l := layoutPlan(a, []*plan.RelOp{a, b, c})
	if len(l.pos) != 3 {
		t.Errorf("malformed plan: %d operators placed, want 3", len(l.pos))
	}
}

func randomTree(rng *rand.Rand, n int) []*plan.RelOp {
	nodes := []*plan.RelOp{{NodeID: 0}}
	for i := 1; i < n; i++ {
		parent := nodes[rng.Intn(len(nodes))]
		if rng.Intn(3) == 0 { // deep chains as well as bushy trees
			parent = nodes[len(nodes)-1]
		}
		c := &plan.RelOp{NodeID: i, Parent: parent}
		parent.Children = append(parent.Children, c)
		nodes = append(nodes, c)
	}
	return nodes
}

func checkLayout(t *testing.T, name string, root *plan.RelOp, nodes []*plan.RelOp) {
	t.Helper()
	l := layoutPlan(root, nodes)
	seen := map[layoutPos]*plan.RelOp{}
	for _, n := range nodes {
		p, ok := l.pos[n]
		if !ok {
			t.Fatalf("%s: node %d not placed", name, n.NodeID)
		}
		if other := seen[p]; other != nil {
			t.Fatalf("%s: nodes %d and %d overlap at %v", name, other.NodeID, n.NodeID, p)
		}
		seen[p] = n
		if p.X < 0 || p.Y < 0 || p.X+layoutNodeW > l.Width || p.Y+layoutNodeH > l.Height {
			t.Fatalf("%s: node %d at %v lies outside the %dx%d drawing", name, n.NodeID, p, l.Width, l.Height)
		}
		for i, c := range n.Children {
			cp := l.pos[c]
			if cp.X != p.X+layoutNodeW+layoutColGap {
				t.Fatalf("%s: child %d is not one column right of %d", name, c.NodeID, n.NodeID)
			}
			if i == 0 && cp.Y != p.Y {
				t.Fatalf("%s: first child %d is not on the row of %d", name, c.NodeID, n.NodeID)
			}
			if cp.Y < p.Y {
				t.Fatalf("%s: child %d sits above its parent %d", name, c.NodeID, n.NodeID)
			}
		}
	}
	if l.Width <= 0 || l.Height <= 0 {
		t.Fatalf("%s: empty drawing %dx%d", name, l.Width, l.Height)
	}
}

// TestFormatsOnCorpus lays out every plan of the shared corpus (real and
// awkward ones) and renders it in every format: the HTML must draw each
// operator once, the SARIF must match the schema and the DOT must be
// well formed.
func TestFormatsOnCorpus(t *testing.T) {
	files := append(sharedtest.Files(t, "corpus/plans"), sharedtest.Files(t, "corpus/odd")...)
	if testing.Short() {
		files = files[:min(len(files), 20)]
	}
	schema := sarifSchema(t)
	rendered := 0
	for _, path := range files {
		doc, err := plan.ParseFile(path, plan.Options{})
		if err != nil {
			continue // the plan package's tests cover inputs it rejects
		}
		for _, s := range doc.Statements() {
			for _, q := range s.Plans() {
				checkLayout(t, filepath.Base(path), q.Root, q.Nodes)
			}
		}
		fs, err := rules.Analyze(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		r := &Report{Tool: "planlint", Files: []*File{{Path: path, Statements: Summarize(doc), Findings: Wrap(fs), Plans: []*plan.Document{doc}}}}
		page := renderHTML(t, r, HTMLOptions{})
		want := 0
		for _, s := range r.Files[0].Statements {
			want += s.Nodes
		}
		if got := strings.Count(page, `<g class="node`); got != want {
			t.Errorf("%s: %d operator boxes, want %d", path, got, want)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(renderSARIF(t, r, SARIFOptions{})))
		if err != nil {
			t.Fatalf("%s: SARIF is not JSON: %v", path, err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("%s: SARIF does not match the schema: %v", path, err)
		}
		if msg := dotSyntaxProblem(renderDOT(t, r, DOTOptions{})); msg != "" {
			t.Errorf("%s: DOT: %s", path, msg)
		}
		renderMarkdown(t, r, MarkdownOptions{})
		renderGitHub(t, r, GitHubOptions{})
		rendered++
	}
	if rendered == 0 {
		t.Fatal("no corpus plan could be rendered")
	}
}

// chromium finds a headless-capable Chromium, or skips the test.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); skipping the browser rendering test")
	return ""
}

// screenshotProblem says what is wrong with a screenshot, or "" if it
// shows a rendered page: enough colours and enough non-white pixels.
func screenshotProblem(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return fmt.Sprintf("screenshot is not a PNG: %v", err)
	}
	b := img.Bounds()
	if b.Dx() < 100 || b.Dy() < 100 {
		return fmt.Sprintf("screenshot is only %dx%d", b.Dx(), b.Dy())
	}
	colors := map[color.RGBA]bool{}
	nonWhite := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			colors[c] = true
			if c.R < 240 || c.G < 240 || c.B < 240 {
				nonWhite++
			}
		}
	}
	total := (b.Dx() / 2) * (b.Dy() / 2)
	if len(colors) < 16 || nonWhite < total/100 {
		return fmt.Sprintf("screenshot looks blank: %d colours, %d of %d sampled pixels not white", len(colors), nonWhite, total)
	}
	return ""
}

func TestScreenshotCheckRejectsBlank(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 200))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	path := filepath.Join(t.TempDir(), "blank.png")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if screenshotProblem(path) == "" {
		t.Error("a blank screenshot passed the check")
	}
}

func TestHTMLGolden(t *testing.T) {
	checkGolden(t, "queue.html", []byte(renderHTML(t, queueFixtureReport(t), HTMLOptions{BaseDir: ".."})))
	checkGolden(t, "explain.html", []byte(renderHTML(t, explainReport(), HTMLOptions{})))
}

// largestCorpusPlan returns the corpus file whose plans have the most
// operators.
func largestCorpusPlan(b *testing.B) (*plan.Document, string, int) {
	var best *plan.Document
	var bestPath string
	bestN := 0
	for _, path := range sharedtest.Files(b, "corpus/plans") {
		doc, err := plan.ParseFile(path, plan.Options{})
		if err != nil {
			continue
		}
		n := 0
		for _, s := range doc.Statements() {
			n += s.NodeCount()
		}
		if n > bestN {
			best, bestPath, bestN = doc, path, n
		}
	}
	if best == nil {
		b.Skip("no corpus plan parsed")
	}
	return best, bestPath, bestN
}

func BenchmarkHTMLLargestCorpusPlan(b *testing.B) {
	doc, path, n := largestCorpusPlan(b)
	fs, err := rules.Analyze(doc, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	r := &Report{Tool: "planlint", Files: []*File{{Path: path, Statements: Summarize(doc), Findings: Wrap(fs), Plans: []*plan.Document{doc}}}}
	var size int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var buf bytes.Buffer
		if err := HTML(&buf, r, HTMLOptions{}); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(n), "operators")
	b.ReportMetric(float64(size), "bytes")
}

func BenchmarkLayout(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		nodes := randomTree(rand.New(rand.NewSource(2)), n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				layoutPlan(nodes[0], nodes)
			}
		})
	}
}

// TestHTMLIndexPanel: a statement's index panel shows the DDL a finding
// carries (evidence create_index, linked to the finding) and the plan's
// own missing-index suggestion, written from the XML's MissingIndex.
func TestHTMLIndexPanel(t *testing.T) {
	path := filepath.Join(sharedtest.Require(t, "corpus/plans"), "hqp__test_plans__index_update.sqlplan")
	doc, err := plan.ParseFile(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &File{Path: "index_update.sqlplan", Statements: Summarize(doc), Plans: []*plan.Document{doc}}
	var s *Statement
	for _, st := range f.Statements {
		if st.Source != nil && st.Source.QueryPlan != nil && len(st.Source.QueryPlan.MissingIndexes) > 0 {
			s = st
		}
	}
	if s == nil {
		t.Fatal("the plan has no MissingIndexGroup")
	}
	ddl := "CREATE INDEX [IX_Posts_Score] ON [dbo].[Posts] ([Score]) INCLUDE ([Id]);"
	f.Findings = []*Finding{{Finding: rules.Finding{Rule: "key-lookup", Code: "PL102", Severity: rules.Warning, Batch: s.Batch,
		StatementID: s.StatementID, Ordinal: s.Ordinal, Message: "m", Evidence: map[string]any{"create_index": ddl}}}}
	out := renderHTML(t, &Report{Files: []*File{f}}, HTMLOptions{NoRedact: true})
	// MissingIndexGroup Impact="94.0332" on [StackOverflow].[dbo].[Posts]:
	// EQUALITY [PostTypeId], INCLUDE [Id], [AcceptedAnswerId].
	for _, want := range []string{
		`<pre>` + ddl + `</pre>`,
		`From <a href="#f0-s0-x0" data-finding="f0-s0-x0">PL102 key-lookup</a>`,
		"From the optimizer&#39;s missing-index suggestion, estimated impact 94%",
		"<pre>CREATE INDEX [IX_Posts_PostTypeId] ON [StackOverflow].[dbo].[Posts] ([PostTypeId]) INCLUDE ([Id], [AcceptedAnswerId]);</pre>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}

func TestWrapLabel(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  []string
	}{
		{"Parallelism (Distribute Streams)", 22, []string{"Parallelism", "(Distribute Streams)"}},
		{"Clustered Index Scan", 22, []string{"Clustered Index Scan"}},
		{"Hash Match (Right Anti Semi Join) extra words here", 22, []string{"Hash Match (Right Anti", "Semi Join) extra word…"}},
		{"Averyveryverylongsingleword", 10, []string{"Averyveryv", "erylongsi…"}},
	}
	for _, tt := range tests {
		if got := wrapLabel(tt.in, tt.width, 2); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("wrapLabel(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestStatementProperties: the facts above a plan come from the
// statement's properties (the model JSON and --tree print), with units, and
// absent ones are left out.
func TestStatementProperties(t *testing.T) {
	root := &plan.RelOp{RunTime: &plan.RunTime{ActualRows: 1, ActualExecutions: 1}} // an actual plan
	src := &plan.Statement{OptmLevel: "FULL", OptmEarlyAbortReason: "TimeOut", CEModelVersion: 150,
		QueryPlan: &plan.QueryPlan{DegreeOfParallelism: 8, EffectiveDOP: 4, CompileTimeMs: 1200, CompileCPUMs: 1100,
			MemoryGrant: &plan.MemoryGrantInfo{RequestedKB: 2048, GrantedKB: 1024, MaxUsedKB: 512, GrantWaitTimeS: 3},
			QueryTime:   &plan.QueryTimeStats{CPUTimeMs: 900, ElapsedTimeMs: 1500},
			Waits:       []plan.Wait{{Type: "SOS_SCHEDULER_YIELD", TimeMs: 5}, {Type: "PAGEIOLATCH_SH", TimeMs: 700}},
			Root:        root, Nodes: []*plan.RelOp{root},
		}}
	got := map[string]string{}
	var order []string
	for _, d := range htmlStatementProperties(SummarizeStatement(src, "actual")) {
		got[d.Name] = d.Value
		order = append(order, d.Name)
	}
	want := map[string]string{
		"Optimization":  "FULL",
		"Early abort":   "TimeOut",
		"CE version":    "150",
		"DOP":           "8 (effective 4)",
		"Elapsed / CPU": "1,500 ms / 900 ms",
		"Memory grant":  "requested 2,048 KB, granted 1,024 KB, used 512 KB, waited 3 s",
		"Compile":       "1,200 ms (CPU 1,100 ms)",
		"Waits":         "PAGEIOLATCH_SH 700 ms, SOS_SCHEDULER_YIELD 5 ms",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("properties %v, want only %v", order, want)
	}
	if d := htmlStatementProperties(&Statement{}); d != nil {
		t.Errorf("a statement without properties has %v", d)
	}
}

// TestStatementPropertiesEstimatedGrant: an estimated plan has no grant.
// The page used to read the plan's GrantedMemory itself and wrote "granted
// 0 KB"; the properties know granted only for actual plans, and the page
// now shows what the plan would ask for.
func TestStatementPropertiesEstimatedGrant(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    plan.MemoryGrantInfo
		want string
	}{
		{"desired", plan.MemoryGrantInfo{SerialRequiredKB: 512, SerialDesiredKB: 1536}, "desired 1,536 KB"},
		{"nothing asked", plan.MemoryGrantInfo{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			src := &plan.Statement{QueryPlan: &plan.QueryPlan{DegreeOfParallelism: 1, MemoryGrant: &g}}
			got := ""
			for _, d := range htmlStatementProperties(SummarizeStatement(src, "estimated")) {
				if d.Name == "Memory grant" {
					got = d.Value
				}
			}
			if got != tc.want {
				t.Errorf("Memory grant = %q, want %q", got, tc.want)
			}
		})
	}
}

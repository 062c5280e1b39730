package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/planlint/planlint/internal/sharedtest"
	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/rules"
)

// ArtifactsEnv names the folder the browser tests save screenshots in
// (CI uploads it); without it they go to a temporary folder.
const ArtifactsEnv = "PLANLINT_ARTIFACTS"

// screenshotDir is where this run's screenshots go; the path is logged.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv(ArtifactsEnv)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "planlint-artifacts")
	}
	dir = filepath.Join(dir, "html-screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser starts headless Chromium with a 1,280 px wide window.
func browser(t *testing.T) context.Context {
	bin := chromium(t)
	profile, err := os.MkdirTemp("", "planlint-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) }) // after the browser is gone; a late write is harmless
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900), chromedp.UserDataDir(profile),
		// A loaded CI machine can take longer than the default 20 s to start it.
		chromedp.WSURLReadTimeout(90*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelA)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(cancelB)
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return bctx
}

func corpusReport(t *testing.T, name string) *Report {
	t.Helper()
	path := filepath.Join(sharedtest.Require(t, "corpus/plans"), name)
	doc, err := plan.ParseFile(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return analysedReport(t, name, doc)
}

func analysedReport(t *testing.T, name string, doc *plan.Document) *Report {
	fs, err := rules.Analyze(doc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Report{Tool: "planlint", Files: []*File{{Path: name, Statements: Summarize(doc), Findings: Wrap(fs), Plans: []*plan.Document{doc}}}}
}

// largestPlan is the corpus plan with the most operators.
func largestPlan(t *testing.T) (string, *plan.Document) {
	var best *plan.Document
	name, most := "", 0
	for _, path := range sharedtest.Files(t, "corpus/plans") {
		doc, err := plan.ParseFile(path, plan.Options{})
		if err != nil {
			continue
		}
		n := 0
		for _, s := range doc.Statements() {
			n += s.NodeCount()
		}
		if n > most {
			best, name, most = doc, filepath.Base(path), n
		}
	}
	if best == nil {
		t.Skip("no corpus plan parsed")
	}
	return name, best
}

// pageState is what the browser tests read from a rendered report.
type pageState struct {
	ScrollWidth, InnerWidth int
	Overflowing             []string
	Nodes                   int
	GraphTop                float64
	FirstFindingTop         float64
}

const readState = `(() => {
  const w = window.innerWidth, over = [];
  for (const el of document.querySelectorAll("body *")) {
    if (el.closest(".graph") || el.closest("svg.glyph-defs") || el.closest("#tip")) continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > w + 1) over.push(el.tagName.toLowerCase() + "." + el.className + " right=" + Math.round(r.right));
  }
  const g = document.querySelector(".graph"), f = document.querySelector("li.finding");
  return { ScrollWidth: document.documentElement.scrollWidth, InnerWidth: w, Overflowing: over.slice(0, 5),
    Nodes: document.querySelectorAll("g.node").length,
    GraphTop: g ? g.getBoundingClientRect().top + scrollY : -1,
    FirstFindingTop: f ? f.getBoundingClientRect().top + scrollY : -1 };
})()`

// centre returns the viewport centre of the first element matching sel
// (of its first line box, for a link that wraps).
func centre(ctx context.Context, sel string) (x, y float64, err error) {
	var p []float64
	err = chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return []; e.scrollIntoView({block: "center"}); const r = e.getClientRects()[0] || e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`, sel), &p))
	if err == nil && len(p) != 2 {
		err = fmt.Errorf("no element %s", sel)
	}
	if err != nil {
		return 0, 0, err
	}
	return p[0], p[1], nil
}

func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	x, y, err := centre(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(ctx, chromedp.MouseClickXY(x, y)); err != nil {
		t.Fatalf("clicking %s: %v", sel, err)
	}
}

func evalString(t *testing.T, ctx context.Context, js string) string {
	t.Helper()
	var s string
	if err := chromedp.Run(ctx, chromedp.Evaluate(js, &s)); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return s
}

func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.CaptureScreenshot(&png)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if msg := screenshotProblem(path); msg != "" {
		t.Errorf("%s: %s", path, msg)
	}
}

// TestHTMLInBrowser opens the report of a small, a mid-size and the
// largest corpus plan in Chromium at 1,280 px: nothing overflows
// sideways, the graph comes before the findings, clicking an operator
// and a finding fills the details panel, the arrow keys move between
// operators, and Fit puts the whole graph in view. Screenshots are saved
// for review.
func TestHTMLInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	ctx := browser(t)
	shots := screenshotDir(t)
	t.Logf("screenshots in %s", shots)
	largeName, largeDoc := largestPlan(t)
	cases := []struct {
		name   string
		report func(t *testing.T) *Report
		actual bool
	}{
		{"small-queue-fixture", func(t *testing.T) *Report {
			r := queueFixtureReport(t)
			for _, f := range r.Files {
				if strings.HasSuffix(f.Path, "status-index.sqlplan") {
					r.Files = []*File{f}
				}
			}
			return r
		}, false},
		{"small-actual-spill", func(t *testing.T) *Report { return corpusReport(t, "hqp__test_plans__HashSpillDetails.sqlplan") }, true},
		{"mid-actual-parallel", func(t *testing.T) *Report { return corpusReport(t, "supratimas__plans__uw_plan0.sqlplan") }, true},
		{"largest", func(t *testing.T) *Report { return analysedReport(t, largeName, largeDoc) }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.report(t)
			want := 0
			for _, f := range r.Files {
				for _, s := range f.Statements {
					want += s.Nodes
				}
			}
			page := filepath.Join(t.TempDir(), "report.html")
			if err := os.WriteFile(page, []byte(renderHTML(t, r, HTMLOptions{BaseDir: ".."})), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Run(ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(`body[data-ready="1"]`, chromedp.ByQuery)); err != nil {
				t.Fatalf("loading the report: %v", err)
			}
			var st pageState
			if err := chromedp.Run(ctx, chromedp.Evaluate(readState, &st)); err != nil {
				t.Fatal(err)
			}
			if st.ScrollWidth > st.InnerWidth || len(st.Overflowing) > 0 {
				t.Errorf("page is %d px wide in a %d px window; overflowing: %v", st.ScrollWidth, st.InnerWidth, st.Overflowing)
			}
			if st.Nodes != want {
				t.Errorf("%d operator boxes, want %d (the plans' operators)", st.Nodes, want)
			}
			if st.FirstFindingTop >= 0 && st.GraphTop > st.FirstFindingTop {
				t.Errorf("the first finding (y=%.0f) comes before the graph (y=%.0f)", st.FirstFindingTop, st.GraphTop)
			}
			screenshot(t, ctx, filepath.Join(shots, tc.name+"-1-open.png"))

			// Work in the largest graph. Click an operator with findings
			// (else the first): its panel shows its properties.
			evalString(t, ctx, `(() => { let best = null; for (const b of document.querySelectorAll(".plan-block")) { if (!best || b.querySelectorAll("g.node").length > best.querySelectorAll("g.node").length) best = b; } best.id = "biggest"; best.scrollIntoView(); return ""; })()`)
			sel := "#biggest g.node.has-findings"
			if evalString(t, ctx, `document.querySelector("#biggest g.node.has-findings") ? "y" : ""`) == "" {
				sel = "#biggest g.node"
			}
			click(t, ctx, sel+" rect.box")
			id := evalString(t, ctx, `(document.querySelector("g.node.selected") || {}).id || ""`)
			if id == "" {
				t.Fatal("clicking an operator selected nothing")
			}
			panel := evalString(t, ctx, fmt.Sprintf(`(() => { const d = document.getElementById("d-%s"); return d && !d.hidden ? d.innerText : ""; })()`, id))
			for _, w := range []string{"Physical operation", "Estimated rows per execution", "Row size"} {
				if !strings.Contains(panel, w) {
					t.Errorf("the details panel of %s lacks %q:\n%s", id, w, panel)
				}
			}
			if tc.actual && !strings.Contains(panel, "Actual of estimated") {
				t.Errorf("the details panel of an actual plan lacks \"Actual of estimated\":\n%s", panel)
			}
			screenshot(t, ctx, filepath.Join(shots, tc.name+"-2-operator.png"))

			// The arrow keys move to a child and back to the parent.
			if kid := evalString(t, ctx, fmt.Sprintf(`(document.getElementById(%q).getAttribute("data-children") || "").split(" ")[0]`, id)); kid != "" {
				if err := chromedp.Run(ctx, chromedp.KeyEvent(kb.ArrowRight)); err != nil {
					t.Fatal(err)
				}
				if got := evalString(t, ctx, `(document.querySelector("g.node.selected") || {}).id || ""`); got != kid {
					t.Errorf("ArrowRight selected %q, want the first child %q", got, kid)
				}
			}

			// Click a finding's link to its operator: the operator is
			// selected and its panel lists the finding, linked back.
			if evalString(t, ctx, `document.querySelector("li.finding a.place[data-target]") ? "y" : ""`) != "" {
				click(t, ctx, "li.finding a.place[data-target]")
				target := evalString(t, ctx, `document.querySelector("li.finding a.place[data-target]").getAttribute("data-target")`)
				finding := evalString(t, ctx, `document.querySelector("li.finding a.place[data-target]").closest("li").id`)
				if got := evalString(t, ctx, `(document.querySelector("g.node.selected") || {}).id || ""`); got != target {
					t.Errorf("clicking the finding selected %q, want %q", got, target)
				}
				back := evalString(t, ctx, fmt.Sprintf(`(() => { const d = document.getElementById("d-%s"); return d && !d.hidden && d.querySelector('a[data-finding=%q]') ? "y" : ""; })()`, target, finding))
				if back == "" {
					t.Errorf("the panel of %s does not link back to finding %s", target, finding)
				}
			}

			// Fit puts the whole graph inside its viewport.
			click(t, ctx, `#biggest button[data-zoom="fit"]`)
			var fit []float64
			if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => { const g = document.querySelector("#biggest .graph"), c = g.querySelector("g.canvas").getBoundingClientRect(), v = g.getBoundingClientRect(); return [c.left - v.left, c.top - v.top, v.right - c.right, v.bottom - c.bottom]; })()`, &fit)); err != nil {
				t.Fatal(err)
			}
			for i, gap := range fit {
				if gap < -2 {
					t.Errorf("after Fit the graph sticks out of its viewport by %.0f px (side %d)", -gap, i)
				}
			}
			screenshot(t, ctx, filepath.Join(shots, tc.name+"-3-fit.png"))

			// Opening the page at an operator's anchor selects it.
			last := evalString(t, ctx, `Array.from(document.querySelectorAll("g.node")).pop().id`)
			if err := chromedp.Run(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate("file://"+page+"#"+last),
				chromedp.WaitReady(`body[data-ready="1"]`, chromedp.ByQuery)); err != nil {
				t.Fatal(err)
			}
			if got := evalString(t, ctx, `(document.querySelector("g.node.selected") || {}).id || ""`); got != last {
				t.Errorf("the address names operator %s, %q is selected", last, got)
			}
		})
	}
}

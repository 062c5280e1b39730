package report

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/rules"
)

//go:embed assets/report.html.tmpl assets/report.css assets/report.js assets/glyphs.svg
var htmlAssets embed.FS

var htmlPage = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{"upperFirst": upperFirst}).ParseFS(htmlAssets, "assets/report.html.tmpl"))

// HTMLOptions control the HTML report.
type HTMLOptions struct {
	// Title heads the page; "" means "planlint report".
	Title string
	// BaseDir is what file paths are made relative to; "" means the
	// working directory.
	BaseDir string
	// NoRedact shows literals, predicates' constants and parameter values.
	NoRedact bool
	// MinSeverity hides findings below it (0 shows all); the counts still
	// include them.
	MinSeverity rules.Severity
}

// HTML writes one self-contained page (inline CSS, script and SVG; nothing
// is fetched) with, per file and statement, the findings, an operator
// graph laid out like SSMS's with finding badges, per-operator details on
// hover and click, and a sortable operator table.
func HTML(w io.Writer, r *Report, opt HTMLOptions) error {
	src := r
	if !opt.NoRedact {
		src = Redacted(r)
	}
	css, err := htmlAssets.ReadFile("assets/report.css")
	if err != nil {
		return err
	}
	js, err := htmlAssets.ReadFile("assets/report.js")
	if err != nil {
		return err
	}
	glyphs, err := htmlAssets.ReadFile("assets/glyphs.svg")
	if err != nil {
		return err
	}
	page := buildHTMLPage(src, opt)
	page.CSS = template.CSS(css)
	page.JS = template.JS(js)
	page.Glyphs = template.HTML(glyphs) // our own asset, not input
	return htmlPage.Execute(w, page)
}

type htmlPageData struct {
	Title                     string
	Version                   string
	Summary                   Summary
	Redacted                  bool
	Files                     []*htmlFile
	CSS                       template.CSS
	JS                        template.JS
	Glyphs                    template.HTML
	NodeWidth, NodeHeight     int
	BadgeX, TextX, TextMaxLen int
	CostBarWidth              int
}

type htmlFile struct {
	ID         string
	Path       string
	Error      string
	Failed     bool
	Statements []*htmlStatement
	Loose      []*htmlFinding // findings whose statement is not in the file's summaries
	Counts     string
	// Runtime and RuntimeText describe a statement pulled from the plan
	// cache or Query Store.
	Runtime, RuntimeText string
}

type htmlStatement struct {
	ID         string
	Heading    string
	Location   string
	Text       string
	Properties []htmlDetail
	Indexes    []htmlIndex
	Parameters []htmlParameter
	Findings   []*htmlFinding
	Plans      []*htmlPlan
	NoPlan     string
	// Compact statements (no plan, no finding) take one line.
	Compact bool
}

type htmlParameter struct {
	Name, Type, Compiled, Runtime string
}

type htmlFinding struct {
	ID       string // DOM id of the finding
	Severity string
	Code     string
	Rule     string
	DocURL   string
	Place    string
	Location string
	Message  string
	Fix      string
	Target   string // DOM id of the operator, if any
}

type htmlPlan struct {
	ID            string
	Label         string
	Width, Height int
	ViewHeight    int // the graph viewport's height before zooming
	Operators     int
	Nodes         []*htmlNode
	Edges         []htmlEdge
}

type htmlNode struct {
	ID          string
	NodeID      int
	X, Y        int
	Class       string
	Glyph       string
	NameLines   []string
	ObjectLines []string
	Parallel    bool
	Warned      bool   // the operator carries plan warnings
	CostBar     int    // width of the cost bar
	Parent      string // DOM id of the parent operator, for keyboard moves
	Children    string // DOM ids of the children, space-separated
	Name        string
	Object      string
	Rows        string
	RowsClass   string
	Cost        string
	Tooltip     string
	Badge       string
	BadgeSev    string
	Details     []htmlDetail
	Findings    []*htmlFinding

	// Sort keys and cells of the operator table.
	EstRows, ActRows, Execs, Factor, CostPct float64
	EstText, ActText, ExecText, FactorText   string
	Codes                                    string
	FullName                                 string
	FullObject                               string
}

type htmlDetail struct {
	Name  string
	Value string
	Pre   bool // keep line breaks and spacing (predicates, lists)
}

type htmlEdge struct {
	Path  string
	Arrow string
	Width string
	Title string
}

func buildHTMLPage(r *Report, opt HTMLOptions) *htmlPageData {
	p := &htmlPageData{
		Title: opt.Title, Version: r.Version, Summary: summarize(r), Redacted: !opt.NoRedact,
		NodeWidth: layoutNodeW, NodeHeight: layoutNodeH, BadgeX: layoutNodeW - 12, TextX: 42,
		CostBarWidth: layoutNodeW - 16,
	}
	if p.Title == "" {
		p.Title = "planlint report"
	}
	for fi, f := range r.Files {
		p.Files = append(p.Files, buildHTMLFile(fi, f, opt))
	}
	return p
}

func buildHTMLFile(fi int, f *File, opt HTMLOptions) *htmlFile {
	hf := &htmlFile{ID: fmt.Sprintf("f%d", fi), Path: displayPath(opt.BaseDir, f.Path)}
	if rt := f.Runtime(); rt != nil {
		hf.Runtime = RuntimeLine(rt)
		if rt.Database != "" {
			hf.Runtime = "[" + rt.Database + "] " + hf.Runtime
		}
	}
	if f.Error != nil {
		hf.Failed, hf.Error = true, *f.Error
		if hf.Runtime != "" && len(f.Statements) > 0 {
			hf.RuntimeText = strings.TrimSpace(f.Statements[0].Text)
		}
		return hf
	}
	var e, w, i int
	for _, x := range f.Findings {
		switch x.Severity {
		case rules.Error:
			e++
		case rules.Warning:
			w++
		default:
			i++
		}
	}
	hf.Counts = fmt.Sprintf("%d %s, %d %s, %d %s", e, plural(e, "error"), w, plural(w, "warning"), i, plural(i, "info"))
	if note := hiddenNote(&Report{Files: []*File{f}}, opt.MinSeverity); note != "" {
		hf.Counts += "; " + note
	}
	placed := map[*Finding]bool{}
	for si, s := range f.Statements {
		hs := &htmlStatement{
			ID:      fmt.Sprintf("%s-s%d", hf.ID, si),
			Heading: fmt.Sprintf("%s · %s · %s · cost %s", f.StatementPlace(s, nil), orDash(s.Type), s.Kind, strconv.FormatFloat(s.Cost, 'g', 4, 64)),
			Text:    strings.TrimSpace(s.Text),
		}
		if l := s.Location; l != nil && l.StartLine >= 1 {
			path := l.Path
			if path == "" {
				path = f.Path
			}
			hs.Location = fmt.Sprintf("%s:%d", displayPath(opt.BaseDir, path), l.StartLine)
		}
		nodeDOM := map[*plan.RelOp]string{}
		var planNodes []map[int]*htmlNode
		if s.Source != nil {
			if q := s.Source.QueryPlan; q != nil {
				for _, prm := range q.Parameters {
					hs.Parameters = append(hs.Parameters, htmlParameter{Name: prm.Name, Type: prm.DataType, Compiled: prm.CompiledValue, Runtime: prm.RuntimeValue})
				}
			}
			for pi, q := range s.Source.Plans() {
				hp, byID := buildHTMLPlan(fmt.Sprintf("%s-p%d", hs.ID, pi), q, nodeDOM)
				hs.Plans = append(hs.Plans, hp)
				planNodes = append(planNodes, byID)
			}
		}
		if len(hs.Plans) == 0 {
			if s.Source == nil {
				hs.NoPlan = "The plan was not kept for this report."
			} else {
				hs.NoPlan = "This statement has no query plan."
			}
		}
		evidence := map[*htmlFinding]map[string]any{}
		for _, x := range visible(f, opt.MinSeverity) {
			if f.StatementOf(x) != s {
				continue
			}
			placed[x] = true
			hx := buildHTMLFinding(f, x, opt)
			hx.ID = fmt.Sprintf("%s-x%d", hs.ID, len(hs.Findings))
			evidence[hx] = x.Evidence
			if op := findingOperator(f, x); op != nil {
				hx.Target = nodeDOM[op]
				for _, byID := range planNodes {
					if n := byID[op.NodeID]; n != nil && n.ID == hx.Target {
						n.Findings = append(n.Findings, hx)
					}
				}
			}
			hs.Findings = append(hs.Findings, hx)
		}
		for _, hp := range hs.Plans {
			for _, n := range hp.Nodes {
				finishNodeBadges(n)
			}
		}
		hs.Properties = htmlStatementProperties(s)
		hs.Indexes = statementIndexes(s, hs.Findings, evidence)
		hs.Compact = len(hs.Plans) == 0 && len(hs.Findings) == 0
		hf.Statements = append(hf.Statements, hs)
	}
	for _, x := range visible(f, opt.MinSeverity) {
		if !placed[x] {
			hx := buildHTMLFinding(f, x, opt)
			hx.ID = fmt.Sprintf("%s-x%d", hf.ID, len(hf.Loose))
			hf.Loose = append(hf.Loose, hx)
		}
	}
	return hf
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func buildHTMLFinding(f *File, x *Finding, opt HTMLOptions) *htmlFinding {
	hx := &htmlFinding{Severity: x.Severity.String(), Code: x.Code, Rule: x.Rule, Place: planPlace(f, x), Message: x.Message, Fix: x.Fix}
	if rule := rules.Lookup(x.Code); rule != nil {
		hx.DocURL = rules.DocURL(rule)
	}
	if l := x.Location; l != nil && l.StartLine >= 1 {
		path := l.Path
		if path == "" {
			path = f.Path
		}
		hx.Location = fmt.Sprintf("%s:%d:%d", displayPath(opt.BaseDir, path), l.StartLine, l.StartCol)
	}
	return hx
}

// finishNodeBadges sets a node's badge from its findings: their count,
// coloured by the most severe.
func finishNodeBadges(n *htmlNode) {
	if len(n.Findings) == 0 {
		return
	}
	worst := ""
	var codes []string
	for _, x := range n.Findings {
		codes = append(codes, x.Code)
		if severityRank(x.Severity) > severityRank(worst) {
			worst = x.Severity
		}
	}
	n.Badge = strconv.Itoa(len(n.Findings))
	n.BadgeSev = worst
	n.Codes = strings.Join(codes, ", ")
	n.Class += " has-findings"
	n.Tooltip += "\nFindings: " + n.Codes
}

func severityRank(s string) int {
	switch s {
	case "error":
		return 3
	case "warning":
		return 2
	case "info":
		return 1
	}
	return 0
}

// buildHTMLPlan lays out one plan and describes each operator. nodeDOM
// receives the DOM id of every operator.
func buildHTMLPlan(id string, q plan.LabeledPlan, nodeDOM map[*plan.RelOp]string) (*htmlPlan, map[int]*htmlNode) {
	lay := layoutPlan(q.Root, q.Nodes)
	hp := &htmlPlan{ID: id, Label: q.Label, Width: lay.Width, Height: lay.Height, Operators: len(q.Nodes),
		ViewHeight: min(lay.Height+2, 560)}
	byID := map[int]*htmlNode{}
	domNode := map[string]*plan.RelOp{}
	for i, n := range q.Nodes {
		if n == nil {
			continue
		}
		dom := fmt.Sprintf("%s-n%d", id, i)
		nodeDOM[n] = dom
		domNode[dom] = n
		hn := describeNode(q.QueryPlan, n)
		hn.ID = dom
		pos := lay.pos[n]
		hn.X, hn.Y = pos.X, pos.Y
		hp.Nodes = append(hp.Nodes, hn)
		if _, dup := byID[n.NodeID]; !dup {
			byID[n.NodeID] = hn
		}
	}
	for _, hn := range hp.Nodes { // family links for keyboard moves
		n := domNode[hn.ID]
		if n.Parent != nil {
			hn.Parent = nodeDOM[n.Parent]
		}
		var kids []string
		for _, c := range n.Children {
			if d := nodeDOM[c]; d != "" {
				kids = append(kids, d)
			}
		}
		hn.Children = strings.Join(kids, " ")
	}
	for _, n := range q.Nodes {
		if n == nil {
			continue
		}
		for _, c := range n.Children {
			cp, ok := lay.pos[c]
			if !ok || nodeDOM[c] == "" {
				continue
			}
			rows := flowRows(c)
			kind := "estimated"
			if c.RunTime != nil {
				kind = "actual"
			}
			width := edgeWidth(rows)
			path, arrow := edgeShape(lay.pos[n], cp, width)
			hp.Edges = append(hp.Edges, htmlEdge{
				Path:  path,
				Arrow: arrow,
				Width: strconv.FormatFloat(width, 'f', 1, 64),
				Title: fmt.Sprintf("%s (%s) from node %d to node %d", countOf(rows, "row"), kind, c.NodeID, n.NodeID),
			})
		}
	}
	return hp, byID
}

// describeNode gathers what the graph, the tooltip, the details panel and
// the operator table show for one operator.
func describeNode(q *plan.QueryPlan, n *plan.RelOp) *htmlNode {
	hn := &htmlNode{NodeID: n.NodeID, FullName: n.DisplayName(), FullObject: fullObject(n)}
	hn.Name = hn.FullName
	hn.NameLines = wrapLabel(hn.FullName, 22, 2)
	hn.Object = objectLabel(n)
	hn.ObjectLines = []string{hn.Object}
	if len([]rune(hn.Object)) > 24 { // break after dots, shown joined
		hn.ObjectLines = wrapLabel(strings.ReplaceAll(hn.Object, ".", ". "), 24, 2)
		for i, l := range hn.ObjectLines {
			hn.ObjectLines[i] = strings.ReplaceAll(l, ". ", ".")
		}
	}
	if hn.Object == "" {
		hn.ObjectLines = nil
	}
	hn.Glyph = glyphFor(n)
	hn.Parallel = n.Parallel
	hn.Warned = hasPlanWarnings(n)
	share := CostShare(q, n)
	hn.CostPct = math.Round(share*1000) / 10
	hn.CostBar = int(math.Round(math.Min(1, math.Max(0, share)) * float64(layoutNodeW-16)))
	hn.Cost = fmt.Sprintf("cost %s · node %d", percentText(share), n.NodeID)
	var class []string
	switch { // a neutral tint for cost: red stays for errors
	case share >= 0.5:
		class = append(class, "cost-2")
	case share >= 0.1:
		class = append(class, "cost-1")
	}
	if hn.Warned {
		class = append(class, "warned")
	}
	hn.EstRows = n.EstimatedRowsAllExecutions()
	hn.EstText = FormatCount(hn.EstRows)
	hn.Rows = "est " + hn.EstText + " " + plural(int(min(math.Ceil(hn.EstRows), 2)), "row")
	hn.Execs = n.EstimatedExecutions()
	hn.ExecText = FormatCount(hn.Execs) + " est."
	hn.ActRows = -1
	hn.Factor = -1
	if rt := n.RunTime; rt != nil {
		hn.ActRows = float64(rt.ActualRows)
		hn.ActText = FormatCount(hn.ActRows)
		hn.Rows = actualOfEstimated(n)
		hn.Execs = float64(rt.ActualExecutions)
		hn.ExecText = FormatCount(hn.Execs)
		if sk := OperatorSkew(n); sk.OK {
			hn.Factor = sk.Factor
			dir := "over"
			if sk.Under {
				dir = "under"
			}
			hn.FactorText = FormatCount(sk.Factor) + "× " + dir
			switch {
			case sk.Factor >= 1000:
				hn.RowsClass = "skew-3"
			case sk.Factor >= 100:
				hn.RowsClass = "skew-2"
			case sk.Factor >= 10:
				hn.RowsClass = "skew-1"
			}
			if hn.RowsClass != "" {
				class = append(class, hn.RowsClass)
			}
		}
	}
	hn.Class = strings.Join(append([]string{"node"}, class...), " ")
	var tip []string
	tip = append(tip, hn.FullName)
	if hn.FullObject != "" {
		tip = append(tip, hn.FullObject)
	}
	tip = append(tip, fmt.Sprintf("Estimated rows: %s (%s per execution × %s)", hn.EstText,
		FormatCount(n.EstimateRows), countOf(n.EstimatedExecutions(), "execution")))
	if n.RunTime != nil {
		tip = append(tip, fmt.Sprintf("Actual rows: %s in %s", hn.ActText, countOf(hn.Execs, "execution")))
		tip = append(tip, "Actual of estimated: "+actualOfEstimated(n))
		if hn.FactorText != "" {
			tip = append(tip, "Estimate off by "+hn.FactorText)
		}
		if n.RunTime.HasTiming {
			tip = append(tip, fmt.Sprintf("Elapsed %s ms, CPU %s ms", FormatCount(float64(n.RunTime.ElapsedMs)), FormatCount(float64(n.RunTime.CPUMs))))
		}
	}
	tip = append(tip, "Operator cost: "+percentText(share))
	if n.Parallel {
		tip = append(tip, "Parallel")
	}
	if hn.Warned {
		tip = append(tip, "Plan warnings: "+strings.ReplaceAll(warningsText(n.Warnings), "\n", "; "))
	}
	hn.Tooltip = strings.Join(tip, "\n")
	hn.Details = nodeDetails(q, n, share)
	return hn
}

func percentText(share float64) string {
	switch {
	case share <= 0:
		return "0%"
	case share < 0.01:
		return "<1%"
	}
	return strconv.Itoa(int(math.Round(share*100))) + "%"
}

// fullObject is "[db].[schema].[table].[index] AS alias (kind)".
func fullObject(n *plan.RelOp) string {
	if n.Access == nil {
		return ""
	}
	var objs []string
	for _, o := range n.Access.Objects {
		name := o.TableName(true)
		if o.Index != "" {
			name += "." + o.Index
		}
		if o.Alias != "" {
			name += " AS " + o.Alias
		}
		var notes []string
		if o.IndexKind != "" {
			notes = append(notes, o.IndexKind)
		}
		if o.Filtered {
			notes = append(notes, "filtered")
		}
		if o.Storage != "" && o.Storage != "RowStore" {
			notes = append(notes, o.Storage)
		}
		if len(notes) > 0 {
			name += " (" + strings.Join(notes, ", ") + ")"
		}
		if name != "" {
			objs = append(objs, name)
		}
	}
	return strings.Join(objs, "; ")
}

// nodeDetails lists every attribute of interest for the details panel.
func nodeDetails(q *plan.QueryPlan, n *plan.RelOp, share float64) []htmlDetail {
	var d []htmlDetail
	add := func(name, value string) {
		if value != "" {
			d = append(d, htmlDetail{Name: name, Value: value})
		}
	}
	addPre := func(name, value string) {
		if value != "" {
			d = append(d, htmlDetail{Name: name, Value: value, Pre: true})
		}
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	add("Physical operation", n.PhysicalOp)
	add("Logical operation", n.LogicalOp)
	add("Node", strconv.Itoa(n.NodeID))
	add("Object", fullObject(n))
	add("Operator cost", fmt.Sprintf("%s of the plan (%s)", percentText(share), num(n.OwnCost())))
	add("Subtree cost", num(n.SubtreeCost))
	add("Estimated CPU / I/O cost", num(n.EstimateCPU)+" / "+num(n.EstimateIO))
	add("Estimated rows per execution", FormatCount(n.EstimateRows))
	add("Estimated executions", FormatCount(n.EstimatedExecutions()))
	add("Estimated rows, all executions", FormatCount(n.EstimatedRowsAllExecutions()))
	if n.EstimateRebinds+n.EstimateRewinds > 0 {
		add("Estimated rebinds / rewinds", FormatCount(n.EstimateRebinds)+" / "+FormatCount(n.EstimateRewinds))
	}
	if n.AvgRowSize > 0 {
		add("Row size", FormatCount(n.AvgRowSize)+" B")
	}
	if a := n.Access; a != nil && a.Element != "" && (strings.Contains(n.PhysicalOp, "Scan") || strings.Contains(n.PhysicalOp, "Seek") || n.IsLookup()) {
		add("Ordered", strconv.FormatBool(a.Ordered))
	}
	if n.EstimateRowsWithoutRowGoal != nil {
		add("Estimated rows without row goal", FormatCount(*n.EstimateRowsWithoutRowGoal))
	}
	if n.EstimatedRowsRead != nil {
		add("Estimated rows read per execution", FormatCount(*n.EstimatedRowsRead))
	}
	if n.TableCardinality > 0 {
		add("Table cardinality", FormatCount(n.TableCardinality))
	}
	if rt := n.RunTime; rt != nil {
		add("Actual rows (all threads)", FormatCount(float64(rt.ActualRows)))
		add("Actual executions", FormatCount(float64(rt.ActualExecutions)))
		add("Actual of estimated", actualOfEstimated(n))
		if rt.ActualRebinds+rt.ActualRewinds > 0 {
			add("Actual rebinds / rewinds", FormatCount(float64(rt.ActualRebinds))+" / "+FormatCount(float64(rt.ActualRewinds)))
		}
		if rt.HasRowsRead {
			add("Actual rows read", FormatCount(float64(rt.ActualRowsRead)))
		}
		if sk := OperatorSkew(n); sk.OK {
			dir := "over-estimate"
			if sk.Under {
				dir = "under-estimate"
			}
			add("Estimate factor", FormatCount(sk.Factor)+"× "+dir)
		}
		if len(rt.Threads) > 1 {
			add("Threads", strconv.Itoa(len(rt.Threads)))
		}
		if rt.HasTiming {
			add("Elapsed / CPU", fmt.Sprintf("%s ms / %s ms", FormatCount(float64(rt.ElapsedMs)), FormatCount(float64(rt.CPUMs))))
		}
		if t := n.Time; t != nil {
			add("Own elapsed / CPU", fmt.Sprintf("%s ms / %s ms", FormatCount(float64(t.SelfElapsedMs)), FormatCount(float64(t.SelfCPUMs))))
		}
		if rt.LogicalReads+rt.PhysicalReads+rt.ReadAheads > 0 {
			add("Logical / physical / read-ahead reads", fmt.Sprintf("%s / %s / %s", FormatCount(float64(rt.LogicalReads)),
				FormatCount(float64(rt.PhysicalReads)), FormatCount(float64(rt.ReadAheads))))
		}
		add("Actual execution mode", rt.ExecutionMode)
	}
	add("Estimated execution mode", n.EstimatedExecutionMode)
	if n.Parallel {
		add("Parallel", "yes")
	}
	if a := n.Access; a != nil {
		var flags []string
		for _, f := range []struct {
			on   bool
			name string
		}{{a.Ordered, "ordered"}, {a.ForcedIndex, "forced index"}, {a.ForceSeek, "FORCESEEK"}, {a.ForceScan, "FORCESCAN"}, {a.Lookup, "lookup"}} {
			if f.on {
				flags = append(flags, f.name)
			}
		}
		if a.ScanDirection != "" {
			flags = append(flags, "scan "+strings.ToLower(a.ScanDirection))
		}
		add("Access", strings.Join(flags, ", "))
		addPre("Seek predicates", seekText(a.SeekPredicates))
		addPre("Predicate", a.Predicate.String())
		addPre("Set", a.SetPredicate.String())
	}
	addPre("Operator predicate", n.Predicate.String())
	if n.Top != nil {
		top := n.Top.RowsText
		if n.Top.IsPercent {
			top += " PERCENT"
		}
		if n.Top.WithTies {
			top += " WITH TIES"
		}
		add("Top", top)
	}
	if n.Sort != nil {
		var cols []string
		for _, c := range n.Sort.Columns {
			dir := "ASC"
			if !c.Ascending {
				dir = "DESC"
			}
			cols = append(cols, c.Column.Name()+" "+dir)
		}
		s := strings.Join(cols, ", ")
		if n.Sort.TopRows > 0 {
			s = fmt.Sprintf("top %d by %s", n.Sort.TopRows, s)
		}
		if n.Sort.Distinct {
			s += " (distinct)"
		}
		add("Order by", s)
	}
	addPre("Outer references", columnList(n.OuterReferences))
	addPre("Output columns", columnList(n.OutputList))
	addPre("Warnings", warningsText(n.Warnings))
	return d
}

func seekText(sps []plan.SeekPredicate) string {
	var lines []string
	for _, sp := range sps {
		for _, k := range sp.Keys {
			var parts []string
			for i, c := range k.Columns {
				part := c.Name() + " " + plan.CompareSymbol(k.ScanType)
				if i < len(k.Values) && k.Values[i] != nil {
					part += " " + k.Values[i].String()
				}
				parts = append(parts, part)
			}
			lines = append(lines, k.Part+": "+strings.Join(parts, " AND "))
		}
	}
	return strings.Join(lines, "\n")
}

func columnList(cols []plan.ColumnRef) string {
	names := make([]string, 0, len(cols))
	for _, c := range cols {
		names = append(names, c.Name())
	}
	return strings.Join(names, "\n")
}

// warningsText renders a Warnings element one warning a line.
func warningsText(w *plan.Warnings) string { return strings.Join(warningLines(w), "\n") }

// warningLines describes each warning of a Warnings element.
func warningLines(w *plan.Warnings) []string {
	if w == nil {
		return nil
	}
	var out []string
	if w.NoJoinPredicate {
		out = append(out, "No join predicate")
	}
	if w.UnmatchedIndexes {
		out = append(out, "Unmatched indexes")
	}
	if w.SpatialGuess {
		out = append(out, "Spatial guess")
	}
	for _, s := range w.SpillToTempDb {
		out = append(out, fmt.Sprintf("Spill to tempdb, level %d (%d %s)", s.Level, s.SpilledThreadCount, plural(s.SpilledThreadCount, "thread")))
	}
	for _, s := range w.SortSpills {
		out = append(out, fmt.Sprintf("Sort spill: %s pages written", FormatCount(s.WritesToTempDb)))
	}
	for _, s := range w.HashSpills {
		out = append(out, fmt.Sprintf("Hash spill: %s pages written", FormatCount(s.WritesToTempDb)))
	}
	for _, s := range w.ExchangeSpills {
		out = append(out, fmt.Sprintf("Exchange spill: %s pages written", FormatCount(s.WritesToTempDb)))
	}
	for _, c := range w.Converts {
		out = append(out, fmt.Sprintf("Type conversion (%s): %s", c.Issue, c.Expression))
	}
	for _, c := range w.NoStatistics {
		out = append(out, "No statistics: "+c.Name())
	}
	for _, c := range w.StaleStatistics {
		out = append(out, "Stale statistics: "+c.Name())
	}
	if m := w.MemoryGrant; m != nil {
		out = append(out, fmt.Sprintf("Memory grant (%s): requested %s KB, granted %s KB, used %s KB", m.Kind,
			FormatCount(m.RequestedKB), FormatCount(m.GrantedKB), FormatCount(m.MaxUsedKB)))
	}
	for _, wt := range w.Waits {
		out = append(out, fmt.Sprintf("Wait %s: %s ms", wt.Type, FormatCount(wt.TimeMs)))
	}
	return out
}

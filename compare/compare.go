// Package compare finds what changed between two plans of the same
// statements: a capture at normal queue depth and one during a backlog, or
// the plans before and after an index change.
package compare

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/rules"
)

// Side is one of the two plans compared, with its findings.
type Side struct {
	Name     string
	Document *plan.Document
	Findings []rules.Finding
}

// Result is the comparison of two documents.
type Result struct {
	A          string           `json:"a"`
	B          string           `json:"b"`
	Statements []*StatementDiff `json:"statements"`
	// Unpaired statements exist on one side only.
	OnlyInA  []StatementRef `json:"only_in_a"`
	OnlyInB  []StatementRef `json:"only_in_b"`
	Findings FindingsDiff   `json:"findings"`
}

// StatementRef names a statement.
type StatementRef struct {
	Batch       int    `json:"batch"`
	StatementID int    `json:"statement_id"`
	Type        string `json:"type"`
}

// StatementDiff compares one statement of A with its counterpart in B.
type StatementDiff struct {
	A StatementRef `json:"a"`
	B StatementRef `json:"b"`
	// MatchedBy says how the pair was found: "query_hash", "text",
	// "position".
	MatchedBy string `json:"matched_by"`
	Cost      Delta  `json:"cost"`
	// MemoryGrantKB compares the granted (actual) or requested memory.
	MemoryGrantKB Delta          `json:"memory_grant_kb"`
	DOP           Delta          `json:"dop"`
	Changes       []Change       `json:"changes"`
	Operators     []OperatorDiff `json:"operators"`
	// Actual holds the runtime totals when either plan is an actual plan.
	Actual *ActualDiff `json:"actual,omitempty"`
}

// Delta is a figure on both sides.
type Delta struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// Ratio is B/A (0 when A is 0).
func (d Delta) Ratio() float64 {
	if d.A == 0 {
		return 0
	}
	return d.B / d.A
}

// ActualDiff compares what the statement did at run time.
type ActualDiff struct {
	A *RunTotals `json:"a"` // nil when A is an estimated plan
	B *RunTotals `json:"b"` // nil when B is an estimated plan
}

// RunTotals are an actual plan's figures: QueryTimeStats (else the root
// operator's timing) and the sums of every operator's counters.
type RunTotals struct {
	ElapsedMs    float64 `json:"elapsed_ms"`
	CPUMs        float64 `json:"cpu_ms"`
	LogicalReads float64 `json:"logical_reads"`
	RowsRead     float64 `json:"rows_read"`
}

// Change is one difference in shape or settings.
type Change struct {
	// Kind is access-path, operator-added, operator-removed, join-type,
	// sort-added, sort-removed, set-option, parameterization or
	// parameter-value.
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
	// Parameter, ValueA and ValueB are set on a parameter-value change:
	// the parameter and its compiled value on each side ("" for none),
	// so that shared outputs can mask the values.
	Parameter string `json:"parameter,omitempty"`
	ValueA    string `json:"value_a,omitempty"`
	ValueB    string `json:"value_b,omitempty"`
}

// ParameterDetail is a parameter-value change's detail with the given
// values.
func ParameterDetail(name, a, b string) string {
	return fmt.Sprintf("%s compiled for %s → %s", name, orNone(a), orNone(b))
}

// OperatorDiff pairs an operator of A with one of B (either may be absent).
type OperatorDiff struct {
	Operator string `json:"operator"`
	Object   string `json:"object,omitempty"`
	NodeA    *int   `json:"node_a"`
	NodeB    *int   `json:"node_b"`
	// EstimatedRows are for all executions; a side without the operator
	// is null.
	EstimatedRows SideDelta `json:"estimated_rows"`
	// ActualRowsA and ActualRowsB are set on sides with runtime counters.
	ActualRowsA *int64 `json:"actual_rows_a,omitempty"`
	ActualRowsB *int64 `json:"actual_rows_b,omitempty"`
	// LogicalReads are the operator's actual logical reads, when known.
	LogicalReadsA *int64    `json:"logical_reads_a,omitempty"`
	LogicalReadsB *int64    `json:"logical_reads_b,omitempty"`
	CostShare     SideDelta `json:"cost_share"`
}

// SideDelta is a figure of an operator on each side that has it (nil on
// the side without the operator).
type SideDelta struct {
	A *float64 `json:"a"`
	B *float64 `json:"b"`
}

func floatp(v float64) *float64 { return &v }

// FindingsDiff lists findings B gained and lost.
type FindingsDiff struct {
	New  []rules.Finding `json:"new"`
	Gone []rules.Finding `json:"gone"`
	Kept int             `json:"kept"`
	// NewAt and GoneAt are the indexes of New in B's findings and of Gone
	// in A's, as the Sides gave them: renderers find the located report
	// findings there.
	NewAt  []int `json:"-"`
	GoneAt []int `json:"-"`
}

// Documents compares two analysed documents.
func Documents(a, b Side) *Result {
	r := &Result{A: a.Name, B: b.Name}
	sa, sb := a.Document.Statements(), b.Document.Statements()
	pairs, onlyA, onlyB := pairStatements(sa, sb)
	for _, p := range pairs {
		r.Statements = append(r.Statements, diffStatement(p))
	}
	for _, s := range onlyA {
		r.OnlyInA = append(r.OnlyInA, ref(s))
	}
	for _, s := range onlyB {
		r.OnlyInB = append(r.OnlyInB, ref(s))
	}
	r.Findings = diffFindings(a, b, pairs)
	return r
}

func ref(s *plan.Statement) StatementRef {
	return StatementRef{Batch: s.Batch, StatementID: s.ID, Type: s.Type}
}

type pair struct {
	a, b *plan.Statement
	by   string
}

// pairStatements matches statements with a plan by query hash, then by
// normalised text, then by position among the remaining ones.
func pairStatements(sa, sb []*plan.Statement) (pairs []pair, onlyA, onlyB []*plan.Statement) {
	withPlan := func(ss []*plan.Statement) []*plan.Statement {
		var out []*plan.Statement
		for _, s := range ss {
			if len(s.Plans()) > 0 {
				out = append(out, s)
			}
		}
		return out
	}
	sa, sb = withPlan(sa), withPlan(sb)
	usedB := make([]bool, len(sb))
	matched := make([]bool, len(sa))
	try := func(by string, key func(*plan.Statement) string) {
		for i, x := range sa {
			if matched[i] || key(x) == "" {
				continue
			}
			for j, y := range sb {
				if !usedB[j] && key(x) == key(y) {
					pairs = append(pairs, pair{x, y, by})
					matched[i], usedB[j] = true, true
					break
				}
			}
		}
	}
	try("query_hash", func(s *plan.Statement) string { return s.QueryHash })
	try("text", func(s *plan.Statement) string { return strings.Join(strings.Fields(strings.ToLower(s.Text)), " ") })
	var restA, restB []*plan.Statement
	for i, x := range sa {
		if !matched[i] {
			restA = append(restA, x)
		}
	}
	for j, y := range sb {
		if !usedB[j] {
			restB = append(restB, y)
		}
	}
	n := min(len(restA), len(restB))
	for i := 0; i < n; i++ {
		pairs = append(pairs, pair{restA[i], restB[i], "position"})
	}
	sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].a.Ordinal < pairs[j].a.Ordinal })
	return pairs, restA[n:], restB[n:]
}

func mainPlan(s *plan.Statement) *plan.QueryPlan {
	ps := s.Plans()
	if len(ps) == 0 {
		return nil
	}
	return ps[0].QueryPlan
}

func grant(q *plan.QueryPlan) float64 {
	if q.MemoryGrant != nil {
		if q.MemoryGrant.GrantedKB > 0 {
			return q.MemoryGrant.GrantedKB
		}
		if q.MemoryGrant.RequestedKB > 0 {
			return q.MemoryGrant.RequestedKB
		}
		return q.MemoryGrant.SerialDesiredKB
	}
	return q.MemoryGrantKB
}

func diffStatement(p pair) *StatementDiff {
	d := &StatementDiff{A: ref(p.a), B: ref(p.b), MatchedBy: p.by,
		Cost: Delta{p.a.SubtreeCost, p.b.SubtreeCost}}
	qa, qb := mainPlan(p.a), mainPlan(p.b)
	d.MemoryGrantKB = Delta{grant(qa), grant(qb)}
	d.DOP = Delta{float64(qa.DegreeOfParallelism), float64(qb.DegreeOfParallelism)}
	d.Changes = append(d.Changes, settingChanges(p.a, p.b, qa, qb)...)
	d.Changes = append(d.Changes, accessChanges(qa, qb)...)
	d.Changes = append(d.Changes, operatorChanges(qa, qb)...)
	d.Operators = pairOperators(qa, qb)
	d.Actual = actualDiff(qa, qb)
	return d
}

// actualDiff sums the runtime counters of both plans; nil when neither ran.
func actualDiff(qa, qb *plan.QueryPlan) *ActualDiff {
	d := &ActualDiff{A: runTotals(qa), B: runTotals(qb)}
	if d.A == nil && d.B == nil {
		return nil
	}
	return d
}

func runTotals(q *plan.QueryPlan) *RunTotals {
	var t *RunTotals
	for _, n := range q.Nodes {
		if rt := n.RunTime; rt != nil {
			if t == nil {
				t = &RunTotals{}
			}
			t.LogicalReads += float64(rt.LogicalReads)
			t.RowsRead += float64(rt.ActualRowsRead)
		}
	}
	if t == nil {
		return nil
	}
	switch {
	case q.QueryTime != nil:
		t.ElapsedMs, t.CPUMs = q.QueryTime.ElapsedTimeMs, q.QueryTime.CPUTimeMs
	case q.Root != nil && q.Root.RunTime != nil:
		t.ElapsedMs, t.CPUMs = float64(q.Root.RunTime.ElapsedMs), float64(q.Root.RunTime.CPUMs)
	}
	return t
}

func boolText(v *bool) string {
	if v == nil {
		return "unknown"
	}
	if *v {
		return "ON"
	}
	return "OFF"
}

// settingChanges compares SET options, parameterization and parameter
// values: the usual reasons two plans of one statement differ.
func settingChanges(a, b *plan.Statement, qa, qb *plan.QueryPlan) []Change {
	var out []Change
	la, lb := a.SetOptions.List(), b.SetOptions.List()
	if len(la) == len(lb) {
		for i := range la {
			va, vb := boolText(la[i].Value), boolText(lb[i].Value)
			if va == vb {
				continue
			}
			detail := fmt.Sprintf("%s %s → %s", la[i].Name, va, vb)
			if la[i].Name == "ARITHABORT" {
				detail += ": a different plan-cache entry (SSMS runs ARITHABORT ON, application drivers OFF), so the two plans may not be the one the application gets"
			}
			out = append(out, Change{Kind: "set-option", Detail: detail})
		}
	}
	if a.ParameterizationType != b.ParameterizationType && a.ParameterizationType != plan.ParamUnknown && b.ParameterizationType != plan.ParamUnknown {
		out = append(out, Change{Kind: "parameterization", Detail: fmt.Sprintf("parameterization %s → %s", a.ParameterizationType, b.ParameterizationType)})
	}
	for _, pa := range qa.Parameters {
		for _, pb := range qb.Parameters {
			if !strings.EqualFold(pa.Name, pb.Name) {
				continue
			}
			if pa.CompiledValue != pb.CompiledValue {
				out = append(out, Change{Kind: "parameter-value", Detail: ParameterDetail(pa.Name, pa.CompiledValue, pb.CompiledValue),
					Parameter: pa.Name, ValueA: pa.CompiledValue, ValueB: pb.CompiledValue})
			}
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// accessChanges reports, per table, a different way of reading it.
func accessChanges(qa, qb *plan.QueryPlan) []Change {
	paths := func(q *plan.QueryPlan) (map[string][]string, []string) {
		m := map[string][]string{}
		var order []string
		for _, n := range q.Nodes {
			if n.Access == nil || isWrite(n) {
				continue
			}
			o := n.Access.Object()
			if o.Table == "" {
				continue
			}
			t := o.TableName(false) // shown as the plan writes it, matched without case
			if _, ok := m[strings.ToLower(t)]; !ok {
				order = append(order, t)
			}
			t = strings.ToLower(t)
			m[t] = append(m[t], accessName(n))
		}
		return m, order
	}
	ma, orderA := paths(qa)
	mb, orderB := paths(qb)
	var out []Change
	for _, name := range orderA {
		t := strings.ToLower(name)
		a, b := strings.Join(ma[t], " + "), strings.Join(mb[t], " + ")
		switch {
		case len(mb[t]) == 0:
			out = append(out, Change{Kind: "access-path", Detail: fmt.Sprintf("%s is no longer read (was %s)", name, a)})
		case a != b:
			out = append(out, Change{Kind: "access-path", Detail: fmt.Sprintf("%s: %s → %s", name, a, b)})
		}
	}
	for _, name := range orderB {
		if t := strings.ToLower(name); len(ma[t]) == 0 {
			out = append(out, Change{Kind: "access-path", Detail: fmt.Sprintf("%s is now read with %s", name, strings.Join(mb[t], " + "))})
		}
	}
	return out
}

func accessName(n *plan.RelOp) string {
	o := n.Access.Object()
	if o.Index != "" {
		return n.DisplayName() + " " + o.Index
	}
	return n.DisplayName()
}

func isWrite(n *plan.RelOp) bool {
	switch n.LogicalOp {
	case "Insert", "Update", "Delete", "Merge":
		return true
	}
	return false
}

func isJoin(n *plan.RelOp) bool {
	switch n.PhysicalOp {
	case "Nested Loops", "Hash Match", "Merge Join", "Adaptive Join":
		return strings.Contains(n.LogicalOp, "Join") || strings.Contains(n.LogicalOp, "Apply")
	}
	return false
}

// operatorChanges reports operators that appeared or disappeared, sorts
// in particular, and joins whose type changed.
func operatorChanges(qa, qb *plan.QueryPlan) []Change {
	countOps := func(q *plan.QueryPlan) map[string]int {
		m := map[string]int{}
		for _, n := range q.Nodes {
			if !isJoin(n) && n.Access == nil {
				m[n.DisplayName()]++
			}
		}
		return m
	}
	ca, cb := countOps(qa), countOps(qb)
	var names []string
	for k := range ca {
		names = append(names, k)
	}
	for k := range cb {
		if _, ok := ca[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var out []Change
	for _, k := range names {
		a, b := ca[k], cb[k]
		kind := ""
		switch {
		case b > a && strings.HasPrefix(k, "Sort"):
			kind = "sort-added"
		case b < a && strings.HasPrefix(k, "Sort"):
			kind = "sort-removed"
		case b > a:
			kind = "operator-added"
		case b < a:
			kind = "operator-removed"
		default:
			continue
		}
		out = append(out, Change{Kind: kind, Detail: fmt.Sprintf("%s: %d → %d", k, a, b)})
	}
	joins := func(q *plan.QueryPlan) []*plan.RelOp {
		var js []*plan.RelOp
		for _, n := range q.Nodes {
			if isJoin(n) {
				js = append(js, n)
			}
		}
		return js
	}
	ja, jb := joins(qa), joins(qb)
	for i := 0; i < len(ja) && i < len(jb); i++ {
		if ja[i].PhysicalOp != jb[i].PhysicalOp {
			out = append(out, Change{Kind: "join-type", Detail: fmt.Sprintf("join %d (%s, node %d → node %d): %s → %s", i+1, ja[i].LogicalOp, ja[i].NodeID, jb[i].NodeID, ja[i].PhysicalOp, jb[i].PhysicalOp)})
		}
	}
	if len(ja) != len(jb) {
		kind := "operator-added"
		if len(jb) < len(ja) {
			kind = "operator-removed"
		}
		out = append(out, Change{Kind: kind, Detail: fmt.Sprintf("joins: %d → %d", len(ja), len(jb))})
	}
	return out
}

// signature identifies an operator across plans: what it does and to what.
func signature(n *plan.RelOp) string {
	s := n.DisplayName()
	if o := n.Access.Object(); o.Table != "" {
		s += " " + strings.ToLower(o.TableName(false))
	}
	return s
}

// pairOperators pairs operators with the same signature (same NodeId
// first, then document order); the rest are listed on their side alone.
func pairOperators(qa, qb *plan.QueryPlan) []OperatorDiff {
	usedB := map[*plan.RelOp]bool{}
	var out []OperatorDiff
	for _, n := range qa.Nodes {
		var m *plan.RelOp
		for _, c := range qb.Nodes {
			if !usedB[c] && signature(c) == signature(n) && c.NodeID == n.NodeID {
				m = c
				break
			}
		}
		if m == nil {
			for _, c := range qb.Nodes {
				if !usedB[c] && signature(c) == signature(n) {
					m = c
					break
				}
			}
		}
		d := OperatorDiff{Operator: n.DisplayName(), Object: objectText(n), NodeA: intp(n.NodeID),
			EstimatedRows: SideDelta{A: floatp(n.EstimatedRowsAllExecutions())}, CostShare: SideDelta{A: floatp(share(qa, n))}}
		if m != nil {
			usedB[m] = true
			d.NodeB = intp(m.NodeID)
			d.EstimatedRows.B = floatp(m.EstimatedRowsAllExecutions())
			d.CostShare.B = floatp(share(qb, m))
		}
		d.ActualRowsA, d.LogicalReadsA = counters(n)
		d.ActualRowsB, d.LogicalReadsB = counters(m)
		out = append(out, d)
	}
	for _, c := range qb.Nodes {
		if usedB[c] {
			continue
		}
		d := OperatorDiff{Operator: c.DisplayName(), Object: objectText(c), NodeB: intp(c.NodeID),
			EstimatedRows: SideDelta{B: floatp(c.EstimatedRowsAllExecutions())}, CostShare: SideDelta{B: floatp(share(qb, c))}}
		d.ActualRowsB, d.LogicalReadsB = counters(c)
		out = append(out, d)
	}
	return out
}

func objectText(n *plan.RelOp) string {
	o := n.Access.Object()
	if o.Table == "" {
		return ""
	}
	s := o.TableName(false)
	if o.Index != "" {
		s += "." + o.Index
	}
	return s
}

// counters returns the operator's actual rows and, for operators that
// read pages, its logical reads; nil for what is unknown.
func counters(n *plan.RelOp) (rows, reads *int64) {
	if n == nil || n.RunTime == nil {
		return nil, nil
	}
	r := n.RunTime.ActualRows
	rows = &r
	if n.Access != nil {
		l := n.RunTime.LogicalReads
		reads = &l
	}
	return rows, reads
}

func share(q *plan.QueryPlan, n *plan.RelOp) float64 {
	if q.Cost() <= 0 {
		return 0
	}
	return math.Min(1, n.OwnCost()/q.Cost())
}

func intp(v int) *int { return &v }

// findingKey identifies a finding across the two plans without node ids:
// rule, paired statement, and the operator's signature.
func findingKey(f rules.Finding, stmt string, q *plan.QueryPlan) string {
	node := ""
	if f.NodeID != nil && q != nil {
		if n := q.Node(*f.NodeID); n != nil {
			node = signature(n)
		}
	}
	return f.Rule + "|" + stmt + "|" + node
}

func diffFindings(a, b Side, pairs []pair) FindingsDiff {
	// Statement keys: paired statements share the A side's identity.
	// Statements are keyed by ordinal: a plan can repeat a StatementId.
	keyA, keyB := map[int]string{}, map[int]string{}
	planA, planB := map[int]*plan.QueryPlan{}, map[int]*plan.QueryPlan{}
	for _, p := range pairs {
		k := fmt.Sprintf("%d", p.a.Ordinal)
		keyA[p.a.Ordinal] = k
		keyB[p.b.Ordinal] = k
	}
	for _, s := range a.Document.Statements() {
		planA[s.Ordinal] = mainPlan(s)
	}
	for _, s := range b.Document.Statements() {
		planB[s.Ordinal] = mainPlan(s)
	}
	key := func(f rules.Finding, keys map[int]string, plans map[int]*plan.QueryPlan, side string) string {
		stmt, ok := keys[f.Ordinal]
		if !ok {
			stmt = fmt.Sprintf("%s%d", side, f.Ordinal)
		}
		return findingKey(f, stmt, plans[f.Ordinal])
	}
	countA := map[string]int{}
	for _, f := range a.Findings {
		countA[key(f, keyA, planA, "a")]++
	}
	var d FindingsDiff
	for i, f := range b.Findings {
		k := key(f, keyB, planB, "b")
		if countA[k] > 0 {
			countA[k]--
			d.Kept++
			continue
		}
		d.New = append(d.New, f)
		d.NewAt = append(d.NewAt, i)
	}
	countB := map[string]int{}
	for _, f := range b.Findings {
		countB[key(f, keyB, planB, "b")]++
	}
	for i, f := range a.Findings {
		k := key(f, keyA, planA, "a")
		if countB[k] > 0 {
			countB[k]--
			continue
		}
		d.Gone = append(d.Gone, f)
		d.GoneAt = append(d.GoneAt, i)
	}
	return d
}

// Worst returns the highest severity among the findings B gained.
func (r *Result) Worst() rules.Severity { return rules.Max(r.Findings.New) }

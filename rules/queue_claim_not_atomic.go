package rules

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
)

// QueueClaimNotAtomic reports SELECT TOP reads of queue tables that do not
// claim the rows they read.
var QueueClaimNotAtomic = &Rule{
	Code:     "PL204",
	Name:     "queue-claim-not-atomic",
	Severity: Info,
	Summary:  "SELECT TOP over a queue table without an atomic claim: two workers can take the same rows",
	Catalog:  true,
	Doc: Doc{
		Problem: "A worker that runs `SELECT TOP (20) ... WHERE Status = 0 ORDER BY CreatedAt` and later updates those rows " +
			"races every other worker: two of them read the same IDs before either marks them. A filtered index makes the " +
			"read cheap; it does not make it a claim.",
		Evidence: "A SELECT statement with a Top (or TopN Sort) that reads a table with a filtered index whose filter column " +
			"the statement tests (a status flag or a NULL claim column), with no UPDLOCK in the statement text (lock hints " +
			"are not in showplan XML) and not an UPDATE/DELETE ... OUTPUT.",
		Example: "```sql\nWITH q AS (\n  SELECT TOP (20) WorkId, Status FROM dbo.Work WITH (UPDLOCK, READPAST, ROWLOCK)\n" +
			"  WHERE Status = 0 ORDER BY CreatedAt, WorkId)\nUPDATE q SET Status = 1 OUTPUT inserted.WorkId;\n```",
		Fix: "Claim in one statement: `UPDATE`/`DELETE` through a `TOP ... ORDER BY` CTE with `UPDLOCK, READPAST, ROWLOCK` and " +
			"`OUTPUT` the claimed keys (record an owner or lease so a crashed worker's rows can be reclaimed). READPAST is " +
			"not allowed under READ COMMITTED when READ_COMMITTED_SNAPSHOT is ON unless you add READCOMMITTEDLOCK, and " +
			"under SNAPSHOT isolation it must be combined with UPDLOCK or HOLDLOCK.",
		FalseAlarms: "Read-only dashboards and monitoring queries over the queue are not claims; suppress them with a reason.",
	},
	Run: runQueueClaimNotAtomic,
}

var claimHint = regexp.MustCompile(`(?i)\b(UPDLOCK|XLOCK)\b`)

func hasTop(q *plan.QueryPlan) bool {
	for _, n := range q.Nodes {
		if n.PhysicalOp == "Top" || n.Sort != nil && n.Sort.TopRows > 0 {
			return true
		}
	}
	return false
}

func runQueueClaimNotAtomic(p *Pass) {
	st := p.Statement
	if !strings.EqualFold(strings.TrimSpace(st.Type), "SELECT") || claimHint.MatchString(st.Text) {
		return
	}
	for _, q := range p.Plans() {
		if !hasTop(q.QueryPlan) {
			continue
		}
		comps := comparisons(q.QueryPlan)
		for _, ta := range accessedTables(q.QueryPlan) {
			t := findTable(p.Catalog, ta.Object)
			if t == nil {
				continue
			}
			if ix := queueIndex(q.QueryPlan, ta.Object, t, onTable(comps, ta.Object)); ix != nil {
				reportRacyClaim(p, q.QueryPlan, ta, t, ix)
				return
			}
		}
	}
}

// queueIndex returns the filtered index that marks the table as a queue
// for this statement: one the plan reads, or whose filter column the
// statement tests.
func queueIndex(q *plan.QueryPlan, table plan.ObjectRef, t *catalog.Table, tc []comparison) *catalog.Index {
	for _, ix := range t.FilteredIndexes() {
		if ix.Filter == nil {
			continue
		}
		if readsIndex(q, table, ix.Name) {
			return ix
		}
		for _, c := range filterColumns(ix) {
			if len(onColumn(tc, c)) > 0 {
				return ix
			}
		}
	}
	return nil
}

func reportRacyClaim(p *Pass, q *plan.QueryPlan, ta tableAccess, t *catalog.Table, ix *catalog.Index) {
	filter := ix.FilterDefinition
	if ix.Filter != nil {
		filter = ix.Filter.String()
	}
	var order []string
	for _, n := range q.Nodes {
		if n.Sort != nil {
			for _, c := range n.Sort.Columns {
				o := c.Column.Column
				if !c.Ascending {
					o += " DESC"
				}
				order = append(order, o)
			}
			break
		}
	}
	if len(order) == 0 {
		for _, k := range ix.Keys {
			order = append(order, k.Name)
		}
	}
	key := "the key"
	if c := t.Clustered(); c != nil && len(c.Keys) > 0 {
		key = c.Keys[0].Name
	}
	hints := "UPDLOCK, READPAST, ROWLOCK"
	ev := map[string]any{"table": t.Schema + "." + t.Name, "index": ix.Name, "filter": ix.FilterDefinition}
	caveat := "READPAST is refused under READ COMMITTED when READ_COMMITTED_SNAPSHOT is ON (add READCOMMITTEDLOCK) and needs UPDLOCK under SNAPSHOT isolation"
	if db := databaseOf(p.Catalog, ta.Object); db != nil && db.ReadCommittedSnapshot {
		hints += ", READCOMMITTEDLOCK"
		caveat = "this database has READ_COMMITTED_SNAPSHOT ON: READPAST needs READCOMMITTEDLOCK there, as in the pattern above"
		ev["read_committed_snapshot"] = true
	}
	pattern := fmt.Sprintf("WITH q AS (SELECT TOP (n) * FROM %s.%s WITH (%s) WHERE %s ORDER BY %s) UPDATE q SET <claim columns> OUTPUT inserted.%s;",
		quoteIdent(schemaOr(t.Schema)), quoteIdent(t.Name), hints, filter, strings.Join(order, ", "), key)
	ev["pattern"] = pattern
	msg := fmt.Sprintf("SELECT TOP reads queue rows of %s.%s (filtered index %s: WHERE %s) without UPDLOCK/READPAST and outside an UPDATE or DELETE ... OUTPUT: two workers can read the same rows before either claims them",
		t.Schema, t.Name, ix.Name, ix.FilterDefinition)
	p.Report(Finding{Message: msg, Evidence: ev, Fix: "claim atomically: " + pattern + " " + caveat})
}

func init() { register(QueueClaimNotAtomic) }

package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/planlint/planlint/rules"
)

// indexReport holds one finding that proposes an index, as the access-path
// rules report it.
func indexReport() *Report {
	const ddl = "CREATE INDEX IX_Work_Status_Filtered ON dbo.Work (Status) INCLUDE (WorkId) WHERE Status = (0);"
	return &Report{Tool: "planlint", Files: []*File{{Path: "a.sqlplan", Findings: []*Finding{{Finding: rules.Finding{
		Rule: "residual-predicate-scan", Code: "PL303", Severity: rules.Warning, Batch: 1, StatementID: 1, NodeID: rules.Node(0),
		Message: "dbo.Work.Code is converted to nvarchar(20); Clustered Index Scan read 5,000,000 rows for Status = (0) and Id = (5)",
		Fix:     ddl + " seeks on Status instead",
		Evidence: map[string]any{"create_index": ddl, "key_columns": []string{"Status"}, "filter": "Status = (0)",
			"conversions": []map[string]any{{"converted_to": "nvarchar(20)"}}},
	}}}}}}
}

func TestIndexDDLInEveryFormat(t *testing.T) {
	const ddl = "CREATE INDEX IX_Work_Status_Filtered ON dbo.Work (Status) INCLUDE (WorkId) WHERE Status = (0);"
	r := Redacted(indexReport())
	var md, js, sarif, text bytes.Buffer
	if err := Markdown(&md, r, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if err := SARIF(&sarif, r, SARIFOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Text(&text, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "```sql\n"+ddl+"\n```") {
		t.Errorf("markdown lacks the DDL block:\n%s", md.String())
	}
	if !strings.Contains(js.String(), `"create_index": "`+ddl+`"`) {
		t.Errorf("JSON evidence lacks create_index:\n%s", js.String())
	}
	if !strings.Contains(sarif.String(), `"create_index": "`+ddl+`"`) || !strings.Contains(sarif.String(), "Fix: "+ddl) {
		t.Errorf("SARIF lacks the DDL:\n%s", sarif.String())
	}
	if !strings.Contains(text.String(), "fix: "+ddl) {
		t.Errorf("text lacks the fix:\n%s", text.String())
	}
	// Redaction keeps schema (the DDL, the type a column is converted to)
	// and masks the values of the query.
	msg := r.Files[0].Findings[0].Message
	if !strings.Contains(msg, "nvarchar(20)") || strings.Contains(msg, "(5)") {
		t.Errorf("redacted message %q: want the type kept and the literal (5) masked", msg)
	}
}

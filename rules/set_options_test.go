package rules

import (
	"fmt"
	"strings"
	"testing"
)

func TestSetOptionsOncePerBatchAndModule(t *testing.T) {
	qiOff := `<StatementSetOptions ANSI_NULLS="true" ANSI_PADDING="true" ANSI_WARNINGS="true" ARITHABORT="true" CONCAT_NULL_YIELDS_NULL="true" NUMERIC_ROUNDABORT="false" QUOTED_IDENTIFIER="false"/>`
	read := op(0, "Clustered Index Scan", "Clustered Index Scan", 10, 1, "", `<IndexScan Ordered="0">`+fmt.Sprintf(workObj, "PK_Work", "Clustered")+`</IndexScan>`)
	tableVarInsert := op(0, "Table Insert", "Insert", 1, 1, "", `<Update><Object Table="[@Pending]" Index="[PK__#A1B2]" IndexKind="Clustered" Filtered="0"/></Update>`)
	simple := func(id int, text, relop string) string {
		return fmt.Sprintf(`<StmtSimple StatementId="%d" StatementText="%s" StatementType="SELECT">%s<QueryPlan>%s</QueryPlan></StmtSimple>`, id, text, qiOff, relop)
	}
	noPlan := func(id int, text string) string {
		return fmt.Sprintf(`<StmtSimple StatementId="%d" StatementText="%s" StatementType="SET ON/OFF">%s</StmtSimple>`, id, text, qiOff)
	}
	cases := []struct {
		name  string
		stmts string
		want  Severity
		has   []string
	}{
		{"three statements of an ad hoc batch", simple(1, "SELECT 1", read) + simple(2, "SELECT 2", read) + noPlan(3, "SET NOCOUNT ON"), Warning,
			[]string{"3 statements of batch 1 were compiled with QUOTED_IDENTIFIER OFF", "SET QUOTED_IDENTIFIER ON on the connection"}},
		{"a cached procedure", noPlan(1, "-- header&#xD;&#xA;CREATE  PROCEDURE [dbo].[Poll]&#xD;&#xA;AS SET NOCOUNT ON") + simple(2, "SELECT 2", read), Warning,
			[]string{"2 statements of procedure [dbo].[Poll]", "re-create procedure [dbo].[Poll] with SET QUOTED_IDENTIFIER ON", "CREATE OR ALTER PROCEDURE [dbo].[Poll]"}},
		{"table variable writes cannot fail with 1934", simple(1, "INSERT @Pending", tableVarInsert), Info,
			[]string{"no filtered index"}},
		{"the catalog's filtered index on the table read", simple(1, "SELECT 1", read), Warning,
			[]string{"the optimizer must ignore dbo.Work.IX_Work_Pending"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := analyze(t, showplan(t, c.stmts), queueCatalog(t), SetOptions)
			if len(fs) != 1 {
				t.Fatalf("want one finding for the batch, got %d: %+v", len(fs), fs)
			}
			f := fs[0]
			if f.Severity != c.want {
				t.Errorf("severity %s, want %s: %s", f.Severity, c.want, f.Message)
			}
			for _, h := range c.has {
				if !strings.Contains(f.Message+" || "+f.Fix, h) {
					t.Errorf("finding lacks %q: %s || %s", h, f.Message, f.Fix)
				}
			}
		})
	}
}

package capture

import (
	"strings"
	"testing"

	"github.com/planlint/planlint/sqlscript"
)

func TestAlignTemplate(t *testing.T) {
	tests := []struct {
		name, stmt, template, decl string
		want                       []string // "name type literal"
		err                        string
	}{
		{"queue poll",
			"SELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE Status = 0 ORDER BY CreatedAt, WorkId;",
			"select top ( 20 ) WorkId , CreatedAt , CustomerId from dbo . Work where Status = @0 order by CreatedAt , WorkId",
			"@0 int", []string{"@0 int 0"}, ""},
		{"brackets, case, comments and strings",
			"select [Name] from [dbo].[T] /* note */ where Kind = N'it''s' -- tail\n and Code = 'A' and Flag = 0x1F",
			"select Name from dbo . T where kind = @0 and code = @1 and flag = @2",
			"@0 nvarchar(4000),@1 varchar(8000),@2 varbinary(8000)",
			[]string{"@0 nvarchar(4000) N'it''s'", "@1 varchar(8000) 'A'", "@2 varbinary(8000) 0x1F"}, ""},
		{"signed and decimal literals",
			"SELECT * FROM t WHERE a = -5 AND b > 1.25 AND c < - 3",
			"select * from t where a = @0 and b > @1 and c < @2",
			"@0 int,@1 numeric(38,2),@2 int", []string{"@0 int -5", "@1 numeric(38,2) 1.25", "@2 int - 3"}, ""},
		{"sign kept as operator", "SELECT * FROM t WHERE a = -5", "select * from t where a = - @0", "@0 int", []string{"@0 int 5"}, ""},
		{"literal left in place", "SELECT TOP 5 x FROM t HAVING x > 2 AND y = 3", "select top 5 x from t having x > 2 and y = @0", "@0 int", []string{"@0 int 3"}, ""},
		{"declaration out of template order", "SELECT * FROM t WHERE a = 1 AND b = 2", "select * from t where a = @1 and b = @0",
			"@0 int, @1 int", []string{"@0 int 2", "@1 int 1"}, ""},
		{"no parameters", "SELECT 1", "select 1", "", nil, ""},

		{"word differs", "SELECT * FROM t WHERE a = 1", "select * from u where a = @0", "@0 int", nil, `the template has "u" (offset 14) where the statement has "t" (offset 14)`},
		{"not a literal", "SELECT * FROM t WHERE a = b", "select * from t where a = @0", "@0 int", nil, `where the statement has "b" (offset 26), not a literal`},
		{"statement shorter", "SELECT * FROM t", "select * from t where a = @0", "@0 int", nil, "the statement ends where the template has"},
		{"template shorter", "SELECT * FROM t WHERE a = 1", "select * from t", "", nil, `the template ends where the statement has "WHERE"`},
		{"parameter unused", "SELECT 1", "select 1", "@0 int", nil, "@0 is declared but does not appear"},
		{"bad declaration", "SELECT 1", "select 1", "@0", nil, "parameter list"},
		{"value does not fit", "SELECT * FROM t WHERE a = 300", "select * from t where a = @0", "@0 tinyint", nil, "out of range"},
		{"two values for one parameter", "SELECT * FROM t WHERE a = 1 OR a = 2", "select * from t where a = @0 or a = @0", "@0 int", nil, "stands for both 1 and 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := AlignTemplate(tt.stmt, tt.template, tt.decl)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range tpl.Params {
				got = append(got, p.Name+" "+p.Type+" "+p.Value.Text)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("params = %q, want %q", got, tt.want)
			}
			req := tpl.Request(sqlscript.Request{Statements: []*sqlscript.Statement{{Text: tt.stmt}}})
			if req.Kind != sqlscript.RPC || req.Text != tt.template || req.Declaration != tt.decl || len(req.Statements) != 1 {
				t.Errorf("request = %+v", req)
			}
		})
	}
}

// FuzzAlignTemplate: alignment never panics, and a template made by
// replacing a statement's literals with @0, @1, … aligns back to them.
func FuzzAlignTemplate(f *testing.F) {
	f.Add("SELECT TOP (20) WorkId FROM dbo.Work WHERE Status = 0 ORDER BY CreatedAt", "select top ( 20 ) WorkId from dbo . Work where Status = @0 order by CreatedAt", "@0 int")
	f.Add("SELECT * FROM t WHERE a = -5 AND b = N'x'", "select * from t where a = @0 and b = @1", "@0 int, @1 nvarchar(4000)")
	f.Add("x = 'unterminated", "x = @0", "@0 varchar(8000)")
	f.Fuzz(func(t *testing.T, stmt, template, decl string) {
		_, _ = AlignTemplate(stmt, template, decl)

		// Round trip: parameterize every literal of stmt.
		var b strings.Builder
		var decls, want []string
		last := 0
		for _, tok := range sqlscript.CodeTokens(stmt) {
			if tok.Literal == nil || tok.Literal.Kind != sqlscript.LiteralInteger {
				continue
			}
			name := "@" + string(rune('0'+len(want)%10)) + strings.Repeat("x", len(want)/10)
			b.WriteString(stmt[last:tok.Start] + " " + name + " ")
			last = tok.End
			decls = append(decls, name+" bigint")
			want = append(want, tok.Text)
		}
		b.WriteString(stmt[last:])
		tpl, err := AlignTemplate(stmt, b.String(), strings.Join(decls, ", "))
		if err != nil {
			return // e.g. a literal glued to a neighbour token, or too large for bigint
		}
		for i, p := range tpl.Params {
			if p.Value.Text != want[i] {
				t.Fatalf("parameter %d = %q, want %q (template %q)", i, p.Value.Text, want[i], b.String())
			}
		}
	})
}

func BenchmarkAlignTemplate(b *testing.B) {
	stmt := "SELECT TOP (20) WorkId, CreatedAt, CustomerId FROM dbo.Work WHERE Status = 0 AND CustomerId = 42 AND Kind = N'x' ORDER BY CreatedAt, WorkId;"
	tmpl := "select top ( 20 ) WorkId , CreatedAt , CustomerId from dbo . Work where Status = @0 and CustomerId = @1 and Kind = @2 order by CreatedAt , WorkId"
	for b.Loop() {
		if _, err := AlignTemplate(stmt, tmpl, "@0 int,@1 int,@2 nvarchar(4000)"); err != nil {
			b.Fatal(err)
		}
	}
}

package sqlscript

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func mustParse(t *testing.T, src string) *Script {
	t.Helper()
	s, err := Parse("q.sql", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

func diagStrings(ds []Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Severity.String()+" "+d.String())
	}
	return out
}

func TestRequestKinds(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		kind   RequestKind
		text   string
		decl   string
		params []string
	}{
		{"plain batch keeps local variables with their use",
			"DECLARE @s tinyint = 0;\nSELECT TOP (20) WorkId FROM dbo.Work WHERE Status = @s;",
			SQLBatch, "DECLARE @s tinyint = 0;\nSELECT TOP (20) WorkId FROM dbo.Work WHERE Status = @s;", "", nil},
		{"literal batch", "-- header\nSELECT WorkId FROM dbo.Work WHERE Status = 0\n", SQLBatch, "SELECT WorkId FROM dbo.Work WHERE Status = 0", "", nil},
		{"annotations in line comments",
			"-- @Status tinyint = 0\n-- @Since datetime2(0) = '2024-01-01'\nSELECT TOP (20) WorkId FROM dbo.Work WHERE Status = @Status AND CreatedAt >= @Since;",
			RPC, "SELECT TOP (20) WorkId FROM dbo.Work WHERE Status = @Status AND CreatedAt >= @Since;", "@Status tinyint, @Since datetime2(0)",
			[]string{"@Status tinyint=0", "@Since datetime2(0)='2024-01-01'"}},
		{"annotation in a block comment",
			"/* @Status tinyint = 0 */\nSELECT WorkId FROM dbo.Work WHERE Status = @Status",
			RPC, "SELECT WorkId FROM dbo.Work WHERE Status = @Status", "@Status tinyint", []string{"@Status tinyint=0"}},
		{"several annotations in one block comment with prose",
			"/*\n  Claim the next items.\n  @Status tinyint = 0, @Take int = 20\n  * @Note nvarchar(20) = N'x, y' -- why\n*/\nSELECT TOP (@Take) WorkId FROM dbo.Work WHERE Status = @Status AND Note = @Note",
			RPC, "SELECT TOP (@Take) WorkId FROM dbo.Work WHERE Status = @Status AND Note = @Note", "@Status tinyint, @Take int, @Note nvarchar(20)",
			[]string{"@Status tinyint=0", "@Take int=20", "@Note nvarchar(20)=N'x, y'"}},
		{"annotation above other comments",
			"-- @Status tinyint = 1\n-- planlint-ignore PLC101 -- accepted\n\n-- the claim query\nSELECT 1 FROM dbo.Work WHERE Status = @Status",
			RPC, "SELECT 1 FROM dbo.Work WHERE Status = @Status", "@Status tinyint", []string{"@Status tinyint=1"}},
		{"comments that mention variables are not annotations",
			"-- @Status: the state to claim\n-- see @@ROWCOUNT\nSELECT 1 WHERE 1 = 1", SQLBatch, "SELECT 1 WHERE 1 = 1", "", nil},
		{"comments after the first statement are not annotations",
			"SELECT 1\n-- @Status tinyint = 0\nSELECT @Status", SQLBatch, "SELECT 1\n-- @Status tinyint = 0\nSELECT @Status", "", nil},
		{"output annotation", "-- @n int = NULL OUTPUT\nSELECT @n = COUNT(*) FROM t", RPC, "SELECT @n = COUNT(*) FROM t", "@n int OUTPUT", []string{"@n int=NULL OUTPUT"}},
		{"sp_executesql call", "EXEC sp_executesql N'SELECT 1 WHERE @a = 1', N'@a int', @a = 1",
			RPC, "SELECT 1 WHERE @a = 1", "@a int", []string{"@a int=1"}},
		{"sp_executesql with other statements is a batch",
			"DECLARE @n int = 1\nEXEC sp_executesql N'SELECT @x', N'@x int', @x = @n",
			SQLBatch, "DECLARE @n int = 1\nEXEC sp_executesql N'SELECT @x', N'@x int', @x = @n", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, tt.src)
			if len(s.Batches) != 1 {
				t.Fatalf("%d batches", len(s.Batches))
			}
			r := s.Batches[0].Request()
			if r.Kind != tt.kind || r.Text != tt.text || r.Declaration != tt.decl || !reflect.DeepEqual(paramSummary(r.Params), tt.params) {
				t.Errorf("request = %v %q decl %q params %q", r.Kind, r.Text, r.Declaration, paramSummary(r.Params))
			}
			if r.Text != "" && s.Text[r.ScriptOffset(0):r.ScriptOffset(len(r.Text))] != r.Text && r.Kind == SQLBatch {
				t.Errorf("ScriptOffset does not map the batch text back")
			}
		})
	}
}

func TestAnnotationDiagnostics(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		want  []string
		param int // number of params kept
	}{
		{"unused annotation", "-- @Status tinyint = 0\n-- @Extra int = 1\nSELECT 1 WHERE Status = @Status",
			[]string{"warning q.sql:2:4: annotation @Extra is not used in the batch"}, 2},
		{"annotation and DECLARE", "-- @s tinyint = 0\nDECLARE @s tinyint = 1\nSELECT @s",
			[]string{"error q.sql:1:4: @s is annotated as a parameter but also declared with DECLARE in the batch; remove one of them"}, 1},
		{"annotation twice", "-- @s int = 0\n-- @S int = 1\nSELECT @s", []string{"error q.sql:2:4: @S is annotated twice"}, 1},
		{"value out of range", "-- @s tinyint = 300\nSELECT @s",
			[]string{"error q.sql:1:4: annotation parameter @s: value 300 for type tinyint: out of range (0 to 255)"}, 0},
		{"missing value", "-- @s tinyint\nSELECT @s",
			[]string{"warning q.sql:1:14: comment looks like a parameter annotation but is not one (expected '= value' after @s tinyint); write -- @Name type = value"}, 0},
		{"expression value", "/* @s int = 1 + 1 */ SELECT @s",
			[]string{"warning q.sql:1:13: comment looks like a parameter annotation but is not one (value of @s must be a literal (number, 'string', N'string', 0x…, NULL), found \"1 + 1\"); write -- @Name type = value"}, 0},
		{"annotations on an sp_executesql call", "-- @a int = 2\nEXEC sp_executesql N'SELECT @a', N'@a int', @a = 1",
			[]string{"warning q.sql:1:4: parameter annotations are ignored: the batch is an sp_executesql call, whose own parameters are sent"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := Parse("q.sql", []byte(tt.src))
			if got := diagStrings(s.Diagnostics); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("diagnostics\n got %q\nwant %q", got, tt.want)
			}
			if len(s.Batches[0].Params) != tt.param {
				t.Errorf("%d params kept, want %d", len(s.Batches[0].Params), tt.param)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	src := "SELECT 1\nGO\nEXEC sp_executesql N'SELECT @a', N'@a int', @a = CAST(1 AS int)\nGO\nSELECT 'open\n"
	s, err := Parse("q.sql", []byte(src))
	if s == nil || err == nil {
		t.Fatalf("Parse = %v, %v; want a script and an error", s, err)
	}
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("error = %#v", err)
	}
	want := "q.sql:3:50: sp_executesql call: value for @a: CAST(...) expressions are not supported; write the value as a literal of the declared type int\n" +
		"q.sql:5:8: unterminated string: it runs to the end of the file"
	if err.Error() != want {
		t.Errorf("error\n got %s\nwant %s", err, want)
	}
	if len(s.Batches) != 3 || s.Batches[1].Call != nil {
		t.Errorf("batches = %d, call = %v", len(s.Batches), s.Batches[1].Call)
	}
}

func TestParamOverrides(t *testing.T) {
	tests := []struct {
		in   string
		name string
		lit  Literal
	}{
		{"@Status=0", "@Status", Literal{"0", LiteralInteger}},
		{"Status=1", "@Status", Literal{"1", LiteralInteger}},
		{" @Status = -5 ", "@Status", Literal{"-5", LiteralInteger}},
		{"@Since='2024-01-01'", "@Since", Literal{"'2024-01-01'", LiteralString}},
		{"@Since=2024-01-01", "@Since", Literal{"N'2024-01-01'", LiteralNString}},
		{"@Name=O'Brien", "@Name", Literal{"N'O''Brien'", LiteralNString}},
		{"@Name=N'ä'", "@Name", Literal{"N'ä'", LiteralNString}},
		{"@x=NULL", "@x", Literal{"NULL", LiteralNull}},
		{"@x='NULL'", "@x", Literal{"'NULL'", LiteralString}},
		{"@b=0x1F", "@b", Literal{"0x1F", LiteralBinary}},
		{"@f=1.5e3", "@f", Literal{"1.5e3", LiteralFloat}},
		{"@e=''", "@e", Literal{"''", LiteralString}},
		{"@eq=a=b", "@eq", Literal{"N'a=b'", LiteralNString}},
	}
	for _, tt := range tests {
		o, err := ParseParamOverride(tt.in)
		if err != nil {
			t.Errorf("ParseParamOverride(%q): %v", tt.in, err)
			continue
		}
		if o.Name != tt.name || o.Value != tt.lit {
			t.Errorf("ParseParamOverride(%q) = %+v, want %s %+v", tt.in, o, tt.name, tt.lit)
		}
	}
	for in, want := range map[string]string{
		"@Status":      `--param "@Status": expected @name=value`,
		"@=1":          `"@" is not a parameter name`,
		"@a b=1":       `"@a b" is not a parameter name`,
		"@x=":          `missing value after '='`,
		"@x='open":     `unterminated string 'open`,
		"@x=@y":        `the value must be a literal, not the variable @y`,
		"@@ROWCOUNT=1": `"@@ROWCOUNT" is not a parameter name`,
	} {
		if _, err := ParseParamOverride(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseParamOverride(%q) error = %v, want it to contain %q", in, err, want)
		}
	}
}

func TestApplyOverrides(t *testing.T) {
	src := "-- @Status tinyint = 0\nSELECT 1 FROM dbo.Work WHERE Status = @Status\nGO\n" +
		"EXEC sp_executesql N'SELECT @a, @b', N'@a int, @b int = 5', @a = 1\nGO\n" +
		"SELECT 1 FROM dbo.Work WHERE Status = @Free\n"
	ov := func(s string) ParamOverride {
		o, err := ParseParamOverride(s)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	s := mustParse(t, src)
	if err := s.ApplyOverrides([]ParamOverride{ov("@status=2"), ov("@b=7"), ov("@a=3")}); err != nil {
		t.Fatal(err)
	}
	if got := paramSummary(s.Batches[0].Request().Params); !reflect.DeepEqual(got, []string{"@Status tinyint=2"}) {
		t.Errorf("batch 1 params = %q", got)
	}
	if got := paramSummary(s.Batches[1].Request().Params); !reflect.DeepEqual(got, []string{"@a int=3", "@b int=7"}) {
		t.Errorf("batch 2 params = %q", got)
	}
	tests := []struct{ override, want string }{
		{"@Status=300", "q.sql: batch 1: --param @Status: parameter @Status: value 300 for type tinyint: out of range (0 to 255)"},
		{"@Nope=1", "q.sql: --param @Nope: no batch has an annotated or sp_executesql parameter of that name"},
		{"@Free=1", "q.sql: batch 3: --param @Free: the batch uses @Free but does not annotate it; add a comment such as \"-- @Free <type> = <value>\" above its first statement"},
	}
	for _, tt := range tests {
		err := s.ApplyOverrides([]ParamOverride{ov(tt.override)})
		if err == nil || err.Error() != tt.want {
			t.Errorf("ApplyOverrides(%s) error\n got %v\nwant %s", tt.override, err, tt.want)
		}
	}
	if err := s.Batches[1].ApplyOverride(ov("@zz=1")); err == nil || !strings.Contains(err.Error(), `the sp_executesql call declares no such parameter (its list is "@a int, @b int = 5")`) {
		t.Errorf("error = %v", err)
	}
	if err := s.Batches[0].ApplyOverride(ov("@zz=1")); err == nil || !strings.Contains(err.Error(), "batch 1: --param @zz: the batch has no such parameter") {
		t.Errorf("error = %v", err)
	}
	// a failed override leaves the value as it was
	if got := paramSummary(s.Batches[0].Params); !reflect.DeepEqual(got, []string{"@Status tinyint=2"}) {
		t.Errorf("batch 1 params after failed override = %q", got)
	}
}

func TestDiagnosticString(t *testing.T) {
	d := Diagnostic{Path: "dir/q.sql", Range: Range{Start: Pos{Line: 3, Column: 7}}, Message: "bad"}
	if d.String() != "dir/q.sql:3:7: bad" {
		t.Errorf("String() = %q", d.String())
	}
}

package sqlscript

import (
	"reflect"
	"strings"
	"testing"
)

// paramSummary renders params as "@Name type=value[ OUTPUT]".
func paramSummary(ps []Param) []string {
	var out []string
	for _, p := range ps {
		s := p.Name + " " + p.Type + "=" + p.Value.Text
		if p.Output {
			s += " OUTPUT"
		}
		out = append(out, s)
	}
	return out
}

func TestParseExecuteSQL(t *testing.T) {
	tests := []struct {
		name      string
		sql       string
		stmt      string
		decl      string
		params    []string
		procedure string
	}{
		{"positional values", "EXEC sp_executesql N'SELECT * FROM dbo.Work WHERE Status = @Status', N'@Status tinyint', 0",
			"SELECT * FROM dbo.Work WHERE Status = @Status", "@Status tinyint", []string{"@Status tinyint=0"}, "sp_executesql"},
		{"named value", "EXECUTE sp_executesql N'SELECT 1 WHERE @a = 1', N'@a int', @a = 1;",
			"SELECT 1 WHERE @a = 1", "@a int", []string{"@a int=1"}, "sp_executesql"},
		{"sys schema", "exec sys.sp_executesql N'SELECT @a', N'@a int', @a=1", "SELECT @a", "@a int", []string{"@a int=1"}, "sys.sp_executesql"},
		{"bracketed", "EXEC [sys].[sp_executesql] N'SELECT @a', N'@a int', @a = 1", "SELECT @a", "@a int", []string{"@a int=1"}, "[sys].[sp_executesql]"},
		{"master..", "EXEC master..sp_executesql N'SELECT 1'", "SELECT 1", "", nil, "master..sp_executesql"},
		{"no parameters", "EXEC sp_executesql N'SELECT 1'", "SELECT 1", "", nil, "sp_executesql"},
		{"named stmt and params", "EXEC sp_executesql @stmt = N'SELECT @a, @b', @params = N'@a int, @b int', @b = 2, @a = 1",
			"SELECT @a, @b", "@a int, @b int", []string{"@a int=1", "@b int=2"}, "sp_executesql"},
		{"named values in any order", "EXEC sp_executesql N'SELECT 1', N'@a int, @b varchar(10), @c bit', @c = 1, @a = -5, @b = 'x'",
			"SELECT 1", "@a int, @b varchar(10), @c bit", []string{"@a int=-5", "@b varchar(10)='x'", "@c bit=1"}, "sp_executesql"},
		{"escaped quotes", "EXEC sp_executesql N'SELECT * FROM t WHERE a = ''it''''s'' AND b = @b', N'@b nvarchar(20)', @b = N'O''Brien'",
			"SELECT * FROM t WHERE a = 'it''s' AND b = @b", "@b nvarchar(20)", []string{"@b nvarchar(20)=N'O''Brien'"}, "sp_executesql"},
		{"varchar statement", "EXEC sp_executesql 'SELECT 1'", "SELECT 1", "", nil, "sp_executesql"},
		{"all value kinds", "EXEC sp_executesql N'SELECT 1', N'@i bigint, @d decimal(9,2), @f float, @m money, @s nvarchar(max), @x varbinary(8), @n int, @neg int, @e float',\n" +
			"  @i = 9223372036854775807, @d = 12.50, @f = 1.5e3, @m = $12.5, @s = N'ä', @x = 0x0A0B, @n = NULL, @neg = - 7, @e = -2E-2",
			"SELECT 1", "@i bigint, @d decimal(9,2), @f float, @m money, @s nvarchar(max), @x varbinary(8), @n int, @neg int, @e float",
			[]string{"@i bigint=9223372036854775807", "@d decimal(9,2)=12.50", "@f float=1.5e3", "@m money=$12.5", "@s nvarchar(max)=N'ä'", "@x varbinary(8)=0x0A0B", "@n int=NULL", "@neg int=- 7", "@e float=-2E-2"}, "sp_executesql"},
		{"output argument", "EXEC sp_executesql N'SELECT @n = COUNT(*) FROM t', N'@n int OUTPUT', @n = @n OUTPUT",
			"SELECT @n = COUNT(*) FROM t", "@n int OUTPUT", []string{"@n int=@n OUTPUT"}, "sp_executesql"},
		{"positional output", "EXEC sp_executesql N'SET @n = 1', N'@n int OUT', @n OUT", "SET @n = 1", "@n int OUT", []string{"@n int=@n OUTPUT"}, "sp_executesql"},
		{"declared default", "EXEC sp_executesql N'SELECT @a, @b', N'@a int, @b int = 7', @a = 1", "SELECT @a, @b", "@a int, @b int = 7", []string{"@a int=1"}, "sp_executesql"},
		{"comments and line breaks", "EXEC sp_executesql -- run it\n  N'SELECT @a', /* list */ N'@a int',\n  @a = 1 -- one\n", "SELECT @a", "@a int", []string{"@a int=1"}, "sp_executesql"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := ParseExecuteSQL(tt.sql)
			if err != nil {
				t.Fatalf("ParseExecuteSQL: %v", err)
			}
			if call.Statement != tt.stmt || call.Declaration != tt.decl || call.Procedure != tt.procedure {
				t.Errorf("got stmt %q decl %q proc %q", call.Statement, call.Declaration, call.Procedure)
			}
			if got := paramSummary(call.Params); !reflect.DeepEqual(got, tt.params) {
				t.Errorf("params = %q, want %q", got, tt.params)
			}
			if len(call.Decls) == 0 && tt.decl != "" {
				t.Errorf("declarations not parsed")
			}
		})
	}
}

func TestParseExecuteSQLErrors(t *testing.T) {
	tests := []struct {
		name, sql, want string
	}{
		{"not exec", "SELECT 1", "1:1: expected EXEC sp_executesql, found word \"SELECT\""},
		{"other procedure", "EXEC dbo.sp_executesql N'x'", "1:6: expected sp_executesql after EXEC"},
		{"no statement", "EXEC sp_executesql", "1:19: sp_executesql needs a statement"},
		{"statement not a string", "EXEC sp_executesql @sql", "1:20: the statement (@stmt) must be a single string literal such as N'…', found \"@sql\""},
		{"concatenated statement", "EXEC sp_executesql N'a' + N'b'", "the statement (@stmt) must be a single string literal"},
		{"params not a string", "EXEC sp_executesql N'SELECT 1', @p", "1:33: the parameter list (@params) must be a single string literal"},
		{"arguments without list", "EXEC sp_executesql @stmt = N'SELECT 1', @a = 1", "1:41: arguments need a parameter list"},
		{"bad declaration", "EXEC sp_executesql N'SELECT 1', N'@a int, b int', @a = 1", "1:43: in the parameter list: expected a parameter name such as @id, found word \"b\""},
		{"bad declaration after escaped quote", "EXEC sp_executesql N'SELECT 1', N'@a varchar(5) = ''x'' @b int'", "1:57: in the parameter list: expected ',' or the end of the list after @a, found variable \"@b\""},
		{"undeclared argument", "EXEC sp_executesql N'SELECT 1', N'@a int', @b = 1", "1:44: @b is not declared in the parameter list \"@a int\""},
		{"argument twice", "EXEC sp_executesql N'SELECT 1', N'@a int', @a = 1, @a = 2", "1:52: @a is given twice"},
		{"missing value", "EXEC sp_executesql N'SELECT 1', N'@a int, @b int', @a = 1", "parameter @b is declared but no value is supplied"},
		{"too many positional", "EXEC sp_executesql N'SELECT 1', N'@a int', 1, 2", "1:47: too many arguments: the parameter list declares 1 parameter(s)"},
		{"positional after named", "EXEC sp_executesql N'SELECT 1', N'@a int, @b int', @a = 1, 2", "1:60: argument 4 must be passed as '@name = value'"},
		{"cast", "EXEC sp_executesql N'SELECT 1', N'@d date', @d = CAST('2024-01-01' AS date)", "1:50: value for @d: CAST(...) expressions are not supported; write the value as a literal of the declared type date"},
		{"convert", "EXEC sp_executesql N'SELECT 1', N'@d date', @d = convert(date, '2024')", "CONVERT(...) expressions are not supported"},
		{"expression", "EXEC sp_executesql N'SELECT 1', N'@a int', @a = 1 + 1", "1:49: value for @a must be a literal (number, 'string', N'string', 0x…, NULL), found \"1 + 1\""},
		{"default", "EXEC sp_executesql N'SELECT 1', N'@a int', @a = DEFAULT", "DEFAULT is not supported"},
		{"variable without output", "EXEC sp_executesql N'SELECT 1', N'@a int', @a = @x", "1:49: value for @a is the variable @x"},
		{"output not declared output", "EXEC sp_executesql N'SELECT 1', N'@a int', @a = @a OUTPUT", "1:44: @a is passed as OUTPUT but not declared OUTPUT"},
		{"out of range", "EXEC sp_executesql N'SELECT 1', N'@s tinyint', @s = 300", "1:53: argument @s: value 300 for type tinyint: out of range (0 to 255)"},
		{"trailing comma", "EXEC sp_executesql N'SELECT 1', N'@a int', @a = 1,", "1:51: expected an argument after ','"},
		{"missing comma", "EXEC sp_executesql N'SELECT 1', N'@a int' @a = 1", "1:43: expected ',' between arguments, found variable \"@a\""},
		{"empty value", "EXEC sp_executesql N'SELECT 1', N'@a int', @a = ,", "1:49: expected a value for @a, found operator \",\""},
		{"second statement", "EXEC sp_executesql N'SELECT 1'; SELECT 2", "1:33: unexpected word \"SELECT\" after the sp_executesql call"},
		{"unterminated", "EXEC sp_executesql N'SELECT 1", "1:20: unterminated Unicode string"},
		{"multi-line position", "EXEC sp_executesql\n  N'SELECT 1',\n  N'@a int',\n  @a = 'x'", "4:8: argument @a: value 'x' for type int: the string is not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := ParseExecuteSQL(tt.sql)
			if err == nil {
				t.Fatalf("no error; call = %+v", call)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestExecuteSQLStatementsMapToSource(t *testing.T) {
	src := "-- claim\nEXEC sp_executesql N'SELECT ''a'' AS x;\n  UPDATE dbo.Work SET Status = @s WHERE Note = ''it''''s'';', N'@s tinyint', @s = 1\n"
	s, err := Parse("t.sql", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	b := s.Batches[0]
	if b.Call == nil {
		t.Fatalf("no call; diagnostics %v", s.Diagnostics)
	}
	req := b.Request()
	if req.Kind != RPC || req.Declaration != "@s tinyint" || len(req.Params) != 1 {
		t.Fatalf("request = %+v", req)
	}
	if len(req.Statements) != 2 {
		t.Fatalf("statements = %d", len(req.Statements))
	}
	second := req.Statements[1]
	if second.Text != "UPDATE dbo.Work SET Status = @s WHERE Note = 'it''s';" {
		t.Errorf("text = %q", second.Text)
	}
	if got := s.Text[second.Range.Start.Offset:second.Range.End.Offset]; got != "UPDATE dbo.Work SET Status = @s WHERE Note = ''it''''s'';" {
		t.Errorf("source of second statement = %q", got)
	}
	if second.Range.Start.Line != 3 || second.Range.Start.Column != 3 {
		t.Errorf("second statement starts at %v", second.Range.Start)
	}
	// a plan's StatementText is located in the request text and mapped back
	start, end, ok := Locate(req.Text, "UPDATE dbo.Work SET Status = @s WHERE Note = 'it''s'", 0)
	if !ok {
		t.Fatal("Locate failed")
	}
	if got := s.Text[req.ScriptOffset(start):req.ScriptOffset(end)]; got != "UPDATE dbo.Work SET Status = @s WHERE Note = ''it''''s''" {
		t.Errorf("mapped back to %q", got)
	}
}

func TestParseDeclarations(t *testing.T) {
	lit := func(text string, k LiteralKind) *Literal { return &Literal{Text: text, Kind: k} }
	tests := []struct {
		decl string
		want []ParamDecl
	}{
		{"", nil},
		{"  ", nil},
		{"@a int", []ParamDecl{{Name: "@a", Type: "int"}}},
		{"@a int, @b nvarchar(50) OUTPUT, @c decimal(18,2)", []ParamDecl{{Name: "@a", Type: "int"}, {Name: "@b", Type: "nvarchar(50)", Output: true}, {Name: "@c", Type: "decimal(18,2)"}}},
		{"@a AS int OUT", []ParamDecl{{Name: "@a", Type: "int", Output: true}}},
		{"@d   decimal ( 18 , 2 )", []ParamDecl{{Name: "@d", Type: "decimal ( 18 , 2 )"}}},
		{"@s nvarchar(max), @t [sys].[int]", []ParamDecl{{Name: "@s", Type: "nvarchar(max)"}, {Name: "@t", Type: "[sys].[int]"}}},
		{"@v national character varying(10)", []ParamDecl{{Name: "@v", Type: "national character varying(10)"}}},
		{"@tvp dbo.IdList READONLY", []ParamDecl{{Name: "@tvp", Type: "dbo.IdList", ReadOnly: true}}},
		{"@a int = 5, @b varchar(3) = 'x' OUTPUT, @c int = -1, @n int = NULL",
			[]ParamDecl{{Name: "@a", Type: "int", Default: lit("5", LiteralInteger)}, {Name: "@b", Type: "varchar(3)", Default: lit("'x'", LiteralString), Output: true},
				{Name: "@c", Type: "int", Default: lit("-1", LiteralInteger)}, {Name: "@n", Type: "int", Default: lit("NULL", LiteralNull)}}},
		{"@a int\r\n,\t@b bit -- note", []ParamDecl{{Name: "@a", Type: "int"}, {Name: "@b", Type: "bit"}}},
	}
	for _, tt := range tests {
		got, err := ParseDeclarations(tt.decl)
		if err != nil {
			t.Errorf("ParseDeclarations(%q): %v", tt.decl, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseDeclarations(%q)\n got %+v\nwant %+v", tt.decl, got, tt.want)
		}
	}
}

func TestParseDeclarationsErrors(t *testing.T) {
	tests := []struct{ decl, want string }{
		{"a int", "1:1: expected a parameter name such as @id, found word \"a\""},
		{"@a", "1:3: expected a data type after @a, found the end of the text"},
		{"@a int,", "1:8: expected a parameter after ','"},
		{"@a int @b int", "1:8: expected ',' or the end of the list after @a, found variable \"@b\""},
		{"@a int, @A bigint", "1:9: parameter @A is declared twice"},
		{"@a decimal(18,", "1:4: parameter @a: missing ')' in type decimal(18,"},
		{"@a varchar(10", "1:4: parameter @a: type varchar: expected ',' or ')' in the length"},
		{"@a varchar(x)", "expected a number or MAX, found \"x\""},
		{"@a int =", "1:8: expected a value after '=' for @a"},
		{"@a int = @b", "1:10: value of @a must be a literal"},
		{"@a int = 1 + 2", "1:10: value of @a must be a literal (number, 'string', N'string', 0x…, NULL), found \"1 + 2\""},
		{"@a nvarchar(10) = N'x", "1:19: unterminated Unicode string"},
		{"@a int,\n  @b", "2:5: expected a data type after @b"},
	}
	for _, tt := range tests {
		_, err := ParseDeclarations(tt.decl)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseDeclarations(%q) error = %v, want it to contain %q", tt.decl, err, tt.want)
		}
	}
}

package sqlscript

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"SELECT 1",
	"-- @Status tinyint = 0\n-- @Since datetime2(0) = '2024-01-01'\nSELECT TOP (20) WorkId FROM dbo.Work WHERE Status = @Status AND CreatedAt >= @Since;",
	"DECLARE @s tinyint = 0\nSELECT * FROM t WHERE s = @s\nGO 2\nSELECT 2",
	"WITH q AS (SELECT TOP (20) * FROM dbo.Work WITH (UPDLOCK, READPAST, ROWLOCK) WHERE Status = 0 ORDER BY CreatedAt) UPDATE q SET Status = 1 OUTPUT inserted.WorkId;",
	"EXEC sp_executesql N'SELECT * FROM t WHERE a = @a AND b = ''x''', N'@a int, @b nvarchar(10) OUTPUT', @a = 5, @b = @b OUTPUT",
	"EXEC sp_executesql @stmt = N'SELECT @a', @params = N'@a decimal(9,2) = 1.5', @a = $3",
	"IF @x = 1 BEGIN SELECT CASE WHEN a = 1 THEN 2 ELSE 3 END FROM t END ELSE PRINT 'x'\r\ngo\r\n",
	"MERGE t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = 1 WHEN NOT MATCHED THEN INSERT (a) VALUES (1);",
	"/* planlint-ignore PLC101: reason */ SELECT 1 -- planlint-ignore-file x -- y",
	"SELECT N'größe', 0x1F, 1e5, $12, [a]]b], \"q\" FROM #t /* /* nested */ */",
	"CREATE PROCEDURE p AS BEGIN BEGIN TRY SELECT 1 END TRY BEGIN CATCH THROW; END CATCH END",
	"SELECT '\nGO\n' GO x\nGO 0",
	"'unterminated", "/* open", "[open",
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add(utf16LE("SELECT N'ä'\r\nGO\r\n", true))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := Parse("f.sql", src)
		if s == nil {
			if err == nil {
				t.Fatal("no script and no error")
			}
			return
		}
		checkRange := func(what string, r Range) {
			if r.Start.Offset < 0 || r.End.Offset > len(s.Text) || r.Start.Offset > r.End.Offset {
				t.Fatalf("%s range %+v outside text of %d bytes", what, r, len(s.Text))
			}
			if s.PosAt(r.Start.Offset) != r.Start || s.PosAt(r.End.Offset) != r.End {
				t.Fatalf("%s range %+v does not match PosAt", what, r)
			}
		}
		for _, d := range s.Diagnostics {
			checkRange("diagnostic", d.Range)
		}
		for _, sp := range s.Suppressions {
			checkRange("suppression", sp.Range)
			if len(sp.Rules) == 0 || sp.Reason == "" {
				t.Fatalf("invalid suppression kept: %+v", sp)
			}
		}
		for _, b := range s.Batches {
			checkRange("batch", b.Range)
			if s.Text[b.Range.Start.Offset:b.Range.End.Offset] != b.Text {
				t.Fatalf("batch %d text does not match its range", b.Index)
			}
			for _, st := range b.Statements {
				checkRange("statement", st.Range)
				if s.Text[st.Range.Start.Offset:st.Range.End.Offset] != st.Text {
					t.Fatalf("statement %q does not match its range", st.Text)
				}
				st.NotRollbackable()
				s.StatementSuppressions(st.Range)
			}
			r := b.Request()
			for i := 0; i <= len(r.Text); i++ {
				if o := r.ScriptOffset(i); o < 0 || o > len(s.Text) {
					t.Fatalf("ScriptOffset(%d) = %d outside the text", i, o)
				}
			}
			for _, st := range r.Statements {
				checkRange("request statement", st.Range)
			}
			for _, p := range r.Params {
				if _, err := p.GoValue(); err != nil {
					t.Fatalf("parameter kept with a bad value: %v", err)
				}
			}
		}
	})
}

func FuzzParseDeclarations(f *testing.F) {
	for _, s := range []string{"@a int", "@a int, @b nvarchar(50) OUTPUT, @c decimal(18,2)", "@a AS int = -1 OUT",
		"@t dbo.T READONLY", "@s varchar(max) = 'x''y', @n int = NULL", "@a int,", "a", "@a decimal(18,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, decl string) {
		decls, err := ParseDeclarations(decl)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("error %T is not a *SyntaxError", err)
			}
			return
		}
		// rendering the declarations and parsing them again gives the same
		var parts []string
		for _, d := range decls {
			if !strings.HasPrefix(d.Name, "@") || d.Type == "" {
				t.Fatalf("bad declaration %+v", d)
			}
			p := d.Name + " " + d.Type
			if d.Default != nil {
				p += " = " + d.Default.Text
			}
			if d.Output {
				p += " OUTPUT"
			}
			if d.ReadOnly {
				p += " READONLY"
			}
			parts = append(parts, p)
		}
		again, err := ParseDeclarations(strings.Join(parts, ", "))
		if err != nil {
			t.Fatalf("rendered %q does not parse: %v", strings.Join(parts, ", "), err)
		}
		if len(again) != len(decls) || (len(decls) > 0 && !reflect.DeepEqual(again, decls)) {
			t.Fatalf("round trip changed the declarations:\n%+v\n%+v", decls, again)
		}
	})
}

func FuzzParseExecuteSQL(f *testing.F) {
	for _, s := range fuzzSeeds {
		if strings.Contains(strings.ToLower(s), "sp_executesql") {
			f.Add(s)
		}
	}
	for _, s := range []string{
		"EXEC sp_executesql N'SELECT 1', N'@a int, @b varchar(10), @c bit', @c = 1, @a = -5, @b = 'x'",
		"EXEC [sys].[sp_executesql] N'SELECT @a', N'@a int', 1;",
		"EXEC sp_executesql N'SELECT 1', N'@d date', @d = CAST('2024-01-01' AS date)",
		"EXEC master..sp_executesql N'SELECT 1'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		call, err := ParseExecuteSQL(sql)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("error %T is not a *SyntaxError", err)
			}
			return
		}
		if len(call.Params) > len(call.Decls) {
			t.Fatalf("%d params for %d declarations", len(call.Params), len(call.Decls))
		}
		for _, p := range call.Params {
			if _, err := p.GoValue(); err != nil {
				t.Fatalf("accepted a bad value: %v", err)
			}
		}
		for _, st := range call.Statements {
			if st.Range.Start.Offset < 0 || st.Range.End.Offset > len(sql) || st.Range.Start.Offset > st.Range.End.Offset {
				t.Fatalf("statement range %+v outside the call", st.Range)
			}
		}
	})
}

// respace replaces every whitespace token with other whitespace.
func respace(sql string) string {
	var sb strings.Builder
	for _, t := range lex(sql) {
		if t.Kind == tokSpace {
			sb.WriteString("\n \t")
			continue
		}
		sb.WriteString(t.Text)
	}
	return sb.String()
}

func FuzzFingerprint(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("SELECT -1; ; WHERE a IN (-1, +$2, NULL, 'x');;")
	f.Add("x IN (1, - 'a') AND y IN (1,) AND z = +; IN (-")
	f.Fuzz(func(t *testing.T, sql string) {
		if got, want := normalize(sql), oracleNormalize(sql); got != want {
			t.Fatalf("normalize(%q) = %q; before it streamed the tokens it was %q", sql, got, want)
		}
		fp := Fingerprint(sql)
		if Fingerprint(sql) != fp {
			t.Fatal("Fingerprint is not deterministic")
		}
		if len(fp) != 16 {
			t.Fatalf("fingerprint %q is not 16 hex digits", fp)
		}
		if !utf8.ValidString(sql) {
			return
		}
		if other := respace(sql); Fingerprint(other) != fp {
			t.Fatalf("whitespace changed the fingerprint:\n%q\n%q\n%q\n%q", sql, other, normalize(sql), normalize(other))
		}
		r := Redact(sql)
		if Redact(r) != r {
			t.Fatalf("Redact is not idempotent: %q -> %q -> %q", sql, r, Redact(r))
		}
		for _, tk := range lex(r) {
			switch {
			case tk.Kind == tokNumber || tk.Kind == tokMoney || tk.Kind == tokBinary:
				t.Fatalf("Redact left the literal %q in %q", tk.Text, r)
			case (tk.Kind == tokString || tk.Kind == tokNString) && unquote(tk) != "?":
				t.Fatalf("Redact left the string %q in %q", tk.Text, r)
			}
		}
	})
}

func FuzzLocate(f *testing.F) {
	f.Add("SELECT 1\r\nFROM t", "SELECT 1\nFROM t", 0)
	f.Add("a b a  b", "a b", 1)
	f.Add("SELECT ab FROM t; SELECT a b FROM t", "SELECT a b", 3)
	f.Add("x  y\tz x y z", " x y  z ", 0)
	f.Fuzz(func(t *testing.T, text, stmt string, from int) {
		start, end, ok := Locate(text, stmt, from)
		os, oe, ook := oracleLocate(text, stmt, from)
		if start != os || end != oe || ok != ook {
			t.Fatalf("Locate(%q, %q, %d) = %d, %d, %v; before the run-length compaction it was %d, %d, %v", text, stmt, from, start, end, ok, os, oe, ook)
		}
		if ls, le, lok := NewLocator(text).Locate(stmt, from); ls != start || le != end || lok != ok {
			t.Fatalf("Locator.Locate(%q, %d) on %q = %d, %d, %v; Locate gives %d, %d, %v", stmt, from, text, ls, le, lok, start, end, ok)
		}
		if !ok {
			return
		}
		if start < from || start > end || end > len(text) {
			t.Fatalf("Locate = %d,%d for from %d and a text of %d bytes", start, end, from, len(text))
		}
		if strings.Join(strings.Fields(text[start:end]), "") != strings.Join(strings.Fields(stmt), "") && utf8.ValidString(text) && utf8.ValidString(stmt) {
			t.Fatalf("match %q does not equal %q without whitespace", text[start:end], stmt)
		}
	})
}

func FuzzParseParamOverride(f *testing.F) {
	for _, s := range []string{"@Status=0", "Since=2024-01-01", "@n=N'x'", "@x=", "@b=0x1F", "@a b=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseParamOverride(s)
		if err != nil {
			return
		}
		if !strings.HasPrefix(o.Name, "@") || o.Value.Kind == LiteralVariable || o.Value.Text == "" {
			t.Fatalf("bad override %+v", o)
		}
		if lit, ok := literalFromTokens(code(lex(o.Value.Text)), o.Value.Text); !ok || lit != o.Value {
			t.Fatalf("value %q does not lex back to itself", o.Value.Text)
		}
	})
}

package sqlscript

import (
	"reflect"
	"testing"
)

func TestCodeTokens(t *testing.T) {
	type tok struct {
		text, ident, lit string
		kind             LiteralKind
		variable         bool
	}
	tests := []struct {
		in   string
		want []tok
	}{
		{"SELECT [a b] FROM \"dbo\" -- c\n WHERE x = -1.5", []tok{
			{text: "SELECT", ident: "SELECT"}, {text: "[a b]", ident: "a b"}, {text: "FROM", ident: "FROM"},
			{text: `"dbo"`, ident: "dbo"}, {text: "WHERE", ident: "WHERE"}, {text: "x", ident: "x"},
			{text: "="}, {text: "-"}, {text: "1.5", lit: "1.5", kind: LiteralDecimal},
		}},
		{"@0 /* x */ N'it''s' 'a' 0x1F $2 1e3 @@ROWCOUNT", []tok{
			{text: "@0", variable: true}, {text: "N'it''s'", lit: "N'it''s'", kind: LiteralNString},
			{text: "'a'", lit: "'a'", kind: LiteralString}, {text: "0x1F", lit: "0x1F", kind: LiteralBinary},
			{text: "$2", lit: "$2", kind: LiteralMoney}, {text: "1e3", lit: "1e3", kind: LiteralFloat},
			{text: "@@ROWCOUNT"},
		}},
		{"'unterminated", []tok{{text: "'unterminated"}}},
		{"", []tok{}},
	}
	for _, tt := range tests {
		got := []tok{}
		for _, x := range CodeTokens(tt.in) {
			g := tok{text: x.Text, ident: x.Identifier, variable: x.Variable}
			if x.Literal != nil {
				g.lit, g.kind = x.Literal.Text, x.Literal.Kind
			}
			if tt.in[x.Start:x.End] != x.Text {
				t.Errorf("%q: token %q has offsets %d-%d", tt.in, x.Text, x.Start, x.End)
			}
			got = append(got, g)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("CodeTokens(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
		}
	}
}

func TestScriptHasParam(t *testing.T) {
	s, err := Parse("q.sql", []byte("-- @Status tinyint = 0\nSELECT 1 WHERE 0 = @Status\nGO\nEXEC sp_executesql N'SELECT @n', N'@n int = 1'"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"@Status": true, "@status": true, "@n": true, "@Other": false} {
		if got := s.HasParam(name); got != want {
			t.Errorf("HasParam(%s) = %v, want %v", name, got, want)
		}
	}
}

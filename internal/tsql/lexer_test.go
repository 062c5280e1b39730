package tsql

import (
	"fmt"
	"strings"
	"testing"
)

// render shows the code tokens of a text as kind:text, comments included.
func render(toks []Token) string {
	var parts []string
	for _, t := range toks {
		if t.Kind == Space {
			continue
		}
		s := fmt.Sprintf("%s:%s", t.Kind, t.Text)
		if t.Unterminated {
			s += "!"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " | ")
}

func TestLex(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"keywords and identifiers", "SELECT a,b FROM dbo.t", "word:SELECT | word:a | operator:, | word:b | word:FROM | word:dbo | operator:. | word:t"},
		{"line comment", "a -- x 'y'\nb", "word:a | comment:-- x 'y' | word:b"},
		{"line comment at CR", "a --x\rb", "word:a | comment:--x | word:b"},
		{"block comment", "a /* x -- y */ b", "word:a | comment:/* x -- y */ | word:b"},
		{"nested block comment", "/* a /* b */ c */ d", "comment:/* a /* b */ c */ | word:d"},
		{"unterminated block comment", "/* a /* b */ c", "comment:/* a /* b */ c!"},
		{"string with doubled quote", "'it''s' x", "string:'it''s' | word:x"},
		{"N string", "N'ä' n'b'", "Unicode string:N'ä' | Unicode string:n'b'"},
		{"word ending in N before string", "IN'a'", "word:IN | string:'a'"},
		{"unterminated string", "'abc", "string:'abc!"},
		{"bracket identifier", "[a]]b] [x y]", "quoted identifier:[a]]b] | quoted identifier:[x y]"},
		{"double-quoted identifier", `"a""b".c`, `quoted identifier:"a""b" | operator:. | word:c`},
		{"unterminated bracket", "[abc", "quoted identifier:[abc!"},
		{"variables", "@a @@ROWCOUNT @x1#$", "variable:@a | system variable:@@ROWCOUNT | variable:@x1#$"},
		{"lone at sign", "@ a", "operator:@ | word:a"},
		{"temp tables", "#t ##g", "word:#t | word:##g"},
		{"numbers", "1 12.5 .5 1. 1e5 1.5E-3 2e+2", "number:1 | number:12.5 | number:.5 | number:1. | number:1e5 | number:1.5E-3 | number:2e+2"},
		{"exponent without digits is an alias", "1e", "number:1 | word:e"},
		{"money", "$12.5 $.5 £3", "money literal:$12.5 | money literal:$.5 | money literal:£3"},
		{"dollar pseudo-column", "$action $IDENTITY", "word:$action | word:$IDENTITY"},
		{"binary", "0x 0x1F 0XaB", "binary literal:0x | binary literal:0x1F | binary literal:0XaB"},
		{"qualified number-like name", "t.5", "word:t | operator:. | number:5"},
		{"operators", "a<>b!=c>=d<=e+=1::x", "word:a | operator:<> | word:b | operator:!= | word:c | operator:>= | word:d | operator:<= | word:e | operator:+= | number:1 | operator::: | word:x"},
		{"minus minus is a comment", "1--2", "number:1 | comment:--2"},
		{"unicode identifier", "SELECT größe FROM tür", "word:SELECT | word:größe | word:FROM | word:tür"},
		{"unknown characters", "a ? `b`", "word:a | operator:? | operator:` | word:b | operator:`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			toks := Lex(tt.in)
			if got := render(toks); got != tt.want {
				t.Errorf("Lex(%q)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			// tokens cover the text exactly
			var sb strings.Builder
			for i, tk := range toks {
				if i > 0 && tk.Start != toks[i-1].End {
					t.Errorf("gap between tokens %d and %d", i-1, i)
				}
				sb.WriteString(tk.Text)
			}
			if sb.String() != tt.in {
				t.Errorf("tokens do not reproduce the input: %q", sb.String())
			}
		})
	}
}

func TestUnquote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"'it''s'", "it's"},
		{"N'a''b'", "a'b"},
		{"[a]]b]", "a]b"},
		{`"a""b"`, `a"b`},
		{"'open", "open"},
		{"word", "word"},
	}
	for _, tt := range tests {
		toks := Lex(tt.in)
		if len(toks) != 1 {
			t.Fatalf("Lex(%q) = %d tokens", tt.in, len(toks))
		}
		if got := Unquote(toks[0]); got != tt.want {
			t.Errorf("Unquote(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzLex: tokens cover the text exactly, in order, and Code drops only
// trivia.
func FuzzLex(f *testing.F) {
	for _, s := range []string{"SELECT a, [b]]c] FROM t WHERE x = N'it''s' -- c\nGO 2", "/* /* */", "@@v @x $1.5 0x1F .5e+3", "'open", "a\u00a0b\uFEFF"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Lex(s)
		end := 0
		for _, tk := range toks {
			if tk.Start != end || tk.End <= tk.Start || s[tk.Start:tk.End] != tk.Text {
				t.Fatalf("token %+v does not continue at %d", tk, end)
			}
			end = tk.End
		}
		if end != len(s) {
			t.Fatalf("tokens end at %d of %d", end, len(s))
		}
		for _, tk := range Code(toks) {
			if tk.Trivia() {
				t.Fatalf("Code kept %+v", tk)
			}
		}
	})
}

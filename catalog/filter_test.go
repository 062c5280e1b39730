package catalog

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func cj(col, op string, values ...string) Conjunct {
	return Conjunct{Column: col, Op: op, Values: values}
}

func TestParseFilter(t *testing.T) {
	tests := []struct {
		in     string
		want   []Conjunct
		canon  string
		reason string // for a case that names a variant
	}{
		// The user's form.
		{in: "Status = 0", want: []Conjunct{cj("Status", "=", "0")}, canon: "Status = 0"},
		{in: "WHERE Status = 0", want: []Conjunct{cj("Status", "=", "0")}, canon: "Status = 0"},
		{in: "where [Status]=0", want: []Conjunct{cj("Status", "=", "0")}, canon: "Status = 0"},
		{in: `"Status" = 0`, want: []Conjunct{cj("Status", "=", "0")}, canon: "Status = 0"},
		{in: "Status IN (0, 1)", want: []Conjunct{cj("Status", "IN", "0", "1")}, canon: "Status IN (0, 1)"},
		{in: "Status in(0)", want: []Conjunct{cj("Status", "IN", "0")}, canon: "Status IN (0)"},
		{in: "DeletedAt IS NULL", want: []Conjunct{cj("DeletedAt", "IS NULL")}, canon: "DeletedAt IS NULL"},
		{in: "DeletedAt is not null", want: []Conjunct{cj("DeletedAt", "IS NOT NULL")}, canon: "DeletedAt IS NOT NULL"},
		{in: "a = 1 AND b <> 'x' AND c IS NULL", want: []Conjunct{cj("a", "=", "1"), cj("b", "<>", "'x'"), cj("c", "IS NULL")},
			canon: "a = 1 AND b <> 'x' AND c IS NULL"},
		// SQL Server's stored form.
		{in: "([Status]=(0))", want: []Conjunct{cj("Status", "=", "0")}, canon: "Status = 0"},
		{in: "([DeletedAt] IS NULL)", want: []Conjunct{cj("DeletedAt", "IS NULL")}},
		{in: "([Status]=(0) OR [Status]=(1))", want: []Conjunct{cj("Status", "IN", "0", "1")}, canon: "Status IN (0, 1)"},
		{in: "([a]=(1) AND [b] IS NOT NULL)", want: []Conjunct{cj("a", "=", "1"), cj("b", "IS NOT NULL")}},
		{in: "([Name]=N'x')", want: []Conjunct{cj("Name", "=", "N'x'")}, canon: "Name = N'x'"},
		{in: "([d]>='2024-01-01')", want: []Conjunct{cj("d", ">=", "'2024-01-01'")}},
		{in: "([x]<>(2))", want: []Conjunct{cj("x", "<>", "2")}},
		{in: "([x]>(-1))", want: []Conjunct{cj("x", ">", "-1")}},
		{in: "([x]>=(1.5))", want: []Conjunct{cj("x", ">=", "1.5")}},
		{in: "([s]=(1) OR [s]=(2) OR [s]=(3))", want: []Conjunct{cj("s", "IN", "1", "2", "3")}},
		{in: "(([s]=(1) OR [s]=(2)) AND [t] IS NULL)", want: []Conjunct{cj("s", "IN", "1", "2"), cj("t", "IS NULL")}},
		{in: "([S]=(1) OR [s]=(2))", want: []Conjunct{cj("S", "IN", "1", "2")}, reason: "column names compare case-insensitively"},
		{in: "(x = 1 OR x IN (2, 3))", want: []Conjunct{cj("x", "IN", "1", "2", "3")}},
		{in: "([d]>=CONVERT([datetime],'2024-01-01',0))", want: []Conjunct{cj("d", ">=", "CONVERT([datetime],'2024-01-01',0)")}},
		{in: "d >= CAST('2024-01-01' AS date)", want: []Conjunct{cj("d", ">=", "CAST('2024-01-01' AS date)")}},
		// Operators.
		{in: "x != 1", want: []Conjunct{cj("x", "<>", "1")}},
		{in: "x !> 1", want: []Conjunct{cj("x", "<=", "1")}},
		{in: "x !< 1", want: []Conjunct{cj("x", ">=", "1")}},
		{in: "x < 1 AND x <= 2 AND x > 3 AND x >= 4", want: []Conjunct{cj("x", "<", "1"), cj("x", "<=", "2"), cj("x", ">", "3"), cj("x", ">=", "4")}},
		// Constant on the left.
		{in: "0 = Status", want: []Conjunct{cj("Status", "=", "0")}},
		{in: "5 < x", want: []Conjunct{cj("x", ">", "5")}},
		{in: "5 <= x", want: []Conjunct{cj("x", ">=", "5")}},
		{in: "(5) > [x]", want: []Conjunct{cj("x", "<", "5")}},
		{in: "5 >= x", want: []Conjunct{cj("x", "<=", "5")}},
		{in: "5 !> x", want: []Conjunct{cj("x", ">=", "5")}, reason: "5 !> x is 5 <= x"},
		{in: "'a' <> x", want: []Conjunct{cj("x", "<>", "'a'")}},
		// Constants.
		{in: "x = -1", want: []Conjunct{cj("x", "=", "-1")}},
		{in: "x = - 1", want: []Conjunct{cj("x", "=", "-1")}},
		{in: "x = -(1)", want: []Conjunct{cj("x", "=", "-1")}},
		{in: "x = +2.50", want: []Conjunct{cj("x", "=", "+2.50")}},
		{in: "x = .5", want: []Conjunct{cj("x", "=", ".5")}},
		{in: "x = 1.", want: []Conjunct{cj("x", "=", "1.")}},
		{in: "x = 1e3", want: []Conjunct{cj("x", "=", "1e3")}},
		{in: "x = ((((0))))", want: []Conjunct{cj("x", "=", "0")}},
		{in: "x = 0x0A", want: []Conjunct{cj("x", "=", "0x0A")}},
		{in: "x = NULL", want: []Conjunct{cj("x", "=", "NULL")}},
		{in: "x = 'it''s'", want: []Conjunct{cj("x", "=", "'it''s'")}},
		{in: "x = n'ü'", want: []Conjunct{cj("x", "=", "n'ü'")}},
		{in: "x IN (N'a', 'b', NULL, -2)", want: []Conjunct{cj("x", "IN", "N'a'", "'b'", "NULL", "-2")}},
		// Names.
		{in: "[Order] = 1", want: []Conjunct{cj("Order", "=", "1")}, canon: "[Order] = 1"},
		{in: "[a]]b] = 1", want: []Conjunct{cj("a]b", "=", "1")}, canon: "[a]]b] = 1"},
		{in: "[two words] = 1", want: []Conjunct{cj("two words", "=", "1")}, canon: "[two words] = 1"},
		{in: `"a""b" = 1`, want: []Conjunct{cj(`a"b`, "=", "1")}, canon: `[a"b] = 1`},
		{in: "Größe = 1", want: []Conjunct{cj("Größe", "=", "1")}, canon: "Größe = 1"},
		// Layout.
		{in: "  Status\n=\t0 -- pending\n", want: []Conjunct{cj("Status", "=", "0")}},
		{in: "/* queue */ Status = /* nested /* */ */ 0", want: []Conjunct{cj("Status", "=", "0")}},
		{in: "(((Status = 0)) AND ((Kind = 1)))", want: []Conjunct{cj("Status", "=", "0"), cj("Kind", "=", "1")}},
		{in: "([Status]) = (0)", want: []Conjunct{cj("Status", "=", "0")}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			f, err := ParseFilter(tc.in)
			if err != nil {
				t.Fatalf("ParseFilter(%q): %v", tc.in, err)
			}
			if !reflect.DeepEqual(f.Conjuncts, tc.want) {
				t.Errorf("ParseFilter(%q) = %#v, want %#v", tc.in, f.Conjuncts, tc.want)
			}
			if tc.canon != "" && f.String() != tc.canon {
				t.Errorf("String() = %q, want %q", f.String(), tc.canon)
			}
			again, err := ParseFilter(f.String())
			if err != nil || !reflect.DeepEqual(again, f) {
				t.Errorf("String() %q does not parse back: %v, %#v", f.String(), err, again)
			}
		})
	}
}

func TestParseFilterErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		part   string
		reason string
	}{
		{"", 0, "", "empty filter"},
		{"WHERE", 5, "", "empty filter"},
		{"UPPER(Name) = 'X'", 0, "UPPER(Name)", "function calls are not allowed"},
		{"Status = 0 AND LEN(Name) > 3", 15, "LEN(Name)", "function calls"},
		{"Name LIKE 'a%'", 5, "LIKE", "LIKE is not allowed"},
		{"x BETWEEN 1 AND 2", 2, "BETWEEN", "BETWEEN is not allowed"},
		{"x NOT IN (1, 2)", 2, "NOT IN", "NOT IN is not allowed"},
		{"NOT x = 1", 0, "NOT", "NOT is not allowed"},
		{"a = b", 0, "a = b", "column-to-column"},
		{"[a] < [b]", 0, "[a] < [b]", "column-to-column"},
		{"1 = 1", 0, "1 = 1", "needs a column"},
		{"a = 1 OR b = 2", 0, "a = 1 OR b = 2", "OR is allowed only between equality tests on one column"},
		{"s = 1 AND (a = 1 OR a > 2)", 10, "(a = 1 OR a > 2)", "OR is allowed only"},
		{"(a = 1 AND b = 2) OR a = 3", 0, "(a = 1 AND b = 2) OR a = 3", "OR is allowed only"},
		{"CONVERT(int, x) = 1", 0, "CONVERT(int, x)", "CONVERT of a column"},
		{"CAST(x AS int) = 1", 0, "CAST(x AS int)", "CAST of a column"},
		{"x = @p", 4, "@p", "variables and parameters"},
		{"x = y + 1", 6, "+", "arithmetic"},
		{"x + 1 = 2", 2, "+", "arithmetic"},
		{"x = 1 AND", 9, "", "expected a column name or a constant"},
		{"x =", 3, "", "expected a column name or a constant"},
		{"x", 1, "", "expected =, <>"},
		{"x 1", 2, "1", "expected =, <>"},
		{"x = 1 y = 2", 6, "y", "expected AND or the end"},
		{"(x = 1", 6, "", "expected ) to close the ( at offset 0"},
		{"x = 1)", 5, ")", "expected AND or the end"},
		{"x IN ()", 6, ")", "at least one constant"},
		{"x IN (1, y)", 9, "y", "constants only"},
		{"x IN (SELECT 1)", 6, "SELECT", "subqueries"},
		{"x IN 1", 5, "1", "expected ( and a list"},
		{"x IN (1 2)", 8, "2", "expected , or )"},
		{"x IS 1", 5, "1", "expected NULL after IS"},
		{"x IS NOT 1", 9, "1", "expected NULL after IS NOT"},
		{"NULL IS NULL", 0, "NULL IS NULL", "needs a column"},
		{"1 IN (1)", 0, "1 IN", "IN needs a column"},
		{"x = 'abc", 4, "'abc", "unterminated string literal"},
		{"[x = 1", 0, "[x = 1", "unterminated bracketed identifier"},
		{"x = 1 /* open", 6, "/* open", "unterminated /* comment"},
		{"dbo.T.x = 1", 0, "dbo.T.x", "without a table or schema"},
		{"x = -'a'", 4, "-'a'", "expected a number after -"},
		{"x = -0x01", 4, "-0x01", "expected a number after -"},
		{"SELECT = 1", 0, "SELECT", "found the keyword SELECT"},
		{"x = 1 ; y = 2", 6, ";", "expected AND or the end"},
		{strings.Repeat("(", 200) + "x = 1" + strings.Repeat(")", 200), 0, "(", "nested deeper"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			f, err := ParseFilter(tc.in)
			if err == nil {
				t.Fatalf("ParseFilter(%q) = %v, want an error", tc.in, f)
			}
			var fe *FilterSyntaxError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is a %T, want *FilterSyntaxError", err, err)
			}
			if fe.Offset != tc.offset && !strings.Contains(tc.reason, "nested") {
				t.Errorf("offset = %d, want %d (%v)", fe.Offset, tc.offset, err)
			}
			if fe.Part != tc.part && !strings.Contains(tc.reason, "nested") {
				t.Errorf("part = %q, want %q (%v)", fe.Part, tc.part, err)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("error %q does not say %q", err, tc.reason)
			}
		})
	}
}

func TestFilterStringNil(t *testing.T) {
	var f *Filter
	if got := f.String(); got != "" {
		t.Errorf("nil filter String() = %q", got)
	}
}

func TestFilterSyntaxErrorMessage(t *testing.T) {
	_, err := ParseFilter("Status = 0 OR Priority = 1")
	want := `at offset 0, "Status = 0 OR Priority = 1": OR is allowed only between equality tests on one column (how SQL Server stores IN)`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
	_, err = ParseFilter(strings.Repeat("x", 100) + " LIKE 'a'")
	if err == nil || !strings.Contains(err.Error(), "offset 101") {
		t.Errorf("error = %v, want offset 101", err)
	}
	_, err = ParseFilter("UPPER(" + strings.Repeat("y", 200) + ") = 1")
	if err == nil || !strings.Contains(err.Error(), "…") || len(err.Error()) > 200 {
		t.Errorf("a long offending part is not clipped: %v", err)
	}
}

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{
		"Status = 0", "([Status]=(0))", "([DeletedAt] IS NULL)", "([Status]=(0) OR [Status]=(1))",
		"([a]=(1) AND [b] IS NOT NULL)", "([Name]=N'x')", "([d]>='2024-01-01')", "([x]<>(2))", "5 !> x",
		"x IN (1, -2, .5, 0x0A, NULL)", "d >= CONVERT([datetime],'2024-01-01',0)", "CAST('a' AS varchar(3)) = x",
		"UPPER(x) = 1", "a = 1 OR b = 2", "((x = 1)", "x = 'it''s'", "[a]]b] = 1", `"q""q" = 1`,
		"/* c /* d */ */ x -- e\n= 1", "x = -(((1)))",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := ParseFilter(s)
		if err != nil {
			var fe *FilterSyntaxError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is a %T", err, err)
			}
			if fe.Offset < 0 || fe.Offset > len(s) {
				t.Fatalf("offset %d outside the text of length %d", fe.Offset, len(s))
			}
			if fe.Part != "" && utf8.ValidString(s) && !strings.HasPrefix(s[fe.Offset:], strings.TrimSuffix(fe.Part, "…")) {
				t.Fatalf("part %q is not at offset %d of %q", fe.Part, fe.Offset, s)
			}
			return
		}
		if len(flt.Conjuncts) == 0 {
			t.Fatalf("ParseFilter(%q) returned no conjuncts and no error", s)
		}
		for _, c := range flt.Conjuncts {
			switch c.Op {
			case "IS NULL", "IS NOT NULL":
				if len(c.Values) != 0 {
					t.Fatalf("%s with values %v", c.Op, c.Values)
				}
			case "IN":
				if len(c.Values) == 0 {
					t.Fatal("IN without values")
				}
			case "=", "<>", "<", "<=", ">", ">=":
				if len(c.Values) != 1 {
					t.Fatalf("%s with values %v", c.Op, c.Values)
				}
			default:
				t.Fatalf("unexpected op %q", c.Op)
			}
			if c.Column == "" {
				t.Fatalf("empty column in %q", s)
			}
		}
		canon := flt.String()
		again, err := ParseFilter(canon)
		if err != nil {
			t.Fatalf("String() %q of %q does not parse: %v", canon, s, err)
		}
		if !reflect.DeepEqual(again, flt) {
			t.Fatalf("String() %q of %q parses to %#v, want %#v", canon, s, again, flt)
		}
	})
}

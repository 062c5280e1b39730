package catalog

import "testing"

func TestCompareLiterals(t *testing.T) {
	tests := []struct {
		a, b string
		cmp  int
		ok   bool
	}{
		// Numbers compare numerically, whatever their spelling.
		{"0", "0", 0, true},
		{"(0)", "0", 0, true},
		{"((0))", "0.0", 0, true},
		{"(0.00)", "-0", 0, true},
		{"1", "2", -1, true},
		{"10", "9", 1, true},
		{"(-1)", "0", -1, true},
		{"-(1)", "-1", 0, true},
		{"- 1", "-1", 0, true},
		{"+5", "5", 0, true},
		{"1.5", "1.50", 0, true},
		{"(1.)", "1", 0, true},
		{".5", "0.5", 0, true},
		{"1.000000000000000e+001", "10", 0, true},
		{"(9.900000000000000e+001)", "99", 0, true},
		{"1e2", "99.999", 1, true},
		{"5637144576.", "5637144575", 1, true},
		{"12345678901234567890123", "12345678901234567890124", -1, true},
		{"1e500", "1e500", 0, true}, // too large to compare numerically, equal as text
		// Money constants, as filter_definition stores them, are numbers.
		{"($10.0000)", "10", 0, true},
		{"$10", "(11)", -1, true},
		{"-$5", "0", -1, true},
		{"£3", "3.00", 0, true},
		{"1e500", "1e501", -1, false},
		// Strings: equal when the text is, trailing spaces aside.
		{"N'a'", "'a'", 0, true},
		{"'abc'", "'abc  '", 0, true},
		{"N'ACTIVE'", "N'ACTIVE'", 0, true},
		{"'it''s'", "N'it''s'", 0, true},
		{"''", "''", 0, true},
		{"'a'", "'A'", 1, false}, // collation decides: never reported equal
		{"'a'", "'b'", -1, false},
		{"'B'", "'a'", -1, false},
		// Same-shape digit strings order as text, numbers and dates alike.
		{"'2024-01-01'", "'2024-02-01'", -1, true},
		{"'2024-12-31 23:59:59'", "'2024-12-31 00:00:00'", 1, true},
		{"'2024-01-01T10:00'", "'2024-01-01T09:30'", 1, true},
		{"'20240101'", "'20231231'", 1, true},
		{"'10:00'", "'09:00'", 1, true},
		{"'0042'", "'0041'", 1, true},
		{"'2024-01-01'", "'2024-01-01 00:00:00.0000000'", -1, false}, // shapes differ
		{"'991231'", "'000101'", 1, false},                           // yymmdd: century depends on the cutoff
		{"'-5'", "'-3'", 1, false},                                   // negative numbers order the other way
		{"'1e-5'", "'1e-3'", 1, false},
		{"'01/02/2024'", "'12/01/2023'", -1, false}, // not ISO
		{"'00000000-0000-0000-0000-000000000001'", "'00000000-0000-0000-0000-000000000002'", -1, false},
		// Binary.
		{"0x0A", "0x0a", 0, true},
		{"0x0A", "0x0B", -1, true},
		{"0x0A", "0x0A00", -1, false},
		// Mixed kinds, NULL and other text.
		{"0", "'0'", 1, false},
		{"NULL", "NULL", 0, false},
		{"NULL", "0", 1, false},
		{"CONVERT([datetime],'2024-01-01',0)", "CONVERT([datetime],'2024-01-01',0)", 0, true},
		{"CONVERT([datetime],'2024-01-01',0)", "'2024-01-01'", 1, false},
		{"{guid'00000000-0000-0000-0000-000000000000'}", "{guid'00000000-0000-0000-0000-000000000000'}", 0, true},
		{"@p1", "@p1", 0, true},
		{"@p1", "0", 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.a+" vs "+tc.b, func(t *testing.T) {
			cmp, ok := CompareLiterals(tc.a, tc.b)
			if ok != tc.ok || (ok && cmp != tc.cmp) || (!ok && (cmp == 0) != (tc.a == tc.b)) {
				t.Errorf("CompareLiterals(%q, %q) = %d, %v; want %d, %v", tc.a, tc.b, cmp, ok, tc.cmp, tc.ok)
			}
			rcmp, rok := CompareLiterals(tc.b, tc.a)
			if rok != ok || (ok && rcmp != -cmp) {
				t.Errorf("CompareLiterals(%q, %q) = %d, %v; not the reverse of %d, %v", tc.b, tc.a, rcmp, rok, cmp, ok)
			}
		})
	}
}

func TestLiteralDistinct(t *testing.T) {
	tests := []struct {
		a, b     string
		distinct bool
	}{
		{"0", "1", true},
		{"0", "0.0", false},
		{"'PENDING'", "'DONE'", true},
		{"'PENDING'", "'pending'", false}, // equal under a case-insensitive collation
		{"'a b'", "'a_b'", true},
		{"'2024-01-01'", "'2024-01-02'", true},
		{"'5'", "'05'", false}, // equal as numbers
		{"''", "'a'", false},   // '' converts to 0 for an int column
		{"N'é'", "N'e'", false},
		{"'co-op'", "'coop'", false},
		{"0x01", "0x02", true},
		{"0x01", "0x0100", false},
		{"NULL", "1", false},
		{"CONVERT(int, 1)", "CONVERT(int, 2)", false},
	}
	for _, tc := range tests {
		r := compareLiterals(parseLiteral(tc.a), parseLiteral(tc.b))
		if r.distinct != tc.distinct {
			t.Errorf("%s vs %s: distinct = %v, want %v", tc.a, tc.b, r.distinct, tc.distinct)
		}
	}
}

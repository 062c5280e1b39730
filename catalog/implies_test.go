package catalog

import (
	"math/big"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// conjuncts parses a predicate written as a filter; "" is no predicate.
func conjuncts(t testing.TB, s string) []Conjunct {
	t.Helper()
	if s == "" {
		return nil
	}
	f, err := ParseFilter(s)
	if err != nil {
		t.Fatalf("ParseFilter(%q): %v", s, err)
	}
	return f.Conjuncts
}

func TestImpliedBy(t *testing.T) {
	tests := []struct {
		filter  string
		preds   string
		implied bool
		why     string
	}{
		// Equality.
		{"x = 0", "x = 0", true, ""},
		{"x = 0", "x = (0)", true, ""},
		{"x = 0", "x = 0.0", true, "numbers compare numerically"},
		{"x = 0", "x IN (0)", true, ""},
		{"x = 0", "x IN (0, 1)", false, "1 is outside the filter"},
		{"x = 0", "x = 1", false, ""},
		{"x = 0", "x >= 0 AND x <= 0", true, "the range pins one value"},
		{"x = 0", "x > -1 AND x < 1", false, "0.5 is in range"},
		{"x = 0", "y = 0", false, "another column"},
		{"x = 0", "X = 0", true, "column names compare case-insensitively"},
		{"x = 0", "x IS NULL", false, ""},
		{"x = 0", "", false, "no predicate"},
		{"x = 0", "x = 0 AND x = 1", false, "contradictory predicates imply nothing"},
		{"x = 0", "x = '0'", false, "a string may or may not convert to 0"},
		{"x = 0", "x IN (0, 1) AND x <> 1", true, "the exclusion removes 1"},
		{"x = 0", "x IN (0, 1) AND x < 1", true, "the range removes 1"},
		{"x = 0", "x IN (0, 1) AND x IN (0, 2)", true, "sets intersect"},
		// IN.
		{"x IN (0, 1)", "x = 0", true, ""},
		{"x IN (0, 1)", "x = 1", true, ""},
		{"x IN (0, 1)", "x IN (1, 0)", true, ""},
		{"x IN (0, 1)", "x IN (0, 1, 2)", false, ""},
		{"x IN (0, 1)", "x IN (0, 1, 2) AND x <> 2", true, ""},
		{"x IN (0, 1)", "x = 2", false, ""},
		{"([Status]=(0) OR [Status]=(1))", "Status = 1", true, "the stored form of IN"},
		{"x IN (0, NULL)", "x = 0", true, "NULL in an IN list matches nothing"},
		// <>.
		{"x <> 2", "x = 0", true, ""},
		{"x <> 2", "x IN (0, 1)", true, ""},
		{"x <> 2", "x IN (1, 2)", false, ""},
		{"x <> 2", "x <> 2", true, ""},
		{"x <> 2", "x > 2", true, ""},
		{"x <> 2", "x >= 2", false, ""},
		{"x <> 2", "x >= 3", true, ""},
		{"x <> 2", "x < 2", true, ""},
		{"x <> 2", "x <= 2", false, ""},
		{"x <> 2", "x <= 1.5", true, ""},
		{"x <> 2", "x >= 2 AND x <> 2", true, ""},
		{"x <> 2", "x IS NOT NULL", false, ""},
		{"x <> 2", "x = NULL", false, "never true, so ignored"},
		{"x <> 1", "x > 5", true, ""},
		// Ranges.
		{"x >= 0", "x = 0", true, ""},
		{"x >= 0", "x > 0", true, ""},
		{"x >= 0", "x > -1", false, ""},
		{"x >= 0", "x >= 0", true, ""},
		{"x >= 0", "x >= 1", true, ""},
		{"x >= 0", "x = -1", false, ""},
		{"x >= 0", "x IN (0, 5)", true, ""},
		{"x >= 0", "x < 5", false, ""},
		{"x > 3", "x > 5", true, ""},
		{"x >= 4", "x > 5", true, ""},
		{"x > 3", "x >= 3", false, ""},
		{"x > 3", "x >= 3 AND x <> 3", true, ""},
		{"x > 3", "x > 3", true, ""},
		{"x > 3", "x = 3", false, ""},
		{"x > 3", "x = 3.5", true, ""},
		{"x > 3", "x > 2 AND x > 4", true, "the stronger bound counts"},
		{"x < 10", "x < 5", true, ""},
		{"x < 10", "x <= 10", false, ""},
		{"x < 10", "x < 10", true, ""},
		{"x < 10", "x <= 9.99", true, ""},
		{"x <= 10", "x < 10", true, ""},
		{"x <= 10", "x <= 10", true, ""},
		{"x <= 10", "x = 11", false, ""},
		{"x >= 27 AND x <= 36", "x = 33", true, "the documented example"},
		{"x >= 27 AND x <= 36", "x = 37", false, ""},
		{"x >= -5", "x = -(3)", true, ""},
		// NULL tests.
		{"x IS NOT NULL", "x = 0", true, ""},
		{"x IS NOT NULL", "x > 1", true, ""},
		{"x IS NOT NULL", "x <> 1", true, ""},
		{"x IS NOT NULL", "x = 'a'", true, ""},
		{"x IS NOT NULL", "x IS NOT NULL", true, ""},
		{"x IS NOT NULL", "x IS NULL", false, ""},
		{"x IS NOT NULL", "", false, ""},
		{"x IS NOT NULL", "x = NULL", false, ""},
		{"x IS NOT NULL", "x IN (NULL)", false, ""},
		{"x IS NULL", "x IS NULL", true, ""},
		{"x IS NULL", "x IS NOT NULL", false, ""},
		{"x IS NULL", "x = 0", false, ""},
		{"x IS NULL", "x IS NULL AND x = 0", false, "contradictory"},
		{"x = NULL", "x = NULL", false, "a filter comparing with NULL is never implied"},
		// Strings: case depends on the collation, so differently-cased strings are not equal.
		{"s = N'PENDING'", "s = 'PENDING'", true, ""},
		{"s = N'PENDING'", "s = 'PENDING '", true, "trailing spaces do not count"},
		{"s = N'PENDING'", "s = 'pending'", false, ""},
		{"s <> 'DONE'", "s = 'PENDING'", true, ""},
		{"s <> 'DONE'", "s = 'done'", false, ""},
		{"s <> 'a'", "s = 'A'", false, ""},
		{"s IN ('a', 'b')", "s = 'A'", false, ""},
		{"s > 'a'", "s = 'b'", false, "string order depends on the collation"},
		// Dates.
		{"d >= '2024-01-01'", "d >= '2024-03-01'", true, ""},
		{"d >= '2024-01-01'", "d = '2023-12-31'", false, ""},
		{"d >= '2024-01-01'", "d >= '2024-01-01 00:00:00.0000000'", false, "different shapes are not compared"},
		{"d >= CONVERT([datetime],'2024-01-01',0)", "d >= CONVERT([datetime],'2024-01-01',0)", true, ""},
		{"d >= CONVERT([datetime],'2024-01-01',0)", "d = CONVERT([datetime],'2024-01-01',0)", true, ""},
		// Several conjuncts.
		{"a = 1 AND b IS NULL", "a = 1 AND b IS NULL", true, ""},
		{"a = 1 AND b IS NULL", "b IS NULL AND c = 3 AND a IN (1)", true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.filter+" by "+tc.preds, func(t *testing.T) {
			f, err := ParseFilter(tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			implied, missing := f.ImpliedBy(conjuncts(t, tc.preds))
			if implied != tc.implied {
				t.Errorf("implied = %v, want %v (%s); missing %v", implied, tc.implied, tc.why, missing)
			}
			if implied != (len(missing) == 0) {
				t.Errorf("implied = %v but missing = %v", implied, missing)
			}
		})
	}
}

func TestImpliedByMissing(t *testing.T) {
	f, err := ParseFilter("a = 1 AND b IS NULL AND c IN (1, 2)")
	if err != nil {
		t.Fatal(err)
	}
	_, missing := f.ImpliedBy(conjuncts(t, "a = 1 AND c = 3"))
	want := []Conjunct{cj("b", "IS NULL"), cj("c", "IN", "1", "2")}
	if !reflect.DeepEqual(missing, want) {
		t.Errorf("missing = %v, want %v", missing, want)
	}
}

func TestImpliedByPredSpellings(t *testing.T) {
	tests := []struct {
		filter string
		pred   Conjunct
		want   bool
	}{
		{"x <> 2", cj("x", "!=", "(2)"), true},
		{"x >= 2", cj("x", "!<", "(2)"), true},
		{"x <= 2", cj("x", "!>", "(2)"), true},
		{"x = 0", cj("[x]", "=", "(0)"), true},
		{"x = 0", cj("x", " = ", "((0))"), true},
		{"x IS NULL", cj("x", "is  null"), true},
		{"x = 0", cj("x", "=", "@p1"), false},
		{"x IS NOT NULL", cj("x", "=", "@p1"), true},
		{"x = 0", cj("x", "=", "0", "1"), false},
		{"x = 0", cj("x", "LIKE", "'0'"), false},
		{"x = 0", cj("x", "="), false},
	}
	for _, tc := range tests {
		f, err := ParseFilter(tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := f.ImpliedBy([]Conjunct{tc.pred}); got != tc.want {
			t.Errorf("%s implied by %#v = %v, want %v", tc.filter, tc.pred, got, tc.want)
		}
	}
}

func TestImpliedByNilFilter(t *testing.T) {
	var f *Filter
	if implied, missing := f.ImpliedBy(nil); !implied || missing != nil {
		t.Errorf("nil filter: %v, %v", implied, missing)
	}
}

// holds evaluates c for a value of its column, nil meaning NULL, when
// every value of c is a number.
func holds(c Conjunct, v *big.Rat) bool {
	cmp := func(s string) (int, bool) {
		l := parseLiteral(s)
		if v == nil || l.kind != litNumber {
			return 0, false
		}
		return v.Cmp(l.num), true
	}
	switch normalizeOp(c.Op) {
	case "IS NULL":
		return v == nil
	case "IS NOT NULL":
		return v != nil
	case "IN":
		for _, s := range c.Values {
			if r, ok := cmp(s); ok && r == 0 {
				return true
			}
		}
		return false
	}
	if len(c.Values) != 1 {
		return false
	}
	r, ok := cmp(c.Values[0])
	if !ok {
		return false
	}
	switch normalizeOp(c.Op) {
	case "=":
		return r == 0
	case "<>":
		return r != 0
	case "<":
		return r < 0
	case "<=":
		return r <= 0
	case ">":
		return r > 0
	case ">=":
		return r >= 0
	}
	return false
}

// numericOnly reports whether every value is a number or NULL.
func numericOnly(cs []Conjunct) bool {
	for _, c := range cs {
		for _, v := range c.Values {
			if k := parseLiteral(v).kind; k != litNumber && k != litNull {
				return false
			}
		}
	}
	return true
}

// witnesses returns values that cover every interval the literals of cs
// bound: the literals, midpoints between them, values beyond both ends,
// and NULL (nil).
func witnesses(cs []Conjunct) []*big.Rat {
	var pts []*big.Rat
	for _, c := range cs {
		for _, v := range c.Values {
			if l := parseLiteral(v); l.kind == litNumber {
				pts = append(pts, l.num)
			}
		}
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].Cmp(pts[j]) < 0 })
	out := []*big.Rat{nil, big.NewRat(0, 1)}
	one := big.NewRat(1, 1)
	for i, p := range pts {
		out = append(out, p, new(big.Rat).Sub(p, one), new(big.Rat).Add(p, one))
		if i > 0 {
			mid := new(big.Rat).Add(pts[i-1], p)
			out = append(out, mid.Quo(mid, big.NewRat(2, 1)))
		}
	}
	return out
}

func FuzzImpliedBy(f *testing.F) {
	seeds := [][2]string{
		{"x = 0", "x = 0"}, {"x IN (0, 1)", "x = 1"}, {"x <> 2", "x >= 2 AND x <> 2"}, {"x > 3", "x >= 4"},
		{"x IS NOT NULL", "x < 1"}, {"x IS NULL", "x IS NULL"}, {"x >= 27 AND x <= 36", "x = 33"},
		{"x = 0", "x >= 0 AND x <= 0"}, {"x < 1.5", "x IN (1, 1.4999) AND x <> 1"}, {"s = N'a'", "s = 'A'"},
		{"d >= '2024-01-01'", "d > '2024-02-01'"}, {"x = -1", "x = (-1.0)"}, {"x IN (1, NULL)", "x IN (NULL, 1)"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, filterText, predText string) {
		flt, err := ParseFilter(filterText)
		if err != nil {
			return
		}
		pf, err := ParseFilter(predText)
		if err != nil {
			return
		}
		preds := pf.Conjuncts
		implied, missing := flt.ImpliedBy(preds)
		if implied != (len(missing) == 0) || len(missing) > len(flt.Conjuncts) {
			t.Fatalf("implied = %v with missing %v", implied, missing)
		}
		// A single conjunct without NULL implies itself.
		if len(flt.Conjuncts) == 1 && !strings.Contains(strings.ToUpper(filterText), "NULL") {
			if ok, _ := flt.ImpliedBy(flt.Conjuncts); !ok {
				t.Fatalf("%q does not imply itself", filterText)
			}
		}
		// Soundness, checked by evaluation when every literal is a number:
		// a value that satisfies the preds on a column must satisfy each
		// implied filter conjunct on it.
		if !numericOnly(flt.Conjuncts) || !numericOnly(preds) {
			return
		}
		notImplied := map[int]bool{}
		for _, m := range missing {
			for i, c := range flt.Conjuncts {
				if reflect.DeepEqual(c, m) {
					notImplied[i] = true
				}
			}
		}
		for i, fc := range flt.Conjuncts {
			if notImplied[i] {
				continue
			}
			var onCol []Conjunct
			for _, p := range preds {
				if sameName(p.Column, fc.Column) {
					onCol = append(onCol, p)
				}
			}
			for _, v := range witnesses(append(onCol, fc)) {
				all := true
				for _, p := range onCol {
					all = all && holds(p, v)
				}
				if all && !holds(fc, v) {
					t.Fatalf("%v said implied by %v, but %s = %v satisfies the preds and not the filter", fc, onCol, fc.Column, v)
				}
			}
		}
	})
}

package sqlscript

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSuppressions(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		want  []Suppression
		diags []string
	}{
		{"line form", "SELECT 1 -- planlint-ignore PLC101 -- accepted scan\n",
			[]Suppression{{Rules: []string{"PLC101"}, Reason: "accepted scan", Range: Range{Pos{9, 1, 10}, Pos{51, 1, 52}}, Line: 1}}, nil},
		{"several rules", "-- planlint-ignore PLC101, cardinality-misestimate,PLW102 -- known\nSELECT 1",
			[]Suppression{{Rules: []string{"PLC101", "cardinality-misestimate", "PLW102"}, Reason: "known", Range: Range{Pos{0, 1, 1}, Pos{66, 1, 67}}, Line: 1}}, nil},
		{"block form with colon", "SELECT 1\n/* planlint-ignore PLC101: the table is tiny */",
			[]Suppression{{Rules: []string{"PLC101"}, Reason: "the table is tiny", Range: Range{Pos{9, 2, 1}, Pos{56, 2, 48}}, Line: 2}}, nil},
		{"block form over lines", "/* planlint-ignore PLC101 --\n   reason on\n   two lines */ SELECT 1",
			[]Suppression{{Rules: []string{"PLC101"}, Reason: "reason on two lines", Range: Range{Pos{0, 1, 1}, Pos{57, 3, 16}}, Line: 1}}, nil},
		{"line form with colon", "SELECT 1 -- planlint-ignore PLC101: accepted scan\n",
			[]Suppression{{Rules: []string{"PLC101"}, Reason: "accepted scan", Range: Range{Pos{9, 1, 10}, Pos{49, 1, 50}}, Line: 1}}, nil},
		{"line form with colon, no space", "-- planlint-ignore PLC101,PLW102:known\nSELECT 1",
			[]Suppression{{Rules: []string{"PLC101", "PLW102"}, Reason: "known", Range: Range{Pos{0, 1, 1}, Pos{38, 1, 39}}, Line: 1}}, nil},
		{"block form with dashes on one line", "/* planlint-ignore PLC101 -- the table is tiny */ SELECT 1",
			[]Suppression{{Rules: []string{"PLC101"}, Reason: "the table is tiny", Range: Range{Pos{0, 1, 1}, Pos{49, 1, 50}}, Line: 1}}, nil},
		{"block form with dashes, several rules", "/* planlint-ignore PLC101, PLW102 -- known */ SELECT 1",
			[]Suppression{{Rules: []string{"PLC101", "PLW102"}, Reason: "known", Range: Range{Pos{0, 1, 1}, Pos{45, 1, 46}}, Line: 1}}, nil},
		{"starred block over lines", "/**\n * planlint-ignore PLC101 --\n * reason on\n * two lines\n **/ SELECT 1",
			[]Suppression{{Rules: []string{"PLC101"}, Reason: "reason on two lines", Range: Range{Pos{0, 1, 1}, Pos{63, 5, 5}}, Line: 1}}, nil},
		{"file form with colon", "-- planlint-ignore-file PLM103: batch job\nSELECT 1",
			[]Suppression{{Rules: []string{"PLM103"}, Reason: "batch job", File: true, Range: Range{Pos{0, 1, 1}, Pos{41, 1, 42}}, Line: 1}}, nil},
		{"block file form with dashes", "/* planlint-ignore-file PLM103 -- batch job */\nSELECT 1",
			[]Suppression{{Rules: []string{"PLM103"}, Reason: "batch job", File: true, Range: Range{Pos{0, 1, 1}, Pos{46, 1, 47}}, Line: 1}}, nil},
		{"missing reason in block form with dashes", "/* planlint-ignore PLC101 -- */ SELECT 1", nil,
			[]string{"error q.sql:1:1: planlint-ignore PLC101 gives no reason (write planlint-ignore PLC101 -- reason)"}},
		{"stars are no reason", "/* planlint-ignore PLC101 --\n **/ SELECT 1", nil,
			[]string{"error q.sql:1:1: planlint-ignore PLC101 gives no reason (write planlint-ignore PLC101 -- reason)"}},
		{"file-wide", "-- planlint-ignore-file spill-to-tempdb -- batch job\nSELECT 1",
			[]Suppression{{Rules: []string{"spill-to-tempdb"}, Reason: "batch job", File: true, Range: Range{Pos{0, 1, 1}, Pos{52, 1, 53}}, Line: 1}}, nil},
		{"missing reason", "SELECT 1 -- planlint-ignore PLC101\n", nil,
			[]string{"error q.sql:1:10: planlint-ignore PLC101 gives no reason (write planlint-ignore PLC101 -- reason)"}},
		{"empty reason", "/* planlint-ignore PLC101: */ SELECT 1", nil,
			[]string{"error q.sql:1:1: planlint-ignore PLC101 gives no reason (write planlint-ignore PLC101 -- reason)"}},
		{"missing rule", "-- planlint-ignore -- because\nSELECT 1", nil,
			[]string{"error q.sql:1:1: planlint-ignore names no rule (write planlint-ignore key-lookup -- reason)"}},
		{"missing rule in file form", "-- planlint-ignore-file\nSELECT 1", nil,
			[]string{"error q.sql:1:1: planlint-ignore-file names no rule (write planlint-ignore-file key-lookup -- reason)"}},
		{"reason without separator", "-- planlint-ignore PLC101 because it is fine\nSELECT 1", nil,
			[]string{"error q.sql:1:1: planlint-ignore: expected ',' and another rule, or '--' or ':' before the reason, found \"because\""}},
		{"bad rule", "-- planlint-ignore *all* -- x\nSELECT 1", nil,
			[]string{"error q.sql:1:1: planlint-ignore: expected a rule code or name, found \"*all*\" (write planlint-ignore key-lookup -- reason)"}},
		{"unknown directive", "-- planlint-ignroe PLC101 -- x\nSELECT 1", nil,
			[]string{"error q.sql:1:1: unknown directive \"planlint-ignroe\" (expected planlint-ignore or planlint-ignore-file)"}},
		{"not a directive", "-- planlint ignores nothing here\nSELECT '-- planlint-ignore PLC101 -- in a string'", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := Parse("q.sql", []byte(tt.src))
			if !reflect.DeepEqual(s.Suppressions, tt.want) {
				t.Errorf("suppressions\n got %+v\nwant %+v", s.Suppressions, tt.want)
			}
			if got := diagStrings(s.Diagnostics); !reflect.DeepEqual(got, tt.diags) {
				t.Errorf("diagnostics\n got %q\nwant %q", got, tt.diags)
			}
		})
	}
}

func TestStatementSuppressions(t *testing.T) {
	src := `-- planlint-ignore-file PLM103 -- nightly job
-- planlint-ignore PLC101 -- first
SELECT 1
FROM t -- planlint-ignore PLW102 -- inline

/* planlint-ignore PLC105: block
   above */
-- planlint-ignore PLC106 -- also above
SELECT 2

-- planlint-ignore PLC107 -- separated by a blank line

SELECT 3
SELECT 4; -- planlint-ignore PLC108 -- trailing
SELECT 5
`
	s := mustParse(t, src)
	rules := func(sups []Suppression) []string {
		var out []string
		for _, sp := range sups {
			out = append(out, sp.Rules...)
		}
		return out
	}
	want := [][]string{
		{"PLM103", "PLC101", "PLW102"},
		{"PLM103", "PLC105", "PLC106"},
		{"PLM103"},
		{"PLM103", "PLC108"},
		{"PLM103"},
	}
	stmts := s.Batches[0].Statements
	if len(stmts) != len(want) {
		t.Fatalf("%d statements", len(stmts))
	}
	for i, st := range stmts {
		if got := rules(s.StatementSuppressions(st.Range)); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("statement %d (%q): suppressions %v, want %v", i+1, st.Text, got, want[i])
		}
	}
}

// FuzzSuppressionForms checks that a directive means the same in a line
// comment and in a block comment: the same rules and reason, or the same
// problem.
func FuzzSuppressionForms(f *testing.F) {
	for _, s := range []string{"PLC101 -- reason", "PLC101: reason", "a, b -- x -- y", "a:b", "PLC101", "-- r", "a,,b: r",
		"key-lookup --reason", "* x -- y", "a -- :", "a : -- b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if strings.ContainsAny(body, "\r\n\x00") || strings.Contains(body, "*/") || strings.Contains(body, "/*") ||
			strings.HasSuffix(strings.TrimRight(body, " \t"), "*") || !utf8.ValidString(body) {
			return // not expressible on one line in both forms, or block decoration
		}
		parse := func(src string) ([]Suppression, []string) {
			s, _ := Parse("q.sql", []byte(src))
			var msgs []string
			for _, d := range s.Diagnostics {
				msgs = append(msgs, d.Message)
			}
			var sups []Suppression
			for _, sp := range s.Suppressions {
				sups = append(sups, Suppression{Rules: sp.Rules, Reason: sp.Reason, File: sp.File})
			}
			return sups, msgs
		}
		ls, ld := parse("-- planlint-ignore " + body + "\nSELECT 1")
		bs, bd := parse("/* planlint-ignore " + body + " */\nSELECT 1")
		if !reflect.DeepEqual(ls, bs) || !reflect.DeepEqual(ld, bd) {
			t.Fatalf("%q: line form %+v %q, block form %+v %q", body, ls, ld, bs, bd)
		}
	})
}

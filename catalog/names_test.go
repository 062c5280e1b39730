package catalog

import (
	"fmt"
	"strings"
	"testing"
)

// TestFoldName: foldName gives two names the same key exactly when
// strings.EqualFold calls them equal, which the name maps of large tables
// rely on to find what a scan of the table would.
func TestFoldName(t *testing.T) {
	names := []string{"Status", "STATUS", "status", "StatuS", "Statu", "Kelvin", "\u212Aelvin", "kelvin", "\u017Fum", "Sum", "SUM",
		"Straße", "STRASSE", "straße", "Größe", "GRÖSSE", "grÖße", "ǅ", "ǆ", "Ǆ", "\xff", "\xfe", "\uFFFD", "", "İ", "i", "I", "ı"}
	for _, a := range names {
		for _, b := range names {
			if got, want := foldName(a) == foldName(b), strings.EqualFold(a, b); got != want {
				t.Errorf("foldName(%q) == foldName(%q) is %v, strings.EqualFold says %v", a, b, got, want)
			}
		}
	}
}

// TestLargeTableNames: on tables with enough columns and indexes for the
// name maps to be used, duplicates and replacements are found as on small
// ones, case-insensitively and through brackets.
func TestLargeTableNames(t *testing.T) {
	wide := func(n int, extra string) string {
		var b strings.Builder
		b.WriteString("CREATE TABLE dbo.W (Id int NOT NULL PRIMARY KEY")
		for i := range n {
			fmt.Fprintf(&b, ", C%d int NULL", i)
		}
		b.WriteString(extra + ");\n")
		return b.String()
	}
	indexes := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "CREATE INDEX IX_%d ON dbo.W (C%d);\n", i, i)
		}
		return b.String()
	}
	tests := []struct {
		name, script string
		diag         string // a diagnostic that must be given, "" for none
		columns      int
		indexes      int
	}{
		{"column defined twice, other case", wide(40, ", c7 int NULL"), "column c7 is defined twice", 0, 0},
		{"column defined twice, bracketed", wide(40, ", [C39] int NULL"), "column C39 is defined twice", 0, 0},
		{"column defined twice, Kelvin sign", wide(40, ", \u212A int NULL, k int NULL"), "column k is defined twice", 0, 0},
		{"distinct columns", wide(40, ", C40 int NULL"), "", 42, 1},
		{"key column found among many", wide(40, ", CONSTRAINT UQ_W UNIQUE ([c33])"), "", 41, 2},
		{"key column missing among many", wide(40, ", CONSTRAINT UQ_W UNIQUE (C99)"), "C99 is not a column of the table", 0, 0},
		{"index replaced under another case", wide(40, "") + indexes(40) + "CREATE INDEX ix_7 ON dbo.W (C8) WITH (DROP_EXISTING = ON);\n", "", 41, 41},
		{"new indexes after many", wide(60, "") + indexes(60), "", 61, 61},
		{"inline index named twice", wide(40, ", INDEX IX_A (C1), INDEX ix_a (C2)"), "already has an index or constraint named ix_a", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, diags, err := ParseScript("w.sql", strings.NewReader(tt.script))
			if err != nil {
				t.Fatal(err)
			}
			var msgs []string
			for _, d := range diags {
				msgs = append(msgs, d.Message)
			}
			all := strings.Join(msgs, "\n")
			if tt.diag != "" {
				if !strings.Contains(all, tt.diag) {
					t.Fatalf("diagnostics %q do not say %q", all, tt.diag)
				}
				return
			}
			if all != "" {
				t.Fatalf("unexpected diagnostics: %s", all)
			}
			tb := cat.FindTable("", "dbo", "W")
			if tb == nil {
				t.Fatal("no table W")
			}
			if len(tb.Columns) != tt.columns || len(tb.Indexes) != tt.indexes {
				t.Fatalf("%d columns and %d indexes, want %d and %d", len(tb.Columns), len(tb.Indexes), tt.columns, tt.indexes)
			}
			if ix := tb.FindIndex("IX_7"); tt.name == "index replaced under another case" && (ix == nil || ix.Keys[0].Name != "C8") {
				t.Fatalf("IX_7 not replaced: %+v", ix)
			}
		})
	}
}

// Package sqlgen writes large .sql scripts of the shapes that stress script
// parsing, for tests and benchmarks, so that such inputs are generated where
// they are used rather than committed.
package sqlgen

import (
	"fmt"
	"strings"
)

// Shape is a kind of large script; Gen returns the script at size n, in
// Unit (bytes for most shapes).
type Shape struct {
	Name string
	Unit string
	Gen  func(n int) string
}

// Shapes are the generated shapes.
var Shapes = []Shape{
	{"one line of statements", "bytes", OneLine},
	{"short lines", "bytes", ShortLines},
	{"one string literal", "bytes", StringLiteral},
	{"one comment", "bytes", Comment},
	{"IN list", "bytes", InList},
	{"CREATE TABLE columns", "columns", WideTable},
	{"filtered indexes", "indexes", FilteredIndexes},
}

// OneLine is one line of about n bytes of short SELECT statements.
func OneLine(n int) string {
	return repeatTo(n, func(b *strings.Builder, i int) {
		fmt.Fprintf(b, "SELECT WorkId, CreatedAt FROM dbo.Work WHERE Status = 0 AND CustomerId = %d; ", i)
	})
}

// ShortLines is about n bytes of two-line SELECT statements.
func ShortLines(n int) string {
	return repeatTo(n, func(b *strings.Builder, i int) {
		fmt.Fprintf(b, "SELECT WorkId FROM dbo.Work\nWHERE CustomerId = %d;\n", i)
	})
}

// StringLiteral is a SELECT of one string literal of about n bytes, with
// doubled quotes.
func StringLiteral(n int) string {
	return "SELECT '" + strings.Repeat("it''s ", n/6) + "' AS s;\n"
}

// Comment is a block comment of about n bytes before a SELECT.
func Comment(n int) string {
	return "/* " + strings.Repeat("a comment ", n/10) + " */\nSELECT WorkId FROM dbo.Work WHERE Status = 0;\n"
}

// InList is a SELECT whose IN list of numbers takes about n bytes.
func InList(n int) string {
	return "SELECT WorkId FROM dbo.Work WHERE CustomerId IN (" +
		repeatTo(n, func(b *strings.Builder, i int) { fmt.Fprintf(b, "%d, ", i) }) + "0);\n"
}

// WideTable is a CREATE TABLE with n columns, each with a named default.
func WideTable(n int) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE dbo.Wide (\n    Id int NOT NULL CONSTRAINT PK_Wide PRIMARY KEY CLUSTERED")
	for i := range n {
		fmt.Fprintf(&b, ",\n    Column%d decimal(18, 2) NULL CONSTRAINT DF_Wide_%d DEFAULT (0)", i, i)
	}
	b.WriteString("\n);\n")
	return b.String()
}

// FilteredIndexes is a CREATE TABLE and n filtered CREATE INDEX
// statements on it.
func FilteredIndexes(n int) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE dbo.Work (WorkId bigint NOT NULL PRIMARY KEY, Status tinyint NOT NULL, CreatedAt datetime2 NOT NULL);\nGO\n")
	for i := range n {
		fmt.Fprintf(&b, "CREATE INDEX IX_Work_%d ON dbo.Work (CreatedAt, WorkId) WHERE Status = %d AND CreatedAt IS NOT NULL;\n", i, i%200)
	}
	return b.String()
}

func repeatTo(n int, piece func(b *strings.Builder, i int)) string {
	var b strings.Builder
	b.Grow(n + 128)
	for i := 0; b.Len() < n; i++ {
		piece(&b, i)
	}
	return b.String()
}

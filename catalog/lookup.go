package catalog

import (
	"regexp"
	"strings"
)

// normName strips the brackets or double quotes around an identifier as
// plans and scripts write it: "[dbo]" is "dbo", "[a]]b]" is "a]b".
func normName(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 {
		switch {
		case s[0] == '[' && s[len(s)-1] == ']':
			return strings.ReplaceAll(s[1:len(s)-1], "]]", "]")
		case s[0] == '"' && s[len(s)-1] == '"':
			return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
		}
	}
	return s
}

// sameName compares identifiers the way a case-insensitive database does,
// ignoring brackets.
func sameName(a, b string) bool {
	return strings.EqualFold(normName(a), normName(b))
}

// tempTableSuffix matches the padding and hexadecimal suffix SQL Server
// appends to a local temporary table's name in tempdb.
var tempTableSuffix = regexp.MustCompile(`_{3,}[0-9A-Fa-f]{12}$`)

// FindTable returns the table named table in schema of database. An empty
// database or schema matches any, and a table whose database is unknown
// (as from a script) matches any database. Among several matches it
// prefers the exact database, then schema dbo. Names compare
// case-insensitively without brackets; a temporary table also matches its
// padded tempdb name (#Work_____…_00000000001A).
func (c *Catalog) FindTable(database, schema, table string) *Table {
	if c == nil {
		return nil
	}
	database, schema, table = normName(database), normName(schema), normName(table)
	if strings.HasPrefix(table, "#") {
		table = tempTableSuffix.ReplaceAllString(table, "")
	}
	var best *Table
	bestScore := -1
	for _, t := range c.Tables {
		if t == nil || !strings.EqualFold(t.Name, table) {
			continue
		}
		if schema != "" && !strings.EqualFold(t.Schema, schema) {
			continue
		}
		if database != "" && t.Database != "" && !strings.EqualFold(t.Database, database) {
			continue
		}
		score := 0
		if database != "" && strings.EqualFold(t.Database, database) {
			score += 2
		}
		if strings.EqualFold(t.Schema, "dbo") {
			score++
		}
		if score > bestScore {
			best, bestScore = t, score
		}
	}
	return best
}

// FindDatabase returns the database settings for name, or nil.
func (c *Catalog) FindDatabase(name string) *Database {
	if c == nil {
		return nil
	}
	for _, d := range c.Databases {
		if d != nil && sameName(d.Name, name) {
			return d
		}
	}
	return nil
}

// generatedConstraintName matches the names SQL Server gives unnamed
// PRIMARY KEY and UNIQUE constraints: PK__Work__3214EC07A1B2C3D4E5F60718
// (a prefix of the table name, then 16 hexadecimal digits).
var generatedConstraintName = regexp.MustCompile(`^(PK|UQ)__(.+)__[0-9A-Fa-f]{16}$`)

// FindIndex returns the index called name, or nil. A constraint left
// unnamed in a script (named PK__Table or UQ__Table__Columns here) also
// matches the name the server generated for it, when that is unambiguous.
func (t *Table) FindIndex(name string) *Index {
	if t == nil {
		return nil
	}
	name = normName(name)
	for _, ix := range t.Indexes {
		if ix != nil && strings.EqualFold(ix.Name, name) {
			return ix
		}
	}
	m := generatedConstraintName.FindStringSubmatch(name)
	if m == nil {
		return nil
	}
	// A temporary table's constraint names carry its internal name.
	temp := strings.HasPrefix(t.Name, "#") && strings.HasPrefix(m[2], "#")
	if !temp && !strings.HasPrefix(strings.ToLower(t.Name), strings.ToLower(m[2])) {
		return nil
	}
	var found *Index
	for _, ix := range t.Indexes {
		if ix != nil && ix.PrimaryKey == (m[1] == "PK") && isGeneratedName(t, ix) {
			if found != nil {
				return nil
			}
			found = ix
		}
	}
	return found
}

// isGeneratedName reports whether ix carries a name this package made up
// for an unnamed constraint.
func isGeneratedName(t *Table, ix *Index) bool {
	if ix.PrimaryKey {
		return ix.Name == "PK__"+t.Name
	}
	return ix.Unique && strings.HasPrefix(ix.Name, "UQ__"+t.Name+"__")
}

// FindColumn returns the column called name, or nil.
func (t *Table) FindColumn(name string) *Column {
	if t == nil {
		return nil
	}
	for _, c := range t.Columns {
		if c != nil && sameName(c.Name, name) {
			return c
		}
	}
	return nil
}

// Clustered returns the table's clustered index (rowstore or columnstore),
// or nil for a heap.
func (t *Table) Clustered() *Index {
	if t == nil {
		return nil
	}
	for _, ix := range t.Indexes {
		if ix != nil && ix.isClustered() {
			return ix
		}
	}
	return nil
}

func (ix *Index) isClustered() bool {
	return strings.HasPrefix(strings.ToUpper(strings.TrimSpace(ix.Type)), "CLUSTERED")
}

// IndexContains reports whether ix holds column at its leaf level: as a key
// or INCLUDE column, as a clustered key column that every nonclustered
// rowstore index carries, or, for a clustered index, as any column of the
// table (every column when the table's columns are unknown).
func (t *Table) IndexContains(ix *Index, column string) bool {
	if t == nil || ix == nil {
		return false
	}
	if ix.isClustered() {
		return len(t.Columns) == 0 || t.FindColumn(column) != nil
	}
	if ix.IsKey(column) {
		return true
	}
	for _, inc := range ix.Includes {
		if sameName(inc, column) {
			return true
		}
	}
	if strings.Contains(strings.ToUpper(ix.Type), "COLUMNSTORE") {
		return false
	}
	if cl := t.Clustered(); cl != nil && strings.EqualFold(strings.TrimSpace(cl.Type), "CLUSTERED") {
		return cl.IsKey(column)
	}
	return false
}

// IsKey reports whether column is a key column of ix.
func (ix *Index) IsKey(column string) bool {
	return ix.KeyPosition(column) >= 0
}

// KeyPosition returns the 0-based position of column among the key
// columns of ix, or -1 when it is not a key column.
func (ix *Index) KeyPosition(column string) int {
	if ix == nil {
		return -1
	}
	for i, k := range ix.Keys {
		if sameName(k.Name, column) {
			return i
		}
	}
	return -1
}

// FilteredIndexes returns the indexes with a filter definition, parsed or
// not (Filter is nil when it could not be parsed).
func (t *Table) FilteredIndexes() []*Index {
	if t == nil {
		return nil
	}
	var out []*Index
	for _, ix := range t.Indexes {
		if ix != nil && ix.FilterDefinition != "" {
			out = append(out, ix)
		}
	}
	return out
}

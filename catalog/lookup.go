package catalog

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
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

// foldName maps names that strings.EqualFold calls equal to one string:
// each character becomes the smallest of its case-folding orbit.
func foldName(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(s) // 'K' < 'k' < U+212A KELVIN SIGN, and so on
	}
	var b strings.Builder
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}

// nameIndex finds elements of a growing slice by name without a scan. It
// holds the names of the first n elements of the slice as it was when they
// were added (first is its first element): a slice that only grows by
// appends, or has elements replaced under the same name, is followed by
// adding what was appended; any other change starts it again.
type nameIndex[T any] struct {
	first  *T
	n      int
	byName map[string]int // foldName of a name -> position of the first element so named
}

// find returns the position of the first element of s whose name is name
// (as strings.EqualFold compares), or -1.
func (ni *nameIndex[T]) find(s []T, nameOf func(T) (string, bool), name string) int {
	if len(s) == 0 {
		return -1
	}
	if ni.first != &s[0] || ni.n > len(s) {
		*ni = nameIndex[T]{first: &s[0], byName: map[string]int{}}
	}
	for ; ni.n < len(s); ni.n++ {
		n, ok := nameOf(s[ni.n])
		if !ok {
			continue
		}
		key := foldName(n)
		if _, ok := ni.byName[key]; !ok {
			ni.byName[key] = ni.n
		}
	}
	var buf [64]byte
	if len(name) <= len(buf) && isASCII(name) { // the key without allocating it
		for i := 0; i < len(name); i++ {
			c := name[i]
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			buf[i] = c
		}
		if i, ok := ni.byName[string(buf[:len(name)])]; ok {
			return i
		}
		return -1
	}
	if i, ok := ni.byName[foldName(name)]; ok {
		return i
	}
	return -1
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

package capture

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/planlint/planlint/catalog"
	"github.com/planlint/planlint/plan"
)

// TableName names a table a plan touches. Names carry no brackets.
type TableName struct {
	Database, Schema, Name string
}

func (t TableName) String() string {
	parts := []string{}
	for _, p := range []string{t.Database, t.Schema, t.Name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

func (t TableName) key() string { return strings.ToLower(t.Schema + "." + t.Name) }

// TablesOf lists the distinct tables the documents' plans read or write
// (every statement, nested ones included, and the tables of unmatched
// indexes) in order of first appearance. Tables in database are returned in
// local; tables of other databases and temporary tables in other.
func TablesOf(docs []*plan.Document, database string) (local, other []TableName) {
	seen := map[string]bool{}
	add := func(o plan.ObjectRef) {
		if o.Table == "" {
			return
		}
		t := TableName{Database: o.Database, Schema: o.Schema, Name: o.Table}
		k := strings.ToLower(t.String())
		if seen[k] {
			return
		}
		seen[k] = true
		switch {
		case strings.HasPrefix(t.Name, "#") || strings.EqualFold(t.Database, "tempdb"):
			other = append(other, t)
		case t.Database == "" || strings.EqualFold(t.Database, database):
			local = append(local, t)
		default:
			other = append(other, t)
		}
	}
	for _, d := range docs {
		if d == nil {
			continue
		}
		for _, st := range d.Statements() {
			for _, q := range st.Plans() {
				for _, n := range q.Nodes {
					for _, o := range n.Objects() {
						add(o)
					}
				}
				for _, o := range q.UnmatchedIndexes {
					add(o)
				}
			}
		}
	}
	return local, other
}

// catalogMarker starts the catalog batch so that it is recognisable in
// traces.
const catalogMarker = "-- planlint: catalog facts"

// nLiteral renders s as a T-SQL Unicode string literal.
func nLiteral(s string) string { return "N'" + strings.ReplaceAll(s, "'", "''") + "'" }

// catalogSQL is the batch that reads the facts of the given tables of the
// current database: their columns, indexes (with their size and, when
// withStats, sys.dm_db_stats_properties of their statistics) and index
// columns, as three result sets. Names travel as N'…' literals, never as
// SQL text. Every view it reads needs only metadata visibility of the
// tables; the statistics function returns no row where the login may not
// read them.
func catalogSQL(tables []TableName, withStats bool) string {
	values := make([]string, len(tables))
	for i, t := range tables {
		values[i] = "(" + nLiteral(t.Schema) + ", " + nLiteral(t.Name) + ")"
	}
	const from = `FROM @planlint_tables AS p
JOIN sys.tables AS t ON t.object_id = p.object_id
JOIN sys.schemas AS s ON s.schema_id = t.schema_id
`
	stats := `SELECT CAST(sp.last_updated AS datetime2(3)) AS last_updated, CAST(sp.rows AS bigint) AS rows,
        CAST(sp.rows_sampled AS bigint) AS rows_sampled, CAST(sp.modification_counter AS bigint) AS modification_counter
    FROM sys.dm_db_stats_properties(i.object_id, i.index_id) AS sp`
	if !withStats {
		stats = `SELECT CAST(NULL AS datetime2(3)) AS last_updated, CAST(NULL AS bigint) AS rows,
        CAST(NULL AS bigint) AS rows_sampled, CAST(NULL AS bigint) AS modification_counter`
	}
	return catalogMarker + `
SET NOCOUNT ON;
DECLARE @planlint_tables TABLE (object_id int NOT NULL PRIMARY KEY);
INSERT INTO @planlint_tables (object_id)
SELECT DISTINCT t.object_id
FROM (VALUES ` + strings.Join(values, ", ") + `) AS w(schema_name, table_name)
JOIN sys.schemas AS s ON s.name = COALESCE(NULLIF(w.schema_name, N''), SCHEMA_NAME())
JOIN sys.tables AS t ON t.schema_id = s.schema_id AND t.name = w.table_name;
SELECT s.name AS schema_name, t.name AS table_name, c.name AS column_name, ty.name AS type_name,
    CAST(c.max_length AS int) AS max_length, CAST(c.precision AS int) AS precision, CAST(c.scale AS int) AS scale,
    c.is_nullable, c.is_computed
` + from + `JOIN sys.columns AS c ON c.object_id = t.object_id
JOIN sys.types AS ty ON ty.user_type_id = c.user_type_id
ORDER BY s.name, t.name, c.column_id;
SELECT s.name AS schema_name, t.name AS table_name, i.index_id, i.name AS index_name, i.type_desc,
    i.is_unique, i.is_primary_key, i.is_disabled, i.has_filter, i.filter_definition,
    sz.row_count, sz.used_pages, st.last_updated, st.rows, st.rows_sampled, st.modification_counter
` + from + `JOIN sys.indexes AS i ON i.object_id = t.object_id
OUTER APPLY (SELECT SUM(pa.rows) AS row_count,
        (SELECT SUM(au.used_pages) FROM sys.partitions AS pu
         JOIN sys.allocation_units AS au ON au.container_id = CASE au.type WHEN 2 THEN pu.partition_id ELSE pu.hobt_id END
         WHERE pu.object_id = i.object_id AND pu.index_id = i.index_id) AS used_pages
    FROM sys.partitions AS pa WHERE pa.object_id = i.object_id AND pa.index_id = i.index_id) AS sz
OUTER APPLY (` + stats + `) AS st
WHERE i.index_id > 0 AND i.is_hypothetical = 0
ORDER BY s.name, t.name, i.index_id;
SELECT s.name AS schema_name, t.name AS table_name, ic.index_id, c.name AS column_name,
    CAST(ic.key_ordinal AS int) AS key_ordinal, ic.is_included_column, ic.is_descending_key
` + from + `JOIN sys.index_columns AS ic ON ic.object_id = t.object_id
JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
WHERE ic.index_id > 0
ORDER BY s.name, t.name, ic.index_id, ic.key_ordinal, ic.index_column_id;`
}

// Catalog returns the facts read so far: the server, the current database
// and every table whose facts a capture has read.
func (s *Session) Catalog() *catalog.Catalog { return s.cat }

// readCatalog reads the facts of the tables not read before, in one batch.
func (s *Session) readCatalog(ctx context.Context, tables []TableName) error {
	var todo []TableName
	for _, t := range tables {
		if !s.known[t.key()] {
			todo = append(todo, t)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	const step = "reading catalog facts"
	qctx, done := s.timed(ctx)
	rows, err := s.conn.QueryContext(qctx, catalogSQL(todo, s.Info.hasStatsProperties()))
	if err != nil {
		return s.fail(err, step, done())
	}
	defer rows.Close()
	read, err := s.scanCatalog(rows)
	timedOut := done()
	if err != nil {
		return s.fail(err, step, timedOut) // classify keeps an *Error as it is
	}
	for _, t := range todo {
		s.known[t.key()] = true
	}
	s.cat.Tables = append(s.cat.Tables, read...)
	return nil
}

// scanCatalog reads the three result sets of catalogSQL.
func (s *Session) scanCatalog(rows *sql.Rows) ([]*catalog.Table, error) {
	const step = "reading catalog facts"
	bad := func(format string, args ...any) error {
		return &Error{Kind: ErrServer, Step: step, Message: fmt.Sprintf(format, args...)}
	}
	byName := map[string]*catalog.Table{}
	var order []*catalog.Table
	table := func(schema, name string) *catalog.Table {
		k := strings.ToLower(schema + "." + name)
		t := byName[k]
		if t == nil {
			t = &catalog.Table{Database: s.Info.Database, Schema: schema, Name: name}
			byName[k] = t
			order = append(order, t)
		}
		return t
	}
	next := func(n int, what string) error {
		if !rows.NextResultSet() {
			if err := rows.Err(); err != nil {
				return err
			}
			return bad("the catalog batch returned %d result sets, want 3 (no %s)", n, what)
		}
		return nil
	}
	// columns
	for rows.Next() {
		var schema, name, col, typ string
		var maxLen, prec, scale int
		var nullable, computed sql.NullBool
		if err := rows.Scan(&schema, &name, &col, &typ, &maxLen, &prec, &scale, &nullable, &computed); err != nil {
			return nil, bad("unexpected column row: %v", err)
		}
		t := table(schema, name)
		decl, length := declaredType(typ, maxLen, prec, scale)
		t.Columns = append(t.Columns, &catalog.Column{Name: col, Type: decl, MaxLength: length,
			Nullable: nullable.Bool, Computed: computed.Bool})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := next(1, "indexes"); err != nil {
		return nil, err
	}
	indexes := map[string]*catalog.Index{}
	for rows.Next() {
		var schema, name, typ string
		var id int
		var ixName, filter sql.NullString
		var unique, pk, disabled, hasFilter sql.NullBool
		var rowCount, usedPages, statsRows, statsSampled, modifications sql.NullInt64
		var statsUpdated sql.NullTime
		if err := rows.Scan(&schema, &name, &id, &ixName, &typ, &unique, &pk, &disabled, &hasFilter, &filter,
			&rowCount, &usedPages, &statsUpdated, &statsRows, &statsSampled, &modifications); err != nil {
			return nil, bad("unexpected index row: %v", err)
		}
		t := table(schema, name)
		ix := &catalog.Index{Name: ixName.String, Type: typ, Unique: unique.Bool, PrimaryKey: pk.Bool,
			Disabled: disabled.Bool, Keys: []catalog.IndexColumn{}}
		if hasFilter.Bool && filter.Valid {
			ix.FilterDefinition = filter.String
			f, err := catalog.ParseFilter(filter.String)
			if err != nil {
				ix.FilterError = err.Error()
			} else {
				ix.Filter = f
			}
		}
		if rowCount.Valid {
			ix.Size = &catalog.IndexSize{Rows: rowCount.Int64, UsedPages: usedPages.Int64}
		}
		if statsRows.Valid {
			ix.Statistics = &catalog.StatisticsFacts{Rows: statsRows.Int64, RowsSampled: statsSampled.Int64,
				ModificationCounter: modifications.Int64}
			if statsUpdated.Valid {
				ix.Statistics.LastUpdated = statsUpdated.Time.Format("2006-01-02T15:04:05.999")
			}
		}
		t.Indexes = append(t.Indexes, ix)
		indexes[strings.ToLower(schema+"."+name)+"#"+strconv.Itoa(id)] = ix
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := next(2, "index columns"); err != nil {
		return nil, err
	}
	type keyCol struct {
		ordinal int
		col     catalog.IndexColumn
	}
	keys := map[*catalog.Index][]keyCol{}
	for rows.Next() {
		var schema, name, col string
		var id, ordinal int
		var included, desc sql.NullBool
		if err := rows.Scan(&schema, &name, &id, &col, &ordinal, &included, &desc); err != nil {
			return nil, bad("unexpected index column row: %v", err)
		}
		ix := indexes[strings.ToLower(schema+"."+name)+"#"+strconv.Itoa(id)]
		if ix == nil {
			continue
		}
		switch {
		case included.Bool:
			ix.Includes = append(ix.Includes, col)
		case ordinal > 0:
			keys[ix] = append(keys[ix], keyCol{ordinal, catalog.IndexColumn{Name: col, Descending: desc.Bool}})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for ix, ks := range keys {
		sort.SliceStable(ks, func(i, j int) bool { return ks[i].ordinal < ks[j].ordinal })
		for _, k := range ks {
			ix.Keys = append(ix.Keys, k.col)
		}
	}
	for rows.NextResultSet() {
		for rows.Next() {
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return order, nil
}

// declaredType renders a column type from sys.types and sys.columns the
// way a CREATE TABLE writes it, with the byte length catalog.Column wants
// (-1 for (max) and LOB types).
func declaredType(name string, maxLen, prec, scale int) (string, int) {
	lower := strings.ToLower(name)
	length := func(n int) string {
		if n < 0 {
			return "max"
		}
		return strconv.Itoa(n)
	}
	switch lower {
	case "nvarchar", "nchar":
		if maxLen < 0 {
			return lower + "(max)", -1
		}
		return lower + "(" + strconv.Itoa(maxLen/2) + ")", maxLen
	case "varchar", "char", "varbinary", "binary":
		return lower + "(" + length(maxLen) + ")", maxLen
	case "decimal", "numeric":
		return fmt.Sprintf("%s(%d,%d)", lower, prec, scale), maxLen
	case "datetime2", "time", "datetimeoffset":
		return fmt.Sprintf("%s(%d)", lower, scale), maxLen
	case "text", "ntext", "image", "xml", "json", "geography", "geometry":
		return lower, -1
	case "tinyint", "smallint", "int", "bigint", "bit", "real", "float", "money", "smallmoney",
		"date", "datetime", "smalldatetime", "uniqueidentifier", "sql_variant", "sysname",
		"timestamp", "hierarchyid":
		return lower, maxLen
	}
	return name, maxLen // a user-defined alias type keeps its spelling
}

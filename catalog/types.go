package catalog

import (
	"strconv"
	"strings"
)

// typeSynonyms maps ISO and alternative type names to SQL Server's own
// (the names sys.types reports).
var typeSynonyms = map[string]string{
	"integer":                    "int",
	"dec":                        "decimal",
	"character":                  "char",
	"char varying":               "varchar",
	"character varying":          "varchar",
	"national char":              "nchar",
	"national character":         "nchar",
	"national char varying":      "nvarchar",
	"national character varying": "nvarchar",
	"national text":              "ntext",
	"binary varying":             "varbinary",
	"double precision":           "float",
	"rowversion":                 "timestamp",
}

// canonicalType renders a base type name and its arguments the way
// sys.types and SQL Server's scripts spell them: lower case, no spaces,
// "(max)" for MAX. Schema-qualified user types keep their spelling.
func canonicalType(base string, args []string) string {
	name := base
	if len(base) > 4 && strings.EqualFold(base[:4], "sys.") {
		name = base[4:]
	}
	if !strings.Contains(name, ".") {
		name = strings.ToLower(strings.Join(strings.Fields(name), " "))
		if s, ok := typeSynonyms[name]; ok {
			name = s
		}
	}
	if len(args) == 0 {
		return name
	}
	parts := make([]string, len(args))
	for i, a := range args {
		if strings.EqualFold(a, "max") {
			a = "max"
		}
		parts[i] = a
	}
	return name + "(" + strings.Join(parts, ",") + ")"
}

// splitType splits "nvarchar(max)" into "nvarchar" and ["max"].
func splitType(t string) (base string, args []string) {
	t = strings.TrimSpace(t)
	open := strings.IndexByte(t, '(')
	if open < 0 || !strings.HasSuffix(t, ")") {
		return strings.ToLower(t), nil
	}
	base = strings.ToLower(strings.TrimSpace(t[:open]))
	for _, a := range strings.Split(t[open+1:len(t)-1], ",") {
		args = append(args, strings.TrimSpace(a))
	}
	return base, args
}

// typeMaxLength returns the storage length in bytes that sys.columns
// reports as max_length for a type: -1 for (max) and LOB types, 0 when
// unknown (user-defined types, unparsable arguments).
func typeMaxLength(typ string) int {
	base, args := splitType(typ)
	if s, ok := typeSynonyms[base]; ok {
		base = s
	}
	arg := func(i, def int) (int, bool) {
		if i >= len(args) {
			return def, true
		}
		if strings.EqualFold(args[i], "max") {
			return -1, true
		}
		n, err := strconv.Atoi(args[i])
		return n, err == nil && n >= 0
	}
	switch base {
	case "char", "varchar", "binary", "varbinary":
		n, ok := arg(0, 1)
		if !ok {
			return 0
		}
		return n
	case "nchar", "nvarchar":
		n, ok := arg(0, 1)
		if !ok {
			return 0
		}
		if n < 0 {
			return -1
		}
		return 2 * n
	case "sysname":
		return 256
	case "text", "ntext", "image", "xml", "json", "geography", "geometry":
		return -1
	case "bit", "tinyint":
		return 1
	case "smallint":
		return 2
	case "int", "real", "smallmoney", "smalldatetime":
		return 4
	case "bigint", "money", "datetime", "timestamp":
		return 8
	case "float":
		n, ok := arg(0, 53)
		if !ok || n < 1 {
			return 0
		}
		if n <= 24 {
			return 4
		}
		return 8
	case "date":
		return 3
	case "time", "datetime2", "datetimeoffset":
		p, ok := arg(0, 7)
		if !ok || p > 7 {
			return 0
		}
		size := 5 // time(5..7)
		switch {
		case p <= 2:
			size = 3
		case p <= 4:
			size = 4
		}
		switch base {
		case "datetime2":
			size += 3
		case "datetimeoffset":
			size += 5
		}
		return size
	case "decimal", "numeric":
		p, ok := arg(0, 18)
		if !ok || p < 1 || p > 38 {
			return 0
		}
		switch {
		case p <= 9:
			return 5
		case p <= 19:
			return 9
		case p <= 28:
			return 13
		}
		return 17
	case "uniqueidentifier":
		return 16
	case "sql_variant":
		return 8016
	case "hierarchyid":
		return 892
	case "vector":
		n, ok := arg(0, 0)
		if !ok || n <= 0 {
			return 0
		}
		return 4 * n // float32 elements; the small header is not counted
	}
	return 0
}

// wideBytes is the length above which an INCLUDE column is called wide:
// 1000 bytes is nvarchar(500) or varchar(1000), already an eighth of a
// data page per row.
const wideBytes = 1000

// IsWide reports whether the column is a poor INCLUDE candidate: a LOB or
// (max) type (text, ntext, image, xml, json, varchar(max), ...) or longer
// than 1000 bytes. The length comes from MaxLength, or from Type when
// MaxLength is unknown (0).
func (c *Column) IsWide() bool {
	if c == nil {
		return false
	}
	n := c.MaxLength
	if n == 0 {
		n = typeMaxLength(c.Type)
	}
	return n < 0 || n > wideBytes
}

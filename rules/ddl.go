package rules

import (
	"strings"
)

// indexDDL is an index a rule proposes. Every rule that proposes an index
// builds it here, so the DDL reads the same everywhere and the evidence
// carries it under the same keys (create_index, key_columns,
// include_columns, filter) for the reports' DDL panels.
type indexDDL struct {
	Schema, Table string // the table, without brackets; Schema "" is dbo
	Name          string // "" derives one from the table and keys
	Keys          []string
	Desc          map[string]bool // key columns sorted descending, by name (case-insensitive)
	Include       []string
	Where         string // filter predicate text, "" for none
	DropExisting  bool   // rebuild an existing index of that name
	Unique        bool   // CREATE UNIQUE INDEX
}

// maxIdentifier is SQL Server's limit on an identifier's length.
const maxIdentifier = 128

// IndexName is the index's name: the given one, else IX_Table_Key1_Key2,
// with _Filtered for a filtered index, cut to the identifier limit.
func (x indexDDL) IndexName() string {
	if x.Name != "" {
		return x.Name
	}
	parts := []string{"IX", x.Table}
	parts = append(parts, x.Keys...)
	if x.Where != "" {
		parts = append(parts, "Filtered")
	}
	name := strings.Map(func(r rune) rune {
		if r == ' ' || r == '.' || r == '[' || r == ']' || r == '"' {
			return '_'
		}
		return r
	}, strings.Join(parts, "_"))
	if r := []rune(name); len(r) > maxIdentifier {
		name = string(r[:maxIdentifier])
	}
	return name
}

// String renders the CREATE INDEX statement.
func (x indexDDL) String() string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if x.Unique {
		b.WriteString("UNIQUE ")
	}
	b.WriteString("INDEX ")
	b.WriteString(quoteIdent(x.IndexName()))
	b.WriteString(" ON ")
	b.WriteString(quoteIdent(schemaOr(x.Schema)) + "." + quoteIdent(x.Table))
	b.WriteString(" (")
	for i, k := range x.Keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(k))
		if x.isDesc(k) {
			b.WriteString(" DESC")
		}
	}
	b.WriteString(")")
	if len(x.Include) > 0 {
		b.WriteString(" INCLUDE (")
		for i, c := range x.Include {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteIdent(c))
		}
		b.WriteString(")")
	}
	if x.Where != "" {
		b.WriteString(" WHERE " + x.Where)
	}
	if x.DropExisting {
		b.WriteString(" WITH (DROP_EXISTING = ON)")
	}
	b.WriteString(";")
	return b.String()
}

func (x indexDDL) isDesc(key string) bool {
	for k, d := range x.Desc {
		if d && strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

// addEvidence records the DDL and its column lists in a finding's evidence.
func (x indexDDL) addEvidence(ev map[string]any) {
	ev["create_index"] = x.String()
	ev["key_columns"] = append([]string(nil), x.Keys...)
	if len(x.Include) > 0 {
		ev["include_columns"] = append([]string(nil), x.Include...)
	}
	if x.Where != "" {
		ev["filter"] = x.Where
	}
}

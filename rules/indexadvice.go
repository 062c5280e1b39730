package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/catalog"
)

// advice is a concrete index change.
type advice struct {
	DDL  string   // CREATE INDEX ... WITH (DROP_EXISTING = ON) or a new index
	Text string   // the fix sentence, DDL included
	Wide []string // wide or LOB columns left out of the INCLUDE list
}

// advise builds the index that has keys (nil: keep ix's keys) and ix's
// includes plus add. ix may be nil for a new index on t. Wide and LOB
// columns are never included; the text says to fetch them separately.
func advise(t *catalog.Table, ix *catalog.Index, keys []catalog.IndexColumn, add []string) advice {
	if keys == nil && ix != nil {
		keys = ix.Keys
	}
	isKey := func(c string) bool {
		for _, k := range keys {
			if strings.EqualFold(k.Name, c) {
				return true
			}
		}
		return false
	}
	var includes, wide []string
	var existing []string
	if ix != nil {
		existing = ix.Includes
	}
	for _, c := range uniqueFold(append(append([]string{}, existing...), add...)) {
		if isKey(c) {
			continue
		}
		if col := t.FindColumn(c); col != nil && col.IsWide() {
			wide = append(wide, c)
			continue
		}
		if clustered := t.Clustered(); clustered != nil && (ix == nil || !strings.EqualFold(ix.Name, clustered.Name)) && clustered.IsKey(c) {
			continue // every nonclustered index carries the clustered key
		}
		includes = append(includes, c)
	}
	keyParts := make([]string, len(keys))
	for i, k := range keys {
		keyParts[i] = quoteIdent(k.Name)
		if k.Descending {
			keyParts[i] += " DESC"
		}
	}
	name, unique, with := "", "", ""
	if ix != nil {
		name = ix.Name
		if ix.Unique {
			unique = "UNIQUE "
		}
		with = " WITH (DROP_EXISTING = ON)"
	} else {
		parts := []string{"IX", t.Name}
		for _, k := range keys {
			parts = append(parts, k.Name)
		}
		name = strings.Join(parts, "_")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE %sINDEX %s ON %s.%s (%s)", unique, quoteIdent(name), quoteIdent(schemaOr(t.Schema)), quoteIdent(t.Name), strings.Join(keyParts, ", "))
	if len(includes) > 0 {
		quoted := make([]string, len(includes))
		for i, c := range includes {
			quoted[i] = quoteIdent(c)
		}
		fmt.Fprintf(&b, " INCLUDE (%s)", strings.Join(quoted, ", "))
	}
	if ix != nil && ix.FilterDefinition != "" {
		filter := ix.FilterDefinition
		if ix.Filter != nil {
			filter = ix.Filter.String()
		}
		fmt.Fprintf(&b, " WHERE %s", filter)
	}
	b.WriteString(with)
	b.WriteString(";")
	adv := advice{DDL: b.String(), Wide: wide}
	adv.Text = adv.DDL
	if len(wide) > 0 {
		clusteredKey := "the key"
		if c := t.Clustered(); c != nil && len(c.Keys) > 0 {
			clusteredKey = c.Keys[0].Name
		}
		adv.Text += fmt.Sprintf(" %s %s wide (LOB or max type): keep %s out of the index and fetch %s in a second query bounded by the %s values the first one returns",
			quoteList(wide), isAre(len(wide)), itThem(len(wide)), itThem(len(wide)), clusteredKey)
	}
	return adv
}

func schemaOr(s string) string {
	if s == "" {
		return "dbo"
	}
	return s
}

// quoteIdent brackets a name only when it needs it.
func quoteIdent(name string) string {
	if name == "" {
		return name
	}
	for i, r := range name {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '@' || r == '#' || r == '$')
		if !ok {
			return "[" + strings.ReplaceAll(name, "]", "]]") + "]"
		}
	}
	return name
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

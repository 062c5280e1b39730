package rules

import (
	"fmt"
	"strings"

	"github.com/planlint/planlint/catalog"
)

// advice is a concrete index change.
type advice struct {
	DDL   string   // CREATE INDEX ... WITH (DROP_EXISTING = ON) or a new index
	Index indexDDL // the index DDL renders
	Text  string   // the fix sentence, DDL included
	Wide  []string // wide or LOB columns left out of the INCLUDE list
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
	x := indexDDL{Schema: t.Schema, Table: t.Name, Include: includes}
	for _, k := range keys {
		x.Keys = append(x.Keys, k.Name)
		if k.Descending {
			if x.Desc == nil {
				x.Desc = map[string]bool{}
			}
			x.Desc[strings.ToLower(k.Name)] = true
		}
	}
	if ix != nil {
		x.Name, x.Unique, x.DropExisting = ix.Name, ix.Unique, true
		if ix.FilterDefinition != "" {
			x.Where = ix.FilterDefinition
			if ix.Filter != nil {
				x.Where = ix.Filter.String()
			}
		}
	}
	adv := advice{DDL: x.String(), Index: x, Wide: wide}
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

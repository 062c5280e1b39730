package rules

import (
	"strings"

	"github.com/planlint/planlint/plan"
)

// indexForKeys builds the index a rule proposes for keys and include on
// the table. With catalog facts it leaves out the clustered key (every
// nonclustered index carries it) and, when an index already starts with
// those keys, widens that index instead of adding a second one; covered is
// true when that index already holds every column.
func indexForKeys(p *Pass, table plan.ObjectRef, keys, include []string) (x indexDDL, covered bool) {
	x = indexDDL{Schema: table.Schema, Table: table.Table, Keys: keys, Include: include}
	t := findTable(p.Catalog, table)
	if t == nil {
		return x, false
	}
	if cl := t.Clustered(); cl != nil && strings.EqualFold(strings.TrimSpace(cl.Type), "CLUSTERED") {
		var kept []string
		for _, c := range include {
			if !cl.IsKey(c) {
				kept = append(kept, c)
			}
		}
		x.Include = kept
	}
	for _, ix := range t.Indexes {
		if ix == nil || ix.Disabled || ix.FilterDefinition != "" || len(ix.Keys) < len(keys) || strings.Contains(strings.ToUpper(ix.Type), "COLUMNSTORE") {
			continue
		}
		leading := true
		for i, k := range keys {
			leading = leading && strings.EqualFold(ix.Keys[i].Name, k)
		}
		if !leading {
			continue
		}
		var missing []string
		for _, c := range x.Include {
			if !t.IndexContains(ix, c) {
				missing = append(missing, c)
			}
		}
		if len(missing) == 0 {
			return indexDDL{Schema: table.Schema, Table: table.Table, Name: ix.Name, Keys: keys}, true
		}
		w := indexDDL{Schema: table.Schema, Table: table.Table, Name: ix.Name, DropExisting: true, Unique: ix.Unique}
		w.Desc = map[string]bool{}
		for _, k := range ix.Keys {
			w.Keys = append(w.Keys, k.Name)
			w.Desc[k.Name] = k.Descending
		}
		w.Include = uniqueFold(append(append([]string{}, ix.Includes...), missing...))
		return w, false
	}
	return x, false
}

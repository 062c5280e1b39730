package catalog

import "strings"

// Merge adds other's facts to c, as when several --schema files are
// given; where both describe the same thing, other wins. Server fields
// that other sets replace c's; a database replaces c's database of the
// same name; a table merges with c's table of the same schema and name
// (and database, unless one of them does not know its database), its
// columns and indexes replacing c's of the same name and adding the rest.
// c keeps no references into other.
func (c *Catalog) Merge(other *Catalog) {
	if c == nil || other == nil {
		return
	}
	if other.Server != nil {
		if c.Server == nil {
			c.Server = &Server{}
		}
		mergeServer(c.Server, other.Server)
	}
	for _, d := range other.Databases {
		if d == nil {
			continue
		}
		dc := *d
		if old := c.FindDatabase(d.Name); old != nil {
			*old = dc
		} else {
			c.Databases = append(c.Databases, &dc)
		}
	}
	for _, t := range other.Tables {
		if t == nil {
			continue
		}
		if old := c.sameTable(t); old != nil {
			mergeTable(old, t)
		} else {
			c.Tables = append(c.Tables, copyTable(t))
		}
	}
	switch {
	case c.Source == "":
		c.Source = other.Source
	case other.Source != "" && other.Source != c.Source:
		c.Source += ", " + other.Source
	}
}

func mergeServer(dst, src *Server) {
	if src.ProductVersion != "" {
		dst.ProductVersion = src.ProductVersion
	}
	if src.MajorVersion != 0 {
		dst.MajorVersion = src.MajorVersion
	}
	if src.Edition != "" {
		dst.Edition = src.Edition
	}
	if src.EngineEdition != 0 {
		dst.EngineEdition = src.EngineEdition
	}
	if src.CostThresholdForParallelism != nil {
		dst.CostThresholdForParallelism = src.CostThresholdForParallelism
	}
}

// sameTable returns c's table that t describes.
func (c *Catalog) sameTable(t *Table) *Table {
	for _, old := range c.Tables {
		if old == nil || !sameName(old.Name, t.Name) || !sameName(old.Schema, t.Schema) {
			continue
		}
		if old.Database == "" || t.Database == "" || sameName(old.Database, t.Database) {
			return old
		}
	}
	return nil
}

func mergeTable(dst, src *Table) {
	if dst.Database == "" {
		dst.Database = src.Database
	}
	for _, col := range src.Columns {
		if col == nil {
			continue
		}
		cc := *col
		if i := columnIndex(dst, col.Name); i >= 0 {
			dst.Columns[i] = &cc
		} else {
			dst.Columns = append(dst.Columns, &cc)
		}
	}
	for _, ix := range src.Indexes {
		if ix == nil {
			continue
		}
		ic := copyIndex(ix)
		replaced := false
		for i, old := range dst.Indexes {
			if old != nil && strings.EqualFold(old.Name, ix.Name) {
				dst.Indexes[i], replaced = ic, true
				break
			}
		}
		if !replaced {
			dst.Indexes = append(dst.Indexes, ic)
		}
	}
}

func columnIndex(t *Table, name string) int {
	for i, c := range t.Columns {
		if c != nil && sameName(c.Name, name) {
			return i
		}
	}
	return -1
}

func copyTable(t *Table) *Table {
	tc := *t
	tc.Columns = nil
	for _, col := range t.Columns {
		if col != nil {
			cc := *col
			tc.Columns = append(tc.Columns, &cc)
		}
	}
	tc.Indexes = nil
	for _, ix := range t.Indexes {
		if ix != nil {
			tc.Indexes = append(tc.Indexes, copyIndex(ix))
		}
	}
	return &tc
}

func copyIndex(ix *Index) *Index {
	ic := *ix
	ic.Keys = append([]IndexColumn(nil), ix.Keys...)
	ic.Includes = append([]string(nil), ix.Includes...)
	if ix.Size != nil {
		sz := *ix.Size
		ic.Size = &sz
	}
	if ix.Statistics != nil {
		st := *ix.Statistics
		ic.Statistics = &st
	}
	if ix.Filter != nil {
		f := &Filter{}
		for _, cj := range ix.Filter.Conjuncts {
			cj.Values = append([]string(nil), cj.Values...)
			f.Conjuncts = append(f.Conjuncts, cj)
		}
		ic.Filter = f
	}
	return &ic
}

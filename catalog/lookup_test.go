package catalog

import "testing"

func queueCatalog() *Catalog {
	work := &Table{Database: "Shop", Schema: "dbo", Name: "Work",
		Columns: []*Column{
			{Name: "WorkId", Type: "bigint"},
			{Name: "Status", Type: "tinyint"},
			{Name: "CreatedAt", Type: "datetime2(0)"},
			{Name: "CustomerId", Type: "int"},
			{Name: "Payload", Type: "nvarchar(max)", Nullable: true, MaxLength: -1},
		},
		Indexes: []*Index{
			{Name: "PK_Work", Type: "CLUSTERED", Unique: true, PrimaryKey: true, Keys: []IndexColumn{{Name: "WorkId"}}},
			{Name: "IX_Work_Pending", Type: "NONCLUSTERED", Keys: []IndexColumn{{Name: "CreatedAt"}, {Name: "WorkId", Descending: true}},
				Includes: []string{"CustomerId"}, FilterDefinition: "([Status]=(0))", Filter: &Filter{Conjuncts: []Conjunct{cj("Status", "=", "0")}}},
			{Name: "IX_Work_Broken", Type: "NONCLUSTERED", Keys: []IndexColumn{{Name: "Status"}},
				FilterDefinition: "(upper([x])='A')", FilterError: "function calls are not allowed"},
			{Name: "IX_Work_Status", Type: "NONCLUSTERED", Keys: []IndexColumn{{Name: "Status"}}},
			{Name: "NCCI_Work", Type: "NONCLUSTERED COLUMNSTORE", Includes: []string{"Status", "CustomerId"}},
		}}
	return &Catalog{
		Databases: []*Database{{Name: "Shop", CompatibilityLevel: 160}, {Name: "Other"}},
		Tables: []*Table{
			work,
			{Database: "Shop", Schema: "queue", Name: "Work"},
			{Database: "Other", Schema: "dbo", Name: "Work"},
			{Schema: "dbo", Name: "Audit"},
			{Database: "tempdb", Schema: "dbo", Name: "#Batch"},
			{Database: "Shop", Schema: "dbo", Name: "Heap", Columns: []*Column{{Name: "a"}}},
			{Database: "Shop", Schema: "dbo", Name: "a]b"},
		},
	}
}

func TestFindTable(t *testing.T) {
	c := queueCatalog()
	tests := []struct {
		db, schema, table  string
		wantDB, wantSchema string // empty wantSchema: want nil
	}{
		{"Shop", "dbo", "Work", "Shop", "dbo"},
		{"[Shop]", "[dbo]", "[Work]", "Shop", "dbo"},
		{"shop", "DBO", "work", "Shop", "dbo"},
		{"", "", "Work", "Shop", "dbo"}, // prefers dbo, then the first
		{"", "queue", "Work", "Shop", "queue"},
		{"Other", "", "Work", "Other", "dbo"},
		{"Other", "queue", "Work", "", ""},
		{"Missing", "dbo", "Work", "", ""},
		{"Shop", "dbo", "Audit", "", "dbo"}, // a table of unknown database matches any
		{"Shop", "dbo", "Nope", "", ""},
		{"[tempdb]", "[dbo]", "[#Batch]", "tempdb", "dbo"},
		{"tempdb", "dbo", "#Batch______________________________________________________________________________________________________________000000000012", "tempdb", "dbo"},
		{"Shop", "dbo", "[a]]b]", "Shop", "dbo"},
		{`"Shop"`, `"dbo"`, `"Work"`, "Shop", "dbo"},
	}
	for _, tc := range tests {
		got := c.FindTable(tc.db, tc.schema, tc.table)
		if tc.wantSchema == "" {
			if got != nil {
				t.Errorf("FindTable(%q, %q, %q) = %s.%s.%s, want nil", tc.db, tc.schema, tc.table, got.Database, got.Schema, got.Name)
			}
			continue
		}
		if got == nil || got.Database != tc.wantDB || got.Schema != tc.wantSchema {
			t.Errorf("FindTable(%q, %q, %q) = %+v, want %s.%s", tc.db, tc.schema, tc.table, got, tc.wantDB, tc.wantSchema)
		}
	}
	var nilCat *Catalog
	if nilCat.FindTable("", "", "Work") != nil || nilCat.FindDatabase("Shop") != nil {
		t.Error("a nil catalog finds something")
	}
}

func TestFindTablePrefersExactDatabase(t *testing.T) {
	c := &Catalog{Tables: []*Table{{Schema: "dbo", Name: "T"}, {Database: "Db", Schema: "dbo", Name: "T"}}}
	if got := c.FindTable("db", "dbo", "t"); got != c.Tables[1] {
		t.Errorf("FindTable = %+v, want the table of database Db", got)
	}
	if got := c.FindTable("Else", "dbo", "t"); got != c.Tables[0] {
		t.Errorf("FindTable = %+v, want the table of unknown database", got)
	}
}

func TestFindDatabase(t *testing.T) {
	c := queueCatalog()
	for _, tc := range []struct {
		name string
		want string
	}{{"Shop", "Shop"}, {"[shop]", "Shop"}, {"other", "Other"}, {"nope", ""}, {"", ""}} {
		got := c.FindDatabase(tc.name)
		if (got == nil) != (tc.want == "") || got != nil && got.Name != tc.want {
			t.Errorf("FindDatabase(%q) = %+v, want %q", tc.name, got, tc.want)
		}
	}
}

func TestFindIndexAndColumn(t *testing.T) {
	work := queueCatalog().Tables[0]
	for _, tc := range []struct{ name, want string }{
		{"IX_Work_Pending", "IX_Work_Pending"},
		{"[ix_work_pending]", "IX_Work_Pending"},
		{"PK_Work", "PK_Work"},
		{"IX_Nope", ""},
		{"PK__Work__3214EC27A1B2C3D4", ""}, // PK_Work was named by hand
	} {
		got := work.FindIndex(tc.name)
		if (got == nil) != (tc.want == "") || got != nil && got.Name != tc.want {
			t.Errorf("FindIndex(%q) = %v, want %q", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct{ name, want string }{
		{"Status", "Status"}, {"[status]", "Status"}, {"Nope", ""},
	} {
		got := work.FindColumn(tc.name)
		if (got == nil) != (tc.want == "") || got != nil && got.Name != tc.want {
			t.Errorf("FindColumn(%q) = %v, want %q", tc.name, got, tc.want)
		}
	}
	var nilTable *Table
	if nilTable.FindIndex("x") != nil || nilTable.FindColumn("x") != nil || nilTable.Clustered() != nil || nilTable.FilteredIndexes() != nil {
		t.Error("a nil table finds something")
	}
}

func TestFindIndexGeneratedNames(t *testing.T) {
	work := &Table{Schema: "dbo", Name: "WorkItems", Indexes: []*Index{
		{Name: "PK__WorkItems", Type: "CLUSTERED", Unique: true, PrimaryKey: true, Keys: []IndexColumn{{Name: "Id"}}},
		{Name: "UQ__WorkItems__Code", Type: "NONCLUSTERED", Unique: true, Keys: []IndexColumn{{Name: "Code"}}},
	}}
	temp := &Table{Database: "tempdb", Schema: "dbo", Name: "#Work", Indexes: []*Index{
		{Name: "PK__#Work", Type: "CLUSTERED", Unique: true, PrimaryKey: true},
	}}
	twoUQ := &Table{Schema: "dbo", Name: "T", Indexes: []*Index{
		{Name: "UQ__T__a", Unique: true}, {Name: "UQ__T__b", Unique: true},
	}}
	tests := []struct {
		t    *Table
		name string
		want string
	}{
		{work, "[PK__WorkItem__3214EC27A1B2C3D4]", "PK__WorkItems"},
		{work, "PK__WorkItems__3214EC27A1B2C3D4", "PK__WorkItems"},
		{work, "UQ__WorkItem__A25C5AA7D1E2F3A4", "UQ__WorkItems__Code"},
		{work, "PK__Other__3214EC27A1B2C3D4", ""},
		{work, "PK__WorkItem__3214EC27", ""}, // not 16 hex digits
		{temp, "PK__#A6AFF2D__3213E83F1F0B9E2B", "PK__#Work"},
		{twoUQ, "UQ__T__A25C5AA7D1E2F3A4", ""}, // ambiguous
	}
	for _, tc := range tests {
		got := tc.t.FindIndex(tc.name)
		if (got == nil) != (tc.want == "") || got != nil && got.Name != tc.want {
			t.Errorf("%s.FindIndex(%q) = %v, want %q", tc.t.Name, tc.name, got, tc.want)
		}
	}
}

func TestClusteredAndContains(t *testing.T) {
	c := queueCatalog()
	work := c.Tables[0]
	if cl := work.Clustered(); cl == nil || cl.Name != "PK_Work" {
		t.Errorf("Clustered() = %v, want PK_Work", cl)
	}
	heap := c.FindTable("Shop", "dbo", "Heap")
	if cl := heap.Clustered(); cl != nil {
		t.Errorf("heap Clustered() = %v, want nil", cl)
	}
	pending := work.FindIndex("IX_Work_Pending")
	pk := work.FindIndex("PK_Work")
	ncci := work.FindIndex("NCCI_Work")
	tests := []struct {
		t      *Table
		ix     *Index
		column string
		want   bool
	}{
		{work, pending, "CreatedAt", true},
		{work, pending, "[workid]", true},
		{work, pending, "CustomerId", true},
		{work, pending, "Status", false},
		{work, pending, "Payload", false},
		{work, pk, "Payload", true}, // a clustered index holds every column
		{work, pk, "Nope", false},
		{work, ncci, "Status", true},
		{work, ncci, "WorkId", false}, // columnstore carries no clustered key
		{work, nil, "WorkId", false},
		{heap, &Index{Name: "IX", Type: "NONCLUSTERED", Keys: []IndexColumn{{Name: "a"}}}, "b", false},
		{&Table{Name: "Unknown", Indexes: []*Index{{Name: "CX", Type: "CLUSTERED"}}}, &Index{Name: "CX", Type: "CLUSTERED"}, "any", true},
	}
	for _, tc := range tests {
		if got := tc.t.IndexContains(tc.ix, tc.column); got != tc.want {
			name := "<nil>"
			if tc.ix != nil {
				name = tc.ix.Name
			}
			t.Errorf("IndexContains(%s, %q) = %v, want %v", name, tc.column, got, tc.want)
		}
	}
	cci := &Table{Name: "C", Indexes: []*Index{
		{Name: "CCI", Type: "CLUSTERED COLUMNSTORE"},
		{Name: "IX", Type: "NONCLUSTERED", Keys: []IndexColumn{{Name: "a"}}},
	}}
	if cci.Clustered().Name != "CCI" || cci.IndexContains(cci.Indexes[1], "b") {
		t.Error("a clustered columnstore index is clustered and adds no key columns")
	}
}

func TestKeys(t *testing.T) {
	pending := queueCatalog().Tables[0].FindIndex("IX_Work_Pending")
	for _, tc := range []struct {
		column string
		pos    int
	}{{"CreatedAt", 0}, {"[WorkId]", 1}, {"workid", 1}, {"CustomerId", -1}, {"Nope", -1}} {
		if got := pending.KeyPosition(tc.column); got != tc.pos {
			t.Errorf("KeyPosition(%q) = %d, want %d", tc.column, got, tc.pos)
		}
		if got := pending.IsKey(tc.column); got != (tc.pos >= 0) {
			t.Errorf("IsKey(%q) = %v", tc.column, got)
		}
	}
	var nilIndex *Index
	if nilIndex.IsKey("a") || nilIndex.KeyPosition("a") != -1 {
		t.Error("a nil index has keys")
	}
}

func TestFilteredIndexes(t *testing.T) {
	got := queueCatalog().Tables[0].FilteredIndexes()
	if len(got) != 2 || got[0].Name != "IX_Work_Pending" || got[1].Name != "IX_Work_Broken" {
		t.Errorf("FilteredIndexes() = %v, want IX_Work_Pending and IX_Work_Broken", got)
	}
}

package catalog

import (
	"reflect"
	"strings"
	"testing"
)

func TestMerge(t *testing.T) {
	server := &Catalog{
		Source: "server.json",
		Server: &Server{ProductVersion: "16.0.4215.2", MajorVersion: 16},
		Databases: []*Database{
			{Name: "Shop", CompatibilityLevel: 150},
		},
		Tables: []*Table{{Database: "Shop", Schema: "dbo", Name: "Work",
			Columns: []*Column{{Name: "WorkId", Type: "bigint"}, {Name: "Status", Type: "tinyint"}},
			Indexes: []*Index{
				{Name: "PK_Work", Type: "CLUSTERED", Keys: []IndexColumn{{Name: "WorkId"}}},
				{Name: "IX_Work_Status", Type: "NONCLUSTERED", Keys: []IndexColumn{{Name: "Status"}}},
			}}},
	}
	sized := &Catalog{Tables: []*Table{{Database: "Shop", Schema: "dbo", Name: "Work", Indexes: []*Index{
		{Name: "IX_Work_Sized", Type: "NONCLUSTERED", Keys: []IndexColumn{{Name: "Status"}},
			Size:       &IndexSize{Rows: 200, UsedPages: 3},
			Statistics: &StatisticsFacts{LastUpdated: "2025-11-01T02:00:14.87", Rows: 200, RowsSampled: 200, ModificationCounter: 7}},
	}}}}
	server.Merge(sized)
	script, diags := parse(t, `CREATE TABLE dbo.Work (WorkId bigint, Status int NOT NULL, Payload nvarchar(max))
CREATE INDEX IX_Work_Status ON dbo.Work (Status) WHERE Status = 0
CREATE INDEX IX_Work_New ON dbo.Work (Status, WorkId)
CREATE TABLE dbo.Other (a int)`)
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	server.Merge(script)
	server.Merge(&Catalog{Source: "more.json", Server: &Server{Edition: "Express"},
		Databases: []*Database{{Name: "[shop]", CompatibilityLevel: 160}, {Name: "Other"}, nil}, Tables: []*Table{nil}})

	want := []string{
		"table Shop.dbo.Work",
		"col WorkId bigint 8",
		"col Status int NOT NULL 4",
		"col Payload nvarchar(max) -1",
		"index PK_Work CLUSTERED (WorkId)",
		"index IX_Work_Status NONCLUSTERED (Status) where Status = 0 => Status = 0",
		"index IX_Work_Sized NONCLUSTERED (Status) size 200 rows 3 pages stats 2025-11-01T02:00:14.87 200/200 rows 7 modifications",
		"index IX_Work_New NONCLUSTERED (Status, WorkId)",
		"table .dbo.Other",
		"col a int 4",
	}
	if got := describeCatalog(server); !reflect.DeepEqual(got, want) {
		t.Errorf("merged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if want := (&Server{ProductVersion: "16.0.4215.2", MajorVersion: 16, Edition: "Express"}); !reflect.DeepEqual(server.Server, want) {
		t.Errorf("server = %+v, want %+v", server.Server, want)
	}
	if len(server.Databases) != 2 || server.Databases[0].Name != "[shop]" || server.Databases[0].CompatibilityLevel != 160 {
		t.Errorf("databases = %+v", server.Databases)
	}
	if server.Source != "server.json, test.sql, more.json" {
		t.Errorf("Source = %q", server.Source)
	}
	// The merged catalog shares nothing with the merged-in one.
	script.Tables[0].Columns[2].Type = "int"
	script.Tables[0].Indexes[0].Keys[0].Name = "changed"
	script.Tables[0].Indexes[0].Filter.Conjuncts[0].Values[0] = "9"
	script.Tables[1].Name = "Renamed"
	sized.Tables[0].Indexes[0].Size.Rows = 1
	sized.Tables[0].Indexes[0].Statistics.ModificationCounter = 1
	if got := describeCatalog(server); !reflect.DeepEqual(got, want) {
		t.Errorf("changing the source changed the merge:\n%s", strings.Join(got, "\n"))
	}
}

func TestMergeDatabases(t *testing.T) {
	tests := []struct {
		name        string
		dst, src    *Table
		wantMatched bool
	}{
		{"same database", &Table{Database: "A", Schema: "dbo", Name: "T"}, &Table{Database: "a", Schema: "DBO", Name: "t"}, true},
		{"unknown database on the left", &Table{Schema: "dbo", Name: "T"}, &Table{Database: "A", Schema: "dbo", Name: "T"}, true},
		{"unknown database on the right", &Table{Database: "A", Schema: "dbo", Name: "T"}, &Table{Schema: "dbo", Name: "T"}, true},
		{"other database", &Table{Database: "A", Schema: "dbo", Name: "T"}, &Table{Database: "B", Schema: "dbo", Name: "T"}, false},
		{"other schema", &Table{Schema: "dbo", Name: "T"}, &Table{Schema: "q", Name: "T"}, false},
	}
	for _, tc := range tests {
		c := &Catalog{Tables: []*Table{tc.dst}}
		c.Merge(&Catalog{Tables: []*Table{tc.src}})
		if matched := len(c.Tables) == 1; matched != tc.wantMatched {
			t.Errorf("%s: %d tables after merge", tc.name, len(c.Tables))
		}
		if tc.wantMatched && tc.src.Database != "" && c.Tables[0].Database == "" {
			t.Errorf("%s: the known database was not taken", tc.name)
		}
	}
}

func TestMergeNil(t *testing.T) {
	var c *Catalog
	c.Merge(&Catalog{Tables: []*Table{{Name: "T"}}}) // no panic
	d := &Catalog{Source: "a"}
	d.Merge(nil)
	d.Merge(&Catalog{Source: "a"})
	if d.Source != "a" || d.Server != nil || len(d.Tables) != 0 {
		t.Errorf("merge of nothing changed %+v", d)
	}
}

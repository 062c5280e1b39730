package catalog

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func factsCatalog() *Catalog {
	c := queueCatalog()
	c.Server = &Server{ProductVersion: "16.0.4215.2", MajorVersion: 16, Edition: "Developer Edition (64-bit)", EngineEdition: 3}
	c.Databases[0].ParameterizationForced = true
	c.Databases[0].SnapshotIsolation = "ON"
	pending := c.Tables[0].FindIndex("IX_Work_Pending")
	pending.Size = &IndexSize{Rows: 60000, UsedPages: 193}
	pending.Statistics = &StatisticsFacts{LastUpdated: "2025-11-01T02:00:14.87", Rows: 200, RowsSampled: 200, ModificationCounter: 61500}
	return c
}

func TestWriteLoadRoundTrip(t *testing.T) {
	c := factsCatalog()
	var buf bytes.Buffer
	if err := Write(&buf, c); err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, "facts.json", buf.Bytes())
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != path {
		t.Errorf("Source = %q, want %q", got.Source, path)
	}
	if !reflect.DeepEqual(got.Server, c.Server) {
		t.Errorf("Server = %+v", got.Server)
	}
	if len(got.Databases) != 2 || got.Databases[1].Name != "Shop" || !got.Databases[1].ParameterizationForced ||
		got.Databases[1].CompatibilityLevel != 160 || got.Databases[1].SnapshotIsolation != "ON" {
		t.Errorf("Databases = %+v %+v", got.Databases[0], got.Databases[1])
	}
	work := got.FindTable("Shop", "dbo", "Work")
	if work == nil {
		t.Fatal("dbo.Work missing")
	}
	want := c.Tables[0]
	if !reflect.DeepEqual(work.Columns, want.Columns) {
		t.Errorf("columns differ: %v", describeTable(work))
	}
	var gotIx, wantIx []string
	for _, ix := range work.Indexes {
		gotIx = append(gotIx, describeIndex(ix))
	}
	for _, name := range []string{"PK_Work", "IX_Work_Broken", "IX_Work_Pending", "IX_Work_Status", "NCCI_Work"} {
		wantIx = append(wantIx, describeIndex(want.FindIndex(name)))
	}
	if !reflect.DeepEqual(gotIx, wantIx) {
		t.Errorf("indexes:\n%s\nwant:\n%s", strings.Join(gotIx, "\n"), strings.Join(wantIx, "\n"))
	}
	if f := work.FindIndex("IX_Work_Pending").Filter; f == nil || f.String() != "Status = 0" {
		t.Errorf("filter not parsed after load: %v", f)
	}
	if e := work.FindIndex("IX_Work_Broken").FilterError; !strings.Contains(e, "function calls are not allowed") {
		t.Errorf("FilterError = %q", e)
	}
	// Writing what was loaded gives the same bytes.
	var again bytes.Buffer
	if err := Write(&again, got); err != nil {
		t.Fatal(err)
	}
	if again.String() != buf.String() {
		t.Errorf("second Write differs:\n%s\nfirst:\n%s", again.String(), buf.String())
	}
}

func TestWriteStableAndUnchanged(t *testing.T) {
	a, b := factsCatalog(), factsCatalog()
	// b lists the same facts in another order.
	for i, j := 0, len(b.Tables)-1; i < j; i, j = i+1, j-1 {
		b.Tables[i], b.Tables[j] = b.Tables[j], b.Tables[i]
	}
	b.Databases[0], b.Databases[1] = b.Databases[1], b.Databases[0]
	ix := b.Tables[len(b.Tables)-1].Indexes
	ix[0], ix[len(ix)-1] = ix[len(ix)-1], ix[0]
	var wa, wb bytes.Buffer
	if err := Write(&wa, a); err != nil {
		t.Fatal(err)
	}
	if err := Write(&wb, b); err != nil {
		t.Fatal(err)
	}
	if wa.String() != wb.String() {
		t.Errorf("Write depends on input order:\n%s\nvs\n%s", wa.String(), wb.String())
	}
	if !reflect.DeepEqual(a, factsCatalog()) {
		t.Error("Write modified the catalog")
	}
}

func TestWriteFormat(t *testing.T) {
	c := &Catalog{Tables: []*Table{{Schema: "dbo", Name: "T",
		Columns: []*Column{{Name: "Body", Type: "nvarchar(max)", Nullable: true, MaxLength: -1}},
		Indexes: []*Index{{Name: "CCI", Type: "CLUSTERED COLUMNSTORE"}, nil}}, nil}}
	var buf bytes.Buffer
	if err := Write(&buf, c); err != nil {
		t.Fatal(err)
	}
	want := `{
  "planlint_catalog": 1,
  "tables": [
    {
      "schema": "dbo",
      "name": "T",
      "columns": [
        {
          "name": "Body",
          "type": "nvarchar(max)",
          "nullable": true,
          "max_length": -1
        }
      ],
      "indexes": [
        {
          "name": "CCI",
          "type": "CLUSTERED COLUMNSTORE",
          "unique": false,
          "keys": []
        }
      ]
    }
  ]
}
`
	if buf.String() != want {
		t.Errorf("Write =\n%s\nwant\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := Write(&buf, nil); err != nil || buf.String() != "{\n  \"planlint_catalog\": 1,\n  \"tables\": []\n}\n" {
		t.Errorf("Write(nil) = %q, %v", buf.String(), err)
	}
}

func TestLoadJSONDetails(t *testing.T) {
	doc := "\ufeff  \n" + `{"planlint_catalog": 1, "future_field": true, "tables": [
 {"name": "Work", "columns": [{"name": "Payload", "type": "nvarchar(max)"}, {"name": "Note", "type": "varchar(20)", "max_length": 7}],
  "indexes": [{"name": "IX", "type": "NONCLUSTERED", "keys": [{"name": "Status"}],
               "filter_definition": "([Status]=(0) OR [Status]=(1))"}]}]}`
	c, err := Load(writeFile(t, "facts.json", []byte(doc)))
	if err != nil {
		t.Fatal(err)
	}
	w := c.Tables[0]
	if w.Schema != "dbo" {
		t.Errorf("schema = %q, want the default dbo", w.Schema)
	}
	if w.Columns[0].MaxLength != 0 || !w.Columns[0].IsWide() || w.Columns[1].MaxLength != 7 {
		t.Errorf("columns = %+v, %+v; want Payload wide by its type and Note's length as given", w.Columns[0], w.Columns[1])
	}
	if f := w.Indexes[0].Filter; f == nil || f.String() != "Status IN (0, 1)" {
		t.Errorf("filter = %v", f)
	}
	// UTF-16 JSON, as some Windows tools save it.
	c, err = Load(writeFile(t, "facts16.json", utf16LE(doc[3:])))
	if err != nil || len(c.Tables) != 1 {
		t.Errorf("UTF-16 JSON: %v", err)
	}
}

func TestLoadScript(t *testing.T) {
	path := writeFile(t, "schema.sql", []byte(queueScript))
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != path || c.FindTable("", "dbo", "Work").FindIndex("IX_Work_Pending").Filter == nil {
		t.Errorf("script not loaded: %v", describeCatalog(c))
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string // the error, with PATH for the file's path
	}{
		{"syntax.json", "{\"planlint_catalog\": 1,\n  \"tables\": [}", "PATH:2:14: invalid JSON: invalid character '}' looking for beginning of value"},
		{"truncated.json", "{\"planlint_catalog\": 1, \"tables\": [", "PATH:1:36: invalid JSON: unexpected end of JSON input"},
		{"type.json", "{\"planlint_catalog\": 1,\n \"tables\": [{\"name\": \"T\", \"columns\": [{\"name\": \"a\", \"nullable\": \"yes\"}]}]}",
			"PATH:2:65: tables.columns.nullable: expected bool, found JSON string"},
		{"version.json", "{\n  \"tables\": [],\n  \"planlint_catalog\":  2\n}", "PATH:3:24: unsupported planlint_catalog version 2 (this planlint reads version 1)"},
		{"noversion.json", `{"tables": []}`, `PATH: not a planlint catalog: the "planlint_catalog" version field is missing (expected 1)`},
		{"badversion.json", `{"planlint_catalog": "1"}`, "PATH:1:22: planlint_catalog: expected int, found JSON string"},
		{"badtables.json", `{"planlint_catalog": 1, "tables": {}}`, "PATH:1:35: tables: expected []*catalog.Table, found JSON object"},
		{"badnumber.json", "{\"planlint_catalog\": 1, \"tables\": [{\"name\": \"T\",\n \"columns\": [{\"name\": \"c\", \"max_length\": 1.5}]}]}",
			"PATH:2:42: tables.columns.max_length: expected int, found JSON number 1.5"},
		{"escaped.json", `{"planlint_catalog": 1, "tables": [{"name": "T", "columns": [{"name": "c", "nullable": "a\"b"}]}]}`,
			"PATH:1:88: tables.columns.nullable: expected bool, found JSON string"},
		{"noname.json", `{"planlint_catalog": 1, "tables": [{"schema": "dbo"}]}`, "PATH: tables[0]: missing name"},
		{"nulltable.json", `{"planlint_catalog": 1, "tables": [null]}`, "PATH: tables[0]: null table"},
		{"column.json", `{"planlint_catalog": 1, "tables": [{"name": "T", "columns": [{"type": "int"}]}]}`, "PATH: tables[0] (.T).columns[0]: missing name"},
		{"index.json", `{"planlint_catalog": 1, "tables": [{"schema": "s", "name": "T", "indexes": [{"type": "CLUSTERED"}]}]}`,
			"PATH: tables[0] (s.T).indexes[0]: missing name"},
		{"key.json", `{"planlint_catalog": 1, "tables": [{"name": "T", "indexes": [{"name": "IX", "keys": [{"name": "a"}, {}]}]}]}`,
			"PATH: tables[0] (.T).indexes[0] (IX).keys[1]: missing name"},
		{"include.json", `{"planlint_catalog": 1, "tables": [{"name": "T", "indexes": [{"name": "IX", "includes": [""]}]}]}`,
			"PATH: tables[0] (.T).indexes[0] (IX).includes[0]: empty name"},
		{"database.json", `{"planlint_catalog": 1, "databases": [{"compatibility_level": 150}], "tables": []}`, "PATH: databases[0]: missing name"},
		{"plan.sqlplan", `<?xml version="1.0"?><ShowPlanXML/>`, "PATH: this is XML (a showplan?); expected a T-SQL script or planlint catalog JSON"},
		{"empty.sql", "-- nothing\nSELECT 1", "PATH: no CREATE TABLE, CREATE INDEX or ALTER TABLE statement found; expected a T-SQL script or planlint catalog JSON"},
		{"one.sql", "CREATE TABLE t (a int NOTNULL)", "PATH:1:23: CREATE TABLE dbo.t: expected , or ) after the definition, found \"NOTNULL\""},
		{"two.sql", "CREATE TABLE t (a int NOTNULL)\nCREATE INDEX ON t (a)", "PATH: 2 problems:\n  PATH:1:23: CREATE TABLE dbo.t: expected , or ) after the definition, found \"NOTNULL\"\n  PATH:2:14: CREATE INDEX: expected the index name, found \"ON\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.name, []byte(tc.data))
			c, err := Load(path)
			want := strings.ReplaceAll(tc.want, "PATH", path)
			if err == nil || err.Error() != want {
				t.Errorf("Load error = %v\nwant %s", err, want)
			}
			if c != nil {
				t.Errorf("Load returned a catalog with the error")
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestLoadFileKeepsGoodStatements(t *testing.T) {
	path := writeFile(t, "mixed.sql", []byte("CREATE TABLE good (a int)\nCREATE TABLE bad (a int NOTNULL)"))
	c, diags, err := LoadFile(path)
	if err != nil || len(diags) != 1 || len(c.Tables) != 1 || c.Tables[0].Name != "good" {
		t.Errorf("LoadFile = %v, %v, %v", describeCatalog(c), diags, err)
	}
	var se *ScriptError
	if _, err := Load(path); !errors.As(err, &se) || len(se.Diagnostics) != 1 {
		t.Errorf("Load error = %v, want a *ScriptError", err)
	}
}

func FuzzLoadJSON(f *testing.F) {
	var buf bytes.Buffer
	if err := Write(&buf, factsCatalog()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"planlint_catalog": 1, "tables": [{"name": "T", "indexes": [{"name": "I", "filter_definition": "([a]=(1))"}]}]}`))
	f.Add([]byte(`{"planlint_catalog": 1, "databases": [{"name": "D"}], "tables": [{"name": "T", "columns": [{"name": "c", "type": "json"}]}]}`))
	f.Add([]byte(`{"planlint_catalog": 2}`))
	f.Add([]byte(`{"planlint_catalog": 1, "tables": [{"name": "T", "indexes": [null]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeJSON("f.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		var first bytes.Buffer
		if err := Write(&first, c); err != nil {
			t.Fatal(err)
		}
		again, err := decodeJSON("f.json", first.Bytes())
		if err != nil {
			t.Fatalf("written catalog does not load: %v\n%s", err, first.String())
		}
		var second bytes.Buffer
		if err := Write(&second, again); err != nil {
			t.Fatal(err)
		}
		if first.String() != second.String() {
			t.Fatalf("Write(Load(Write(c))) differs:\n%s\nvs\n%s", first.String(), second.String())
		}
	})
}

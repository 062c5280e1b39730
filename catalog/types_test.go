package catalog

import "testing"

func TestTypeMaxLength(t *testing.T) {
	tests := []struct {
		typ  string
		want int
	}{
		{"tinyint", 1}, {"bit", 1}, {"smallint", 2}, {"int", 4}, {"bigint", 8},
		{"real", 4}, {"float", 8}, {"float(24)", 4}, {"float(25)", 8}, {"float(0)", 0},
		{"money", 8}, {"smallmoney", 4}, {"date", 3}, {"datetime", 8}, {"smalldatetime", 4},
		{"time", 5}, {"time(0)", 3}, {"time(3)", 4}, {"datetime2", 8}, {"datetime2(0)", 6}, {"datetime2(4)", 7},
		{"datetimeoffset", 10}, {"datetimeoffset(2)", 8}, {"datetime2(8)", 0},
		{"decimal", 9}, {"decimal(9,2)", 5}, {"decimal(18,2)", 9}, {"numeric(28)", 13}, {"decimal(38,0)", 17}, {"decimal(39)", 0},
		{"char", 1}, {"char(10)", 10}, {"varchar(8000)", 8000}, {"varchar(max)", -1}, {"VARCHAR(MAX)", -1},
		{"nchar(10)", 20}, {"nvarchar", 2}, {"nvarchar(450)", 900}, {"nvarchar(4000)", 8000}, {"nvarchar(max)", -1},
		{"binary(16)", 16}, {"varbinary(max)", -1}, {"varbinary(x)", 0},
		{"text", -1}, {"ntext", -1}, {"image", -1}, {"xml", -1}, {"xml(CONTENT dbo.S)", -1}, {"json", -1},
		{"geography", -1}, {"uniqueidentifier", 16}, {"sql_variant", 8016}, {"hierarchyid", 892},
		{"timestamp", 8}, {"rowversion", 8}, {"sysname", 256}, {"vector(1536)", 6144},
		{"integer", 4}, {"character varying(20)", 20}, {"national character varying(20)", 40}, {"double precision", 8},
		{"dbo.MyType", 0}, {"", 0},
	}
	for _, tc := range tests {
		if got := typeMaxLength(tc.typ); got != tc.want {
			t.Errorf("typeMaxLength(%q) = %d, want %d", tc.typ, got, tc.want)
		}
	}
}

func TestCanonicalType(t *testing.T) {
	tests := []struct {
		base string
		args []string
		want string
	}{
		{"NVARCHAR", []string{"MAX"}, "nvarchar(max)"},
		{"decimal", []string{"18", "2"}, "decimal(18,2)"},
		{"INT", nil, "int"},
		{"sys.sysname", nil, "sysname"},
		{"national  char varying", []string{"10"}, "nvarchar(10)"},
		{"double precision", nil, "float"},
		{"dbo.Phone", nil, "dbo.Phone"},
		{"xml", []string{"CONTENT dbo.S"}, "xml(CONTENT dbo.S)"},
	}
	for _, tc := range tests {
		if got := canonicalType(tc.base, tc.args); got != tc.want {
			t.Errorf("canonicalType(%q, %q) = %q, want %q", tc.base, tc.args, got, tc.want)
		}
	}
}

func TestIsWide(t *testing.T) {
	tests := []struct {
		col  *Column
		want bool
	}{
		{&Column{Type: "nvarchar(max)", MaxLength: -1}, true},
		{&Column{Type: "nvarchar(max)"}, true}, // length from the type
		{&Column{Type: "json"}, true},
		{&Column{Type: "xml"}, true},
		{&Column{Type: "varbinary(max)"}, true},
		{&Column{Type: "nvarchar(500)"}, false}, // 1000 bytes: the limit
		{&Column{Type: "nvarchar(501)"}, true},
		{&Column{Type: "varchar(1000)"}, false},
		{&Column{Type: "varchar(1001)"}, true},
		{&Column{Type: "varchar(8000)"}, true},
		{&Column{Type: "int"}, false},
		{&Column{Type: "dbo.MyType"}, false},
		{&Column{Type: "varchar(10)", MaxLength: 2000}, true}, // MaxLength wins
		{nil, false},
	}
	for _, tc := range tests {
		if got := tc.col.IsWide(); got != tc.want {
			t.Errorf("IsWide(%+v) = %v, want %v", tc.col, got, tc.want)
		}
	}
}

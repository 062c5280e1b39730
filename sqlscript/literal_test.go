package sqlscript

import (
	"reflect"
	"strings"
	"testing"
)

// lit lexes a literal as written in T-SQL.
func lit(t *testing.T, text string) Literal {
	t.Helper()
	l, ok := literalFromTokens(code(lex(text)), text)
	if !ok {
		t.Fatalf("%q is not a literal", text)
	}
	return l
}

func TestLiteralKinds(t *testing.T) {
	tests := []struct {
		text string
		kind LiteralKind
		str  string
	}{
		{"NULL", LiteralNull, "NULL"},
		{"null", LiteralNull, "null"},
		{"42", LiteralInteger, "42"},
		{"-42", LiteralInteger, "-42"},
		{"+ 4", LiteralInteger, "+ 4"},
		{"12.50", LiteralDecimal, "12.50"},
		{".5", LiteralDecimal, ".5"},
		{"1e5", LiteralFloat, "1e5"},
		{"-2.5E-3", LiteralFloat, "-2.5E-3"},
		{"$12.5", LiteralMoney, "$12.5"},
		{"-$3", LiteralMoney, "-$3"},
		{"'it''s'", LiteralString, "it's"},
		{"N'ä'", LiteralNString, "ä"},
		{"0x0A", LiteralBinary, "0x0A"},
		{"@v", LiteralVariable, "@v"},
	}
	for _, tt := range tests {
		l := lit(t, tt.text)
		if l.Kind != tt.kind || l.Str() != tt.str || l.String() != tt.text {
			t.Errorf("%q: kind %v str %q, want %v %q", tt.text, l.Kind, l.Str(), tt.kind, tt.str)
		}
	}
	for _, text := range []string{"", "1 + 1", "abc", "- 'x'", "'open", "(1)", "CAST(1 AS int)"} {
		if l, ok := literalFromTokens(code(lex(text)), text); ok {
			t.Errorf("%q taken as literal %+v", text, l)
		}
	}
}

func TestGoValue(t *testing.T) {
	tests := []struct {
		value, typ string
		want       any
	}{
		{"0", "tinyint", int64(0)},
		{"255", "tinyint", int64(255)},
		{"-32768", "smallint", int64(-32768)},
		{"2147483647", "int", int64(2147483647)},
		{"-9223372036854775808", "bigint", int64(-9223372036854775808)},
		{"'17'", "int", int64(17)},
		{"N' 17 '", "int", int64(17)},
		{"3.0", "int", int64(3)},
		{"1e2", "int", int64(100)},
		{"NULL", "int", nil},
		{"@out", "int", nil},
		{"1", "bit", true},
		{"0", "bit", false},
		{"5", "bit", true},
		{"'TRUE'", "bit", true},
		{"'false'", "bit", false},
		{"12.5", "decimal(9,2)", "12.50"},
		{"12.345", "decimal(9,2)", "12.35"},
		{"-12.345", "numeric(9,2)", "-12.35"},
		{"1e3", "decimal(9,2)", "1000.00"},
		{"'99.5'", "decimal(3,1)", "99.5"},
		{"7", "decimal", "7"},
		{"$12.5", "money", "12.5000"},
		{"-922337203685477.5808", "money", "-922337203685477.5808"},
		{"214748.3647", "smallmoney", "214748.3647"},
		{"1.5", "float", 1.5},
		{"-2E-2", "float(53)", -0.02},
		{"3", "real", float64(3)},
		{"'x'", "varchar(10)", "x"},
		{"N'größe'", "nvarchar(max)", "größe"},
		{"'it''s'", "sysname", "it's"},
		{"42", "varchar(10)", "42"},
		{"+42", "nvarchar(10)", "42"},
		{"- 4.5", "varchar(10)", "-4.5"},
		{"'2024-01-01'", "date", "2024-01-01"},
		{"'2024-01-01T10:00:00'", "datetime2(0)", "2024-01-01T10:00:00"},
		{"'2024-01-01 10:00 +01:00'", "datetimeoffset", "2024-01-01 10:00 +01:00"},
		{"0", "datetime", int64(0)},
		{"1.5", "smalldatetime", 1.5},
		{"'6F9619FF-8B86-D011-B42D-00C04FC964FF'", "uniqueidentifier", "6F9619FF-8B86-D011-B42D-00C04FC964FF"},
		{"'{6F9619FF-8B86-D011-B42D-00C04FC964FF}'", "uniqueidentifier", "{6F9619FF-8B86-D011-B42D-00C04FC964FF}"},
		{"0x0A0B", "varbinary(8)", []byte{0x0A, 0x0B}},
		{"0xABC", "binary(2)", []byte{0x0A, 0xBC}},
		{"0x", "varbinary(max)", []byte{}},
		{"'/1/'", "hierarchyid", "/1/"},
		{"1", "[sys].[int]", int64(1)},
		{"1", "INTEGER", int64(1)},
		{"1.5", "double precision", 1.5},
		{"'x'", "national character varying(5)", "x"},
	}
	for _, tt := range tests {
		got, err := lit(t, tt.value).GoValue(tt.typ)
		if err != nil {
			t.Errorf("GoValue(%s, %s): %v", tt.value, tt.typ, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("GoValue(%s, %s) = %#v, want %#v", tt.value, tt.typ, got, tt.want)
		}
	}
}

func TestGoValueErrors(t *testing.T) {
	tests := []struct {
		value, typ, want string
	}{
		{"256", "tinyint", "value 256 for type tinyint: out of range (0 to 255)"},
		{"-1", "tinyint", "out of range (0 to 255)"},
		{"32768", "smallint", "out of range (-32768 to 32767)"},
		{"2147483648", "int", "out of range (-2147483648 to 2147483647)"},
		{"9223372036854775808", "bigint", "out of range"},
		{"1.5", "int", "value 1.5 for type int: not a whole number"},
		{"'abc'", "int", "the string is not a number"},
		{"'1/2'", "int", "the string is not a number"},
		{"0x01", "int", "expected a number, found a binary"},
		{"1e999999999", "int", "not a valid number"},
		{"'maybe'", "bit", "the string is not a number (bit takes 0, 1, 'true' or 'false')"},
		{"1000", "decimal(5,2)", "too many digits before the decimal point (at most 3)"},
		{"999.999", "decimal(5,2)", "too many digits before the decimal point"},
		{"1", "decimal(40,2)", "invalid precision and scale (40,2)"},
		{"922337203685477.5808", "money", "out of range (-922337203685477.5808 to 922337203685477.5807)"},
		{"214748.3648", "smallmoney", "out of range"},
		{"1e39", "real", "out of range for a 32-bit float"},
		{"'x'", "varbinary(10)", "expected a 0x… binary literal, found a string"},
		{"0x01", "varchar(10)", "a binary literal cannot be sent as varchar"},
		{"20240101", "date", "expected a quoted string, found an integer"},
		{"'not-a-guid'", "uniqueidentifier", "not a uniqueidentifier"},
		{"1", "dbo.IdList", "unknown or user-defined type \"dbo.idlist\""},
		{"1", "table", "a table parameter cannot be given a literal value"},
		{"1", "varchar(x)", "type \"varchar(x)\": type varchar: expected a number or MAX, found \"x\""},
		{"1", "", "type \"\": missing type name"},
		{"1", "int int", "unknown or user-defined type \"int int\""},
		{"1", "int)", "unexpected \")\" after type int"},
	}
	for _, tt := range tests {
		_, err := lit(t, tt.value).GoValue(tt.typ)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("GoValue(%s, %s) error = %v, want it to contain %q", tt.value, tt.typ, err, tt.want)
		}
	}
}

func TestParamGoValueNamesParameter(t *testing.T) {
	p := Param{Name: "@Status", Type: "tinyint", Value: Literal{Text: "300", Kind: LiteralInteger}}
	_, err := p.GoValue()
	if err == nil || err.Error() != "parameter @Status: value 300 for type tinyint: out of range (0 to 255)" {
		t.Fatalf("error = %v", err)
	}
}

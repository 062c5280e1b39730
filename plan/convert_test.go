package plan

import "testing"

func TestConvertDataType(t *testing.T) {
	tests := []struct{ attrs, want string }{
		{`DataType="nvarchar" Length="40"`, "nvarchar(20)"},
		{`DataType="nchar" Length="12"`, "nchar(6)"},
		{`DataType="nvarchar" Length="-1"`, "nvarchar(max)"},
		{`DataType="varchar" Length="30"`, "varchar(30)"},
		{`DataType="varbinary" Length="-1"`, "varbinary(max)"},
		{`DataType="numeric" Precision="20" Scale="0"`, "numeric(20,0)"},
		{`DataType="datetime2" Scale="7"`, "datetime2(7)"},
		{`DataType="int"`, "int"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			pred := `<Predicate><ScalarOperator><Compare CompareOp="EQ"><ScalarOperator><Convert ` + tc.attrs + ` Style="0" Implicit="1">` +
				`<ScalarOperator><Identifier><ColumnReference Table="[Queue]" Column="Code"/></Identifier></ScalarOperator></Convert></ScalarOperator>` +
				`<ScalarOperator><Const ConstValue="N'x'"/></ScalarOperator></Compare></ScalarOperator></Predicate>`
			op := onlyOp(t, showplan(simple("q", relop("0", "Table Scan", `<TableScan Ordered="0"><Object Table="[Queue]"/>`+pred+`</TableScan>`))))
			conv := op.Access.Predicate.Args[0]
			if conv.Kind != ScalarConvert || conv.DataType != tc.want {
				t.Fatalf("convert %+v, want DataType %q", conv, tc.want)
			}
		})
	}
}

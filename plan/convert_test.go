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

func TestComputeScalarDefinedValueConvert(t *testing.T) {
	cs := `<ComputeScalar><DefinedValues><DefinedValue><ColumnReference Column="Expr1044"/>` +
		`<ScalarOperator ScalarString="CONVERT_IMPLICIT(nvarchar(200),[S].[Status],0)"><Convert DataType="nvarchar" Length="400" Style="0" Implicit="1">` +
		`<ScalarOperator><Identifier><ColumnReference Table="[Status]" Alias="[S]" Column="Status"/></Identifier></ScalarOperator></Convert></ScalarOperator>` +
		`</DefinedValue><DefinedValue><ColumnReference Column="Expr1045"/><ScalarOperator ScalarString="getdate()"><Intrinsic FunctionName="getdate"/></ScalarOperator></DefinedValue>` +
		`</DefinedValues>` + relop("1", "Table Scan", `<TableScan Ordered="0"><Object Table="[Status]"/></TableScan>`) + `</ComputeScalar>`
	op := onlyOp(t, showplan(simple("q", relop("0", "Compute Scalar", cs))))
	if len(op.DefinedValues) != 2 {
		t.Fatalf("defined values %+v", op.DefinedValues)
	}
	dv := op.DefinedValues[0]
	if len(dv.Columns) != 1 || dv.Columns[0].Column != "Expr1044" || dv.Value == nil || dv.Value.Kind != ScalarConvert || dv.Value.DataType != "nvarchar(200)" ||
		dv.Value.Args[0].Column == nil || dv.Value.Args[0].Column.Column != "Status" {
		t.Fatalf("defined value %+v", dv)
	}
	if len(op.Children) != 1 || op.Children[0].PhysicalOp != "Table Scan" {
		t.Fatalf("children %+v", op.Children)
	}
}

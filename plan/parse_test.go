package plan

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const nsAttr = `xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan"`

// showplan wraps batches (each a list of statement elements) in a document.
func showplan(batches ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	b.WriteString(`<ShowPlanXML ` + nsAttr + ` Version="1.564" Build="16.0.4215.2"><BatchSequence>`)
	for _, s := range batches {
		b.WriteString("<Batch><Statements>" + s + "</Statements></Batch>")
	}
	b.WriteString("</BatchSequence></ShowPlanXML>")
	return b.String()
}

// simple is a StmtSimple whose QueryPlan holds the given content.
func simple(text, planContent string) string {
	return `<StmtSimple StatementText="` + text + `" StatementId="1" StatementType="SELECT"><QueryPlan>` +
		planContent + `</QueryPlan></StmtSimple>`
}

// relop is a RelOp element with the given attributes and content.
func relop(id, physical, content string) string {
	return `<RelOp NodeId="` + id + `" PhysicalOp="` + physical + `" LogicalOp="` + physical +
		`" EstimateRows="1" EstimateIO="0" EstimateCPU="0" AvgRowSize="9" EstimatedTotalSubtreeCost="0.1"` +
		` Parallel="0" EstimateRebinds="0" EstimateRewinds="0"><OutputList/>` + content + `</RelOp>`
}

func mustParse(t *testing.T, doc string) *Document {
	t.Helper()
	d, err := Parse(strings.NewReader(doc), Options{})
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, doc)
	}
	checkTree(t, d)
	return d
}

// onlyPlan returns the plan of the document's single statement.
func onlyPlan(t *testing.T, doc string) *QueryPlan {
	t.Helper()
	d := mustParse(t, doc)
	if len(d.Batches) != 1 || len(d.Batches[0].Statements) != 1 || d.Batches[0].Statements[0].QueryPlan == nil {
		t.Fatalf("want one statement with a plan, got %+v", d.Batches)
	}
	return d.Batches[0].Statements[0].QueryPlan
}

// onlyOp returns the root operator of the document's single plan.
func onlyOp(t *testing.T, doc string) *RelOp {
	t.Helper()
	qp := onlyPlan(t, doc)
	if qp.Root == nil {
		t.Fatal("plan has no root operator")
	}
	return qp.Root
}

const colA = `<ColumnReference Database="[db]" Schema="[dbo]" Table="[Queue]" Alias="[q]" Column="Status"/>`

func constant(v string) string {
	return `<ScalarOperator ScalarString="` + v + `"><Const ConstValue="` + v + `"/></ScalarOperator>`
}

func TestDocumentHeader(t *testing.T) {
	d := mustParse(t, showplan(simple("q", relop("0", "Constant Scan", "<ConstantScan/>"))))
	if d.Version != "1.564" || d.Build != "16.0.4215.2" {
		t.Errorf("Version %q Build %q", d.Version, d.Build)
	}
}

func TestAccessLookup(t *testing.T) {
	tests := []struct {
		name, attrs string
		lookup      bool
	}{
		{"lookup 1", `Lookup="1" Ordered="1"`, true},
		{"lookup true", `Lookup="true" Ordered="true"`, true},
		{"lookup 0", `Lookup="0" Ordered="0"`, false},
		{"lookup false", `Lookup="false" Ordered="false"`, false},
		{"absent", `Ordered="1"`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := onlyOp(t, showplan(simple("q", relop("3", "Clustered Index Seek",
				`<IndexScan `+tc.attrs+` ScanDirection="FORWARD" ForcedIndex="0" ForceSeek="1" ForceScan="0" NoExpandHint="0" Storage="RowStore">`+
					`<DefinedValues><DefinedValue>`+colA+`</DefinedValue></DefinedValues>`+
					`<Object Database="[db]" Schema="[dbo]" Table="[Queue]" Index="[PK_Queue]" Alias="[q]" IndexKind="Clustered" Storage="RowStore" TableReferenceId="2"/>`+
					`</IndexScan>`))))
			a := op.Access
			if a == nil {
				t.Fatal("no Access")
			}
			if a.Lookup != tc.lookup || op.IsLookup() != tc.lookup {
				t.Errorf("Lookup %v IsLookup %v, want %v", a.Lookup, op.IsLookup(), tc.lookup)
			}
			if a.Ordered != tc.lookup && tc.name != "absent" {
				t.Errorf("Ordered %v", a.Ordered)
			}
			want := ObjectRef{Database: "db", Schema: "dbo", Table: "Queue", Index: "PK_Queue", Alias: "q",
				IndexKind: "Clustered", Storage: "RowStore", TableReferenceID: 2}
			if !reflect.DeepEqual(a.Objects, []ObjectRef{want}) {
				t.Errorf("Objects %+v", a.Objects)
			}
			if a.Element != "IndexScan" || a.ScanDirection != "FORWARD" || !a.ForceSeek || a.ForcedIndex || a.Storage != "RowStore" {
				t.Errorf("Access attributes %+v", a)
			}
			if op.NodeID != 3 || op.PhysicalOp != "Clustered Index Seek" {
				t.Errorf("RelOp %d %q", op.NodeID, op.PhysicalOp)
			}
		})
	}
}

func TestRelOpAttributes(t *testing.T) {
	op := onlyOp(t, showplan(simple("q", `<RelOp NodeId="7" PhysicalOp="Index Scan" LogicalOp="Index Scan"`+
		` EstimateRows="12.5" EstimateRowsWithoutRowGoal="40" EstimatedRowsRead="1000" EstimateIO="0.5" EstimateCPU="0.25"`+
		` AvgRowSize="11" EstimatedTotalSubtreeCost="0.75" TableCardinality="5000" Parallel="true"`+
		` EstimateRebinds="2" EstimateRewinds="3" EstimatedExecutionMode="Batch" IsAdaptive="1" Unknown="x">`+
		`<OutputList>`+colA+`<ColumnReference Column="Expr1002" ComputedColumn="1"/></OutputList>`+
		`<IndexScan Ordered="0"><Object Table="[T]"/></IndexScan></RelOp>`)))
	if op.NodeID != 7 || op.EstimateRows != 12.5 || *op.EstimateRowsWithoutRowGoal != 40 || *op.EstimatedRowsRead != 1000 ||
		op.EstimateIO != 0.5 || op.EstimateCPU != 0.25 || op.AvgRowSize != 11 || op.SubtreeCost != 0.75 ||
		op.TableCardinality != 5000 || !op.Parallel || op.EstimateRebinds != 2 || op.EstimateRewinds != 3 ||
		op.EstimatedExecutionMode != "Batch" || !op.IsAdaptive {
		t.Errorf("attributes %+v", op)
	}
	want := []ColumnRef{
		{Database: "db", Schema: "dbo", Table: "Queue", Alias: "q", Column: "Status"},
		{Column: "Expr1002", Computed: true},
	}
	if !reflect.DeepEqual(op.OutputList, want) {
		t.Errorf("OutputList %+v", op.OutputList)
	}
}

func TestBadNumbersAreAbsent(t *testing.T) {
	op := onlyOp(t, showplan(simple("q", `<RelOp NodeId="x" PhysicalOp="Filter" EstimateRows="many" EstimatedRowsRead="NaN"`+
		` EstimateRowsWithoutRowGoal="1e999" EstimatedTotalSubtreeCost="" Parallel="maybe"><Filter/></RelOp>`)))
	if op.NodeID != 0 || op.EstimateRows != 0 || op.EstimatedRowsRead != nil || op.EstimateRowsWithoutRowGoal != nil ||
		op.SubtreeCost != 0 || op.Parallel {
		t.Errorf("unparsable numbers should be absent: %+v", op)
	}
}

func TestSortAndTop(t *testing.T) {
	orderBy := `<OrderBy><OrderByColumn Ascending="1">` + colA + `</OrderByColumn>` +
		`<OrderByColumn Ascending="false"><ColumnReference Column="[Id]"/></OrderByColumn></OrderBy>`
	wantCols := []OrderColumn{
		{Column: ColumnRef{Database: "db", Schema: "dbo", Table: "Queue", Alias: "q", Column: "Status"}, Ascending: true},
		{Column: ColumnRef{Column: "Id"}, Ascending: false},
	}
	tests := []struct {
		name, op string
		want     SortInfo
	}{
		{"sort", `<Sort Distinct="1">` + orderBy + relop("1", "Table Scan", `<TableScan Ordered="0"><Object Table="[T]"/></TableScan>`) + `</Sort>`,
			SortInfo{Distinct: true, Columns: wantCols}},
		{"topsort", `<TopSort Distinct="0" Rows="10" WithTies="true">` + orderBy + relop("1", "Table Scan", `<TableScan Ordered="0"><Object Table="[T]"/></TableScan>`) + `</TopSort>`,
			SortInfo{TopRows: 10, WithTies: true, Columns: wantCols}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := onlyOp(t, showplan(simple("q", relop("0", "Sort", tc.op))))
			if op.Sort == nil || !reflect.DeepEqual(*op.Sort, tc.want) {
				t.Fatalf("Sort %+v, want %+v", op.Sort, tc.want)
			}
			if len(op.Children) != 1 || op.Children[0].Access.Object().Table != "T" {
				t.Errorf("children %+v", op.Children)
			}
		})
	}

	op := onlyOp(t, showplan(simple("q", relop("0", "Top",
		`<Top RowCount="0" IsPercent="true" WithTies="1"><TopExpression><ScalarOperator ScalarString="(10)"><Const ConstValue="(10)"/></ScalarOperator></TopExpression>`+
			relop("1", "Constant Scan", "<ConstantScan/>")+`</Top>`))))
	if op.Top == nil || *op.Top != (TopInfo{RowsText: "(10)", IsPercent: true, WithTies: true}) {
		t.Errorf("Top %+v", op.Top)
	}
	if op.Sort != nil || op.Access != nil {
		t.Errorf("Top has Sort %v Access %v", op.Sort, op.Access)
	}
}

func TestSeekPredicates(t *testing.T) {
	rangeXML := func(part, scan, col, val string) string {
		return `<` + part + ` ScanType="` + scan + `"><RangeColumns>` + col + `</RangeColumns><RangeExpressions>` +
			constant(val) + `</RangeExpressions></` + part + `>`
	}
	colID := `<ColumnReference Table="[Queue]" Column="Id"/>`
	newForm := `<SeekPredicates><SeekPredicateNew><SeekKeys>` + rangeXML("Prefix", "EQ", colA, "(0)") + `</SeekKeys>` +
		`<SeekKeys>` + rangeXML("StartRange", "GT", colID, "(5)") + rangeXML("EndRange", "LT", colID, "(9)") + `</SeekKeys>` +
		`</SeekPredicateNew><SeekPredicateNew><SeekKeys>` + rangeXML("Prefix", "EQ", colA, "(1)") + `</SeekKeys></SeekPredicateNew></SeekPredicates>`
	oldForm := `<SeekPredicates><SeekPredicate>` + rangeXML("Prefix", "EQ", colA, "(0)") +
		`<IsNotNull>` + colID + `</IsNotNull></SeekPredicate></SeekPredicates>`
	partForm := `<SeekPredicates><SeekPredicatePart><SeekPredicateNew><SeekKeys>` + rangeXML("Prefix", "EQ", colA, "(0)") +
		`</SeekKeys></SeekPredicateNew><SeekPredicateNew><SeekKeys>` + rangeXML("Prefix", "EQ", colA, "(1)") +
		`</SeekKeys></SeekPredicateNew></SeekPredicatePart></SeekPredicates>`

	type key struct {
		part, scan, col, val string
	}
	tests := []struct {
		name, xml string
		want      [][]key
	}{
		{"SeekPredicateNew", newForm, [][]key{
			{{"Prefix", "EQ", "Status", "(0)"}, {"StartRange", "GT", "Id", "(5)"}, {"EndRange", "LT", "Id", "(9)"}},
			{{"Prefix", "EQ", "Status", "(1)"}},
		}},
		{"SeekPredicate", oldForm, [][]key{{{"Prefix", "EQ", "Status", "(0)"}, {"IsNotNull", "", "Id", ""}}}},
		{"SeekPredicatePart", partForm, [][]key{{{"Prefix", "EQ", "Status", "(0)"}}, {{"Prefix", "EQ", "Status", "(1)"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := onlyOp(t, showplan(simple("q", relop("0", "Index Seek",
				`<IndexScan Ordered="1"><Object Table="[Queue]" Index="[IX_Status]"/>`+tc.xml+`</IndexScan>`))))
			var got [][]key
			for _, sp := range op.Access.SeekPredicates {
				var ks []key
				for _, k := range sp.Keys {
					if len(k.Columns) != 1 {
						t.Fatalf("key %+v: want one column", k)
					}
					val := ""
					if len(k.Values) == 1 {
						val = k.Values[0].Value
						if k.Values[0].Kind != ScalarConst {
							t.Errorf("value kind %v", k.Values[0].Kind)
						}
					}
					ks = append(ks, key{k.Part, k.ScanType, k.Columns[0].Column, val})
				}
				got = append(got, ks)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("seeks %v, want %v", got, tc.want)
			}
		})
	}
}

// residual is Status = CONVERT_IMPLICIT(int,@p,0) AND Id >= (5).
const residual = `<ScalarOperator ScalarString="[q].[Status]=CONVERT_IMPLICIT(int,[@p],0) AND [q].[Id]&gt;=(5)">` +
	`<Logical Operation="AND">` +
	`<ScalarOperator ScalarString="[q].[Status]=CONVERT_IMPLICIT(int,[@p],0)"><Compare CompareOp="EQ">` +
	`<ScalarOperator ScalarString="[q].[Status]"><Identifier>` + colA + `</Identifier></ScalarOperator>` +
	`<ScalarOperator ScalarString="CONVERT_IMPLICIT(int,[@p],0)"><Convert DataType="int" Style="0" Implicit="1">` +
	`<ScalarOperator ScalarString="[@p]"><Identifier><ColumnReference Column="@p"/></Identifier></ScalarOperator>` +
	`</Convert></ScalarOperator></Compare></ScalarOperator>` +
	`<ScalarOperator ScalarString="[q].[Id]&gt;=(5)"><Compare CompareOp="GE">` +
	`<ScalarOperator><Identifier><ColumnReference Table="[Queue]" Alias="[q]" Column="Id"/></Identifier></ScalarOperator>` +
	`<ScalarOperator><Const ConstValue="(5)"/></ScalarOperator>` +
	`</Compare></ScalarOperator></Logical></ScalarOperator>`

func checkResidual(t *testing.T, s *Scalar) {
	t.Helper()
	if s == nil {
		t.Fatal("no predicate")
	}
	if s.Kind != ScalarLogical || s.Op != "AND" || len(s.Args) != 2 || !strings.HasPrefix(s.Text, "[q].[Status]=") {
		t.Fatalf("top %+v", s)
	}
	conj := s.Conjuncts()
	eq, ge := conj[0], conj[1]
	if eq.Kind != ScalarCompare || eq.Op != "EQ" || len(eq.Args) != 2 {
		t.Fatalf("first conjunct %+v", eq)
	}
	if c := eq.Args[0]; c.Kind != ScalarIdentifier || c.Column == nil || c.Column.Column != "Status" || c.Column.Table != "Queue" {
		t.Errorf("identifier %+v", c)
	}
	conv := eq.Args[1]
	if conv.Kind != ScalarConvert || conv.Op != "int" || !conv.Implicit {
		t.Errorf("convert %+v", conv)
	}
	inner, stripped := conv.StripConvert()
	if !stripped || inner.Column == nil || !inner.Column.IsParameter() {
		t.Errorf("converted operand %+v", inner)
	}
	if ge.Op != "GE" || ge.String() != "[q].[Id]>=(5)" || ge.Args[1].Kind != ScalarConst || ge.Args[1].Value != "(5)" {
		t.Errorf("second conjunct %+v", ge)
	}
	if got := ge.Args[0].String(); got != "q.Id" {
		t.Errorf("rendered identifier %q", got)
	}
}

func TestResidualPredicates(t *testing.T) {
	pred := "<Predicate>" + residual + "</Predicate>"
	scan := relop("1", "Table Scan", `<TableScan Ordered="0"><Object Table="[Queue]"/></TableScan>`)
	tests := []struct {
		name, physical, op string
		access             bool
	}{
		{"IndexScan", "Index Scan", `<IndexScan Ordered="0"><Object Table="[Queue]" Index="[IX]"/>` + pred + `</IndexScan>`, true},
		{"TableScan", "Table Scan", `<TableScan Ordered="0"><Object Table="[Queue]"/>` + pred + `</TableScan>`, true},
		{"Filter", "Filter", `<Filter StartupExpression="0">` + scan + pred + `</Filter>`, false},
		{"NestedLoops", "Nested Loops", `<NestedLoops Optimized="0">` + pred + scan + scan + `</NestedLoops>`, false},
		{"Hash", "Hash Match", `<Hash><HashKeysBuild/><BuildResidual>` + constant("(1)") + `</BuildResidual><ProbeResidual>` + residual + `</ProbeResidual>` + scan + scan + `</Hash>`, false},
		{"Merge", "Merge Join", `<Merge ManyToMany="0"><Residual>` + residual + `</Residual>` + scan + scan + `</Merge>`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := onlyOp(t, showplan(simple("q", relop("0", tc.physical, tc.op))))
			if tc.access {
				if op.Access == nil || op.Predicate != nil {
					t.Fatalf("Access %v Predicate %v", op.Access, op.Predicate)
				}
				checkResidual(t, op.Access.Predicate)
				return
			}
			if op.Access != nil {
				t.Fatalf("unexpected Access %+v", op.Access)
			}
			checkResidual(t, op.Predicate)
			for _, c := range op.Children {
				if c.Parent != op || c.PhysicalOp != "Table Scan" {
					t.Errorf("child %+v", c)
				}
			}
		})
	}
}

func TestNestedLoopsOuterReferences(t *testing.T) {
	scan := relop("1", "Table Scan", `<TableScan Ordered="0"><Object Table="[Queue]"/></TableScan>`)
	op := onlyOp(t, showplan(simple("q", relop("0", "Nested Loops",
		`<NestedLoops Optimized="0"><OuterReferences>`+colA+`</OuterReferences>`+scan+scan+`</NestedLoops>`))))
	if len(op.OuterReferences) != 1 || op.OuterReferences[0].Column != "Status" {
		t.Errorf("OuterReferences %+v", op.OuterReferences)
	}
	if len(op.Children) != 2 {
		t.Errorf("%d children", len(op.Children))
	}
}

func TestScalarKinds(t *testing.T) {
	tests := []struct {
		name, xml string
		kind      ScalarKind
		op        string
		args      int
	}{
		{"intrinsic", `<Intrinsic FunctionName="isnull">` + constant("(1)") + constant("(2)") + `</Intrinsic>`, ScalarIntrinsic, "isnull", 2},
		{"arithmetic", `<Arithmetic Operation="ADD">` + constant("(1)") + constant("(2)") + `</Arithmetic>`, ScalarArithmetic, "ADD", 2},
		{"if", `<IF><Condition>` + constant("(1)") + `</Condition><Then>` + constant("(2)") + `</Then><Else>` + constant("(3)") + `</Else></IF>`, ScalarIf, "", 3},
		{"multiple assign", `<MultipleAssign><Assign>` + colA + constant("(1)") + `</Assign><Assign>` + colA + constant("(2)") + `</Assign></MultipleAssign>`, ScalarList, "", 2},
		{"other", `<UserDefinedFunction FunctionName="dbo.f"><ScalarOperator><Aggregate AggType="MAX">` + constant("(1)") + `</Aggregate></ScalarOperator></UserDefinedFunction>`, ScalarOther, "UserDefinedFunction", 1},
		{"compare unary", `<Compare CompareOp="IS NULL">` + constant("NULL") + `</Compare>`, ScalarCompare, "IS NULL", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := onlyOp(t, showplan(simple("q", relop("0", "Filter",
				`<Filter StartupExpression="0"><Predicate><ScalarOperator ScalarString="text">`+tc.xml+`</ScalarOperator></Predicate></Filter>`))))
			s := op.Predicate
			if s == nil || s.Kind != tc.kind || s.Op != tc.op || len(s.Args) != tc.args || s.Text != "text" {
				t.Fatalf("got %+v", s)
			}
			for _, a := range s.Args {
				if a == nil {
					t.Fatal("nil argument")
				}
			}
		})
	}
}

func TestSubqueryOperatorsAreChildren(t *testing.T) {
	sub := relop("2", "Index Seek", `<IndexScan Ordered="1"><Object Table="[Other]"/></IndexScan>`)
	op := onlyOp(t, showplan(simple("q", relop("0", "Compute Scalar",
		`<ComputeScalar><DefinedValues><DefinedValue><ColumnReference Column="Expr1"/><ScalarOperator>`+
			`<Subquery Operation="EXISTS"><ScalarOperator/>`+sub+`</Subquery></ScalarOperator></DefinedValue></DefinedValues>`+
			relop("1", "Constant Scan", "<ConstantScan/>")+`</ComputeScalar>`))))
	if len(op.Children) != 2 || op.Children[0].NodeID != 2 || op.Children[1].NodeID != 1 {
		t.Fatalf("children in document order: %+v", op.Children)
	}
}

func TestUnknownContentIgnored(t *testing.T) {
	d := mustParse(t, showplan(`<StmtSimple StatementText="q" Future="x"><Future><Nested a="1"/></Future><QueryPlan Novel="1">`+
		`<NovelElement><RelOp/></NovelElement>`+
		relop("0", "Novel Operator", `<NovelWrapper><Inner>`+relop("1", "Table Scan", `<TableScan Ordered="0"><Object Table="[T]"/></TableScan>`)+`</Inner></NovelWrapper>`)+
		`</QueryPlan></StmtSimple><FutureStatement StatementText="f" StatementId="2"/>`))
	ss := d.Batches[0].Statements
	if len(ss) != 2 || ss[1].Kind != "FutureStatement" || ss[1].ID != 2 || ss[1].Text != "f" {
		t.Fatalf("statements %+v", ss)
	}
	qp := ss[0].QueryPlan
	if qp.Root == nil || qp.Root.PhysicalOp != "Novel Operator" || len(qp.Root.Children) != 1 || qp.Root.Children[0].Access == nil {
		t.Fatalf("root %+v", qp.Root)
	}
	if len(qp.Nodes) != 2 {
		t.Errorf("%d nodes", len(qp.Nodes))
	}
}

func TestStatementAttributes(t *testing.T) {
	d := mustParse(t, showplan(`<StmtSimple StatementCompId="3" StatementEstRows="42.5" StatementId="2" StatementOptmLevel="FULL"`+
		` StatementOptmEarlyAbortReason="TimeOut" CardinalityEstimationModelVersion="160" StatementSubTreeCost="1.25"`+
		` StatementText="SELECT 1" StatementType="SELECT" ParameterizedText="(@1 int)SELECT @1" QueryHash="0xAB" QueryPlanHash="0xCD"`+
		` RetrievedFromCache="true" StatementParameterizationType="2" SecurityPolicyApplied="1" PlanGuideName="pg" PlanGuideDB="db"`+
		` TemplatePlanGuideName="tpg" TemplatePlanGuideDB="tdb">`+
		`<StatementSetOptions ANSI_NULLS="true" ANSI_PADDING="1" ANSI_WARNINGS="false" ARITHABORT="0" CONCAT_NULL_YIELDS_NULL="true" QUOTED_IDENTIFIER="true"/>`+
		`</StmtSimple><StmtSimple StatementText="no type"/>`))
	s := d.Batches[0].Statements[0]
	want := Statement{Kind: "StmtSimple", Batch: 1, Ordinal: 1, ID: 2, CompID: 3, Type: "SELECT", Text: "SELECT 1",
		ParameterizedText: "(@1 int)SELECT @1", ParameterizationType: ParamSimple, OptmLevel: "FULL",
		OptmEarlyAbortReason: "TimeOut", SubtreeCost: 1.25, EstRows: 42.5, QueryHash: "0xAB", QueryPlanHash: "0xCD",
		RetrievedFromCache: "true", CEModelVersion: 160, PlanGuideName: "pg", PlanGuideDB: "db",
		TemplatePlanGuideName: "tpg", TemplatePlanGuideDB: "tdb", SecurityPolicyApplied: true}
	got := *s
	got.SetOptions = nil
	got.Pos = Pos{} // TestPositions checks positions
	if !reflect.DeepEqual(got, want) {
		t.Errorf("statement\n got %+v\nwant %+v", got, want)
	}
	var opts []string
	for _, o := range s.SetOptions.List() {
		v := "absent"
		if o.Value != nil {
			v = map[bool]string{true: "on", false: "off"}[*o.Value]
		}
		opts = append(opts, o.Name+"="+v)
	}
	wantOpts := "ANSI_NULLS=on ANSI_PADDING=on ANSI_WARNINGS=off ARITHABORT=off CONCAT_NULL_YIELDS_NULL=on NUMERIC_ROUNDABORT=absent QUOTED_IDENTIFIER=on"
	if strings.Join(opts, " ") != wantOpts {
		t.Errorf("set options %v", opts)
	}
	if p := d.Batches[0].Statements[1].ParameterizationType; p != ParamUnknown {
		t.Errorf("absent StatementParameterizationType gives %v, want ParamUnknown", p)
	}
}

func TestQueryPlanElements(t *testing.T) {
	qp := onlyPlan(t, showplan(simple("q",
		`<ThreadStat Branches="2" UsedThreads="8"/>`+
			`<MissingIndexes><MissingIndexGroup Impact="91.5"><MissingIndex Database="[db]" Schema="[dbo]" Table="[Queue]">`+
			`<ColumnGroup Usage="EQUALITY"><Column Name="[Status]" ColumnId="2"/></ColumnGroup>`+
			`<ColumnGroup Usage="INEQUALITY"><Column Name="[Due]" ColumnId="3"/></ColumnGroup>`+
			`<ColumnGroup Usage="INCLUDE"><Column Name="[Body]" ColumnId="4"/><Column Name="[a]]b]" ColumnId="5"/></ColumnGroup>`+
			`</MissingIndex></MissingIndexGroup></MissingIndexes>`+
			`<UnmatchedIndexes><Parameterization><Object Database="[db]" Schema="[dbo]" Table="[Queue]" Index="[IX_Pending]"/></Parameterization></UnmatchedIndexes>`+
			`<Warnings UnmatchedIndexes="true" NoJoinPredicate="1"/>`+
			`<MemoryGrantInfo SerialRequiredMemory="512" SerialDesiredMemory="544" RequiredMemory="1024" DesiredMemory="2048"`+
			` RequestedMemory="2048" GrantWaitTime="3" GrantedMemory="2000" MaxUsedMemory="100" IsMemoryGrantFeedbackAdjusted="No: First Execution"/>`+
			`<OptimizerStatsUsage><StatisticsInfo Database="[db]" Schema="[dbo]" Table="[Queue]" Statistics="[IX_Status]"`+
			` ModificationCount="7" SamplingPercent="100" LastUpdate="2024-01-02T03:04:05.06"/></OptimizerStatsUsage>`+
			`<TraceFlags IsCompileTime="1"><TraceFlag Value="4199" Scope="Global"/></TraceFlags>`+
			`<TraceFlags IsCompileTime="0"><TraceFlag Value="7412" Scope="Session"/></TraceFlags>`+
			`<WaitStats><Wait WaitType="PAGEIOLATCH_SH" WaitTimeMs="12" WaitCount="3"/></WaitStats>`+
			`<QueryTimeStats CpuTime="5" ElapsedTime="9"/>`+
			relop("0", "Constant Scan", "<ConstantScan/>")+
			`<ParameterList><ColumnReference Column="@Status" ParameterDataType="int" ParameterCompiledValue="(0)" ParameterRuntimeValue="(1)"/>`+
			`<ColumnReference Column="@local" ParameterDataType="varchar(10)"/></ParameterList>`)))
	if !reflect.DeepEqual(*qp.ThreadStat, ThreadStat{Branches: 2, UsedThreads: 8}) {
		t.Errorf("ThreadStat %+v", qp.ThreadStat)
	}
	wantMI := []MissingIndexGroup{{Impact: 91.5, Indexes: []MissingIndex{{Database: "db", Schema: "dbo", Table: "Queue",
		Equality: []string{"Status"}, Inequality: []string{"Due"}, Include: []string{"Body", "a]b"}}}}}
	if !reflect.DeepEqual(qp.MissingIndexes, wantMI) {
		t.Errorf("MissingIndexes %+v", qp.MissingIndexes)
	}
	if !reflect.DeepEqual(qp.UnmatchedIndexes, []ObjectRef{{Database: "db", Schema: "dbo", Table: "Queue", Index: "IX_Pending"}}) {
		t.Errorf("UnmatchedIndexes %+v", qp.UnmatchedIndexes)
	}
	if qp.Warnings == nil || !qp.Warnings.UnmatchedIndexes || !qp.Warnings.NoJoinPredicate || qp.Warnings.SpatialGuess {
		t.Errorf("Warnings %+v", qp.Warnings)
	}
	wantMG := MemoryGrantInfo{SerialRequiredKB: 512, SerialDesiredKB: 544, RequiredKB: 1024, DesiredKB: 2048, RequestedKB: 2048,
		GrantedKB: 2000, MaxUsedKB: 100, GrantWaitTimeS: 3, FeedbackAdjusted: "No: First Execution"}
	if *qp.MemoryGrant != wantMG {
		t.Errorf("MemoryGrant %+v", qp.MemoryGrant)
	}
	wantStats := []StatisticsInfo{{Database: "db", Schema: "dbo", Table: "Queue", Statistics: "IX_Status",
		ModificationCount: 7, SamplingPercent: 100, LastUpdate: "2024-01-02T03:04:05.06"}}
	if !reflect.DeepEqual(qp.Statistics, wantStats) {
		t.Errorf("Statistics %+v", qp.Statistics)
	}
	wantTF := []TraceFlag{{Value: 4199, Scope: "Global", IsCompile: true}, {Value: 7412, Scope: "Session"}}
	if !reflect.DeepEqual(qp.TraceFlags, wantTF) {
		t.Errorf("TraceFlags %+v", qp.TraceFlags)
	}
	if !reflect.DeepEqual(qp.Waits, []Wait{{Type: "PAGEIOLATCH_SH", TimeMs: 12, Count: 3}}) {
		t.Errorf("Waits %+v", qp.Waits)
	}
	if *qp.QueryTime != (QueryTimeStats{CPUTimeMs: 5, ElapsedTimeMs: 9}) {
		t.Errorf("QueryTime %+v", qp.QueryTime)
	}
	wantParams := []Parameter{
		{Name: "@Status", DataType: "int", CompiledValue: "(0)", RuntimeValue: "(1)", HasCompiled: true, HasRuntime: true},
		{Name: "@local", DataType: "varchar(10)"},
	}
	if !reflect.DeepEqual(qp.Parameters, wantParams) {
		t.Errorf("Parameters %+v", qp.Parameters)
	}
	if qp.Root == nil || len(qp.Nodes) != 1 {
		t.Errorf("Root %v, %d nodes", qp.Root, len(qp.Nodes))
	}
}

func TestQueryPlanAttributes(t *testing.T) {
	d := mustParse(t, showplan(`<StmtSimple><QueryPlan DegreeOfParallelism="4" EffectiveDegreeOfParallelism="2" MemoryGrant="1024"`+
		` CachedPlanSize="40" CompileTime="3" CompileCPU="2" CompileMemory="300" NonParallelPlanReason="MaxDOPSetToOne"`+
		` UsePlan="true" QueryVariantID="2"/></StmtSimple>`))
	qp := d.Batches[0].Statements[0].QueryPlan
	want := QueryPlan{DegreeOfParallelism: 4, EffectiveDOP: 2, MemoryGrantKB: 1024, CachedPlanSizeKB: 40, CompileTimeMs: 3,
		CompileCPUMs: 2, CompileMemoryKB: 300, NonParallelPlanReason: "MaxDOPSetToOne", UsePlan: true, QueryVariantID: 2}
	if !reflect.DeepEqual(*qp, want) {
		t.Errorf("got %+v", *qp)
	}
}

func TestOperatorWarnings(t *testing.T) {
	op := onlyOp(t, showplan(simple("q", relop("0", "Sort", `<Warnings SpatialGuess="1" FullUpdateForOnlineIndexBuild="true">`+
		`<SpillOccurred Detail="1"/><SpillToTempDb SpillLevel="2" SpilledThreadCount="4"/>`+
		`<SortSpillDetails GrantedMemoryKb="10" UsedMemoryKb="9" WritesToTempDb="8" ReadsFromTempDb="7"/>`+
		`<HashSpillDetails GrantedMemoryKb="1"/><ExchangeSpillDetails WritesToTempDb="5"/>`+
		`<PlanAffectingConvert ConvertIssue="Seek Plan" Expression="CONVERT_IMPLICIT(nvarchar(10),[q].[Code],0)"/>`+
		`<Wait WaitType="Memory Grant" WaitTime="30"/>`+
		`<ColumnsWithNoStatistics>`+colA+`</ColumnsWithNoStatistics>`+
		`<ColumnsWithStaleStatistics><ColumnReference Column="Due"/></ColumnsWithStaleStatistics>`+
		`<MemoryGrantWarning GrantWarningKind="Excessive Grant" RequestedMemory="100" GrantedMemory="90" MaxUsedMemory="5"/>`+
		`</Warnings><Sort Distinct="0"><OrderBy/></Sort>`))))
	w := op.Warnings
	want := Warnings{SpatialGuess: true, FullUpdateForOnlineIndexBuild: true, SpillOccurred: true,
		SpillToTempDb:   []SpillToTempDb{{Level: 2, SpilledThreadCount: 4}},
		SortSpills:      []SpillDetails{{GrantedMemoryKB: 10, UsedMemoryKB: 9, WritesToTempDb: 8, ReadsFromTempDb: 7}},
		HashSpills:      []SpillDetails{{GrantedMemoryKB: 1}},
		ExchangeSpills:  []SpillDetails{{WritesToTempDb: 5}},
		Converts:        []PlanAffectingConvert{{Issue: "Seek Plan", Expression: "CONVERT_IMPLICIT(nvarchar(10),[q].[Code],0)"}},
		Waits:           []Wait{{Type: "Memory Grant", TimeMs: 30}},
		NoStatistics:    []ColumnRef{{Database: "db", Schema: "dbo", Table: "Queue", Alias: "q", Column: "Status"}},
		StaleStatistics: []ColumnRef{{Column: "Due"}},
		MemoryGrant:     &MemoryGrantWarning{Kind: "Excessive Grant", RequestedKB: 100, GrantedKB: 90, MaxUsedKB: 5},
	}
	if w == nil || !reflect.DeepEqual(*w, want) {
		t.Errorf("warnings\n got %+v\nwant %+v", w, want)
	}
}

func TestRunTimeSums(t *testing.T) {
	counters := func(threads ...string) string {
		return "<RunTimeInformation>" + strings.Join(threads, "") + "</RunTimeInformation>"
	}
	tests := []struct {
		name string
		xml  string
		want RunTime
	}{
		{
			name: "zero thread 0 plus four workers",
			xml: counters(
				`<RunTimeCountersPerThread Thread="0" ActualRows="0" ActualEndOfScans="0" ActualExecutions="0" ActualElapsedms="0" ActualCPUms="0"/>`,
				`<RunTimeCountersPerThread Thread="1" ActualRows="10" ActualRowsRead="100" ActualEndOfScans="1" ActualExecutions="1" ActualElapsedms="50" ActualCPUms="40" ActualLogicalReads="5" ActualPhysicalReads="1" ActualReadAheads="2" ActualExecutionMode="Row" UsedMemoryGrant="16"/>`,
				`<RunTimeCountersPerThread Thread="2" ActualRows="20" ActualRowsRead="200" ActualEndOfScans="1" ActualExecutions="1" ActualElapsedms="70" ActualCPUms="60" ActualLogicalReads="6" ActualRebinds="1" ActualRewinds="2"/>`,
				`<RunTimeCountersPerThread Thread="3" ActualRows="30" ActualRowsRead="300" ActualEndOfScans="1" ActualExecutions="1" ActualElapsedms="65" ActualCPUms="50" ActualLogicalReads="7"/>`,
				`<RunTimeCountersPerThread Thread="4" ActualRows="40" ActualRowsRead="400" ActualEndOfScans="1" ActualExecutions="1" ActualElapsedms="10" ActualCPUms="5" ActualLogicalReads="8"/>`),
			want: RunTime{ActualRows: 100, ActualExecutions: 4, ActualRowsRead: 1000, HasRowsRead: true, ActualRebinds: 1,
				ActualRewinds: 2, ActualEndOfScans: 4, LogicalReads: 26, PhysicalReads: 1, ReadAheads: 2,
				ElapsedMs: 70, CPUMs: 155, HasTiming: true, UsedMemoryGrantKB: 16, ExecutionMode: "Row",
				Threads: []ThreadCounters{
					{Thread: 0},
					{Thread: 1, ActualRows: 10, ActualExecutions: 1, ActualRowsRead: 100, ElapsedMs: 50, CPUMs: 40},
					{Thread: 2, ActualRows: 20, ActualExecutions: 1, ActualRowsRead: 200, ElapsedMs: 70, CPUMs: 60},
					{Thread: 3, ActualRows: 30, ActualExecutions: 1, ActualRowsRead: 300, ElapsedMs: 65, CPUMs: 50},
					{Thread: 4, ActualRows: 40, ActualExecutions: 1, ActualRowsRead: 400, ElapsedMs: 10, CPUMs: 5},
				}},
		},
		{
			name: "serial thread 0 only",
			xml:  counters(`<RunTimeCountersPerThread Thread="0" ActualRows="5" ActualEndOfScans="1" ActualExecutions="2" ActualElapsedms="12" ActualCPUms="11" ActualExecutionMode="Batch"/>`),
			want: RunTime{ActualRows: 5, ActualExecutions: 2, ActualEndOfScans: 1, ElapsedMs: 12, CPUMs: 11, HasTiming: true,
				ExecutionMode: "Batch", Threads: []ThreadCounters{{ActualRows: 5, ActualExecutions: 2, ElapsedMs: 12, CPUMs: 11}}},
		},
		{
			name: "no timing",
			xml:  counters(`<RunTimeCountersPerThread Thread="0" ActualRows="5" ActualEndOfScans="1" ActualExecutions="1"/>`),
			want: RunTime{ActualRows: 5, ActualExecutions: 1, ActualEndOfScans: 1, Threads: []ThreadCounters{{ActualRows: 5, ActualExecutions: 1}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := onlyOp(t, showplan(simple("q", relop("0", "Table Scan", tc.xml+`<TableScan Ordered="0"><Object Table="[T]"/></TableScan>`))))
			if op.RunTime == nil || !reflect.DeepEqual(*op.RunTime, tc.want) {
				t.Errorf("run time\n got %+v\nwant %+v", op.RunTime, tc.want)
			}
		})
	}
}

func TestWriteOperators(t *testing.T) {
	setPred := `<SetPredicate>` + `<ScalarOperator ScalarString="[q].[Status] = (1)"><ScalarExpressionList/></ScalarOperator></SetPredicate>`
	seek := `<SeekPredicateNew><SeekKeys><Prefix ScanType="EQ"><RangeColumns><ColumnReference Column="Id"/></RangeColumns>` +
		`<RangeExpressions>` + constant("(7)") + `</RangeExpressions></Prefix></SeekKeys></SeekPredicateNew>`
	tests := []struct {
		name, op, element string
		children, seeks   int
	}{
		{"Update", `<Update DMLRequestSort="1"><Object Table="[Queue]" Index="[PK]"/><Object Table="[Queue]" Index="[IX_Status]" Filtered="1"/>` + setPred +
			relop("1", "Table Scan", `<TableScan Ordered="0"><Object Table="[Queue]"/></TableScan>`) + `</Update>`, "Update", 1, 0},
		{"SimpleUpdate", `<SimpleUpdate DMLRequestSort="true"><Object Table="[Queue]"/>` + seek + setPred + `</SimpleUpdate>`, "SimpleUpdate", 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := onlyOp(t, showplan(simple("q", relop("0", "Clustered Index Update", tc.op))))
			a := op.Access
			if a == nil || a.Element != tc.element || !a.DMLRequestSort || a.Object().Table != "Queue" {
				t.Fatalf("Access %+v", a)
			}
			if a.SetPredicate == nil || a.SetPredicate.Text != "[q].[Status] = (1)" {
				t.Errorf("SetPredicate %+v", a.SetPredicate)
			}
			if len(op.Children) != tc.children || len(a.SeekPredicates) != tc.seeks {
				t.Errorf("%d children, %d seeks", len(op.Children), len(a.SeekPredicates))
			}
			if tc.name == "Update" && (len(a.Objects) != 2 || !a.Objects[1].Filtered) {
				t.Errorf("Objects %+v", a.Objects)
			}
		})
	}
}

func TestStatementNesting(t *testing.T) {
	cond := `<StmtCond StatementText="IF @x = 1" StatementId="1" StatementType="COND">` +
		`<Condition>` + `<QueryPlan>` + relop("0", "Constant Scan", "<ConstantScan/>") + `</QueryPlan></Condition>` +
		`<Then><Statements>` + simple("then one", relop("0", "Constant Scan", "<ConstantScan/>")) +
		`<StmtSimple StatementText="then two"/></Statements></Then>` +
		`<Else><Statements>` + simple("else one", relop("0", "Constant Scan", "<ConstantScan/>")) + `</Statements></Else></StmtCond>`
	proc := `<StmtSimple StatementText="EXEC dbo.p" StatementId="2"><StoredProc ProcName="[dbo].[p]"><Statements>` +
		simple("proc body", relop("0", "Constant Scan", "<ConstantScan/>")) + `</Statements></StoredProc></StmtSimple>`
	udf := `<StmtSimple StatementText="SELECT dbo.f()" StatementId="3"><QueryPlan/><UDF ProcName="[dbo].[f]"><Statements>` +
		`<StmtSimple StatementText="udf body"/></Statements></UDF></StmtSimple>`
	cursor := `<StmtCursor StatementText="DECLARE c CURSOR" StatementType="DECLARE CURSOR">` +
		`<CursorPlan CursorName="c" CursorActualType="Dynamic" CursorRequestedType="Dynamic" CursorConcurrency="Optimistic" ForwardOnly="false">` +
		`<Operation OperationType="FetchQuery"><QueryPlan>` + relop("0", "Constant Scan", "<ConstantScan/>") + `</QueryPlan></Operation>` +
		`<Operation OperationType="PopulateQuery"><QueryPlan>` + relop("0", "Constant Scan", "<ConstantScan/>") +
		`</QueryPlan><UDF><Statements><StmtSimple StatementText="cursor udf"/></Statements></UDF></Operation>` +
		`</CursorPlan></StmtCursor>`
	use := `<StmtUseDb StatementText="USE Sales" Database="[Sales]"/>`
	d := mustParse(t, showplan(cond+proc, udf+cursor, use))

	type flat struct {
		text, branch, parent string
		batch, nodes         int
	}
	var got []flat
	for _, s := range d.Statements() {
		f := flat{text: s.Text, batch: s.Batch, nodes: s.NodeCount()}
		if s.Parent != nil {
			f.parent = s.Parent.Text
			for i, c := range s.Parent.Children {
				if c == s {
					f.branch = s.Parent.ChildBranch[i]
				}
			}
		}
		got = append(got, f)
	}
	want := []flat{
		{"IF @x = 1", "", "", 1, 1},
		{"then one", "then", "IF @x = 1", 1, 1},
		{"then two", "then", "IF @x = 1", 1, 0},
		{"else one", "else", "IF @x = 1", 1, 1},
		{"EXEC dbo.p", "", "", 1, 0},
		{"proc body", "proc", "EXEC dbo.p", 1, 1},
		{"SELECT dbo.f()", "", "", 2, 0},
		{"udf body", "udf", "SELECT dbo.f()", 2, 0},
		{"DECLARE c CURSOR", "", "", 2, 2},
		{"cursor udf", "udf", "DECLARE c CURSOR", 2, 0},
		{"USE Sales", "", "", 3, 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("statements\n got %+v\nwant %+v", got, want)
	}
	if len(d.Batches) != 3 || len(d.Batches[0].Statements) != 2 {
		t.Fatalf("batches %+v", d.Batches)
	}
	if p := d.Batches[0].Statements[1]; p.ProcName != "[dbo].[p]" {
		t.Errorf("ProcName %q", p.ProcName)
	}
	c := d.Batches[1].Statements[1]
	if c.Kind != "StmtCursor" || c.Cursor == nil || c.Cursor.Name != "c" || c.Cursor.ActualType != "Dynamic" ||
		c.Cursor.Concurrency != "Optimistic" || c.Cursor.ForwardOnly || len(c.Cursor.Operations) != 2 {
		t.Fatalf("cursor %+v", c.Cursor)
	}
	var labels []string
	for _, lp := range c.Plans() {
		labels = append(labels, lp.Label)
	}
	if strings.Join(labels, ",") != "FetchQuery,PopulateQuery" {
		t.Errorf("cursor plan labels %v", labels)
	}
	if u := d.Batches[2].Statements[0]; u.Kind != "StmtUseDb" || u.Database != "[Sales]" {
		t.Errorf("use %+v", u)
	}
}

func TestBatchesAndStatementBlocks(t *testing.T) {
	doc := `<ShowPlanXML ` + nsAttr + ` Version="1.6" Build="14.0.1000.169"><BatchSequence>` +
		`<Batch><Statements><StmtSimple StatementText="a"/></Statements><Statements><StmtSimple StatementText="b"/></Statements></Batch>` +
		`<Batch></Batch>` +
		`<Batch><Statements><StmtSimple StatementText="c"/></Statements></Batch>` +
		`</BatchSequence></ShowPlanXML>`
	d := mustParse(t, doc)
	var got []string
	for _, b := range d.Batches {
		var texts []string
		for _, s := range b.Statements {
			texts = append(texts, s.Text)
		}
		got = append(got, strings.Join(texts, "+"))
	}
	if strings.Join(got, "|") != "a+b||c" {
		t.Errorf("batches %q", got)
	}

	var streamed []string
	h, err := Stream(strings.NewReader(doc), Options{}, func(s *Statement) error {
		streamed = append(streamed, s.Text)
		return nil
	})
	if err != nil || h != (Header{Version: "1.6", Build: "14.0.1000.169", Batches: 3}) || strings.Join(streamed, ",") != "a,b,c" {
		t.Errorf("Stream: %+v %v %v", h, streamed, err)
	}
}

func TestStreamDeliversTopLevelOnly(t *testing.T) {
	doc := showplan(`<StmtCond StatementText="if"><Condition/><Then><Statements><StmtSimple StatementText="inner"/></Statements></Then></StmtCond>` +
		`<StmtSimple StatementText="next"/>`)
	var seen []string
	_, err := Stream(strings.NewReader(doc), Options{}, func(s *Statement) error {
		seen = append(seen, s.Text+"/"+string(rune('0'+len(s.Children))))
		return nil
	})
	if err != nil || strings.Join(seen, ",") != "if/1,next/0" {
		t.Errorf("seen %v, err %v", seen, err)
	}
}

func TestStreamCallbackErrorStops(t *testing.T) {
	stop := errors.New("stop here")
	calls := 0
	_, err := Stream(strings.NewReader(showplan(`<StmtSimple/><StmtSimple/><StmtSimple/>`)), Options{}, func(*Statement) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Errorf("err %v after %d calls; want the callback's error after 1 call", err, calls)
	}
}

func TestBracketStripping(t *testing.T) {
	tests := []struct{ in, want string }{
		{"[dbo]", "dbo"},
		{"dbo", "dbo"},
		{"[a]]b]", "a]b"},
		{"[[x]]]", "[x]"},
		{"[", "["},
		{"[]", ""},
		{"[a] [b]", "a] [b"}, // one level only: the outer pair
		{"@p1", "@p1"},
	}
	for _, tc := range tests {
		if got := unbracket(tc.in); got != tc.want {
			t.Errorf("unbracket(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBooleanSpellings(t *testing.T) {
	tests := []struct {
		in   string
		want *bool
	}{
		{"1", ptr(true)}, {"true", ptr(true)}, {" true ", ptr(true)},
		{"0", ptr(false)}, {"false", ptr(false)},
		{"", nil}, {"yes", nil}, {"2", nil},
	}
	for _, tc := range tests {
		got := boolPtr(tc.in)
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("boolPtr(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestPositions(t *testing.T) {
	doc := "\uFEFF<ShowPlanXML " + nsAttr + ` Version="1.564" Build="16.0.1000.6">` + "\n" +
		"<BatchSequence><Batch><Statements>\r\n" +
		`  <StmtSimple StatementText="SELECT 'é'" StatementId="1"><QueryPlan>` + "\n" +
		`    <RelOp NodeId="0" PhysicalOp="Top" LogicalOp="Top"><Top>` + `<RelOp NodeId="1" PhysicalOp="Table Scan" LogicalOp="Table Scan"/>` + "\n" +
		"</Top></RelOp></QueryPlan></StmtSimple><!-- é --><StmtSimple StatementText=\"x\" StatementId=\"2\"/>\n" +
		"</Statements></Batch></BatchSequence></ShowPlanXML>"
	for _, v := range []struct {
		name string
		data []byte
	}{{"UTF-8 with BOM", []byte(doc)}, {"UTF-16LE", encodeUTF16(doc[len("\uFEFF"):], false, true)}} {
		t.Run(v.name, func(t *testing.T) {
			d, err := Parse(strings.NewReader(string(v.data)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			ss := d.Statements()
			root := ss[0].QueryPlan.Root
			got := []Pos{ss[0].Pos, root.Pos, root.Children[0].Pos, ss[1].Pos}
			// Columns count UTF-8 bytes: 'é' is two.
			want := []Pos{{3, 3}, {4, 5}, {4, 61}, {5, 51}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("positions %v, want %v", got, want)
			}
		})
	}
}

// TestStatementOrdinalsAreUnique: real plans can repeat a StatementId in one
// batch; the ordinal still tells the statements apart, in document order.
func TestStatementOrdinalsAreUnique(t *testing.T) {
	x := `<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.564" Build="16.0.4215.2"><BatchSequence>` +
		`<Batch><Statements><StmtSimple StatementId="1"/><StmtSimple StatementId="1"/></Statements></Batch>` +
		`<Batch><Statements><StmtCond StatementId="1"><Condition/><Then><Statements><StmtSimple StatementId="2"/></Statements></Then></StmtCond></Statements></Batch>` +
		`</BatchSequence></ShowPlanXML>`
	d, err := Parse(strings.NewReader(x), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, s := range d.Statements() {
		got = append(got, s.Ordinal)
	}
	if fmt.Sprint(got) != "[1 2 3 4]" {
		t.Fatalf("ordinals %v, want [1 2 3 4]", got)
	}
}

// Package plangen writes large or hostile showplan documents for tests and
// benchmarks, so that such inputs are generated where they are used rather
// than committed.
package plangen

import (
	"fmt"
	"io"
	"strings"
)

// Namespace is the showplan XML namespace.
const Namespace = "http://schemas.microsoft.com/sqlserver/2004/07/showplan"

// Head opens a document up to the first statement of its only batch.
const Head = `<?xml version="1.0" encoding="utf-8"?>` + "\n" +
	`<ShowPlanXML xmlns="` + Namespace + `" Version="1.564" Build="16.0.4215.2"><BatchSequence><Batch><Statements>`

// Tail closes what Head opened.
const Tail = `</Statements></Batch></BatchSequence></ShowPlanXML>` + "\n"

// Doc is Head, the statements, Tail.
func Doc(statements ...string) string {
	return Head + strings.Join(statements, "") + Tail
}

// Statement is a StmtSimple with the given id whose QueryPlan holds body.
func Statement(id int, text, body string) string {
	return fmt.Sprintf(`<StmtSimple StatementText="%s" StatementId="%d" StatementType="SELECT" StatementSubTreeCost="10">`+
		`<QueryPlan>%s</QueryPlan></StmtSimple>`, text, id, body)
}

// RelOp is a RelOp element; attrs are extra attributes written as is.
func RelOp(id int, physical, logical, attrs, content string) string {
	return fmt.Sprintf(`<RelOp NodeId="%d" PhysicalOp="%s" LogicalOp="%s" EstimateRows="1" EstimateIO="0.003"`+
		` EstimateCPU="0.0001" AvgRowSize="9" EstimatedTotalSubtreeCost="0.1" Parallel="0" EstimateRebinds="0"`+
		` EstimateRewinds="0"%s><OutputList/>%s</RelOp>`, id, physical, logical, attrs, content)
}

// Seek is an Index Seek on dbo.T.
func Seek(id int) string {
	return RelOp(id, "Index Seek", "Index Seek", "",
		`<IndexScan Ordered="1"><Object Database="[db]" Schema="[dbo]" Table="[T]" Index="[IX_T]"/></IndexScan>`)
}

// KeyLookup is a Key Lookup on the clustered index of dbo.T; attrs are
// extra RelOp attributes.
func KeyLookup(id int, attrs string) string {
	return RelOp(id, "Key Lookup", "Key Lookup", attrs,
		`<IndexScan Lookup="1" Ordered="1"><Object Database="[db]" Schema="[dbo]" Table="[T]" Index="[PK_T]" IndexKind="Clustered"/></IndexScan>`)
}

// WriteNestedLoops writes a document whose one statement is depth Nested
// Loops joins, each the outer input of the one above it, over an Index Seek.
// Every join adds two element levels (RelOp, NestedLoops).
func WriteNestedLoops(w io.Writer, depth int) error {
	var b strings.Builder
	b.WriteString(Head)
	b.WriteString(`<StmtSimple StatementText="SELECT 1" StatementId="1" StatementType="SELECT" StatementSubTreeCost="10"><QueryPlan>`)
	for i := 0; i < depth; i++ {
		fmt.Fprintf(&b, `<RelOp NodeId="%d" PhysicalOp="Nested Loops" LogicalOp="Inner Join" EstimateRows="1"`+
			` EstimateIO="0" EstimateCPU="0.0001" AvgRowSize="9" EstimatedTotalSubtreeCost="0.1" Parallel="0"`+
			` EstimateRebinds="0" EstimateRewinds="0"><OutputList/><NestedLoops Optimized="0">`, i)
		if b.Len() > 1<<20 {
			if _, err := io.WriteString(w, b.String()); err != nil {
				return err
			}
			b.Reset()
		}
	}
	b.WriteString(Seek(depth))
	for i := 0; i < depth; i++ {
		b.WriteString(`</NestedLoops></RelOp>`)
	}
	b.WriteString(`</QueryPlan></StmtSimple>`)
	b.WriteString(Tail)
	_, err := io.WriteString(w, b.String())
	return err
}

// NestedLoops is WriteNestedLoops into a string.
func NestedLoops(depth int) string {
	var b strings.Builder
	_ = WriteNestedLoops(&b, depth)
	return b.String()
}

// KeyLookups is a document with one statement whose root Concatenation
// has n inputs, each a Nested Loops join of an Index Seek and a Key Lookup.
func KeyLookups(n int) string {
	var b strings.Builder
	b.WriteString(Head)
	b.WriteString(`<StmtSimple StatementText="SELECT *" StatementId="1" StatementType="SELECT" StatementSubTreeCost="100"><QueryPlan>`)
	b.WriteString(`<RelOp NodeId="0" PhysicalOp="Concatenation" LogicalOp="Concatenation" EstimateRows="1000" EstimateIO="0"` +
		` EstimateCPU="0.004" AvgRowSize="9" EstimatedTotalSubtreeCost="100" Parallel="0" EstimateRebinds="0"` +
		` EstimateRewinds="0"><OutputList/><Concat>`)
	id := 1
	for i := 0; i < n; i++ {
		b.WriteString(RelOp(id, "Nested Loops", "Inner Join", ` EstimateRows="1000"`, `<NestedLoops Optimized="0">`+
			Seek(id+1)+KeyLookup(id+2, ` EstimateRebinds="999"`)+`</NestedLoops>`))
		id += 3
	}
	b.WriteString(`</Concat></RelOp></QueryPlan></StmtSimple>`)
	b.WriteString(Tail)
	return b.String()
}

// Statements is a document with n statements, each a Key Lookup below a
// Nested Loops join, so that most rules have something to say.
func Statements(n int) string {
	var b strings.Builder
	b.WriteString(Head)
	for i := 1; i <= n; i++ {
		b.WriteString(Statement(i, fmt.Sprintf("SELECT * FROM dbo.T WHERE a = %d", i),
			RelOp(0, "Nested Loops", "Inner Join", "", `<NestedLoops Optimized="0">`+Seek(1)+
				KeyLookup(2, ` EstimateRebinds="999"`)+`</NestedLoops>`)))
	}
	b.WriteString(Tail)
	return b.String()
}

// CrossStatements is Statements whose every statement was compiled with
// QUOTED_IDENTIFIER OFF and carries the same missing-index request: what the
// rules that decide across the statements of a file (once per batch, once
// per file) see at their largest.
func CrossStatements(n int) string {
	set := `<StatementSetOptions ANSI_NULLS="true" ANSI_PADDING="true" ANSI_WARNINGS="true" ARITHABORT="true"` +
		` CONCAT_NULL_YIELDS_NULL="true" NUMERIC_ROUNDABORT="false" QUOTED_IDENTIFIER="false"/>`
	request := `<MissingIndexes><MissingIndexGroup Impact="90"><MissingIndex Database="[d]" Schema="[dbo]" Table="[T]">` +
		`<ColumnGroup Usage="EQUALITY"><Column Name="[a]" ColumnId="1"/></ColumnGroup></MissingIndex></MissingIndexGroup></MissingIndexes>`
	var b strings.Builder
	b.WriteString(Head)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `<StmtSimple StatementText="SELECT * FROM dbo.T WHERE a = %d" StatementId="%d" StatementType="SELECT" StatementSubTreeCost="10">`+
			`%s<QueryPlan>%s%s</QueryPlan></StmtSimple>`, i, i, set, request,
			RelOp(0, "Nested Loops", "Inner Join", "", `<NestedLoops Optimized="0">`+Seek(1)+KeyLookup(2, ` EstimateRebinds="999"`)+`</NestedLoops>`))
	}
	b.WriteString(Tail)
	return b.String()
}

// RunTime is a RunTimeInformation element with one RunTimeCountersPerThread
// per value of rows, each thread executing once.
func RunTime(rows ...string) string {
	var b strings.Builder
	b.WriteString("<RunTimeInformation>")
	for i, r := range rows {
		fmt.Fprintf(&b, `<RunTimeCountersPerThread Thread="%d" ActualRows="%s" ActualEndOfScans="1" ActualExecutions="1"`+
			` ActualElapsedms="5000" ActualCPUms="5000" ActualLogicalReads="100"/>`, i+1, r)
	}
	b.WriteString("</RunTimeInformation>")
	return b.String()
}

// HugeNumbers is a document whose numbers are in range for the schema but
// past any real plan: a Key Lookup estimated to run 1e308 times, one
// estimated 1e19 times, and a Sort whose threads' actual rows add up past
// 2^63.
func HugeNumbers() string {
	near := "9223372036854775000"
	sortOp := RelOp(0, "Sort", "Sort", "",
		RunTime(near, near)+`<Sort Distinct="0"><OrderBy><OrderByColumn Ascending="1"><ColumnReference Database="[db]" Schema="[dbo]" Table="[T]" Column="a"/></OrderByColumn></OrderBy>`+
			RelOp(1, "Clustered Index Scan", "Clustered Index Scan", "", RunTime(near, near)+
				`<IndexScan Ordered="0"><Object Database="[db]" Schema="[dbo]" Table="[T]" Index="[PK_T]" IndexKind="Clustered"/></IndexScan>`)+
			`</Sort>`)
	lookups := func(rebinds string) string {
		return RelOp(0, "Nested Loops", "Inner Join", ` EstimateRows="1e308"`, `<NestedLoops Optimized="0">`+Seek(1)+
			KeyLookup(2, ` EstimateRebinds="`+rebinds+`" EstimatedTotalSubtreeCost="1e308"`)+`</NestedLoops>`)
	}
	return Head + Statement(1, "SELECT * FROM dbo.T ORDER BY a", sortOp) +
		Statement(2, "SELECT * FROM dbo.T WHERE b = 1", lookups("1e308")) +
		Statement(3, "SELECT * FROM dbo.T WHERE b = 2", lookups("1e19")) + Tail
}

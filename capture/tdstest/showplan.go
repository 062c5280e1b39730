package tdstest

// ShowplanColumnName is the exact column name SQL Server gives the XML
// showplan result set, for both SHOWPLAN_XML and STATISTICS XML.
const ShowplanColumnName = "Microsoft SQL Server 2005 XML Showplan"

// DefaultPlanChunk is the PLP chunk size the showplan helpers use.
const DefaultPlanChunk = 8000

// ShowplanColumn is the showplan column: nvarchar(max), sent as PLP in
// DefaultPlanChunk-byte chunks with a known total length. Chunked and
// UnknownLength change that.
func ShowplanColumn() Column {
	return NVarCharMax(ShowplanColumnName).Chunked(DefaultPlanChunk).Expression()
}

// ShowplanResultSet is a one-row result set holding one plan document.
func ShowplanResultSet(planXML string) *ResultSet {
	return ShowplanResultSetWith(ShowplanColumn(), planXML)
}

// ShowplanResultSetWith is ShowplanResultSet with a caller-tuned column
// (chunk size, unknown length).
func ShowplanResultSetWith(col Column, planXML string) *ResultSet {
	return NewResultSet(col).Row(planXML)
}

// EstimatedPlan answers a request under SET SHOWPLAN_XML ON with one plan
// document. For a batch this is one document for the whole batch; for an RPC
// it is "variant A": the plan result set inside the procedure framing.
func EstimatedPlan(planXML string) *Response {
	return NewResponse().Result(ShowplanResultSet(planXML))
}

// NoPlan answers an RPC under SHOWPLAN_XML the way a real server probably
// does ("variant B"): no result set, just RETURNSTATUS and DONEPROC.
func NoPlan() *Response { return NewResponse() }

// ActualPlanSelect answers a SELECT under SET STATISTICS XML ON: the rows,
// then the plan result set.
func ActualPlanSelect(rows *ResultSet, planXML string) *Response {
	return NewResponse().Result(rows).Result(ShowplanResultSet(planXML))
}

// ActualPlanDML answers an INSERT, UPDATE, DELETE or MERGE (cmd is CmdInsert
// etc.) under SET STATISTICS XML ON: the row count, then the plan result set.
func ActualPlanDML(cmd uint16, rowsAffected int64, planXML string) *Response {
	return NewResponse().RowCount(cmd, rowsAffected).Result(ShowplanResultSet(planXML))
}

// ErrorResponse answers with a failed statement carrying msgs.
func ErrorResponse(msgs ...Message) *Response { return NewResponse().Error(msgs...) }

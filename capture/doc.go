// Package capture connects to SQL Server and captures the plan the
// application would really get for a statement, together with the catalog
// facts the filtered-index rules need.
//
// A Session pins one connection (go-mssqldb resets a pooled connection's
// SET options on every checkout, which would silently switch SHOWPLAN_XML
// off and run the statement) and starts with one batch that sets the seven
// SET options that govern filtered indexes and reads the database and
// server facts. Session.Explain then sends a statement exactly as the
// application does: a plain batch as a SQL batch, a parameterized one as an
// RPC to sp_executesql by name with the application's declaration and typed
// values.
//
// Estimated plans are compiled under SET SHOWPLAN_XML ON. A real server may
// return no plan for an RPC under SHOWPLAN_XML; the statement is then
// compiled as the temporary procedure #planlint_probe with the same
// declaration, executed with the same values, so the parameters stay
// parameters and are sniffed. Actual plans run under SET STATISTICS XML ON
// inside a transaction that is rolled back on success, error, timeout and
// interruption alike. Timeouts and interruptions cancel requests explicitly
// (never through a context deadline, which makes go-mssqldb discard the
// connection), so the cleanup requests that follow still reach the server.
//
// Round trips after login for one estimated statement: session setup,
// SHOWPLAN_XML ON, the statement, SHOWPLAN_XML OFF, catalog facts (skipped
// when every table's facts are already known). Emulating forced
// parameterization adds one (sp_get_query_template). The fallback adds
// five the first time (CREATE PROCEDURE, ON, EXEC, OFF, DROP PROCEDURE
// after the RPC that returned no plan); later RPCs of the session use it
// directly, five requests instead of three.
//
// Connection strings and messages never show secrets: see Redact.
package capture

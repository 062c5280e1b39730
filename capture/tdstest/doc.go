// Package tdstest is an in-process SQL Server impostor for tests: a small
// server that speaks the real TDS 7.4 protocol over loopback TCP, so code
// using github.com/microsoft/go-mssqldb can be tested through the real
// driver and database/sql without a SQL Server.
//
// # What it emulates
//
//   - PRELOGIN and TLS as SQL Server with its self-signed certificate
//     negotiates them: NOT_SUP to encrypt=disable; OFF to go-mssqldb's
//     default (encrypt=false), with the TLS 1.2 handshake carried in
//     PRELOGIN packets and only LOGIN7 encrypted; ON to encrypt=true, with
//     everything after the handshake encrypted; and TDS 8.0 (encrypt=strict):
//     TLS with ALPN tds/8.0 from the first byte. The certificate is
//     generated at run time (Server.CertificatePEM gives it to clients that
//     validate it); Config.NoTLS plays a server without one. LOGIN7 with SQL
//     authentication, including an optional password check and configurable
//     login failure (error 18456). A LOGIN7 FeatureExt block is parsed and
//     answered with FEATUREEXTACK for the features SQL Server acknowledges
//     here (UTF8_SUPPORT, GLOBALTRANSACTIONS); federated authentication is
//     refused. The login reply has SQL Server's token order and bytes
//     (LOGINACK echoing the client's TDS version, INFO line 1, packet-size
//     ENVCHANGE from the 4096 default).
//   - SQL batches, RPCs (sp_executesql by id or by name, any procedure by
//     name) with their parameters decoded, Transaction Manager requests
//     (begin, commit, rollback), ATTENTION, and RESETCONNECTION.
//   - A session per connection: SHOWPLAN_XML, STATISTICS XML, the seven SET
//     options that govern filtered indexes (seeded with the fODBC login
//     defaults), NOCOUNT, XACT_ABORT, the current database and @@TRANCOUNT.
//     The server runs batches made only of SET, BEGIN TRAN, COMMIT,
//     ROLLBACK, IF @@TRANCOUNT > 0 ROLLBACK, USE and SELECT 1 itself; the
//     SET statements of any other batch change the recorded state too.
//     A SET SHOWPLAN statement (outside strings and comments) must be alone
//     in its batch (error 1067); SHOWPLAN_ALL and SHOWPLAN_TEXT are refused.
//   - SHOWPLAN_XML as SQL Server applies it: only SET and USE run; a batch of
//     session statements returns one plan document listing them (no row for
//     SELECT 1, no transaction for BEGIN TRAN), and an sp_executesql RPC
//     returns no plan without reaching the handler unless
//     Config.PlanForRPC is set. sp_executesql takes its statement and
//     declaration from @statement/@parameters (or @stmt/@params, or the
//     first two unnamed parameters) and rejects non-Unicode ones (error 214).
//   - Everything else is answered by a Handler supplied by the test, given
//     the session state and the parsed request, with a Response built from
//     typed result sets, row counts, errors and INFO messages. The server
//     frames it for the request: DONE per statement in a batch; DONEINPROC,
//     RETURNSTATUS (the last error number after an error), RETURNVALUE
//     (OUTPUT parameters) and DONEPROC in an RPC; DONE_COUNT is cleared under
//     NOCOUNT. Responses can be delayed (an ATTENTION cuts the delay short:
//     the interrupted response ends, then DONE_ATTN follows in a message of
//     its own) or cut off mid-stream.
//   - Every message is recorded with the session state it ran under;
//     protocol errors and requests no handler answered are recorded too, and
//     Start fails the test on either.
//
// # What it does not emulate
//
// It runs no SQL: apart from the session statements above, answers come
// only from the handler. There is no forced encryption, no
// integrated, Azure AD or Always Encrypted authentication, no MARS, no
// batched RPCs in one message, no cursors or prepared-statement handles,
// and no TVP, UDT, xml or sql_variant parameters. Wire details that real
// servers were not observed to send (CurCmd values of SET statements, the
// framing of the no-plan reply to an RPC under SHOWPLAN_XML, the DONE bits
// after a plan, the plan of a batch of SET statements) are choices
// documented where they are made. Temporary-table creation under
// SHOWPLAN_XML is left to the handler.
package tdstest

// Conformance checks of the TDS test server with tedious, a TDS client that
// shares no code with go-mssqldb.
// Usage: node tedious.js PORT CATALOG_SQL_FILE CERTIFICATE_PEM_FILE
// Prints one line per check and a closing "tedious: N passed, N failed".
'use strict';
const fs = require('fs');
const { Connection, Request, TYPES } = require('tedious');

const port = Number(process.argv[2]);
const catalogSQL = fs.readFileSync(process.argv[3], 'utf8');
const ca = fs.readFileSync(process.argv[4]);
const SHOWPLAN = 'Microsoft SQL Server 2005 XML Showplan';
let passed = 0;
let failed = 0;

function connect(options) {
  return new Promise((resolve, reject) => {
    const conn = new Connection({
      server: '127.0.0.1',
      authentication: { type: 'default', options: { userName: 'sa', password: 'pw' } },
      options: Object.assign({ port, database: 'WorkDb', trustServerCertificate: true, encrypt: true, connectTimeout: 10000, requestTimeout: 10000 }, options),
    });
    conn.on('error', () => {});
    conn.connect((err) => (err ? reject(err) : resolve(conn)));
  });
}

// run executes a request and collects its result sets, output values and status.
function run(conn, method, sql, setup) {
  return new Promise((resolve, reject) => {
    const sets = [];
    const outputs = {};
    let status;
    const req = new Request(sql, (err) => (err ? reject(err) : resolve({ sets, outputs, status })));
    req.on('columnMetadata', (cols) => sets.push({ columns: cols.map((c) => c.colName), rows: [] }));
    req.on('row', (cols) => sets[sets.length - 1].rows.push(cols.map((c) => c.value)));
    req.on('returnValue', (name, value) => { outputs[name] = value; });
    req.on('doneProc', (rowCount, more, returnStatus) => { if (returnStatus !== undefined) status = returnStatus; });
    if (setup) setup(req);
    conn[method](req);
  });
}

const batch = (conn, sql) => run(conn, 'execSqlBatch', sql);

function tx(conn, op, name) {
  return new Promise((resolve, reject) => conn[op]((err) => (err ? reject(err) : resolve()), name));
}

async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err && err.stack ? err.stack.split('\n')[0] : err}`);
  }
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

async function main() {
  for (const [label, opts] of [['encrypt=true', {}], ['encrypt=false', { encrypt: false }], ['encrypt=strict', { encrypt: 'strict', trustServerCertificate: false, cryptoCredentialsDetails: { ca } }]]) {
    await check(`login (${label})`, async () => {
      const conn = await connect(opts);
      const r = await batch(conn, 'SELECT 1');
      assert(r.sets.length === 1 && r.sets[0].rows[0][0] === 1, `SELECT 1 gave ${JSON.stringify(r.sets)}`);
      conn.close();
    });
  }
  const conn = await connect({ packetSize: 512 });
  await check('SET batch', async () => {
    await batch(conn, 'SET ANSI_NULLS ON; SET ARITHABORT ON; SET NOCOUNT ON');
  });
  await check('SHOWPLAN_XML around a batch', async () => {
    await batch(conn, 'SET SHOWPLAN_XML ON');
    const r = await batch(conn, 'SELECT WorkId FROM dbo.Work WHERE Status = 0');
    await batch(conn, 'SET SHOWPLAN_XML OFF');
    assert(r.sets.length === 1 && r.sets[0].columns[0] === SHOWPLAN, `columns ${JSON.stringify(r.sets.map((s) => s.columns))}`);
    assert(r.sets[0].rows[0][0].includes('StatementText="SELECT WorkId'), 'plan lacks the statement');
  });
  await check('SHOWPLAN_XML around an RPC: no plan', async () => {
    await batch(conn, 'SET SHOWPLAN_XML ON');
    const r = await run(conn, 'execSql', 'SELECT WorkId FROM dbo.Work WHERE Status = @s', (req) => req.addParameter('s', TYPES.Int, 0));
    await batch(conn, 'SET SHOWPLAN_XML OFF');
    assert(r.sets.length === 0, `result sets ${JSON.stringify(r.sets)}`);
  });
  await check('SHOWPLAN_XML: SELECT 1 returns a plan, not a row', async () => {
    await batch(conn, 'SET SHOWPLAN_XML ON');
    const r = await batch(conn, 'SELECT 1');
    await batch(conn, 'SET SHOWPLAN_XML OFF');
    assert(r.sets.length === 1 && r.sets[0].columns[0] === SHOWPLAN, `columns ${JSON.stringify(r.sets.map((s) => s.columns))}`);
  });
  await check('RPC parameters', async () => {
    const r = await run(conn, 'execSql', 'SELECT @a, @b', (req) => {
      req.addParameter('a', TYPES.Int, 42);
      req.addParameter('b', TYPES.NVarChar, 'café');
    });
    assert(r.sets.length === 1 && r.sets[0].rows[0][0] === '42' && r.sets[0].rows[0][1] === 'café', JSON.stringify(r.sets));
  });
  await check('STATISTICS XML', async () => {
    await batch(conn, 'SET STATISTICS XML ON');
    const r = await batch(conn, 'SELECT WorkId FROM dbo.Work');
    await batch(conn, 'SET STATISTICS XML OFF');
    assert(r.sets.length === 2 && r.sets[1].columns[0] === SHOWPLAN, `columns ${JSON.stringify(r.sets.map((s) => s.columns))}`);
  });
  await check('BEGIN/ROLLBACK as a batch', async () => {
    await batch(conn, 'BEGIN TRANSACTION');
    await batch(conn, 'IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION');
  });
  await check('named transaction (Transaction Manager request)', async () => {
    await tx(conn, 'beginTransaction', 'planlint_tx');
    await tx(conn, 'rollbackTransaction', 'planlint_tx');
  });
  await check('catalog batch', async () => {
    const r = await batch(conn, catalogSQL);
    assert(r.sets.length === 3, `${r.sets.length} result sets`);
    assert(r.sets[0].rows.length === 4 && r.sets[0].rows[0][2] === 'WorkId', `columns ${JSON.stringify(r.sets[0].rows)}`);
  });
  await check('OUTPUT parameter and return status', async () => {
    const r = await run(conn, 'callProcedure', 'dbo.GetCount', (req) => req.addOutputParameter('count', TYPES.Int));
    assert(r.outputs.count === 42, `outputs ${JSON.stringify(r.outputs)}`);
    assert(r.status === 7, `return status ${r.status}`);
  });
  await check('sp_get_query_template OUTPUT parameters', async () => {
    const r = await run(conn, 'callProcedure', 'sp_get_query_template', (req) => {
      req.addParameter('querytext', TYPES.NVarChar, 'SELECT * FROM dbo.Work WHERE Status = 0');
      req.addOutputParameter('templatetext', TYPES.NVarChar, null, { length: Infinity });
      req.addOutputParameter('parameters', TYPES.NVarChar, null, { length: Infinity });
    });
    assert(r.outputs.parameters === '@0 int' && r.outputs.templatetext.includes('@0'), JSON.stringify(r.outputs));
  });
  await check('cancel', async () => {
    const started = Date.now();
    const p = batch(conn, "WAITFOR DELAY '00:01:00'").then(() => 'completed', (err) => err);
    setTimeout(() => conn.cancel(), 200);
    const res = await p;
    assert(res instanceof Error && res.code === 'ECANCEL', `request ended with ${res}`);
    assert(Date.now() - started < 5000, 'cancel took too long');
    const r = await batch(conn, 'SELECT 1');
    assert(r.sets[0].rows[0][0] === 1, 'connection unusable after cancel');
  });
  await check('large plan over 512-byte packets', async () => {
    await batch(conn, 'SET SHOWPLAN_XML ON');
    const text = 'SELECT WorkId FROM dbo.Work WHERE CustomerId IN (' + Array.from({ length: 2000 }, (_, i) => i).join(', ') + ')';
    const r = await batch(conn, text);
    await batch(conn, 'SET SHOWPLAN_XML OFF');
    assert(r.sets.length === 1 && r.sets[0].rows[0][0].includes('1999)'), 'plan cut short');
  });
  conn.close();
  console.log(`tedious: ${passed} passed, ${failed} failed`);
  process.exitCode = failed > 0 ? 1 : 0;
}

main().catch((err) => {
  console.log(`FAIL setup: ${err}`);
  failed++;
  console.log(`tedious: ${passed} passed, ${failed} failed`);
  process.exitCode = 1;
});

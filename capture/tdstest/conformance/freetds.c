/* Conformance checks of the TDS test server with FreeTDS db-lib, a TDS
 * client that shares no code with go-mssqldb: RPCs, OUTPUT parameters,
 * cancel and small packets, which tsql cannot send.
 * Usage: freetds SERVER CATALOG_SQL_FILE, with FREETDSCONF naming a
 * freetds.conf that defines SERVER, SERVER_require and SERVER_off.
 * Prints one line per check and "freetds: N passed, N failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sybfront.h>
#include <sybdb.h>

static int passed, failed;
static char failure[512];

static int msg_handler(DBPROCESS *dbproc, DBINT msgno, int state, int severity, char *text, char *server, char *proc, int line)
{
	(void)dbproc; (void)state; (void)server; (void)proc; (void)line;
	if (severity > 10) {
		snprintf(failure, sizeof failure, "server error %d: %s", (int)msgno, text);
	}
	return 0;
}

static int err_handler(DBPROCESS *dbproc, int severity, int dberr, int oserr, char *dberrstr, char *oserrstr)
{
	(void)dbproc; (void)severity; (void)oserr; (void)oserrstr;
	if (dberr != SYBESMSG)
		snprintf(failure, sizeof failure, "db-lib error %d: %s", dberr, dberrstr);
	return INT_CANCEL;
}

static void report(const char *name, int ok)
{
	if (ok) {
		passed++;
		printf("ok   %s\n", name);
	} else {
		failed++;
		printf("FAIL %s: %s\n", name, failure[0] ? failure : "unexpected result");
	}
	failure[0] = 0;
	fflush(stdout);
}

static DBPROCESS *connect_to(const char *server, int packet)
{
	LOGINREC *login = dblogin();
	DBSETLUSER(login, "sa");
	DBSETLPWD(login, "pw");
	DBSETLAPP(login, "freetds-conformance");
	DBSETLVERSION(login, DBVERSION_74);
	if (packet > 0)
		DBSETLPACKET(login, packet);
	DBPROCESS *dbproc = dbopen(login, server);
	dbloginfree(login);
	if (dbproc && dbuse(dbproc, "WorkDb") != SUCCEED) {
		dbclose(dbproc);
		return NULL;
	}
	return dbproc;
}

/* result_sets runs a batch and returns the number of result sets with
 * columns; the first column name of set `want_name_set` (1-based) and the
 * first value of the first row of the first set are copied out. */
static int batch(DBPROCESS *dbproc, const char *sql, int name_set, char *name, size_t name_len, char *value, size_t value_len)
{
	int sets = 0;
	RETCODE rc;
	if (dbcmd(dbproc, sql) != SUCCEED || dbsqlexec(dbproc) != SUCCEED) {
		dbcancel(dbproc);
		return -1;
	}
	while ((rc = dbresults(dbproc)) != NO_MORE_RESULTS) {
		if (rc != SUCCEED) {
			dbcancel(dbproc);
			return -1;
		}
		if (dbnumcols(dbproc) == 0)
			continue;
		sets++;
		if (sets == name_set && name)
			snprintf(name, name_len, "%s", dbcolname(dbproc, 1));
		int row = 0;
		while (dbnextrow(dbproc) != NO_MORE_ROWS) {
			if (sets == 1 && row == 0 && value) {
				int n = dbdatlen(dbproc, 1);
				if (n >= (int)value_len)
					n = value_len - 1;
				if (n > 0) {
					DBINT t = dbcoltype(dbproc, 1);
					if (t == SYBINT4 || t == SYBINTN) {
						snprintf(value, value_len, "%d", *(DBINT *)dbdata(dbproc, 1));
					} else {
						memcpy(value, dbdata(dbproc, 1), n);
						value[n] = 0;
					}
				}
			}
			row++;
		}
	}
	return sets;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc(n + 1);
	if (fread(buf, 1, n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	fclose(f);
	return buf;
}

#define SHOWPLAN "Microsoft SQL Server 2005 XML Showplan"

/* nvarchar as TDS 7 sends it (XSYBNVARCHAR); db-lib's SYBNVARCHAR is the
 * legacy 0x67 type, which SQL Server does not take for sp_executesql. */
#define TDS7_NVARCHAR 231

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: freetds SERVER CATALOG_SQL_FILE\n");
		return 2;
	}
	const char *server = argv[1];
	char *catalog = read_file(argv[2]);
	char name[256], value[8192], other[64];
	if (dbinit() == FAIL || !catalog) {
		fprintf(stderr, "freetds: init failed\n");
		return 2;
	}
	dbmsghandle(msg_handler);
	dberrhandle(err_handler);

	const char *modes[] = {"", "_require", "_off"};
	const char *labels[] = {"login (encryption request)", "login (encryption require)", "login (encryption off)"};
	for (int i = 0; i < 3; i++) {
		char s[128];
		snprintf(s, sizeof s, "%s%s", server, modes[i]);
		DBPROCESS *p = connect_to(s, 0);
		int ok = p && batch(p, "SELECT 1", 0, NULL, 0, value, sizeof value) == 1 && strcmp(value, "1") == 0;
		report(labels[i], ok);
		if (p)
			dbclose(p);
	}

	DBPROCESS *db = connect_to(server, 512);
	if (!db) {
		report("connect with 512-byte packets", 0);
		printf("freetds: %d passed, %d failed\n", passed, failed);
		return 1;
	}
	report("SET batch", batch(db, "SET ANSI_NULLS ON; SET ARITHABORT ON; SET QUOTED_IDENTIFIER ON", 0, NULL, 0, NULL, 0) == 0);

	int ok = batch(db, "SET SHOWPLAN_XML ON", 0, NULL, 0, NULL, 0) == 0;
	ok = ok && batch(db, "SELECT WorkId FROM dbo.Work WHERE Status = 0", 1, name, sizeof name, value, sizeof value) == 1 &&
	     strcmp(name, SHOWPLAN) == 0 && strstr(value, "SELECT WorkId") != NULL;
	ok = batch(db, "SET SHOWPLAN_XML OFF", 0, NULL, 0, NULL, 0) == 0 && ok;
	report("SHOWPLAN_XML around a batch", ok);

	/* sp_executesql through an RPC under SHOWPLAN_XML: no result set. */
	ok = batch(db, "SET SHOWPLAN_XML ON", 0, NULL, 0, NULL, 0) == 0;
	const char *stmt = "SELECT WorkId FROM dbo.Work WHERE Status = @s";
	const char *decl = "@s int";
	DBINT zero = 0;
	int sets = 0;
	if (ok && dbrpcinit(db, "sp_executesql", 0) == SUCCEED &&
	    dbrpcparam(db, "@statement", 0, TDS7_NVARCHAR, -1, strlen(stmt), (BYTE *)stmt) == SUCCEED &&
	    dbrpcparam(db, "@params", 0, TDS7_NVARCHAR, -1, strlen(decl), (BYTE *)decl) == SUCCEED &&
	    dbrpcparam(db, "@s", 0, SYBINT4, -1, -1, (BYTE *)&zero) == SUCCEED &&
	    dbrpcsend(db) == SUCCEED && dbsqlok(db) == SUCCEED) {
		RETCODE rc;
		while ((rc = dbresults(db)) != NO_MORE_RESULTS && rc == SUCCEED)
			if (dbnumcols(db) > 0) {
				sets++;
				while (dbnextrow(db) != NO_MORE_ROWS)
					;
			}
		ok = rc == NO_MORE_RESULTS && sets == 0;
	} else {
		ok = 0;
	}
	ok = batch(db, "SET SHOWPLAN_XML OFF", 0, NULL, 0, NULL, 0) == 0 && ok;
	report("SHOWPLAN_XML around an RPC: no plan", ok);

	ok = batch(db, "SET STATISTICS XML ON", 0, NULL, 0, NULL, 0) == 0;
	ok = ok && batch(db, "SELECT WorkId FROM dbo.Work", 2, name, sizeof name, NULL, 0) == 2 && strcmp(name, SHOWPLAN) == 0;
	ok = batch(db, "SET STATISTICS XML OFF", 0, NULL, 0, NULL, 0) == 0 && ok;
	report("STATISTICS XML", ok);

	ok = batch(db, "BEGIN TRANSACTION", 0, NULL, 0, NULL, 0) == 0 &&
	     batch(db, "SELECT @@TRANCOUNT AS n", 0, NULL, 0, NULL, 0) >= 0 &&
	     batch(db, "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION", 0, NULL, 0, NULL, 0) == 0;
	report("BEGIN/ROLLBACK", ok);

	report("catalog batch", batch(db, catalog, 1, name, sizeof name, value, sizeof value) == 3 && strcmp(name, "schema_name") == 0);

	/* OUTPUT parameter and return status. */
	DBINT count = 0;
	ok = 0;
	if (dbrpcinit(db, "dbo.GetCount", 0) == SUCCEED &&
	    dbrpcparam(db, "@count", DBRPCRETURN, SYBINT4, -1, -1, (BYTE *)&count) == SUCCEED &&
	    dbrpcsend(db) == SUCCEED && dbsqlok(db) == SUCCEED) {
		while (dbresults(db) == SUCCEED)
			;
		ok = dbnumrets(db) == 1 && strcmp(dbretname(db, 1), "@count") == 0 &&
		     *(DBINT *)dbretdata(db, 1) == 42 && dbhasretstat(db) && dbretstatus(db) == 7;
	}
	report("OUTPUT parameter and return status", ok);

	/* Cancel a long request; the connection stays usable. */
	ok = dbcmd(db, "WAITFOR DELAY '00:01:00'") == SUCCEED && dbsqlsend(db) == SUCCEED;
	usleep(200000);
	ok = ok && dbcancel(db) == SUCCEED;
	ok = ok && batch(db, "SELECT 1", 0, NULL, 0, other, sizeof other) == 1 && strcmp(other, "1") == 0;
	report("cancel", ok);

	/* A plan much larger than the 512-byte packets. */
	char big[20000];
	int n = snprintf(big, sizeof big, "SELECT WorkId FROM dbo.Work WHERE CustomerId IN (0");
	for (int i = 1; i < 2000; i++)
		n += snprintf(big + n, sizeof big - n, ", %d", i);
	snprintf(big + n, sizeof big - n, ")");
	ok = batch(db, "SET SHOWPLAN_XML ON", 0, NULL, 0, NULL, 0) == 0;
	static char plan[65536];
	ok = ok && batch(db, big, 1, name, sizeof name, plan, sizeof plan) == 1 && strstr(plan, "1999)") != NULL;
	ok = batch(db, "SET SHOWPLAN_XML OFF", 0, NULL, 0, NULL, 0) == 0 && ok;
	report("large plan over 512-byte packets", ok);

	dbclose(db);
	dbexit();
	printf("freetds: %d passed, %d failed\n", passed, failed);
	return failed > 0;
}

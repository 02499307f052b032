/*
 * psd2ctl's connection and statements (ctl_db.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/settings.h"
#include "ctl/ctl_db.h"

PGresult *
ctl_exec(PGconn *db, const char *sql, int n, const char *const *params)
{
	PGresult	*res;

	res = PQexecParams(db, sql, n, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK &&
	    PQresultStatus(res) != PGRES_COMMAND_OK) {
		fprintf(stderr, "psd2ctl: %s", PQerrorMessage(db));
		PQclear(res);
		PQfinish(db);
		exit(1);
	}
	return (res);
}

/*
 * psd2ctl connects with psd2_ctl_db when set (the operator's role), and
 * migrate with psd2_migrate_db (the owner's role, migration 083); both
 * fall back to psd2_db, the service's connection.
 */
PGconn *
ctl_connect(const char *command)
{
	PGconn		*db;
	const char	*setting;
	char		*conninfo;

	setting = settings_get("db", "");
	setting = settings_get("ctl_db", setting);
	if (strcmp(command, "migrate") == 0)
		setting = settings_get("migrate_db", settings_get("db", ""));
	conninfo = ctl_conninfo(setting);
	db = PQconnectdb(conninfo);
	free(conninfo);
	if (PQstatus(db) != CONNECTION_OK) {
		fprintf(stderr, "psd2ctl: %s", PQerrorMessage(db));
		exit(1);
	}
	PQclear(PQexec(db, "SET client_min_messages = warning"));
	return (db);
}

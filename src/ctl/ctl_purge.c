/*
 * psd2ctl purge: expired codes, tokens, sessions (psd2_purge) and access
 * record partitions past their retention (access_log_purge).
 */
#include <stdio.h>

#include "common/settings.h"
#include "ctl/ctl.h"
#include "ctl/ctl_db.h"

int
ctl_purge(PGconn *db)
{
	PGresult	*res;
	char		 days[24];
	const char	*params[1] = { days };

	res = ctl_exec(db, "SELECT psd2_purge()", 0, NULL);
	printf("purged %s rows\n", PQgetvalue(res, 0, 0));
	PQclear(res);
	/* Access records (migration 010): whole monthly partitions. */
	res = ctl_exec(db, "SELECT 1 FROM pg_proc WHERE proname = "
	    "'access_log_purge'", 0, NULL);
	if (PQntuples(res) > 0) {
		PQclear(res);
		snprintf(days, sizeof(days), "%lld", (long long)
		    settings_int("access_log_retention_days", 395));
		res = ctl_exec(db, "SELECT access_log_purge($1)", 1, params);
		printf("access log partitions dropped: %s\n",
		    PQgetvalue(res, 0, 0));
	}
	PQclear(res);
	return (0);
}

/*
 * psd2ctl's audit rows (issue 10): the operator is named by the system
 * login running psd2ctl ("operator:<login>"). Linked into psd2ctl and into
 * the device end-to-end tests (device/device.mk), so it uses libpq only.
 */
#include <sys/types.h>

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ctl/ctl.h"

void
ctl_actor(char *out, size_t len)
{
	struct passwd	*pw;

	pw = getpwuid(getuid());
	snprintf(out, len, "operator:%s", pw != NULL ? pw->pw_name : "unknown");
}

void
ctl_audit_write(PGconn *db, const char *action, const char *k1,
    const char *v1, const char *k2, const char *v2)
{
	PGresult	*res;
	char		 actor[128];
	const char	*params[6] = { actor, action, k1, v1, k2, v2 };

	ctl_actor(actor, sizeof(actor));
	/* A second pair without a key becomes a null value, then dropped. */
	res = PQexecParams(db, "INSERT INTO audit_log (actor, action, detail) "
	    "VALUES ($1, $2, jsonb_strip_nulls(jsonb_build_object($3::text, "
	    "$4::text, coalesce($5::text, '-'), $6::text)))", 6, NULL, params,
	    NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		fprintf(stderr, "psd2ctl: audit row: %s", PQerrorMessage(db));
		PQclear(res);
		exit(1);
	}
	PQclear(res);
}

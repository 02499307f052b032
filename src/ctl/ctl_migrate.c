/*
 * Schema migrations: the numbered files of src/db/migrations, compiled
 * into psd2ctl, each applied once in its own transaction and recorded in
 * schema_migrations. An advisory lock keeps two operators apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build/embedded.h"
#include "ctl/ctl.h"

static int
ctl_migration_applied(PGconn *db, const char *name)
{
	PGresult	*res;
	const char	*params[1] = { name };
	int		 applied;

	res = ctl_exec(db, "SELECT 1 FROM schema_migrations WHERE name = $1",
	    1, params);
	applied = PQntuples(res) > 0;
	PQclear(res);
	return (applied);
}

static int
ctl_migration_apply(PGconn *db, const struct embedded_file *f,
    const char *name)
{
	PGresult	*res;
	const char	*params[1] = { name };

	PQclear(ctl_exec(db, "BEGIN", 0, NULL));
	res = PQexec(db, (const char *)f->data);
	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK) {
		fprintf(stderr, "psd2ctl: migration %s failed: %s", name,
		    PQerrorMessage(db));
		PQclear(res);
		PQclear(PQexec(db, "ROLLBACK"));
		return (-1);
	}
	PQclear(res);
	PQclear(ctl_exec(db, "INSERT INTO schema_migrations (name) VALUES ($1)", 1,
	    params));
	PQclear(ctl_exec(db, "COMMIT", 0, NULL));
	printf("applied %s\n", name);
	return (0);
}

int
ctl_migrate(PGconn *db)
{
	const char	*name;
	size_t		 i;

	PQclear(ctl_exec(db, "SELECT pg_advisory_lock(4242)", 0, NULL));
	PQclear(ctl_exec(db, "CREATE TABLE IF NOT EXISTS schema_migrations ("
	    "name text PRIMARY KEY, applied_at timestamptz NOT NULL "
	    "DEFAULT now())", 0, NULL));
	/* The files are embedded in name order (the Makefile sorts them). */
	for (i = 0; i < embedded_count; i++) {
		name = strrchr(embedded_files[i].name, '/');
		name = name ? name + 1 : embedded_files[i].name;
		if (ctl_migration_applied(db, name))
			continue;
		if (ctl_migration_apply(db, &embedded_files[i], name) == -1)
			return (1);
	}
	PQclear(ctl_exec(db, "SELECT pg_advisory_unlock(4242)", 0, NULL));
	return (0);
}

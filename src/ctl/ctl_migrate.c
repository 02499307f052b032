/*
 * Schema migrations and SQL functions, both compiled into psd2ctl.
 *
 * src/db/migrations: numbered files, each applied once in its own
 * transaction and recorded in schema_migrations with the SHA-256 of the
 * file. An applied migration never changes: a file whose digest differs
 * from the recorded one stops migrate, unless the recorded digest is a
 * known earlier version (migration_history below) with a repair step.
 *
 * src/db/functions: the current definition of every SQL function,
 * applied whole (CREATE OR REPLACE) after the migrations on every run, so
 * that a function is read in one place. An advisory lock keeps two
 * operators apart. src/db/README.md has the rules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build/embedded.h"
#include "common/crypto.h"
#include "ctl/ctl.h"
#include "ctl/ctl_db.h"

#define MIGRATION_DIR	"src/db/migrations/"
#define FUNCTION_DIR	"src/db/functions/"
#define REPAIR_DIR	"src/db/repairs/"
#define MIGRATE_LOCK	"4242"

/*
 * Versions of migrations that were applied somewhere before the file was
 * changed (a mistake: it must never happen again), with the repair that
 * brings such a database to the current file. The earlier versions are
 * kept in tests/migrate/history/.
 */
static const struct migration_history {
	const char	*name;
	const char	*sha256;
	const char	*repair;
} migration_history[] = {
	/* 010_ais.sql as first committed (37ecd10). */
	{ "010_ais.sql",
	  "e2e2eb39d24803ec2d34aca2add8acb6d0ec0f05aa533b46d41a991aa26ef549",
	  "010_ais.sql" },
	/* 010_ais.sql before the TPP identity work (f2ccbd9). */
	{ "010_ais.sql",
	  "7491626d7d12ea113a5de0f38208320e4a8b7913ed010064a3d43d31af3f8e93",
	  "010_ais.sql" },
};

static const char *
embedded_base(const struct embedded_file *f, const char *dir)
{
	size_t	len = strlen(dir);

	if (strncmp(f->name, dir, len) != 0)
		return (NULL);
	return (f->name + len);
}

static const struct embedded_file *
embedded_find(const char *dir, const char *base)
{
	const char	*name;
	size_t		 i;

	for (i = 0; i < embedded_count; i++) {
		name = embedded_base(&embedded_files[i], dir);
		if (name != NULL && strcmp(name, base) == 0)
			return (&embedded_files[i]);
	}
	return (NULL);
}

static const struct migration_history *
migration_history_find(const char *name, const char *sha256)
{
	size_t	i;

	for (i = 0; i < sizeof(migration_history) /
	    sizeof(migration_history[0]); i++) {
		if (strcmp(migration_history[i].name, name) != 0)
			continue;
		if (sha256 == NULL ||
		    strcmp(migration_history[i].sha256, sha256) == 0)
			return (&migration_history[i]);
	}
	return (NULL);
}

/* Runs SQL text inside the caller's transaction; -1 with a message. */
static int
migrate_exec(PGconn *db, const struct embedded_file *f, const char *what)
{
	PGresult	*res;
	int		 ok;

	res = PQexec(db, (const char *)f->data);
	ok = PQresultStatus(res) == PGRES_COMMAND_OK ||
	    PQresultStatus(res) == PGRES_TUPLES_OK;
	if (!ok)
		fprintf(stderr, "psd2ctl: %s %s failed: %s", what, f->name,
		    PQerrorMessage(db));
	PQclear(res);
	return (ok ? 0 : -1);
}

static int
migrate_commit(PGconn *db, int rc)
{
	PQclear(PQexec(db, rc == 0 ? "COMMIT" : "ROLLBACK"));
	return (rc);
}

static void
migrate_record(PGconn *db, const char *name, const char *sha256, int insert)
{
	const char	*params[2] = { name, sha256 };

	PQclear(ctl_exec(db, insert ?
	    "INSERT INTO schema_migrations (name, sha256) VALUES ($1, $2)" :
	    "UPDATE schema_migrations SET sha256 = $2 WHERE name = $1",
	    2, params));
}

static int
migration_apply(PGconn *db, const struct embedded_file *f, const char *name,
    const char *sha256)
{
	PQclear(ctl_exec(db, "BEGIN", 0, NULL));
	if (migrate_exec(db, f, "migration") == -1)
		return (migrate_commit(db, -1));
	migrate_record(db, name, sha256, 1);
	printf("applied %s\n", name);
	return (migrate_commit(db, 0));
}

/* A known earlier version: its repair, then the current digest. */
static int
migration_repair(PGconn *db, const struct migration_history *h,
    const char *sha256)
{
	const struct embedded_file	*repair;

	if ((repair = embedded_find(REPAIR_DIR, h->repair)) == NULL) {
		fprintf(stderr, "psd2ctl: repair %s of %s is missing from "
		    "this build\n", h->repair, h->name);
		return (-1);
	}
	PQclear(ctl_exec(db, "BEGIN", 0, NULL));
	if (migrate_exec(db, repair, "repair") == -1)
		return (migrate_commit(db, -1));
	migrate_record(db, h->name, sha256, 0);
	printf("repaired %s (applied in an earlier version)\n", h->name);
	return (migrate_commit(db, 0));
}

/*
 * An applied migration: the same file, a known earlier version, or
 * (recorded before digests were kept) unknown. Anything else stops.
 */
static int
migration_check(PGconn *db, const char *name, const char *recorded,
    const char *sha256)
{
	const struct migration_history	*h;

	if (strcmp(recorded, sha256) == 0)
		return (0);
	if (recorded[0] == '\0') {
		/*
		 * Applied by a psd2ctl that kept no digest. Every file but
		 * those listed in migration_history is unchanged since it
		 * was first committed; a listed one is repaired (the repair
		 * suits each of its earlier versions).
		 */
		if ((h = migration_history_find(name, NULL)) != NULL)
			return (migration_repair(db, h, sha256));
		migrate_record(db, name, sha256, 0);
		return (0);
	}
	if ((h = migration_history_find(name, recorded)) != NULL)
		return (migration_repair(db, h, sha256));
	fprintf(stderr, "psd2ctl: migration %s was applied with sha256 %s, "
	    "but this build's file has sha256 %s.\n"
	    "An applied migration never changes: put the change into a new "
	    "migration. Nothing was changed.\n", name, recorded, sha256);
	return (-1);
}

/* A migration recorded in the database that this build does not have. */
static int
migrations_known(PGconn *db)
{
	PGresult	*res;
	const char	*name;
	int		 i, rc = 0;

	res = ctl_exec(db, "SELECT name FROM schema_migrations ORDER BY name",
	    0, NULL);
	for (i = 0; i < PQntuples(res); i++) {
		name = PQgetvalue(res, i, 0);
		if (embedded_find(MIGRATION_DIR, name) != NULL)
			continue;
		fprintf(stderr, "psd2ctl: the database has migration %s, "
		    "which this build does not know: it was migrated by a "
		    "newer psd2ctl. Nothing was changed.\n", name);
		rc = -1;
	}
	PQclear(res);
	return (rc);
}

static int
migrations_run(PGconn *db)
{
	const struct embedded_file	*f;
	PGresult			*res;
	const char			*name, *params[1];
	char				 sha256[65];
	size_t				 i;
	int				 rc = 0;

	if (migrations_known(db) == -1)
		return (-1);
	/* The files are embedded in name order (the Makefile sorts them). */
	for (i = 0; i < embedded_count && rc == 0; i++) {
		f = &embedded_files[i];
		if ((name = embedded_base(f, MIGRATION_DIR)) == NULL)
			continue;
		crypto_sha256_hex(f->data, f->len, sha256);
		params[0] = name;
		res = ctl_exec(db, "SELECT coalesce(sha256, '') FROM "
		    "schema_migrations WHERE name = $1", 1, params);
		if (PQntuples(res) == 0)
			rc = migration_apply(db, f, name, sha256);
		else
			rc = migration_check(db, name, PQgetvalue(res, 0, 0),
			    sha256);
		PQclear(res);
	}
	return (rc);
}

/* Every function definition, whole, in one transaction. */
static int
functions_apply(PGconn *db)
{
	size_t	i, n = 0;

	PQclear(ctl_exec(db, "BEGIN", 0, NULL));
	for (i = 0; i < embedded_count; i++) {
		if (embedded_base(&embedded_files[i], FUNCTION_DIR) == NULL)
			continue;
		if (migrate_exec(db, &embedded_files[i], "functions") == -1)
			return (migrate_commit(db, -1));
		n++;
	}
	printf("functions: %zu files applied\n", n);
	return (migrate_commit(db, 0));
}

/*
 * The token endpoint refuses client secrets still in the unsalted form
 * (src/common/client_secret.h): an upgrade says so where the operator
 * is looking, with the command that converts them.
 */
static void
migrate_warn_unsalted(PGconn *db)
{
	PGresult	*res;

	res = ctl_exec(db, "SELECT count(*) FROM oauth_client "
	    "WHERE secret_key_id IS NULL", 0, NULL);
	if (strcmp(PQgetvalue(res, 0, 0), "0") != 0)
		fprintf(stderr, "psd2ctl: warning: %s client secret(s) stored "
		    "in the unsalted form are refused by the token endpoint; "
		    "psd2ctl tpp rehash converts them\n", PQgetvalue(res, 0, 0));
	PQclear(res);
}

int
ctl_migrate(PGconn *db)
{
	int	rc;

	PQclear(ctl_exec(db, "SELECT pg_advisory_lock(" MIGRATE_LOCK ")", 0,
	    NULL));
	PQclear(ctl_exec(db, "CREATE TABLE IF NOT EXISTS schema_migrations ("
	    "name text PRIMARY KEY, applied_at timestamptz NOT NULL "
	    "DEFAULT now())", 0, NULL));
	/* Databases migrated before digests were kept lack the column. */
	PQclear(ctl_exec(db, "ALTER TABLE schema_migrations ADD COLUMN IF "
	    "NOT EXISTS sha256 text", 0, NULL));
	rc = migrations_run(db);
	if (rc == 0)
		rc = functions_apply(db);
	if (rc == 0)
		migrate_warn_unsalted(db);
	PQclear(ctl_exec(db, "SELECT pg_advisory_unlock(" MIGRATE_LOCK ")", 0,
	    NULL));
	return (rc == 0 ? 0 : 1);
}

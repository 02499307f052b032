/*
 * psd2ctl sandbox-seed: the fixed sandbox data the README lists. Safe to
 * run again: what exists is left as it is.
 */
#include <stdio.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/ctl_db.h"

#define SANDBOX_TOTP	"JBSWY3DPEHPK3PXP"

static const char *sandbox_uris[] = {
	"http://127.0.0.1:8000/callback",
	"https://tpp.example/callback",
};

static int
ctl_exists(PGconn *db, const char *sql, const char *key)
{
	PGresult	*res;
	const char	*params[1] = { key };
	int		 found;

	res = ctl_exec(db, sql, 1, params);
	found = PQntuples(res) > 0;
	PQclear(res);
	return (found);
}

static int
ctl_seed_client(PGconn *db, const char *client_id, int ttl)
{
	/* A row of the earlier unsalted form is converted (idempotent). */
	if (ctl_exists(db, "SELECT 1 FROM oauth_client WHERE client_id = $1",
	    client_id))
		return (ctl_client_rehash(db, client_id) < 0 ? 1 : 0);
	return (ctl_client_add(db, "Sandbox TPP GmbH", "PSDDE-BAFIN-999999",
	    client_id, sandbox_uris, 2, 0, ttl, "sandbox-secret"));
}

static int
ctl_seed_person(PGconn *db, const char *kind, const char *user,
    const char *name, const char *password, const char *role)
{
	const char	*sql;

	sql = strcmp(kind, "staff") == 0 ?
	    "SELECT 1 FROM staff WHERE username = $1" :
	    "SELECT 1 FROM psu WHERE username = $1";
	if (ctl_exists(db, sql, user))
		return (0);
	return (ctl_person_add(db, kind, user, name, password, SANDBOX_TOTP,
	    role));
}

static int
ctl_seed_account(PGconn *db, const char *user, const char *rid,
    const char *iban, const char *name)
{
	if (ctl_exists(db, "SELECT 1 FROM account WHERE resource_id = $1", rid))
		return (0);
	return (ctl_account_add(db, user, iban, "EUR", name, rid));
}

/*
 * The sandbox staff member administers; one seeded before staff had
 * roles is made admin as the staff pages would (staff_member_action).
 */
static int
ctl_seed_admin(PGconn *db)
{
	PGresult	*res;
	char		 actor[128];
	const char	*params[1] = { actor };
	int		 ok;

	if (!ctl_exists(db, "SELECT 1 FROM staff WHERE username = $1 AND "
	    "role <> 'admin'", "staff"))
		return (0);
	ctl_actor(actor, sizeof(actor));
	res = ctl_exec(db, "SELECT staff_member_action($1, NULL, "
	    "'make_admin', 'staff')", 1, params);
	ok = strcmp(PQgetvalue(res, 0, 0), "ok") == 0;
	PQclear(res);
	return (ok ? 0 : 1);
}

int
ctl_sandbox_seed(PGconn *db)
{
	PGresult	*res;

	if (ctl_seed_client(db, "sandbox-tpp", 900) ||
	    ctl_seed_client(db, "sandbox-tpp-short", 5) ||
	    ctl_seed_person(db, "psu", "anna", "Anna Schmidt",
	    "anna-sandbox-1", NULL) ||
	    ctl_seed_person(db, "psu", "bram", "Bram de Vries",
	    "bram-sandbox-1", NULL) ||
	    ctl_seed_person(db, "staff", "staff", "Sandbox Staff",
	    "staff-sandbox-1", "admin") ||
	    ctl_seed_account(db, "anna", "DE-anna-giro",
	    "DE89370400440532013000", "Girokonto") ||
	    ctl_seed_account(db, "anna", "DE-anna-savings",
	    "DE02120300000000202051", "Tagesgeld") ||
	    ctl_seed_account(db, "bram", "NL-bram-current",
	    "NL91ABNA0417164300", "Betaalrekening"))
		return (1);
	if (ctl_seed_admin(db) != 0)
		return (1);
	/* Account data (balances, transactions) of later migrations. */
	res = ctl_exec(db, "SELECT p.proname FROM pg_proc p WHERE "
	    "p.proname = 'sandbox_seed_data'", 0, NULL);
	if (PQntuples(res) > 0)
		PQclear(ctl_exec(db, "SELECT sandbox_seed_data()", 0, NULL));
	PQclear(res);
	printf("sandbox data in place\n");
	return (0);
}

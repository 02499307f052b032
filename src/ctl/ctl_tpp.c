/*
 * psd2ctl tpp add|list|suspend|activate|rehash|refresh-rotation|
 * par-required|auth-method|jwks. The client secret is a
 * 256-bit random value (or the operator's --secret), printed once, stored
 * salted and keyed (src/common/client_secret.h) under the current key of
 * psd2_client_keys. Writes go through 74_operator.sql and the staff
 * pages' functions (70_staff.sql).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/client_secret.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "common/jws.h"
#include "common/keyring.h"
#include "common/redirect_uri.h"
#include "common/settings.h"
#include "common/textrule.h"
#include "ctl/ctl.h"
#include "ctl/ctl_db.h"

#define REDIRECTS_MAX	8

static int
ctl_redirect_array(const char *const *uris, int n, char *out, size_t len)
{
	int	i;

	snprintf(out, len, "{");
	for (i = 0; i < n; i++) {
		if (!redirect_uri_allowed(uris[i], settings_production())) {
			fprintf(stderr, "psd2ctl: redirect URI must be https "
			    "(or, outside production, http on the loopback) "
			    "without a fragment, spaces, quotes, commas or "
			    "braces: %s\n", uris[i]);
			return (-1);
		}
		snprintf(out + strlen(out), len - strlen(out), "%s\"%s\"",
		    i ? "," : "", uris[i]);
	}
	snprintf(out + strlen(out), len - strlen(out), "}");
	return (0);
}

/* The client key file (psd2_client_keys): loaded once, or exits. */
static const struct keyring *
ctl_client_keys(void)
{
	static struct keyring	kr;
	static int		loaded;
	char			path[PATH_MAX], err[256];

	if (loaded)
		return (&kr);
	if (settings_path("client_keys", NULL, path, sizeof(path)) == -1) {
		fprintf(stderr, "psd2ctl: psd2_client_keys is not set\n");
		exit(1);
	}
	if (keyring_load(&kr, path, err, sizeof(err)) == -1) {
		fprintf(stderr, "psd2ctl: client keys: %s (psd2ctl keys-init "
		    "creates it)\n", err);
		exit(1);
	}
	loaded = 1;
	return (&kr);
}

/*
 * The stored form of sha = SHA-256(secret) under the current client key:
 * hash and salt as hex for decode($n, 'hex'), and the key id.
 */
static int
ctl_secret_stored(const uint8_t sha[32], char hash_hex[65],
    char salt_hex[2 * CLIENT_SECRET_SALT_LEN + 1], const char **key_id)
{
	const struct keyring_key	*k;
	uint8_t				 salt[CLIENT_SECRET_SALT_LEN];
	uint8_t				 hash[CLIENT_SECRET_HASH_LEN];

	if ((k = keyring_current(ctl_client_keys())) == NULL ||
	    crypto_random(salt, sizeof(salt)) == -1 ||
	    client_secret_hash(k, salt, sha, hash) == -1)
		return (-1);
	hex_encode(hash, sizeof(hash), hash_hex, 65);
	hex_encode(salt, sizeof(salt), salt_hex, 2 * CLIENT_SECRET_SALT_LEN + 1);
	*key_id = k->id;
	OPENSSL_cleanse(hash, sizeof(hash));
	return (0);
}

int
ctl_client_add(PGconn *db, const char *name, const char *org_id,
    const char *client_id, const char *const *uris, int nuris,
    int pkce_required, int access_ttl, const char *secret)
{
	uint8_t		 raw[32], digest[32];
	char		 gen_secret[64], gen_id[37], array[4096], ttl[16];
	char		 hash_hex[65], salt_hex[2 * CLIENT_SECRET_SALT_LEN + 1];
	char		 actor[128];
	char		 nfc[2 * TEXTRULE_NAME_MAX + 1];
	const char	*params[10], *key_id;

	/* PSUs read the name when they consent: the rule for such text. */
	if (ctl_name_ok("the TPP name", name, nfc, sizeof(nfc)) == -1)
		return (1);
	if (secret != NULL && *secret == '\0') {
		fprintf(stderr, "psd2ctl: the client secret must not be "
		    "empty\n");
		return (1);
	}
	if (secret == NULL) {
		if (crypto_random(raw, sizeof(raw)) == -1)
			return (1);
		base64url_encode(raw, sizeof(raw), gen_secret,
		    sizeof(gen_secret));
		secret = gen_secret;
	}
	if (client_id == NULL) {
		if (crypto_uuid(gen_id) == -1)
			return (1);
		client_id = gen_id;
	}
	if (nuris < 1 || ctl_redirect_array(uris, nuris, array,
	    sizeof(array)) == -1)
		return (1);
	crypto_sha256(secret, strlen(secret), digest);
	if (ctl_secret_stored(digest, hash_hex, salt_hex, &key_id) == -1) {
		fprintf(stderr, "psd2ctl: cannot hash the client secret\n");
		return (1);
	}
	OPENSSL_cleanse(digest, sizeof(digest));
	snprintf(ttl, sizeof(ttl), "%d", access_ttl);
	ctl_actor(actor, sizeof(actor));
	params[0] = actor;
	params[1] = nfc;
	params[2] = org_id;
	params[3] = client_id;
	params[4] = hash_hex;
	params[5] = salt_hex;
	params[6] = key_id;
	params[7] = array;
	params[8] = pkce_required ? "true" : "false";
	params[9] = ttl;
	PQclear(ctl_exec(db, "SELECT operator_client_add($1, $2, $3, $4, "
	    "decode($5, 'hex'), decode($6, 'hex'), $7, $8, $9, $10)", 10,
	    params));
	printf("client_id: %s\nclient_secret: %s\n", client_id, secret);
	OPENSSL_cleanse(gen_secret, sizeof(gen_secret));
	return (0);
}

/*
 * Converts rows of the legacy form (secret_hash = SHA-256(secret), no
 * salt) to the keyed form; client_id NULL: every such row. Knows no
 * secret: the keyed form is over SHA-256(secret). Returns the number of
 * rows converted, or -1.
 */
int
ctl_client_rehash(PGconn *db, const char *client_id)
{
	PGresult	*rows, *res;
	uint8_t		 sha[32];
	char		 hash_hex[65], salt_hex[2 * CLIENT_SECRET_SALT_LEN + 1];
	char		 actor[128];
	const char	*params[6], *key_id, *one[1] = { client_id };
	int		 i, n;

	ctl_actor(actor, sizeof(actor));
	rows = ctl_exec(db, "SELECT client_id, encode(secret_hash, 'hex') "
	    "FROM oauth_client WHERE secret_key_id IS NULL "
	    "AND ($1::text IS NULL OR client_id = $1) ORDER BY client_id",
	    1, one);
	n = 0;
	for (i = 0; i < PQntuples(rows); i++) {
		if (hex_decode(PQgetvalue(rows, i, 1),
		    strlen(PQgetvalue(rows, i, 1)), sha, sizeof(sha)) != 32 ||
		    ctl_secret_stored(sha, hash_hex, salt_hex, &key_id) == -1) {
			PQclear(rows);
			return (-1);
		}
		params[0] = actor;
		params[1] = PQgetvalue(rows, i, 0);
		params[2] = PQgetvalue(rows, i, 1);
		params[3] = hash_hex;
		params[4] = salt_hex;
		params[5] = key_id;
		/* Only if the row is still the one read (a concurrent add). */
		res = ctl_exec(db, "SELECT operator_client_rehash($1, $2, "
		    "decode($3, 'hex'), decode($4, 'hex'), decode($5, 'hex'), "
		    "$6)", 6, params);
		n += strcmp(PQgetvalue(res, 0, 0), "t") == 0;
		PQclear(res);
	}
	PQclear(rows);
	OPENSSL_cleanse(sha, sizeof(sha));
	return (n);
}

static int
ctl_tpp_rehash(PGconn *db)
{
	int	n;

	if ((n = ctl_client_rehash(db, NULL)) < 0) {
		fprintf(stderr, "psd2ctl: rehash failed\n");
		return (1);
	}
	printf("rehashed %d client secret(s)\n", n);
	return (0);
}

static int
ctl_tpp_add(PGconn *db, int argc, char **argv)
{
	const char	*name, *org, *client_id, *secret, *uris[REDIRECTS_MAX];
	int		 i, n, pkce, ttl;

	name = org = client_id = secret = NULL;
	n = pkce = 0;
	ttl = 900;
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--pkce-required") == 0) {
			pkce = 1;
			continue;
		}
		if (i + 1 == argc)
			return (2);
		if (strcmp(argv[i], "--name") == 0)
			name = argv[++i];
		else if (strcmp(argv[i], "--org-id") == 0)
			org = argv[++i];
		else if (strcmp(argv[i], "--client-id") == 0)
			client_id = argv[++i];
		else if (strcmp(argv[i], "--secret") == 0)
			secret = argv[++i];
		else if (strcmp(argv[i], "--access-ttl") == 0)
			ttl = atoi(argv[++i]);
		else if (strcmp(argv[i], "--redirect-uri") == 0 &&
		    n < REDIRECTS_MAX)
			uris[n++] = argv[++i];
		else
			return (2);
	}
	if (name == NULL || org == NULL || n == 0 || ttl <= 0)
		return (2);
	return (ctl_client_add(db, name, org, client_id, uris, n, pkce, ttl,
	    secret));
}

static int
ctl_tpp_list(PGconn *db)
{
	PGresult	*res;
	int		 i;

	res = ctl_exec(db, "SELECT t.org_id, t.name, t.status, c.client_id, "
	    "c.status, array_to_string(c.redirect_uris, ' ') FROM tpp t "
	    "LEFT JOIN oauth_client c ON c.tpp_id = t.id "
	    "ORDER BY t.org_id, c.client_id", 0, NULL);
	for (i = 0; i < PQntuples(res); i++) {
		printf("%s\t%s\t%s\t%s\t%s\t%s\n", PQgetvalue(res, i, 0),
		    PQgetvalue(res, i, 1), PQgetvalue(res, i, 2),
		    PQgetvalue(res, i, 3), PQgetvalue(res, i, 4),
		    PQgetvalue(res, i, 5));
	}
	PQclear(res);
	return (0);
}

/*
 * Suspends (every token of the TPP stops at once) or reactivates, with
 * its audit row, in one transaction: the staff pages' staff_tpp_status.
 */
static int
ctl_tpp_status(PGconn *db, const char *org_id, const char *status)
{
	PGresult	*res;
	char		 actor[128];
	const char	*params[3] = { actor, org_id, status };
	int		 found;

	ctl_actor(actor, sizeof(actor));
	res = ctl_exec(db, "SELECT staff_tpp_status($1, $2, $3)", 3, params);
	found = strcmp(PQgetvalue(res, 0, 0), "ok") == 0;
	PQclear(res);
	if (!found) {
		fprintf(stderr, "psd2ctl: no TPP %s\n", org_id);
		return (1);
	}
	printf("%s: %s\n", org_id, status);
	return (0);
}

/*
 * A client's setting through its operator function (actor, client,
 * value; it writes the audit row when the setting changes), then
 * "CLIENT: what shown".
 */
static int
ctl_tpp_set(PGconn *db, const char *sql, const char *client_id,
    const char *value, const char *what, const char *shown)
{
	PGresult	*res;
	char		 actor[128];
	const char	*params[3] = { actor, client_id, value };
	int		 found;

	ctl_actor(actor, sizeof(actor));
	res = ctl_exec(db, sql, 3, params);
	found = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (!found) {
		fprintf(stderr, "psd2ctl: no client %s\n", client_id);
		return (1);
	}
	printf("%s: %s %s\n", client_id, what, shown);
	return (0);
}

/* An on/off setting of a client: on is true, off false. */
static int
ctl_tpp_switch(PGconn *db, const char *sql, const char *what,
    const char *client_id, const char *onoff)
{
	if (strcmp(onoff, "on") == 0)
		return (ctl_tpp_set(db, sql, client_id, "true", what, onoff));
	if (strcmp(onoff, "off") == 0)
		return (ctl_tpp_set(db, sql, client_id, "false", what, onoff));
	return (2);
}

/*
 * Refresh token rotation of a client on or off (migration 192: off only
 * for clients that authenticate at the token endpoint, which is every
 * client here; the FAPI 2.0 profile forbids rotation).
 */
static int
ctl_tpp_rotation(PGconn *db, const char *client_id, const char *onoff)
{
	return (ctl_tpp_switch(db, "SELECT operator_client_rotation($1, $2, "
	    "$3)", "refresh token rotation", client_id, onoff));
}

/* Pushed authorisation requests required of a client (migration 193). */
static int
ctl_tpp_par(PGconn *db, const char *client_id, const char *onoff)
{
	return (ctl_tpp_switch(db, "SELECT operator_client_par($1, $2, $3)",
	    "pushed authorisation requests required", client_id, onoff));
}

/*
 * How a client authenticates (migrations 194, 195): client_secret_basic,
 * tls_client_auth (RFC 8705, its QWAC on the mTLS host) or
 * private_key_jwt (RFC 7523, its keys registered first with tpp jwks).
 */
static int
ctl_tpp_auth(PGconn *db, const char *client_id, const char *method)
{
	if (strcmp(method, "client_secret_basic") != 0 &&
	    strcmp(method, "tls_client_auth") != 0 &&
	    strcmp(method, "private_key_jwt") != 0)
		return (2);
	return (ctl_tpp_set(db, "SELECT operator_client_auth($1, $2, $3)",
	    client_id, method, "authenticates with", method));
}

/*
 * A client's public keys for private_key_jwt, a JWK Set read from path
 * ("-": standard input), checked as the service will use it
 * (src/common/jws.h) and stored whole, replacing the former set: add
 * the new key to the set before the client signs with it.
 */
static int
ctl_tpp_jwks(PGconn *db, const char *client_id, const char *path)
{
	json_t		*set;
	json_error_t	 jerr;
	char		*text, why[256];
	int		 rc;

	if (strcmp(path, "-") == 0)
		set = json_loadf(stdin, JSON_REJECT_DUPLICATES, &jerr);
	else
		set = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (set == NULL) {
		fprintf(stderr, "psd2ctl: %s: not JSON: %s (line %d)\n", path,
		    jerr.text, jerr.line);
		return (1);
	}
	if (jws_jwks_check(set, why, sizeof(why)) == -1) {
		fprintf(stderr, "psd2ctl: %s: %s\n", path, why);
		json_decref(set);
		return (1);
	}
	text = json_dumps(set, JSON_COMPACT);
	json_decref(set);
	if (text == NULL) {
		fprintf(stderr, "psd2ctl: out of memory\n");
		return (1);
	}
	rc = ctl_tpp_set(db, "SELECT operator_client_jwks($1, $2, $3)",
	    client_id, text, "public keys", "registered");
	free(text);
	return (rc);
}

int
ctl_tpp(PGconn *db, int argc, char **argv)
{
	if (argc < 1)
		return (2);
	if (strcmp(argv[0], "add") == 0)
		return (ctl_tpp_add(db, argc - 1, argv + 1));
	if (strcmp(argv[0], "list") == 0)
		return (ctl_tpp_list(db));
	if (strcmp(argv[0], "rehash") == 0 && argc == 1)
		return (ctl_tpp_rehash(db));
	if (strcmp(argv[0], "suspend") == 0 && argc == 2)
		return (ctl_tpp_status(db, argv[1], "suspended"));
	if (strcmp(argv[0], "activate") == 0 && argc == 2)
		return (ctl_tpp_status(db, argv[1], "active"));
	if (strcmp(argv[0], "refresh-rotation") == 0 && argc == 3)
		return (ctl_tpp_rotation(db, argv[1], argv[2]));
	if (strcmp(argv[0], "par-required") == 0 && argc == 3)
		return (ctl_tpp_par(db, argv[1], argv[2]));
	if (strcmp(argv[0], "auth-method") == 0 && argc == 3)
		return (ctl_tpp_auth(db, argv[1], argv[2]));
	if (strcmp(argv[0], "jwks") == 0 && argc == 3)
		return (ctl_tpp_jwks(db, argv[1], argv[2]));
	return (2);
}

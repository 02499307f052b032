/*
 * Client authentication (see client_auth.h). Client secrets are stored
 * salted and keyed with HMAC (src/common/client_secret.h): operators may
 * choose them, and HMAC keeps the token endpoint's hot path at
 * microseconds where argon2 would need a task per call.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/peer.h"
#include "api/respond.h"
#include "common/config.h"
#include "common/client_secret.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "db/db.h"
#include "oauth/client_assertion.h"
#include "oauth/client_auth.h"
#include "oauth/client_cache.h"
#include "oauth/oauth.h"
#include "tpp/tpp.h"

/* Columns of token_client's row. */
enum {
	CLIENT_COL_RATE_OK,
	CLIENT_COL_SECRET_HASH,
	CLIENT_COL_ACCESS_TTL,
	CLIENT_COL_ACTIVE,
	CLIENT_COL_SALT,
	CLIENT_COL_KEY_ID,
	CLIENT_COL_METHOD,
	CLIENT_COL_ORG_ID,
	CLIENT_COL_JWKS
};

static void
client_auth_failed(struct http_request *req)
{
	respond_oauth_error(req, 401, "invalid_client",
	    "Client authentication failed.");
}

/* private_key_jwt: the assertion's client, and never a second method. */
static int
client_auth_assertion_credentials(struct http_request *req,
    struct client_auth *auth)
{
	const char	*hdr;

	if (http_request_header(req, "authorization", &hdr)) {
		respond_oauth_error(req, 400, "invalid_request",
		    "Use one client authentication method: an Authorization "
		    "header or a client assertion, not both.");
		return (-1);
	}
	if (client_assertion_client_id(req, auth->client_id,
	    sizeof(auth->client_id)) == -1)
		return (-1);
	auth->secret[0] = '\0';
	return (0);
}

/*
 * A client assertion (private_key_jwt); Basic credentials; or, without
 * an Authorization header, over a connection with a TLS client
 * certificate, the body's client_id alone (RFC 8705 2.1). Without Basic,
 * secret is "" (a Basic secret is never empty) and client_auth_done
 * decides. A body client_id must agree with the client authenticated.
 */
int
client_auth_credentials(struct http_request *req, struct client_auth *auth)
{
	const char	*body_id, *hdr;
	int		 n;

	body_id = NULL;
	auth->asserted = 0;
	(void)http_argument_get_string(req, "client_id", &body_id);
	if (client_assertion_sent(req)) {
		if (client_auth_assertion_credentials(req, auth) == -1)
			return (-1);
	} else if (!http_request_header(req, "authorization", &hdr) &&
	    body_id != NULL && req->owner != NULL &&
	    req->owner->cert != NULL) {
		n = snprintf(auth->client_id, sizeof(auth->client_id), "%s",
		    body_id);
		auth->secret[0] = '\0';
		if (n > 0 && (size_t)n < sizeof(auth->client_id))
			return (0);
	} else if (oauth_basic_credentials(req, auth->client_id,
	    sizeof(auth->client_id), auth->secret,
	    sizeof(auth->secret)) == -1) {
		respond_oauth_error(req, 401, "invalid_client",
		    "Client authentication with HTTP Basic, a client "
		    "assertion (private_key_jwt), or the TLS client "
		    "certificate and client_id, is required.");
		return (-1);
	}
	if (body_id != NULL && strcmp(body_id, auth->client_id) != 0) {
		respond_oauth_error(req, 401, "invalid_client",
		    "client_id does not match the authenticated client.");
		return (-1);
	}
	return (0);
}

/* The lookup also counts the address against the rate limit. */
void
client_auth_lookup(struct http_request *req, struct db_query *q,
    struct client_auth *auth)
{
	char	addr[PEER_ADDR_MAX];

	auth->spending = 0;
	db_query_begin(q, req, "SELECT rate_ok, secret_hash, access_ttl, "
	    "active, secret_salt, secret_key_id, auth_method, org_id, jwks "
	    "FROM token_client($1, $2, $3)");
	db_param(q, auth->client_id);
	db_param(q, peer_addr(req, addr, sizeof(addr)));
	db_param_int(q, app_cfg.token_rate_per_minute);
}

int
client_auth_begin(struct http_request *req, struct db_query *q,
    struct client_auth *auth)
{
	if (client_auth_credentials(req, auth) == -1)
		return (-1);
	client_auth_lookup(req, q, auth);
	return (0);
}

/* Remembers an authenticated client for the next requests (see below). */
static void
client_auth_remember(const char *client_id, const uint8_t *digest,
    long long ttl)
{
	char	hex[65];
	json_t	*row;

	if (hex_encode(digest, 32, hex, sizeof(hex)) < 0)
		return;
	if ((row = json_pack("{s:s, s:I}", "digest", hex, "ttl",
	    (json_int_t)ttl)) == NULL)
		return;
	client_cache_put(CLIENT_CACHE_SECRET, client_id, row);
	json_decref(row);
}

/* Remembers a private_key_jwt client's keys (see below). */
static void
client_auth_remember_keys(const struct client_auth *auth, json_t *jwks)
{
	char	hex[65];
	json_t	*row;

	if (hex_encode(auth->keys_hash, sizeof(auth->keys_hash), hex,
	    sizeof(hex)) < 0)
		return;
	if ((row = json_pack("{s:O, s:s, s:I}", "jwks", jwks, "hash", hex,
	    "ttl", (json_int_t)auth->ttl)) == NULL)
		return;
	client_cache_put(CLIENT_CACHE_KEYS, auth->client_id, row);
	json_decref(row);
}

void
client_auth_forget_keys(const char *client_id)
{
	client_cache_put(CLIENT_CACHE_KEYS, client_id, NULL);
}

/* A Basic client's secret against its cached digest (constant time). */
static int
client_auth_cached_secret(struct http_request *req, struct client_auth *auth)
{
	json_t		*row;
	uint8_t		 digest[32], cached[32];
	const char	*hex;

	if ((row = client_cache_get(CLIENT_CACHE_SECRET,
	    auth->client_id)) == NULL)
		return (0);
	hex = json_string_value(json_object_get(row, "digest"));
	if (hex == NULL || hex_decode(hex, strlen(hex), cached,
	    sizeof(cached)) != 32)
		return (0);
	crypto_sha256(auth->secret, strlen(auth->secret), digest);
	if (!crypto_equal(digest, cached, sizeof(digest))) {
		client_auth_failed(req);
		return (-1);
	}
	auth->ttl = (long long)json_integer_value(json_object_get(row, "ttl"));
	return (1);
}

/*
 * A client assertion against the client's cached keys. Any failure goes
 * to the lookup, which decides and names the reason: the client may
 * have registered a new key since.
 */
static int
client_auth_cached_assertion(struct http_request *req,
    struct client_auth *auth)
{
	json_t		*row;
	const char	*why, *hex;

	if (!auth->defer_spend || (row = client_cache_get(CLIENT_CACHE_KEYS,
	    auth->client_id)) == NULL)
		return (0);
	hex = json_string_value(json_object_get(row, "hash"));
	if (hex == NULL || hex_decode(hex, strlen(hex), auth->keys_hash,
	    sizeof(auth->keys_hash)) != 32)
		return (0);
	if (client_assertion_check(req, auth->client_id,
	    json_object_get(row, "jwks"), &auth->assertion, &why) == -1)
		return (0);
	auth->ttl = (long long)json_integer_value(json_object_get(row, "ttl"));
	auth->fapi = 1;
	auth->asserted = 1;
	return (1);
}

/*
 * Without a token rate limit to count, a client authenticated in the
 * last seconds is checked against the worker's cache. The grant re-checks
 * in the database that the client is active (040_token_client_active.sql)
 * and spends an assertion's jti. A certificate is verified every time.
 */
int
client_auth_cached(struct http_request *req, struct client_auth *auth)
{
	if (app_cfg.token_rate_per_minute > 0)
		return (0);
	if (auth->secret[0] != '\0')
		return (client_auth_cached_secret(req, auth));
	if (client_assertion_sent(req))
		return (client_auth_cached_assertion(req, auth));
	return (0);
}

/* A bytea column of the client row, unescaped (PQfreemem), or NULL. */
static unsigned char *
client_auth_bytes(struct db_query *q, int col, size_t *len)
{
	*len = 0;
	if (db_is_null(q, 0, col))
		return (NULL);
	return (PQunescapeBytea((const unsigned char *)db_value(q, 0, col),
	    len));
}

/* The presented secret against the row (the keyed form only). */
static int
client_auth_secret_ok(struct db_query *q, const char *client_id,
    const uint8_t digest[32])
{
	unsigned char	*stored, *salt;
	size_t		 storedlen, saltlen;
	const char	*key_id;
	int		 ok;

	if (db_is_null(q, 0, CLIENT_COL_SECRET_HASH))
		return (0);
	/* Refused, not converted here: psd2ctl converts without secrets. */
	if (db_is_null(q, 0, CLIENT_COL_KEY_ID)) {
		kore_log(LOG_WARNING, "warning id=%s client %s refused: its "
		    "secret is stored in the unsalted form, no longer "
		    "accepted; psd2ctl tpp rehash converts it",
		    respond_request_id(q->req), client_id);
		return (0);
	}
	key_id = db_value(q, 0, CLIENT_COL_KEY_ID);
	stored = client_auth_bytes(q, CLIENT_COL_SECRET_HASH, &storedlen);
	salt = client_auth_bytes(q, CLIENT_COL_SALT, &saltlen);
	ok = client_secret_verify(&app_client_keys, key_id, salt, saltlen,
	    stored, storedlen, digest);
	PQfreemem(stored);
	PQfreemem(salt);
	return (ok);
}

/*
 * tls_client_auth (RFC 8705 2.1): the connection's certificate verified
 * and of the client's TPP.
 */
static int
client_auth_tls_ok(struct http_request *req, struct db_query *q)
{
	char	org[128];

	if (tpp_peer_org_id(req, org, sizeof(org)) == -1)
		return (0);
	return (strcmp(org, db_value(q, 0, CLIENT_COL_ORG_ID)) == 0);
}

/* The client row's method is method, and the client active. */
static int
client_auth_method_is(struct db_query *q, const char *method)
{
	return (!db_is_null(q, 0, CLIENT_COL_METHOD) &&
	    db_bool(q, 0, CLIENT_COL_ACTIVE) &&
	    strcmp(db_value(q, 0, CLIENT_COL_METHOD), method) == 0);
}

/*
 * private_key_jwt for a caller that spends the jti itself: verified here
 * and the client's keys remembered. 1, or -1 (answer sent).
 */
static int
client_auth_assertion_deferred(struct http_request *req, struct db_query *q,
    struct client_auth *auth)
{
	const char	*why, *text;
	json_t		*jwks;
	int		 r;

	text = db_value(q, 0, CLIENT_COL_JWKS);
	crypto_sha256(text, strlen(text), auth->keys_hash);
	jwks = json_loads(text, 0, NULL);
	r = client_assertion_check(req, auth->client_id, jwks,
	    &auth->assertion, &why);
	if (r == 0 && jwks != NULL)
		client_auth_remember_keys(auth, jwks);
	json_decref(jwks);
	if (r == -1) {
		client_assertion_refuse(req, why);
		return (-1);
	}
	auth->asserted = 1;
	return (1);
}

/*
 * private_key_jwt: verified here, its jti spent by the next query (or by
 * the caller's, with defer_spend). 1, 0 (a query runs) or -1 (refused).
 */
static int
client_auth_assertion(struct http_request *req, struct db_query *q,
    struct client_auth *auth)
{
	struct client_assertion	a;
	char			until[24];

	if (!client_auth_method_is(q, "private_key_jwt") ||
	    db_is_null(q, 0, CLIENT_COL_JWKS)) {
		client_auth_failed(req);
		return (-1);
	}
	if (auth->defer_spend)
		return (client_auth_assertion_deferred(req, q, auth));
	if (client_assertion_verify(req, auth->client_id,
	    db_value(q, 0, CLIENT_COL_JWKS), &a) == -1)
		return (-1);
	(void)snprintf(until, sizeof(until), "%lld", a.keep_until);
	db_query_begin(q, req, "SELECT oauth_assertion_spend($1, $2, "
	    "to_timestamp($3::bigint))");
	db_param(q, auth->client_id);
	db_param_bin(q, a.jti_hash, sizeof(a.jti_hash));
	db_param(q, until);
	auth->spending = 1;
	return (0);
}

/* The client row against a Basic secret: 0, or -1 (answer sent). */
static int
client_auth_basic(struct http_request *req, struct db_query *q,
    struct client_auth *auth)
{
	uint8_t		 digest[32];
	int		 ok;

	/* A client of another method has no secret that counts. */
	if (!client_auth_method_is(q, "client_secret_basic")) {
		client_auth_failed(req);
		return (-1);
	}
	crypto_sha256(auth->secret, strlen(auth->secret), digest);
	ok = client_auth_secret_ok(q, auth->client_id, digest);
	if (ok)
		client_auth_remember(auth->client_id, digest, auth->ttl);
	OPENSSL_cleanse(digest, sizeof(digest));
	if (!ok) {
		client_auth_failed(req);
		return (-1);
	}
	return (0);
}

/* The client's lookup: 1 authenticated, 0 a query runs, -1 refused. */
static int
client_auth_row(struct http_request *req, struct db_query *q,
    struct client_auth *auth)
{
	if (!db_bool(q, 0, CLIENT_COL_RATE_OK)) {
		http_response_header(req, "retry-after", "60");
		respond_oauth_error(req, 429, "invalid_request",
		    "Too many requests from this address; retry later.");
		return (-1);
	}
	auth->ttl = db_int(q, 0, CLIENT_COL_ACCESS_TTL);
	auth->fapi = !db_is_null(q, 0, CLIENT_COL_METHOD) &&
	    strcmp(db_value(q, 0, CLIENT_COL_METHOD),
	    "client_secret_basic") != 0;
	if (auth->secret[0] != '\0')
		return (client_auth_basic(req, q, auth) == -1 ? -1 : 1);
	if (client_assertion_sent(req))
		return (client_auth_assertion(req, q, auth));
	if (!client_auth_method_is(q, "tls_client_auth") ||
	    !client_auth_tls_ok(req, q)) {
		client_auth_failed(req);
		return (-1);
	}
	return (1);
}

int
client_auth_done(struct http_request *req, struct db_query *q,
    struct client_auth *auth, enum db_next *next)
{
	int	r;

	*next = DB_ANSWERED;
	if (auth->spending) {
		auth->spending = 0;
		if (db_bool(q, 0, 0))
			return (1);
		respond_oauth_error(req, 401, "invalid_client",
		    "The client assertion is refused: its jti was used "
		    "before.");
		return (0);
	}
	if ((r = client_auth_row(req, q, auth)) == 1)
		return (1);
	if (r == 0)
		*next = DB_QUERY;
	return (0);
}

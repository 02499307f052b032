/*
 * POST /auth/oauth/token (spec 4.2, 4.3; RFC 6749 4.1.3, 4.4, 6 and 5.2).
 *
 * Two round trips: the client (its stored secret checked here, in
 * constant time) and the grant (one SQL function, one durable
 * transaction). Client secrets are stored salted and keyed with HMAC
 * (src/common/client_secret.h): operators may choose them, and HMAC keeps
 * this hot path at microseconds where argon2 would need a task per call.
 * A parameter sent twice is invalid_request (RFC 6749 3.2).
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/peer.h"
#include "api/respond.h"
#include "metrics/metrics.h"
#include "common/config.h"
#include "common/client_secret.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "db/db.h"
#include "oauth/client_cache.h"
#include "oauth/oauth.h"
#include "oauth/token.h"
#include "tpp/tpp.h"

int	oauth_token(struct http_request *);

#define CLIENT_ID_MAX	128
#define SECRET_MAX	256

enum token_phase {
	TOKEN_CLIENT,
	TOKEN_GRANT
};

struct token_ctx {
	enum token_phase	phase;
	struct db_query		q;
	char			client_id[CLIENT_ID_MAX];
	char			secret[SECRET_MAX];
	char			access[37];
	char			refresh[37];
};

/*
 * The _bound grants (030_tpp.sql) bind the access token to the TLS client
 * certificate of the connection (RFC 8705 x5t#S256), the last parameter:
 * NULL over plain HTTP or without a client certificate.
 */
static const char sql_code[] =
    "SELECT result, scope, expires_in, description "
    "FROM oauth_code_grant_bound($1, $2, $3, $4, $5, $6, $7, $8)";
static const char sql_refresh[] =
    "SELECT result, scope, expires_in, description, rotated "
    "FROM oauth_refresh_grant_bound($1, $2, $3, $4, $5, $6)";
static const char sql_client[] =
    "SELECT result, scope, expires_in, description "
    "FROM oauth_client_credentials_grant($1, $2, $3, $4)";

static void
token_free(struct http_request *req)
{
	struct token_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
	OPENSSL_cleanse(ctx, sizeof(*ctx));
}

/*
 * Basic credentials and an optional body client_id that must agree; or,
 * without an Authorization header, over a connection with a TLS client
 * certificate, the body's client_id alone (RFC 8705 2.1): secret is then
 * "" (a Basic secret is never empty), and token_client_check decides.
 */
static int
token_client_credentials(struct http_request *req, char *client_id,
    size_t idlen, char *secret, size_t secretlen)
{
	const char	*body_id, *hdr;
	int		 n;

	body_id = NULL;
	(void)http_argument_get_string(req, "client_id", &body_id);
	if (!http_request_header(req, "authorization", &hdr) &&
	    body_id != NULL && req->owner != NULL &&
	    req->owner->cert != NULL) {
		n = snprintf(client_id, idlen, "%s", body_id);
		secret[0] = '\0';
		if (n > 0 && (size_t)n < idlen)
			return (0);
	}
	if (oauth_basic_credentials(req, client_id, idlen, secret,
	    secretlen) == -1) {
		respond_oauth_error(req, 401, "invalid_client",
		    "Client authentication with HTTP Basic, or with the TLS "
		    "client certificate and client_id, is required.");
		return (-1);
	}
	if (body_id != NULL && strcmp(body_id, client_id) != 0) {
		respond_oauth_error(req, 401, "invalid_client",
		    "client_id does not match the authenticated client.");
		return (-1);
	}
	return (0);
}

/*
 * Client authentication, shared with the revoke endpoint: the
 * credentials, then the lookup (which also counts the address against
 * the rate limit).
 */
int
token_client_begin(struct http_request *req, struct db_query *q,
    char *client_id, size_t idlen, char *secret, size_t secretlen)
{
	char	addr[PEER_ADDR_MAX];

	if (token_client_credentials(req, client_id, idlen, secret,
	    secretlen) == -1)
		return (-1);
	db_query_begin(q, req, "SELECT rate_ok, secret_hash, access_ttl, "
	    "active, secret_salt, secret_key_id, auth_method, org_id "
	    "FROM token_client($1, $2, $3)");
	db_param(q, client_id);
	db_param(q, peer_addr(req, addr, sizeof(addr)));
	db_param_int(q, app_cfg.token_rate_per_minute);
	return (0);
}

/* Remembers an authenticated client for the next requests (see below). */
static void
token_client_remember(const char *client_id, const uint8_t *digest,
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

/*
 * The hot path without the lookup: without a token rate limit to count,
 * a client authenticated in the last seconds is checked against its
 * cached secret digest (constant time). The grant re-checks in the
 * database that the client is active (040_token_client_active.sql).
 * Returns the access ttl, 0 when not cached, -1 when the answer was sent.
 */
static long long
token_client_cached(struct http_request *req, const char *client_id,
    const char *secret)
{
	json_t		*row;
	uint8_t		 digest[32], cached[32];
	const char	*hex;

	if (app_cfg.token_rate_per_minute > 0 || secret[0] == '\0' ||
	    (row = client_cache_get(CLIENT_CACHE_SECRET, client_id)) == NULL)
		return (0);
	hex = json_string_value(json_object_get(row, "digest"));
	if (hex == NULL || hex_decode(hex, strlen(hex), cached,
	    sizeof(cached)) != 32)
		return (0);
	crypto_sha256(secret, strlen(secret), digest);
	if (!crypto_equal(digest, cached, sizeof(digest))) {
		respond_oauth_error(req, 401, "invalid_client",
		    "Client authentication failed.");
		return (-1);
	}
	return ((long long)json_integer_value(json_object_get(row, "ttl")));
}

/* A bytea column of the client row, unescaped (PQfreemem), or NULL. */
static unsigned char *
token_client_bytes(struct db_query *q, int col, size_t *len)
{
	*len = 0;
	if (db_is_null(q, 0, col))
		return (NULL);
	return (PQunescapeBytea((const unsigned char *)db_value(q, 0, col),
	    len));
}

/* The presented secret against the row (the keyed form only). */
static int
token_client_secret_ok(struct db_query *q, const char *client_id,
    const uint8_t digest[32])
{
	unsigned char	*stored, *salt;
	size_t		 storedlen, saltlen;
	const char	*key_id;
	int		 ok;

	if (db_is_null(q, 0, 1) || !db_bool(q, 0, 3))
		return (0);
	/* Refused, not converted here: psd2ctl converts without secrets. */
	if (db_is_null(q, 0, 5)) {
		kore_log(LOG_WARNING, "warning id=%s client %s refused: its "
		    "secret is stored in the unsalted form, no longer "
		    "accepted; psd2ctl tpp rehash converts it",
		    respond_request_id(q->req), client_id);
		return (0);
	}
	key_id = db_value(q, 0, 5);
	stored = token_client_bytes(q, 1, &storedlen);
	salt = token_client_bytes(q, 4, &saltlen);
	ok = client_secret_verify(&app_client_keys, key_id, salt, saltlen,
	    stored, storedlen, digest);
	PQfreemem(stored);
	PQfreemem(salt);
	return (ok);
}

/*
 * tls_client_auth (RFC 8705 2.1): the client registered so, and the
 * connection's certificate verified and of the client's TPP.
 */
static int
token_client_tls_ok(struct http_request *req, struct db_query *q)
{
	char	org[128];

	if (db_is_null(q, 0, 6) || !db_bool(q, 0, 3) ||
	    strcmp(db_value(q, 0, 6), "tls_client_auth") != 0)
		return (0);
	if (tpp_peer_org_id(req, org, sizeof(org)) == -1)
		return (0);
	return (strcmp(org, db_value(q, 0, 7)) == 0);
}

/* Access ttl of the authenticated client, or -1 (answer sent). */
long long
token_client_check(struct http_request *req, struct db_query *q,
    const char *client_id, const char *secret)
{
	uint8_t		 digest[32];

	if (!db_bool(q, 0, 0)) {
		http_response_header(req, "retry-after", "60");
		respond_oauth_error(req, 429, "invalid_request",
		    "Too many requests from this address; retry later.");
		return (-1);
	}
	if (secret[0] == '\0') {
		if (!token_client_tls_ok(req, q)) {
			respond_oauth_error(req, 401, "invalid_client",
			    "Client authentication failed.");
			return (-1);
		}
		return (db_int(q, 0, 2));
	}
	/* A client of tls_client_auth has no secret that counts. */
	if (!db_is_null(q, 0, 6) &&
	    strcmp(db_value(q, 0, 6), "client_secret_basic") != 0) {
		respond_oauth_error(req, 401, "invalid_client",
		    "Client authentication failed.");
		return (-1);
	}
	crypto_sha256(secret, strlen(secret), digest);
	if (!token_client_secret_ok(q, client_id, digest)) {
		respond_oauth_error(req, 401, "invalid_client",
		    "Client authentication failed.");
		return (-1);
	}
	token_client_remember(client_id, digest, db_int(q, 0, 2));
	OPENSSL_cleanse(digest, sizeof(digest));
	return (db_int(q, 0, 2));
}

/* 0, or -1 when a parameter is repeated (RFC 6749 3.2; answer sent). */
int
token_params_once(struct http_request *req, const char *const *names)
{
	const char	*name;
	char		 text[96];

	if ((name = oauth_repeated_param(req, names)) == NULL)
		return (0);
	(void)snprintf(text, sizeof(text), "%s must not be repeated.", name);
	respond_oauth_error(req, 400, "invalid_request", text);
	return (-1);
}

/* RFC 8705: the client certificate thumbprint, or NULL (030_tpp.sql). */
static void
token_param_x5t(struct http_request *req, struct token_ctx *ctx)
{
	char	x5t[48];

	tpp_peer_x5t(req, x5t, sizeof(x5t));
	db_param(&ctx->q, x5t[0] != '\0' ? x5t : NULL);
}

static int
token_s256(const char *verifier, char *out, size_t outlen)
{
	uint8_t		digest[32];
	size_t		i, len;

	len = strlen(verifier);
	if (len < 43 || len > 128)
		return (-1);
	for (i = 0; i < len; i++) {
		if (!((verifier[i] >= 'A' && verifier[i] <= 'Z') ||
		    (verifier[i] >= 'a' && verifier[i] <= 'z') ||
		    (verifier[i] >= '0' && verifier[i] <= '9') ||
		    verifier[i] == '-' || verifier[i] == '.' ||
		    verifier[i] == '_' || verifier[i] == '~'))
			return (-1);
	}
	crypto_sha256(verifier, len, digest);
	return (base64url_encode(digest, sizeof(digest), out, outlen) < 0 ?
	    -1 : 0);
}

static int
token_grant_code(struct http_request *req, struct token_ctx *ctx,
    long long ttl, const uint8_t *access, const uint8_t *refresh)
{
	const char	*code, *redirect_uri, *verifier;
	char		 s256[64];
	uint8_t		 digest[32];

	code = redirect_uri = verifier = NULL;
	if (!http_argument_get_string(req, "code", &code) ||
	    !http_argument_get_string(req, "redirect_uri", &redirect_uri)) {
		respond_oauth_error(req, 400, "invalid_request",
		    "code and redirect_uri are required.");
		return (-1);
	}
	if (http_argument_get_string(req, "code_verifier", &verifier) &&
	    token_s256(verifier, s256, sizeof(s256)) == -1) {
		respond_oauth_error(req, 400, "invalid_grant",
		    "code_verifier is malformed.");
		return (-1);
	}
	crypto_sha256(code, strlen(code), digest);
	db_query_begin(&ctx->q, req, sql_code);
	db_param_bin(&ctx->q, digest, sizeof(digest));
	db_param(&ctx->q, ctx->client_id);
	db_param(&ctx->q, redirect_uri);
	db_param(&ctx->q, verifier ? s256 : NULL);
	db_param_bin(&ctx->q, access, 32);
	db_param_bin(&ctx->q, refresh, 32);
	db_param_int(&ctx->q, ttl);
	token_param_x5t(req, ctx);
	return (0);
}

static int
token_grant_refresh(struct http_request *req, struct token_ctx *ctx,
    long long ttl, const uint8_t *access, const uint8_t *refresh)
{
	const char	*old;
	uint8_t		 digest[32];

	old = NULL;
	if (!http_argument_get_string(req, "refresh_token", &old)) {
		respond_oauth_error(req, 400, "invalid_request",
		    "refresh_token is required.");
		return (-1);
	}
	crypto_sha256(old, strlen(old), digest);
	db_query_begin(&ctx->q, req, sql_refresh);
	db_param_bin(&ctx->q, digest, sizeof(digest));
	db_param(&ctx->q, ctx->client_id);
	db_param_bin(&ctx->q, access, 32);
	db_param_bin(&ctx->q, refresh, 32);
	db_param_int(&ctx->q, ttl);
	token_param_x5t(req, ctx);
	return (0);
}

/*
 * The TPP's own token of the standard interface (src/bg/README.md):
 * scope xs2a or none, no refresh token.
 */
static int
token_grant_client(struct http_request *req, struct token_ctx *ctx,
    long long ttl, const uint8_t *access)
{
	const char	*scope;

	scope = NULL;
	if (http_argument_get_string(req, "scope", &scope) &&
	    strcmp(scope, "xs2a") != 0) {
		respond_oauth_error(req, 400, "invalid_scope",
		    "The client credentials grant takes only the scope "
		    "xs2a.");
		return (-1);
	}
	ctx->refresh[0] = '\0';
	db_query_begin(&ctx->q, req, sql_client);
	db_param(&ctx->q, ctx->client_id);
	db_param_bin(&ctx->q, access, 32);
	db_param_int(&ctx->q, ttl);
	token_param_x5t(req, ctx);
	return (0);
}

static enum db_next
token_grant(struct http_request *req, struct token_ctx *ctx, long long ttl)
{
	const char	*grant_type;
	uint8_t		 access[32], refresh[32];

	grant_type = NULL;
	(void)http_argument_get_string(req, "grant_type", &grant_type);
	if (grant_type == NULL) {
		respond_oauth_error(req, 400, "invalid_request",
		    "grant_type is required.");
		return (DB_ANSWERED);
	}
	if (oauth_new_secret(ctx->access, access) == -1 ||
	    oauth_new_secret(ctx->refresh, refresh) == -1) {
		respond_server_error(req, "token random");
		return (DB_ANSWERED);
	}
	if (strcmp(grant_type, "authorization_code") == 0) {
		if (token_grant_code(req, ctx, ttl, access, refresh) == -1)
			return (DB_ANSWERED);
	} else if (strcmp(grant_type, "refresh_token") == 0) {
		if (token_grant_refresh(req, ctx, ttl, access, refresh) == -1)
			return (DB_ANSWERED);
	} else if (strcmp(grant_type, "client_credentials") == 0) {
		if (token_grant_client(req, ctx, ttl, access) == -1)
			return (DB_ANSWERED);
	} else {
		respond_oauth_error(req, 400, "unsupported_grant_type",
		    "grant_type must be authorization_code, refresh_token or "
		    "client_credentials.");
		return (DB_ANSWERED);
	}
	ctx->phase = TOKEN_GRANT;
	return (DB_QUERY);
}

/*
 * The refresh token of a granted answer: the new one, or for a client
 * without rotation (a refresh grant that answers rotated false) the one
 * presented, which stays valid.
 */
static const char *
token_refresh_answered(struct http_request *req, struct token_ctx *ctx)
{
	const char	*presented;

	/* Only the refresh grant's query has the fifth column. */
	if (PQnfields(db_result(&ctx->q)) < 5 || db_bool(&ctx->q, 0, 4))
		return (ctx->refresh);
	presented = NULL;
	(void)http_argument_get_string(req, "refresh_token", &presented);
	return (presented != NULL ? presented : ctx->refresh);
}

static void
token_answer(struct http_request *req, struct token_ctx *ctx)
{
	const char	*grant_type;

	grant_type = NULL;
	(void)http_argument_get_string(req, "grant_type", &grant_type);
	/* Only the three grant types reach the database: a bounded label. */
	metrics_token_grant(grant_type ? grant_type : "-",
	    db_value(&ctx->q, 0, 0));
	if (strcmp(db_value(&ctx->q, 0, 0), "invalid_client") == 0) {
		respond_oauth_error(req, 401, "invalid_client",
		    db_value(&ctx->q, 0, 3));
		return;
	}
	if (strcmp(db_value(&ctx->q, 0, 0), "ok") != 0) {
		respond_oauth_error(req, 400, "invalid_grant",
		    db_value(&ctx->q, 0, 3));
		return;
	}
	/* The client credentials grant issues no refresh token. */
	if (ctx->refresh[0] == '\0') {
		respond_json(req, 200, json_pack("{s:s, s:s, s:I, s:s}",
		    "access_token", ctx->access, "token_type", "bearer",
		    "expires_in", (json_int_t)db_int(&ctx->q, 0, 2),
		    "scope", db_value(&ctx->q, 0, 1)));
		return;
	}
	respond_json(req, 200, json_pack("{s:s, s:s, s:s, s:I, s:s}",
	    "access_token", ctx->access, "token_type", "bearer",
	    "refresh_token", token_refresh_answered(req, ctx),
	    "expires_in", (json_int_t)db_int(&ctx->q, 0, 2),
	    "scope", db_value(&ctx->q, 0, 1)));
}

static const char *const token_params[] = {
	"grant_type", "code", "redirect_uri", "client_id", "code_verifier",
	"refresh_token", "scope", NULL
};

static enum db_next
token_start(struct http_request *req, struct token_ctx *ctx)
{
	long long	ttl;

	if (token_params_once(req, token_params) == -1)
		return (DB_ANSWERED);
	http_populate_post(req);
	if (token_client_credentials(req, ctx->client_id,
	    sizeof(ctx->client_id), ctx->secret, sizeof(ctx->secret)) == -1)
		return (DB_ANSWERED);
	ttl = token_client_cached(req, ctx->client_id, ctx->secret);
	if (ttl < 0)
		return (DB_ANSWERED);
	if (ttl > 0)
		return (token_grant(req, ctx, ttl));
	if (token_client_begin(req, &ctx->q, ctx->client_id,
	    sizeof(ctx->client_id), ctx->secret, sizeof(ctx->secret)) == -1)
		return (DB_ANSWERED);
	return (DB_QUERY);
}

static enum db_next
token_step(struct http_request *req, void *arg)
{
	struct token_ctx	*ctx = arg;
	long long		 ttl;

	if (ctx->phase == TOKEN_GRANT) {
		token_answer(req, ctx);
		return (DB_ANSWERED);
	}
	ttl = token_client_check(req, &ctx->q, ctx->client_id, ctx->secret);
	if (ttl < 0)
		return (DB_ANSWERED);
	return (token_grant(req, ctx, ttl));
}

int
oauth_token(struct http_request *req)
{
	struct token_ctx	*ctx;

	if (!http_state_exists(req)) {
		ctx = http_state_create(req, sizeof(*ctx), token_free);
		if (token_start(req, ctx) == DB_ANSWERED)
			return (KORE_RESULT_OK);
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, token_step, ctx, "token query"));
}

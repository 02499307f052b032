/*
 * POST /auth/oauth/token (spec 4.2, 4.3; RFC 6749 4.1.3, 4.4, 6 and 5.2).
 *
 * Two round trips at most: the client (client_auth.h; none when the
 * worker has it cached) and the grant (one SQL function, one durable
 * transaction, which also spends a client assertion's jti). A parameter
 * sent twice is invalid_request (RFC 6749 3.2).
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "metrics/metrics.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "db/db.h"
#include "oauth/client_auth.h"
#include "oauth/oauth.h"
#include "tpp/dpop.h"
#include "oauth/token.h"
#include "tpp/tpp.h"

int	oauth_token(struct http_request *);

enum token_phase {
	TOKEN_CLIENT,
	TOKEN_GRANT
};

struct token_ctx {
	enum token_phase	phase;
	struct db_query		q;
	struct client_auth	auth;
	int			again;	/* authenticated a second time */
	/* A verified DPoP proof's binding (RFC 9449 5), "" without one. */
	char			binding[DPOP_BINDING_MAX];
	/* Without one, the TLS client certificate's x5t#S256, or "". */
	char			x5t[48];
	char			access[37];
	char			refresh[37];
};

/*
 * The _bound grants (030_tpp.sql) bind the access token to the TLS client
 * certificate of the connection (RFC 8705 x5t#S256) or the DPoP key: the
 * binding parameter, NULL without either. The last three are a client
 * assertion's, spent by the grant (token_param_assertion).
 */
static const char sql_code[] =
    "SELECT result, scope, expires_in, description "
    "FROM oauth_code_grant_bound($1, $2, $3, $4, $5, $6, $7, $8, $9, "
    "to_timestamp($10::bigint), $11)";
static const char sql_refresh[] =
    "SELECT result, scope, expires_in, description, rotated "
    "FROM oauth_refresh_grant_bound($1, $2, $3, $4, $5, $6, $7, "
    "to_timestamp($8::bigint), $9)";
static const char sql_client[] =
    "SELECT result, scope, expires_in, description "
    "FROM oauth_client_credentials_grant($1, $2, $3, $4, $5, "
    "to_timestamp($6::bigint), $7)";

static void
token_free(struct http_request *req)
{
	struct token_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
	OPENSSL_cleanse(ctx, sizeof(*ctx));
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

/*
 * What the access token is bound to (token_binding_cnf, 20_oauth.sql):
 * the DPoP proof's key (RFC 9449 5), else the TLS client certificate
 * (RFC 8705 3), else nothing.
 */
static void
token_param_binding(struct token_ctx *ctx)
{
	if (ctx->binding[0] != '\0')
		db_param(&ctx->q, ctx->binding);
	else
		db_param(&ctx->q, ctx->x5t[0] != '\0' ? ctx->x5t : NULL);
}

/*
 * The client assertion's jti, until when it is kept, and the hash of the
 * keys that verified it (oauth_assertion_take), or three NULLs.
 */
static void
token_param_assertion(struct token_ctx *ctx)
{
	char	until[24];

	if (!ctx->auth.asserted) {
		db_param(&ctx->q, NULL);
		db_param(&ctx->q, NULL);
		db_param(&ctx->q, NULL);
		return;
	}
	(void)snprintf(until, sizeof(until), "%lld",
	    ctx->auth.assertion.keep_until);
	db_param_bin(&ctx->q, ctx->auth.assertion.jti_hash,
	    sizeof(ctx->auth.assertion.jti_hash));
	db_param(&ctx->q, until);
	db_param_bin(&ctx->q, ctx->auth.keys_hash,
	    sizeof(ctx->auth.keys_hash));
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
    const uint8_t *access, const uint8_t *refresh)
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
	db_param(&ctx->q, ctx->auth.client_id);
	db_param(&ctx->q, redirect_uri);
	db_param(&ctx->q, verifier ? s256 : NULL);
	db_param_bin(&ctx->q, access, 32);
	db_param_bin(&ctx->q, refresh, 32);
	db_param_int(&ctx->q, ctx->auth.ttl);
	token_param_binding(ctx);
	token_param_assertion(ctx);
	return (0);
}

static int
token_grant_refresh(struct http_request *req, struct token_ctx *ctx,
    const uint8_t *access, const uint8_t *refresh)
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
	db_param(&ctx->q, ctx->auth.client_id);
	db_param_bin(&ctx->q, access, 32);
	db_param_bin(&ctx->q, refresh, 32);
	db_param_int(&ctx->q, ctx->auth.ttl);
	token_param_binding(ctx);
	token_param_assertion(ctx);
	return (0);
}

/*
 * The TPP's own token of the standard interface (src/bg/README.md):
 * scope xs2a or none, no refresh token.
 */
static int
token_grant_client(struct http_request *req, struct token_ctx *ctx,
    const uint8_t *access)
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
	db_param(&ctx->q, ctx->auth.client_id);
	db_param_bin(&ctx->q, access, 32);
	db_param_int(&ctx->q, ctx->auth.ttl);
	token_param_binding(ctx);
	token_param_assertion(ctx);
	return (0);
}

/*
 * FAPI 2.0 (5.3.2.1): a client of its authentication methods gets only
 * sender-constrained tokens, bound to a DPoP key or its certificate.
 */
static int
token_holder_of_key(struct http_request *req, struct token_ctx *ctx)
{
	if (!ctx->auth.fapi || ctx->binding[0] != '\0' ||
	    ctx->x5t[0] != '\0')
		return (0);
	respond_oauth_error(req, 400, "invalid_request", "This client's "
	    "tokens must be sender-constrained: send a DPoP proof, or use "
	    "the mTLS host with its certificate.");
	return (-1);
}

static enum db_next
token_grant(struct http_request *req, struct token_ctx *ctx)
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
	if (ctx->binding[0] == '\0')
		tpp_peer_x5t(req, ctx->x5t, sizeof(ctx->x5t));
	if (token_holder_of_key(req, ctx) == -1)
		return (DB_ANSWERED);
	if (oauth_new_secret(ctx->access, access) == -1 ||
	    oauth_new_secret(ctx->refresh, refresh) == -1) {
		respond_server_error(req, "token random");
		return (DB_ANSWERED);
	}
	if (strcmp(grant_type, "authorization_code") == 0) {
		if (token_grant_code(req, ctx, access, refresh) == -1)
			return (DB_ANSWERED);
	} else if (strcmp(grant_type, "refresh_token") == 0) {
		if (token_grant_refresh(req, ctx, access, refresh) == -1)
			return (DB_ANSWERED);
	} else if (strcmp(grant_type, "client_credentials") == 0) {
		if (token_grant_client(req, ctx, access) == -1)
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
	const char	*grant_type, *type;

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
	if (strcmp(db_value(&ctx->q, 0, 0), "invalid_dpop_proof") == 0) {
		respond_oauth_error(req, 400, "invalid_dpop_proof",
		    db_value(&ctx->q, 0, 3));
		return;
	}
	if (strcmp(db_value(&ctx->q, 0, 0), "ok") != 0) {
		respond_oauth_error(req, 400, "invalid_grant",
		    db_value(&ctx->q, 0, 3));
		return;
	}
	/* RFC 9449 5: a DPoP-bound token is of type DPoP. */
	type = ctx->binding[0] != '\0' ? "DPoP" : "bearer";
	/* The client credentials grant issues no refresh token. */
	if (ctx->refresh[0] == '\0') {
		respond_json(req, 200, json_pack("{s:s, s:s, s:I, s:s}",
		    "access_token", ctx->access, "token_type", type,
		    "expires_in", (json_int_t)db_int(&ctx->q, 0, 2),
		    "scope", db_value(&ctx->q, 0, 1)));
		return;
	}
	respond_json(req, 200, json_pack("{s:s, s:s, s:s, s:I, s:s}",
	    "access_token", ctx->access, "token_type", type,
	    "refresh_token", token_refresh_answered(req, ctx),
	    "expires_in", (json_int_t)db_int(&ctx->q, 0, 2),
	    "scope", db_value(&ctx->q, 0, 1)));
}

/*
 * A DPoP proof (RFC 9449 5), checked before the client: 0 (its binding
 * kept, a fresh nonce for the next proof), or -1 with the 400 sent.
 */
static int
token_dpop(struct http_request *req, struct token_ctx *ctx)
{
	struct dpop_proof	p;
	int			r;

	if ((r = oauth_dpop(req, &p)) == 1)
		(void)snprintf(ctx->binding, sizeof(ctx->binding), "%s",
		    p.binding);
	return (r == -1 ? -1 : 0);
}

static const char *const token_params[] = {
	"grant_type", "code", "redirect_uri", "client_id", "code_verifier",
	"refresh_token", "scope", "client_assertion", "client_assertion_type",
	NULL
};

static enum db_next
token_start(struct http_request *req, struct token_ctx *ctx)
{
	if (token_params_once(req, token_params) == -1)
		return (DB_ANSWERED);
	http_populate_post(req);
	ctx->auth.defer_spend = 1;
	if (token_dpop(req, ctx) == -1)
		return (DB_ANSWERED);
	if (client_auth_credentials(req, &ctx->auth) == -1)
		return (DB_ANSWERED);
	switch (client_auth_cached(req, &ctx->auth)) {
	case -1:
		return (DB_ANSWERED);
	case 1:
		return (token_grant(req, ctx));
	}
	client_auth_lookup(req, &ctx->q, &ctx->auth);
	return (DB_QUERY);
}

/*
 * The grant found the client's keys changed since they verified its
 * assertion (keys_changed, oauth_assertion_take; nothing was written):
 * once, the client is authenticated again from its row. 0 (no change),
 * 1 (that query runs) or -1 (answer sent).
 */
static int
token_keys_changed(struct http_request *req, struct token_ctx *ctx)
{
	if (strcmp(db_value(&ctx->q, 0, 0), "keys_changed") != 0)
		return (0);
	client_auth_forget_keys(ctx->auth.client_id);
	if (ctx->again) {
		respond_oauth_error(req, 401, "invalid_client", "The client's "
		    "keys changed during the request; send it again.");
		return (-1);
	}
	ctx->again = 1;
	ctx->phase = TOKEN_CLIENT;
	client_auth_lookup(req, &ctx->q, &ctx->auth);
	return (1);
}

static enum db_next
token_step(struct http_request *req, void *arg)
{
	struct token_ctx	*ctx = arg;
	enum db_next		 next;

	if (ctx->phase == TOKEN_GRANT) {
		switch (token_keys_changed(req, ctx)) {
		case 1:
			return (DB_QUERY);
		case 0:
			token_answer(req, ctx);
			break;
		}
		return (DB_ANSWERED);
	}
	if (!client_auth_done(req, &ctx->q, &ctx->auth, &next))
		return (next);
	return (token_grant(req, ctx));
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

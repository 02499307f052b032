/*
 * POST /auth/oauth/revoke (RFC 7009): the TPP revokes one of its tokens.
 * A refresh token takes its whole family with it. An unknown token is
 * answered 200 as well, so the endpoint tells nobody what exists.
 */
#include <sys/types.h>

#include <string.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/crypto.h"
#include "db/db.h"
#include "oauth/client_auth.h"
#include "oauth/oauth.h"
#include "oauth/token.h"

int	oauth_revoke(struct http_request *);

struct revoke_ctx {
	int			revoking;
	struct db_query		q;
	struct client_auth	auth;
};

static void
revoke_free(struct http_request *req)
{
	struct revoke_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
	OPENSSL_cleanse(ctx, sizeof(*ctx));
}

static const char *const revoke_params[] = {
	"token", "token_type_hint", "client_id", "client_assertion",
	"client_assertion_type", NULL
};

static enum db_next
revoke_begin(struct http_request *req, struct revoke_ctx *ctx)
{
	const char	*token;
	uint8_t		 digest[32];

	token = NULL;
	if (!http_argument_get_string(req, "token", &token)) {
		respond_oauth_error(req, 400, "invalid_request",
		    "token is required.");
		return (DB_ANSWERED);
	}
	crypto_sha256(token, strlen(token), digest);
	db_query_begin(&ctx->q, req, "SELECT oauth_revoke($1, $2)");
	db_param_bin(&ctx->q, digest, sizeof(digest));
	db_param(&ctx->q, ctx->auth.client_id);
	ctx->revoking = 1;
	return (DB_QUERY);
}

static enum db_next
revoke_step(struct http_request *req, void *arg)
{
	struct revoke_ctx	*ctx = arg;
	enum db_next		 next;

	if (ctx->revoking) {
		respond_raw(req, 200, NULL, NULL, 0);
		return (DB_ANSWERED);
	}
	if (!client_auth_done(req, &ctx->q, &ctx->auth, &next))
		return (next);
	return (revoke_begin(req, ctx));
}

static enum db_next
revoke_start(struct http_request *req, struct revoke_ctx *ctx)
{
	if (token_params_once(req, revoke_params) == -1)
		return (DB_ANSWERED);
	http_populate_post(req);
	if (client_auth_begin(req, &ctx->q, &ctx->auth) == -1)
		return (DB_ANSWERED);
	return (DB_QUERY);
}

int
oauth_revoke(struct http_request *req)
{
	struct revoke_ctx	*ctx;

	if (!http_state_exists(req)) {
		ctx = http_state_create(req, sizeof(*ctx), revoke_free);
		if (revoke_start(req, ctx) == DB_ANSWERED)
			return (KORE_RESULT_OK);
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, revoke_step, ctx, "revoke query"));
}

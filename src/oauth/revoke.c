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
#include "oauth/token.h"

int	oauth_revoke(struct http_request *);

struct revoke_ctx {
	int		revoking;
	struct db_query	q;
	char		client_id[128];
	char		secret[256];
};

static void
revoke_free(struct http_request *req)
{
	struct revoke_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
	OPENSSL_cleanse(ctx, sizeof(*ctx));
}

static int
revoke_begin(struct http_request *req, struct revoke_ctx *ctx)
{
	const char	*token;
	uint8_t		 digest[32];

	if (token_client_check(req, &ctx->q, ctx->client_id,
	    ctx->secret) < 0)
		return (KORE_RESULT_OK);
	token = NULL;
	if (!http_argument_get_string(req, "token", &token)) {
		respond_oauth_error(req, 400, "invalid_request",
		    "token is required.");
		return (KORE_RESULT_OK);
	}
	crypto_sha256(token, strlen(token), digest);
	db_query_begin(&ctx->q, req, "SELECT oauth_revoke($1, $2)");
	db_param_bin(&ctx->q, digest, sizeof(digest));
	db_param(&ctx->q, ctx->client_id);
	ctx->revoking = 1;
	return (KORE_RESULT_RETRY);
}

int
oauth_revoke(struct http_request *req)
{
	struct revoke_ctx	*ctx;

	if (!http_state_exists(req)) {
		ctx = http_state_create(req, sizeof(*ctx), revoke_free);
		http_populate_post(req);
		if (token_client_begin(req, &ctx->q, ctx->client_id,
		    sizeof(ctx->client_id), ctx->secret,
		    sizeof(ctx->secret)) == -1)
			return (KORE_RESULT_OK);
	}
	ctx = http_state_get(req);

	for (;;) {
		switch (db_query_poll(&ctx->q)) {
		case DB_PENDING:
			return (KORE_RESULT_RETRY);
		case DB_FAILED:
			respond_server_error(req, "revoke query");
			return (KORE_RESULT_OK);
		case DB_READY:
			break;
		}
		if (ctx->revoking) {
			respond_raw(req, 200, NULL, NULL, 0);
			return (KORE_RESULT_OK);
		}
		if (revoke_begin(req, ctx) != KORE_RESULT_RETRY)
			return (KORE_RESULT_OK);
	}
}

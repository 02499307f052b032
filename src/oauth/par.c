/*
 * POST /auth/oauth/par: pushed authorisation requests (RFC 9126).
 *
 * The client authenticates as at the token endpoint (client_auth.h; a
 * body client_id must be its own), then posts the parameters of its
 * authorisation request.
 * They are checked as authorize checks them (authreq.c), refusals
 * answered 400 with the RFC 6749 error body (RFC 9126 2.3), redirect_uri
 * required. The request is kept AUTHREQ_PUSHED_TTL seconds under the
 * SHA-256 of a random request_uri (oauth_par_push), answered 201; the
 * PSU's browser then brings only client_id and request_uri to authorize.
 *
 * Four round trips: the client's authentication (and a fifth for a
 * client assertion's jti), its registration (cached like authorize's), a
 * Berlin Group consent when the scope names one, and the store.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "db/db.h"
#include "oauth/authreq.h"
#include "oauth/client_auth.h"
#include "oauth/client_cache.h"
#include "oauth/oauth.h"
#include "oauth/token.h"
#include "tpp/dpop.h"
#include "web/forms.h"

int	oauth_par(struct http_request *);

#define PAR_URI_PREFIX	"urn:ietf:params:oauth:request_uri:"
#define PAR_RANDOM	32

enum par_phase {
	PAR_AUTH,	/* the client's authentication */
	PAR_CLIENT,	/* its registration */
	PAR_BG,		/* scope=AIS:{consentId}: the consent */
	PAR_STORE	/* the request kept */
};

struct par_ctx {
	enum par_phase		 phase;
	struct db_query		 q;
	json_t			*request;
	struct client_auth	 auth;
	/* A DPoP proof's key (RFC 9449 10.1), "" without one. */
	char			 dpop_jkt[JWS_THUMBPRINT_LEN + 1];
	char			 consent_id[AUTHREQ_UUID_LEN + 1];
	char			 request_uri[sizeof(PAR_URI_PREFIX) +
				    BASE64URL_ENCODED_LEN(PAR_RANDOM) + 1];
};

/* Each at most once (RFC 9126 2.1, RFC 6749 3.1), read before the body
 * is parsed (oauth_repeated_param). */
static const char *const par_params[] = {
	"client_id", "request_uri", "response_type", "redirect_uri", "scope",
	"state", "code_challenge", "code_challenge_method", "client_assertion",
	"client_assertion_type", "dpop_jkt", NULL
};

static void
par_free(struct http_request *req)
{
	struct par_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
	if (ctx->request != NULL)
		json_decref(ctx->request);
	OPENSSL_cleanse(&ctx->auth, sizeof(ctx->auth));
}

/* A fresh request_uri and its SHA-256; -1 when no randomness. */
static int
par_new_uri(struct par_ctx *ctx, uint8_t digest[32])
{
	uint8_t	raw[PAR_RANDOM];
	char	enc[BASE64URL_ENCODED_LEN(PAR_RANDOM) + 1 + 1];

	if (crypto_random(raw, sizeof(raw)) == -1 ||
	    base64url_encode(raw, sizeof(raw), enc, sizeof(enc)) < 0)
		return (-1);
	(void)snprintf(ctx->request_uri, sizeof(ctx->request_uri), "%s%s",
	    PAR_URI_PREFIX, enc);
	crypto_sha256(ctx->request_uri, strlen(ctx->request_uri), digest);
	return (0);
}

static enum db_next
par_store(struct http_request *req, struct par_ctx *ctx)
{
	uint8_t	 digest[32];
	char	*text;

	if (par_new_uri(ctx, digest) == -1) {
		respond_server_error(req, "par random");
		return (DB_ANSWERED);
	}
	if ((text = json_dumps(ctx->request, JSON_COMPACT)) == NULL) {
		respond_server_error(req, "par json");
		return (DB_ANSWERED);
	}
	ctx->phase = PAR_STORE;
	db_query_begin(&ctx->q, req, "SELECT oauth_par_push($1, $2, $3, $4)");
	db_param(&ctx->q, ctx->auth.client_id);
	db_param_bin(&ctx->q, digest, sizeof(digest));
	db_param(&ctx->q, text);
	db_param_int(&ctx->q, AUTHREQ_PUSHED_TTL);
	free(text);
	return (DB_QUERY);
}

/*
 * A DPoP proof with the pushed request (RFC 9449 10.1): its key is the
 * one the code will be bound to. Checked before the client, as at the
 * token endpoint; its jti is not spent here (a replayed proof could only
 * bind another pushed request to the client's own key). 0, or -1 with
 * the 400 sent.
 */
static int
par_dpop(struct http_request *req, struct par_ctx *ctx)
{
	struct dpop_proof	p;
	int			r;

	if ((r = oauth_dpop(req, &p)) == 1)
		(void)snprintf(ctx->dpop_jkt, sizeof(ctx->dpop_jkt), "%s",
		    p.jkt);
	return (r == -1 ? -1 : 0);
}

/* The proof's key into the request; a dpop_jkt sent too must be it. */
static int
par_dpop_bind(struct http_request *req, struct par_ctx *ctx)
{
	const char	*sent;

	if (ctx->dpop_jkt[0] == '\0')
		return (0);
	sent = json_string_value(json_object_get(ctx->request, "dpop_jkt"));
	if (sent != NULL && strcmp(sent, ctx->dpop_jkt) != 0) {
		respond_oauth_error(req, 400, "invalid_dpop_proof",
		    "dpop_jkt is not the thumbprint of the DPoP proof's key.");
		return (-1);
	}
	json_object_set_new(ctx->request, "dpop_jkt",
	    json_string(ctx->dpop_jkt));
	return (0);
}

/* The registration: the request checked, then kept (or the consent). */
static enum db_next
par_check(struct http_request *req, struct par_ctx *ctx, json_t *client)
{
	if (client == NULL) {
		respond_oauth_error(req, 401, "invalid_client",
		    "Client authentication failed.");
		return (DB_ANSWERED);
	}
	if (forms_arg(req, "redirect_uri") == NULL) {
		respond_oauth_error(req, 400, "invalid_request",
		    "redirect_uri is required.");
		return (DB_ANSWERED);
	}
	ctx->request = authreq_new(req, client, ctx->auth.client_id,
	    forms_arg(req, "redirect_uri"));
	if (ctx->request == NULL) {
		respond_oauth_error(req, 400, "invalid_request",
		    "redirect_uri is not one this client registered.");
		return (DB_ANSWERED);
	}
	if (authreq_check(req, ctx->request, client, AUTHREQ_JSON,
	    ctx->consent_id) == -1 || par_dpop_bind(req, ctx) == -1)
		return (DB_ANSWERED);
	if (ctx->consent_id[0] == '\0')
		return (par_store(req, ctx));
	ctx->phase = PAR_BG;
	db_query_begin(&ctx->q, req, AUTHREQ_SQL_BG_CONSENT);
	db_param(&ctx->q, ctx->auth.client_id);
	db_param(&ctx->q, ctx->consent_id);
	return (DB_QUERY);
}

/*
 * The client authenticated (a body client_id other than its own was
 * refused with the credentials, as at the token endpoint); a request_uri
 * is never pushed.
 */
static enum db_next
par_authenticated(struct http_request *req, struct par_ctx *ctx)
{
	json_t	*client;

	if (forms_arg(req, "request_uri") != NULL) {
		respond_oauth_error(req, 400, "invalid_request",
		    "request_uri must not be pushed (RFC 9126 2.1).");
		return (DB_ANSWERED);
	}
	client = client_cache_get(CLIENT_CACHE_PAGE, ctx->auth.client_id);
	if (client != NULL)
		return (par_check(req, ctx, client));
	ctx->phase = PAR_CLIENT;
	db_query_begin(&ctx->q, req, AUTHREQ_SQL_CLIENT);
	db_param(&ctx->q, ctx->auth.client_id);
	return (DB_QUERY);
}

static void
par_answer(struct http_request *req, struct par_ctx *ctx)
{
	json_t	*body;

	body = json_pack("{s:s, s:i}", "request_uri", ctx->request_uri,
	    "expires_in", AUTHREQ_PUSHED_TTL);
	if (body == NULL) {
		respond_server_error(req, "par answer");
		return;
	}
	respond_json(req, 201, body);
}

static enum db_next
par_step(struct http_request *req, void *arg)
{
	struct par_ctx	*ctx = arg;
	enum db_next	 next;

	switch (ctx->phase) {
	case PAR_AUTH:
		if (!client_auth_done(req, &ctx->q, &ctx->auth, &next))
			return (next);
		return (par_authenticated(req, ctx));
	case PAR_CLIENT:
		return (par_check(req, ctx, authreq_client_row(&ctx->q,
		    ctx->auth.client_id)));
	case PAR_BG:
		if (authreq_bg_merge(req, &ctx->q, ctx->request,
		    AUTHREQ_JSON) == -1)
			return (DB_ANSWERED);
		return (par_store(req, ctx));
	case PAR_STORE:
		par_answer(req, ctx);
		break;
	}
	return (DB_ANSWERED);
}

static enum db_next
par_start(struct http_request *req, struct par_ctx *ctx)
{
	if (token_params_once(req, par_params) == -1)
		return (DB_ANSWERED);
	http_populate_post(req);
	if (par_dpop(req, ctx) == -1)
		return (DB_ANSWERED);
	ctx->phase = PAR_AUTH;
	if (client_auth_begin(req, &ctx->q, &ctx->auth) == -1)
		return (DB_ANSWERED);
	return (DB_QUERY);
}

int
oauth_par(struct http_request *req)
{
	struct par_ctx	*ctx;

	if (!http_state_exists(req)) {
		ctx = http_state_create(req, sizeof(*ctx), par_free);
		if (par_start(req, ctx) == DB_ANSWERED)
			return (KORE_RESULT_OK);
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, par_step, ctx, "par query"));
}

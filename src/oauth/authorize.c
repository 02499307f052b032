/*
 * GET /auth/oauth/authorize (spec 4.1, RFC 6749 4.1.1, RFC 7636,
 * RFC 9126 4).
 *
 * The client and its redirect_uri are checked against the registry first:
 * until both are known good, errors are shown to the PSU and never
 * redirected. client_id or redirect_uri repeated is an error page; the
 * rest of the request is checked in authreq.c, where a refusal is an
 * error redirect. The validated request is then sealed into the login
 * form; nothing is written to the database.
 *
 * With a request_uri (a pushed request, par.c), only client_id and lang
 * are read from the query: the request is the one the client pushed
 * (oauth_par_read), with its request_uri's hash (key "par") so that the
 * PSU's decision uses it up; until then it may be loaded again (a
 * reload, FAPI 2.0's conformance tests), and an unknown, used, expired
 * or another client's request_uri is an error page. A client that must
 * push its requests (par_required) is refused without one.
 *
 * scope=AIS:{consentId} (that one scope alone) is the integrated OAuth
 * approach of a Berlin Group consent (src/bg/README.md): one more query
 * (bg_oauth_authorize) checks that it names a received consent of this
 * client made on /xs2a/v1/consents (else invalid_scope), moves the
 * TPP's OAUTH authorisation of it to started, and adds the consent to
 * the sealed request (key "bg", src/oauth/oauth.h).
 */
#include <sys/types.h>

#include <stdint.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "db/db.h"
#include "oauth/authreq.h"
#include "oauth/client_cache.h"
#include "psu/login.h"
#include "oauth/oauth.h"
#include "web/forms.h"
#include "web/pages.h"

int	oauth_authorize(struct http_request *);

enum authorize_phase {
	AUTHORIZE_CLIENT,	/* the registration */
	AUTHORIZE_BG,		/* scope=AIS:{consentId}: the consent */
	AUTHORIZE_PUSHED	/* request_uri: the pushed request */
};

struct authorize_ctx {
	enum authorize_phase	 phase;
	struct db_query		 q;
	/* scope=AIS:{consentId}: the request waiting for the consent. */
	json_t			*request;
	char			 consent_id[AUTHREQ_UUID_LEN + 1];
	char			 par_hash[65];	/* hex SHA-256, pushed */
};

static const char sql_pushed[] = "SELECT oauth_par_read($1, $2)";

static const char *const authorize_page_params[] = {
	"client_id", "redirect_uri", NULL
};
static const char *const authorize_pushed_params[] = {
	"client_id", "request_uri", NULL
};

static void
authorize_free(struct http_request *req)
{
	struct authorize_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
	if (ctx->request != NULL)
		json_decref(ctx->request);
}

static enum db_next
authorize_decide(struct http_request *req, struct authorize_ctx *ctx,
    json_t *client)
{
	json_t		*request;
	const char	*client_id;

	client_id = forms_arg(req, "client_id");
	if (client == NULL || (request = authreq_new(req, client, client_id,
	    forms_arg(req, "redirect_uri"))) == NULL) {
		pages_message(req, 400, "error_title", "error_client");
		return (DB_ANSWERED);
	}
	if (json_is_true(json_object_get(client, "par"))) {
		oauth_redirect_error(req, request, "invalid_request",
		    "this client must push its authorisation request "
		    "(RFC 9126) and send its request_uri");
		json_decref(request);
		return (DB_ANSWERED);
	}
	if (authreq_check(req, request, client, AUTHREQ_REDIRECT,
	    ctx->consent_id) == -1) {
		json_decref(request);
		return (DB_ANSWERED);
	}
	if (ctx->consent_id[0] == '\0') {
		login_page_new(req, request);
		json_decref(request);
		return (DB_ANSWERED);
	}
	ctx->request = request;
	ctx->phase = AUTHORIZE_BG;
	db_query_begin(&ctx->q, req, AUTHREQ_SQL_BG_CONSENT);
	db_param(&ctx->q, client_id);
	db_param(&ctx->q, ctx->consent_id);
	return (DB_QUERY);
}

/* The pushed request: its login page, or the error page. */
static enum db_next
authorize_pushed(struct http_request *req, struct authorize_ctx *ctx)
{
	json_t	*request;

	if (db_rows(&ctx->q) != 1 || db_is_null(&ctx->q, 0, 0)) {
		pages_message(req, 400, "error_title", "error_request_uri");
		return (DB_ANSWERED);
	}
	if ((request = json_loads(db_value(&ctx->q, 0, 0), 0, NULL)) ==
	    NULL) {
		respond_server_error(req, "authorize pushed request");
		return (DB_ANSWERED);
	}
	json_object_set_new(request, "par", json_string(ctx->par_hash));
	login_page_new(req, request);
	json_decref(request);
	return (DB_ANSWERED);
}

static enum db_next
authorize_pushed_begin(struct http_request *req, struct authorize_ctx *ctx,
    const char *client_id, const char *request_uri)
{
	uint8_t	digest[32];

	if (client_id == NULL ||
	    oauth_repeated_param(req, authorize_pushed_params) != NULL) {
		pages_message(req, 400, "error_title", "error_request_uri");
		return (DB_ANSWERED);
	}
	crypto_sha256(request_uri, strlen(request_uri), digest);
	if (hex_encode(digest, sizeof(digest), ctx->par_hash,
	    sizeof(ctx->par_hash)) < 0) {
		respond_server_error(req, "authorize pushed hash");
		return (DB_ANSWERED);
	}
	ctx->phase = AUTHORIZE_PUSHED;
	db_query_begin(&ctx->q, req, sql_pushed);
	db_param(&ctx->q, client_id);
	db_param_bin(&ctx->q, digest, sizeof(digest));
	return (DB_QUERY);
}

static enum db_next
authorize_start(struct http_request *req, struct authorize_ctx *ctx)
{
	json_t		*client;
	const char	*client_id, *redirect_uri, *request_uri;

	http_populate_get(req);
	client_id = forms_arg(req, "client_id");
	if ((request_uri = forms_arg(req, "request_uri")) != NULL)
		return (authorize_pushed_begin(req, ctx, client_id,
		    request_uri));
	redirect_uri = forms_arg(req, "redirect_uri");
	if (client_id == NULL || redirect_uri == NULL ||
	    oauth_repeated_param(req, authorize_page_params) != NULL) {
		pages_message(req, 400, "error_title", "error_client");
		return (DB_ANSWERED);
	}
	client = client_cache_get(CLIENT_CACHE_PAGE, client_id);
	if (client != NULL)
		return (authorize_decide(req, ctx, client));
	ctx->phase = AUTHORIZE_CLIENT;
	db_query_begin(&ctx->q, req, AUTHREQ_SQL_CLIENT);
	db_param(&ctx->q, client_id);
	return (DB_QUERY);
}

static enum db_next
authorize_step(struct http_request *req, void *arg)
{
	struct authorize_ctx	*ctx = arg;

	switch (ctx->phase) {
	case AUTHORIZE_PUSHED:
		return (authorize_pushed(req, ctx));
	case AUTHORIZE_BG:
		if (authreq_bg_merge(req, &ctx->q, ctx->request,
		    AUTHREQ_REDIRECT) == 0)
			login_page_new(req, ctx->request);
		return (DB_ANSWERED);
	case AUTHORIZE_CLIENT:
		break;
	}
	return (authorize_decide(req, ctx, authreq_client_row(&ctx->q,
	    forms_arg(req, "client_id"))));
}

int
oauth_authorize(struct http_request *req)
{
	struct authorize_ctx	*ctx;

	if (!http_state_exists(req)) {
		ctx = http_state_create(req, sizeof(*ctx), authorize_free);
		if (authorize_start(req, ctx) == DB_ANSWERED)
			return (KORE_RESULT_OK);
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, authorize_step, ctx,
	    "authorize client lookup"));
}

/*
 * GET /auth/payments/{paymentId}/authorise, the scaRedirect of a payment
 * initiated with redirect SCA (src/db/functions/60_pis.sql): opening it
 * moves the authorisation from received to started; the PSU logs in
 * (the PSU login: password and TOTP, its lockout and idle rules) and the
 * page then shows the payment (amount, currency, payee name and IBAN,
 * debtor account). Only the PSU's own payment is shown; any other id is
 * "unknown", the same answer as for an id that does not exist.
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "app/app.h"
#include "common/crypto.h"
#include "db/db.h"
#include "pis/payments_page.h"
#include "web/pages.h"

int	pis_authorise_page(struct http_request *);

#define AUTHORISE_PREFIX	"/auth/payments/"
#define AUTHORISE_SUFFIX	"/authorise"
#define AUTHORISE_ID_LEN	36

struct authorise_ctx {
	struct db_query	q;
	int		has_session;
};

static const char sql_page[] =
    "SELECT psu_id, payment FROM psu_payment_authorise_page($1, $2, $3)";

static void
authorise_free(struct http_request *req)
{
	struct authorise_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
}

/* The payment id of the path into id, or -1 (the route admits more). */
static int
authorise_path_id(const char *path, char id[AUTHORISE_ID_LEN + 1])
{
	size_t	plen = sizeof(AUTHORISE_PREFIX) - 1;

	if (strlen(path) != plen + AUTHORISE_ID_LEN +
	    sizeof(AUTHORISE_SUFFIX) - 1 ||
	    strncmp(path, AUTHORISE_PREFIX, plen) != 0 ||
	    strcmp(path + plen + AUTHORISE_ID_LEN, AUTHORISE_SUFFIX) != 0)
		return (-1);
	memcpy(id, path + plen, AUTHORISE_ID_LEN);
	id[AUTHORISE_ID_LEN] = '\0';
	return (crypto_is_uuid(id) ? 0 : -1);
}

static int
authorise_start(struct http_request *req)
{
	struct authorise_ctx	*ctx;
	const char		*session;
	char			 id[AUTHORISE_ID_LEN + 1];
	uint8_t			 digest[32];

	http_populate_get(req);
	if (authorise_path_id(req->path, id) == -1) {
		pages_message(req, 404, "error_title", "payment_unknown");
		return (KORE_RESULT_OK);
	}
	session = payments_page_session(req);
	ctx = http_state_create(req, sizeof(*ctx), authorise_free);
	db_query_begin(&ctx->q, req, sql_page);
	if (session == NULL) {
		db_param(&ctx->q, NULL);
	} else {
		crypto_sha256(session, strlen(session), digest);
		db_param_bin(&ctx->q, digest, sizeof(digest));
		ctx->has_session = 1;
	}
	db_param_int(&ctx->q, app_cfg.session_idle);
	db_param(&ctx->q, id);
	return (KORE_RESULT_RETRY);
}

static void
authorise_render(struct http_request *req, struct authorise_ctx *ctx)
{
	json_t	*payment;

	if (db_rows(&ctx->q) != 1 || db_is_null(&ctx->q, 0, 0)) {
		payments_page_login(req, req->path);
		return;
	}
	if (db_is_null(&ctx->q, 0, 1)) {
		pages_message(req, 404, "error_title", "payment_unknown");
		return;
	}
	if ((payment = json_loads(db_value(&ctx->q, 0, 1), 0, NULL)) == NULL) {
		respond_server_error(req, "authorise page");
		return;
	}
	payments_page_translate(req, payment);
	pages_render(req, 200, "payment_authorise",
	    json_pack("{s:o}", "payment", payment));
}

int
pis_authorise_page(struct http_request *req)
{
	struct authorise_ctx	*ctx;
	int			 rc;

	if (!http_state_exists(req) &&
	    (rc = authorise_start(req)) != KORE_RESULT_RETRY)
		return (rc);
	ctx = http_state_get(req);

	switch (db_query_poll(&ctx->q)) {
	case DB_PENDING:
		return (KORE_RESULT_RETRY);
	case DB_FAILED:
		respond_server_error(req, "authorise page");
		return (KORE_RESULT_OK);
	case DB_READY:
		break;
	}
	authorise_render(req, ctx);
	return (KORE_RESULT_OK);
}

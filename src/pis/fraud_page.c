/*
 * The PSU reports one of their payments as fraud, from the payments
 * page (PSU login with password and TOTP): POST /auth/payments/fraud
 * (the page's "fraud" token) shows the payment and asks what happened,
 * in the PSU's words for the three fraud types of EBA/GL/2018/05; POST
 * /auth/payments/fraud/confirm (a "fraud_confirm" token from that page)
 * records the mark and its audit row (psu_fraud_mark), then back to the
 * payments page. Both tokens are sealed, bound to the PSU and to the
 * session, valid FORMS_STEP_TTL seconds. Only an executed payment (ACSC)
 * can be reported: another PSU's payment is 404, one that was not
 * executed is 409 with a message, and nothing is written.
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/crypto.h"
#include "db/db.h"
#include "pis/payments_page.h"
#include "psu/psu_session.h"
#include "web/forms.h"
#include "web/pages.h"

int	pis_fraud_page(struct http_request *);
int	pis_fraud_confirm(struct http_request *);

#define PAYMENTS_PATH	"/auth/payments"

struct fraud_ctx {
	struct db_query	 q;
	const char	*session;
	long long	 psu_id;
};

static const char *const fraud_types[] = { "issued_by_fraudster",
	"modified_by_fraudster", "payer_manipulated", NULL };

static void
fraud_free(struct http_request *req)
{
	struct fraud_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
}

/*
 * The post's session, token (purpose) and payment id: the context with
 * its query begun (session digest, idle, PSU, payment), or NULL when it
 * answered.
 */
static struct fraud_ctx *
fraud_start(struct http_request *req, const char *purpose, const char *sql)
{
	struct fraud_ctx	*ctx;
	const char		*session, *id;
	long long		 psu_id;
	uint8_t			 digest[32];

	http_populate_post(req);
	if ((session = psu_session_cookie(req)) == NULL) {
		psu_session_login(req, PAYMENTS_PATH);
		return (NULL);
	}
	if (forms_open_step(purpose, forms_arg(req, "csrf"), session,
	    &psu_id) == -1) {
		pages_message(req, 403, "error_title", "error_csrf");
		return (NULL);
	}
	id = forms_arg(req, "payment_id");
	if (id == NULL || !crypto_is_uuid(id)) {
		pages_message(req, 400, "error_title", "error_form");
		return (NULL);
	}
	ctx = http_state_create(req, sizeof(*ctx), fraud_free);
	ctx->session = session;
	ctx->psu_id = psu_id;
	crypto_sha256(session, strlen(session), digest);
	db_query_begin(&ctx->q, req, sql);
	db_param_bin(&ctx->q, digest, sizeof(digest));
	db_param_int(&ctx->q, app_cfg.session_idle);
	db_param_int(&ctx->q, psu_id);
	db_param(&ctx->q, id);
	return (ctx);
}

/* An outcome other than ok: answered with its page. */
static void
fraud_refused(struct http_request *req, const char *outcome)
{
	if (strcmp(outcome, "no_session") == 0)
		psu_session_login(req, PAYMENTS_PATH);
	else if (strcmp(outcome, "unknown") == 0)
		pages_message(req, 404, "fraud_title", "fraud_unknown");
	else if (strcmp(outcome, "not_executed") == 0)
		pages_message(req, 409, "fraud_title", "fraud_not_executed");
	else if (strcmp(outcome, "already") == 0)
		pages_message(req, 409, "fraud_title", "fraud_already");
	else if (strcmp(outcome, "bad_input") == 0)
		pages_message(req, 400, "fraud_title", "fraud_bad");
	else
		respond_server_error(req, "fraud outcome");
}

static enum db_next
fraud_page_render(struct http_request *req, void *arg)
{
	struct fraud_ctx	*ctx = arg;
	json_t			*payment, *types;
	char			 csrf[FORMS_TOKEN_MAX], key[64];
	size_t			 i;

	if (strcmp(db_value(&ctx->q, 0, 0), "ok") != 0) {
		fraud_refused(req, db_value(&ctx->q, 0, 0));
		return (DB_ANSWERED);
	}
	payment = json_loads(db_value(&ctx->q, 0, 1), 0, NULL);
	if (payment == NULL || forms_seal_step("fraud_confirm", ctx->psu_id,
	    ctx->session, csrf, sizeof(csrf)) == -1) {
		json_decref(payment);
		respond_server_error(req, "fraud page");
		return (DB_ANSWERED);
	}
	payments_page_translate(req, payment);
	types = json_array();
	for (i = 0; fraud_types[i] != NULL; i++) {
		snprintf(key, sizeof(key), "fraud_type_%s", fraud_types[i]);
		json_array_append_new(types, json_pack("{s:s, s:s}", "value",
		    fraud_types[i], "text", pages_text(req, key)));
	}
	pages_render(req, 200, "payment_fraud", json_pack("{s:o, s:o, s:s}",
	    "payment", payment, "types", types, "csrf", csrf));
	return (DB_ANSWERED);
}

int
pis_fraud_page(struct http_request *req)
{
	struct fraud_ctx	*ctx;

	if (!http_state_exists(req) && fraud_start(req, "fraud",
	    "SELECT outcome, info FROM psu_fraud_check($1, $2, $3, $4)") ==
	    NULL)
		return (KORE_RESULT_OK);
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, fraud_page_render, ctx, "fraud page"));
}

static enum db_next
fraud_confirmed(struct http_request *req, void *arg)
{
	struct fraud_ctx	*ctx = arg;

	if (strcmp(db_value(&ctx->q, 0, 0), "ok") != 0) {
		fraud_refused(req, db_value(&ctx->q, 0, 0));
		return (DB_ANSWERED);
	}
	http_response_header(req, "location", PAYMENTS_PATH);
	respond_raw(req, 303, NULL, NULL, 0);
	return (DB_ANSWERED);
}

int
pis_fraud_confirm(struct http_request *req)
{
	struct fraud_ctx	*ctx;

	if (!http_state_exists(req)) {
		ctx = fraud_start(req, "fraud_confirm",
		    "SELECT psu_fraud_mark($1, $2, $3, $4, $5, $6)");
		if (ctx == NULL)
			return (KORE_RESULT_OK);
		db_param(&ctx->q, forms_arg(req, "type"));
		db_param(&ctx->q, forms_arg(req, "details"));
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, fraud_confirmed, ctx,
	    "fraud confirm"));
}

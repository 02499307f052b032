/*
 * The PSU's payments page: GET /auth/payments lists the PSU's payments
 * (payee, amount, debtor account, status and, for a rejection, the
 * specific reason, which the TPP is not told) behind the PSU login with
 * the same two factors, lockout and idle rules as the authorisation.
 * An executed payment not marked yet has a form to report it as fraud
 * (src/pis/fraud_page.c, CSRF token "fraud" bound to the PSU and the
 * session); a marked one shows its fraud type.
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/crypto.h"
#include "db/db.h"
#include "common/devcur.h"
#include "pis/payments_page.h"
#include "psu/psu_session.h"
#include "web/forms.h"
#include "web/pages.h"

int	pis_payments_page(struct http_request *);

#define PAYMENTS_PATH	"/auth/payments"

struct payments_ctx {
	struct db_query	 q;
	const char	*session;	/* the request's cookie */
};

static const char sql_list[] =
    "SELECT psu_id, payments, marks FROM psu_payments_fraud($1, $2)";

static void
payments_free(struct http_request *req)
{
	struct payments_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
}

/* A key of the page's words: prefix and value, spaces as '_'. */
static const char *
payments_word(struct http_request *req, const char *prefix,
    const char *value)
{
	char	key[64];
	size_t	i, len;

	len = strlen(prefix);
	if (value == NULL || len + strlen(value) >= sizeof(key))
		return ("");
	memcpy(key, prefix, len);
	for (i = 0; value[i] != '\0'; i++)
		key[len + i] = value[i] == ' ' ? '_' : value[i];
	key[len + i] = '\0';
	return (pages_text(req, key));
}

/*
 * Why transaction monitoring held or rejected the payment: "risk" (the
 * rules that fired, by name) worded for the PSU as "risk_texts".
 */
static void
payments_page_risk(struct http_request *req, json_t *payment)
{
	json_t	*rules, *texts, *rule;
	size_t	 i;

	rules = json_object_get(payment, "risk");
	if (!json_is_array(rules) || json_array_size(rules) == 0)
		return;
	texts = json_array();
	json_array_foreach(rules, i, rule) {
		if (!json_is_string(rule))
			continue;
		json_array_append_new(texts, json_pack("{s:s}", "text",
		    payments_word(req, "payments_risk_",
		    json_string_value(rule))));
	}
	json_object_set_new(payment, "risk_texts", texts);
	json_object_set_new(payment, "has_risk", json_true());
}

/* The amount as the authenticator shows it (common/devcur.h). */
void
payments_page_translate(struct http_request *req, json_t *payment)
{
	json_t		*v;
	const char	*currency;
	char		 amount[DEVCUR_FORMAT_MAX];

	v = json_object_get(payment, "amount_minor");
	currency = json_string_value(json_object_get(payment, "currency"));
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    currency == NULL || devcur_format(
	    (uint64_t)json_integer_value(v), currency, amount,
	    sizeof(amount)) == 0)
		(void)snprintf(amount, sizeof(amount), "?");
	json_object_set_new(payment, "amount", json_string(amount));
	json_object_set_new(payment, "status_text", json_string(payments_word(
	    req, "payments_status_", json_string_value(json_object_get(
	    payment, "status")))));
	json_object_set_new(payment, "reason_text", json_string(payments_word(
	    req, "payments_reason_", json_string_value(json_object_get(
	    payment, "reason")))));
	payments_page_risk(req, payment);
}

/* The fraud mark of a payment (marks: id to type), or the report form. */
static void
payments_fraud(struct http_request *req, json_t *payment, json_t *marks)
{
	const char	*id, *type, *status;

	id = json_string_value(json_object_get(payment, "id"));
	status = json_string_value(json_object_get(payment, "status"));
	type = id != NULL ? json_string_value(json_object_get(marks, id)) :
	    NULL;
	if (type != NULL) {
		json_object_set_new(payment, "fraud_text", json_string(
		    payments_word(req, "fraud_type_", type)));
		return;
	}
	json_object_set_new(payment, "can_report", json_boolean(
	    status != NULL && strcmp(status, "ACSC") == 0));
}

static enum db_next
payments_render(struct http_request *req, void *arg)
{
	struct payments_ctx	*ctx = arg;
	json_t			*list, *payment, *marks;
	char			 csrf[FORMS_TOKEN_MAX];
	size_t			 i;

	if (db_rows(&ctx->q) != 1 || db_is_null(&ctx->q, 0, 0)) {
		psu_session_login(req, PAYMENTS_PATH);
		return (DB_ANSWERED);
	}
	list = json_loads(db_value(&ctx->q, 0, 1), 0, NULL);
	marks = json_loads(db_value(&ctx->q, 0, 2), 0, NULL);
	if (list == NULL || marks == NULL || forms_seal_step("fraud",
	    db_int(&ctx->q, 0, 0), ctx->session, csrf, sizeof(csrf)) == -1) {
		json_decref(list);
		json_decref(marks);
		respond_server_error(req, "payments page");
		return (DB_ANSWERED);
	}
	json_array_foreach(list, i, payment) {
		payments_page_translate(req, payment);
		payments_fraud(req, payment, marks);
	}
	json_decref(marks);
	pages_render(req, 200, "payments", json_pack("{s:o, s:b, s:s}",
	    "payments", list, "none", json_array_size(list) == 0,
	    "csrf", csrf));
	return (DB_ANSWERED);
}

int
pis_payments_page(struct http_request *req)
{
	struct payments_ctx	*ctx;
	const char		*session;
	uint8_t			 digest[32];

	if (!http_state_exists(req)) {
		http_populate_get(req);
		if ((session = psu_session_cookie(req)) == NULL) {
			psu_session_login(req, PAYMENTS_PATH);
			return (KORE_RESULT_OK);
		}
		ctx = http_state_create(req, sizeof(*ctx), payments_free);
		ctx->session = session;
		crypto_sha256(session, strlen(session), digest);
		db_query_begin(&ctx->q, req, sql_list);
		db_param_bin(&ctx->q, digest, sizeof(digest));
		db_param_int(&ctx->q, app_cfg.session_idle);
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, payments_render, ctx, "payments list"));
}

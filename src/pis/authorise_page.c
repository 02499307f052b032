/*
 * GET /auth/payments/{paymentId}/authorise, the scaRedirect of a payment
 * initiated with redirect SCA (src/db/functions/60_pis.sql): opening it
 * moves the authorisation from received to started; the PSU logs in
 * (password, with the PSU login's lockout and idle rules: login.c opens
 * a session for this page only) and the page then shows the payment
 * (amount, currency, payee name and IBAN, debtor account) with:
 *	a PSU with an active authenticator: "confirm on your authenticator"
 *	    (a form, authorise_confirm.c), then, while the challenge runs,
 *	    the page refreshes itself (<meta http-equiv="refresh">, no
 *	    JavaScript) until the decider has made the payment final;
 *	otherwise a TOTP form.
 * At the end: SCA passed (ACTC, ACSC): 303 to TPP-Redirect-URI; failed
 * (RJCT, CANC): the page shows the reason (timed out: it expired) and
 * goes on to TPP-Nok-Redirect-URI after a few seconds, if there is one.
 * Only the PSU's own payment is shown; any other id is "unknown", the
 * same answer as for an id that does not exist.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/crypto.h"
#include "db/db.h"
#include "pis/authorise.h"
#include "pis/payments_page.h"
#include "pis/sca_code.h"
#include "psu/passkey.h"
#include "psu/payment_path.h"
#include "psu/psu_session.h"
#include "web/forms.h"
#include "web/pages.h"

int	pis_authorise_page(struct http_request *);

/* Seconds between the waiting page's reloads, and before the Nok URI. */
#define AUTHORISE_REFRESH	"2"
#define AUTHORISE_NOK_DELAY	"5"

struct authorise_ctx {
	struct db_query	q;
	char		id[AUTHORISE_ID_LEN + 1];
	char		session[AUTHORISE_SESSION_MAX];
};

static const char sql_page[] =
    "SELECT psu_id, payment FROM psu_payment_authorise_page($1, $2, $3)";

static void
authorise_free(struct http_request *req)
{
	struct authorise_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
}

static int
authorise_start(struct http_request *req)
{
	struct authorise_ctx	*ctx;
	const char		*session;
	char			 id[AUTHORISE_ID_LEN + 1];
	uint8_t			 digest[32];

	http_populate_get(req);
	if (psu_payment_path_id(req->path, id) == -1) {
		pages_message(req, 404, "error_title", "payment_unknown");
		return (KORE_RESULT_OK);
	}
	session = psu_session_cookie(req);
	ctx = http_state_create(req, sizeof(*ctx), authorise_free);
	db_query_begin(&ctx->q, req, sql_page);
	if (session == NULL) {
		db_param(&ctx->q, NULL);
	} else {
		crypto_sha256(session, strlen(session), digest);
		db_param_bin(&ctx->q, digest, sizeof(digest));
		if (strlen(session) >= sizeof(ctx->session)) {
			psu_session_login(req, req->path);
			return (KORE_RESULT_OK);
		}
		memcpy(ctx->session, session, strlen(session) + 1);
	}
	memcpy(ctx->id, id, sizeof(ctx->id));
	db_param_int(&ctx->q, app_cfg.session_idle);
	db_param(&ctx->q, id);
	return (KORE_RESULT_RETRY);
}

/*
 * A final payment: SCA passed goes to TPP-Redirect-URI (1); failed gets
 * the refresh to TPP-Nok-Redirect-URI (set on payment, 0).
 */
static int
authorise_final(struct http_request *req, json_t *payment, json_t *page)
{
	const char	*status, *uri;
	char		 refresh[1024];

	status = json_string_value(json_object_get(payment, "status"));
	if (status == NULL || strcmp(status, "RCVD") == 0 ||
	    strcmp(status, "HELD") == 0)
		return (0);
	if (strcmp(status, "ACTC") == 0 || strcmp(status, "ACSC") == 0) {
		uri = json_string_value(json_object_get(payment, "ok_uri"));
		if (uri == NULL || *uri == '\0')
			return (0);
		http_response_header(req, "location", uri);
		respond_raw(req, 303, NULL, NULL, 0);
		return (1);
	}
	uri = json_string_value(json_object_get(payment, "nok_uri"));
	if (uri != NULL && *uri != '\0' && snprintf(refresh, sizeof(refresh),
	    AUTHORISE_NOK_DELAY "; url=%s", uri) < (int)sizeof(refresh)) {
		json_object_set_new(page, "refresh", json_string(refresh));
		json_object_set_new(payment, "returning", json_true());
	}
	return (0);
}

/*
 * The PSU's keys, when the page takes a code and the PSU has keys: what
 * the page's script hands to navigator.credentials.get, its challenge
 * derived from the payment's authentication code (bound to amount and
 * payee) and the page's token. NULL: no keys offered.
 */
static json_t *
authorise_keys(const char *id, const struct authorise_shown *shown,
    json_t *payment, const char *csrf)
{
	struct sca_code_input	 in;
	const char		*origin;
	char			 rp_id[PASSKEY_RP_MAX], kid[KEYRING_ID_MAX + 1];
	char			 text[WEBAUTHN_CHALLENGE_LEN * 2], *ids;
	char			 nonce[PASSKEY_NONCE_MAX];
	uint8_t			 mac[SCA_CODE_LEN];
	uint8_t			 challenge[WEBAUTHN_CHALLENGE_LEN];
	json_t			*keys, *key_ids;

	key_ids = json_object_get(payment, "key_ids");
	if (json_array_size(key_ids) == 0 ||
	    passkey_origin(&origin, rp_id, sizeof(rp_id)) == -1)
		return (NULL);
	in.payment_id = id;
	in.amount_minor = shown->amount_minor;
	in.currency = shown->currency;
	in.creditor_iban = shown->creditor_iban;
	in.creditor_name = shown->creditor_name;
	if (sca_code_make(&app_form_keys, &in, mac, kid) == -1)
		return (NULL);
	if (passkey_nonce(nonce) == -1 || passkey_payment_challenge(mac,
	    sizeof(mac), csrf, nonce, challenge) == -1 ||
	    passkey_challenge_b64(challenge, text, sizeof(text)) == -1 ||
	    (ids = json_dumps(key_ids, JSON_COMPACT)) == NULL)
		return (NULL);
	keys = json_pack("{s:s, s:s, s:s, s:s, s:s}", "challenge", text,
	    "nonce", nonce, "rp_id", rp_id, "origin", origin, "ids", ids);
	free(ids);
	return (keys);
}

static void
authorise_render(struct http_request *req, struct authorise_ctx *ctx)
{
	json_t			*payment, *page;
	struct authorise_shown	 shown;
	char			 binding[AUTHORISE_BINDING_MAX];
	char			 csrf[FORMS_TOKEN_MAX], amount[32];

	if (db_rows(&ctx->q) != 1 || db_is_null(&ctx->q, 0, 0)) {
		psu_session_login(req, req->path);
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
	(void)snprintf(amount, sizeof(amount), "%lld", (long long)
	    json_integer_value(json_object_get(payment, "amount_minor")));
	shown.amount_minor = amount;
	shown.currency = json_string_value(json_object_get(payment,
	    "currency"));
	shown.creditor_iban = json_string_value(json_object_get(payment,
	    "creditor_iban"));
	shown.creditor_name = json_string_value(json_object_get(payment,
	    "creditor_name"));
	if (shown.currency == NULL || shown.creditor_iban == NULL ||
	    shown.creditor_name == NULL || authorise_binding(ctx->id,
	    ctx->session, &shown, binding, sizeof(binding)) == -1 ||
	    forms_seal_step("payconfirm", db_int(&ctx->q, 0, 0), binding,
	    csrf, sizeof(csrf)) == -1) {
		json_decref(payment);
		respond_server_error(req, "authorise csrf");
		return;
	}
	if ((page = json_pack("{s:O, s:s, s:o*}", "payment", payment, "csrf",
	    csrf, "keys", authorise_keys(ctx->id, &shown, payment,
	    csrf))) == NULL) {
		json_decref(payment);
		respond_server_error(req, "authorise page");
		return;
	}
	if (json_is_true(json_object_get(payment, "waiting")))
		json_object_set_new(page, "refresh",
		    json_string(AUTHORISE_REFRESH));
	if (authorise_final(req, payment, page)) {
		json_decref(payment);
		json_decref(page);
		return;
	}
	json_decref(payment);
	pages_render(req, 200, "payment_authorise", page);
}

static enum db_next
authorise_step(struct http_request *req, void *arg)
{
	authorise_render(req, arg);
	return (DB_ANSWERED);
}

int
pis_authorise_page(struct http_request *req)
{
	struct authorise_ctx	*ctx;
	int			 rc;

	if (req->method == HTTP_METHOD_POST)
		return (pis_authorise_confirm(req));
	if (!http_state_exists(req) &&
	    (rc = authorise_start(req)) != KORE_RESULT_RETRY)
		return (rc);
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, authorise_step, ctx, "authorise page"));
}

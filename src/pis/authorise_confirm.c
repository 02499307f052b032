/*
 * POST /auth/payments/{paymentId}/authorise: redirect SCA on the page
 * that shows the payment (authorise_page.c). The PSU is logged in (by
 * password for this page, or a full PSU session; the PSU login's lockout
 * and idle rules: the session must be live), then:
 *
 * - method=device, a PSU with an active authenticator: the device
 *   challenge is created with the authentication code bound to amount
 *   and payee (sca_code.h) in one transaction (psu_payment_device); the
 *   browser goes back to the page, which waits for the decider
 *   (decide.c). A second post or a refresh creates no second challenge.
 * - otherwise a TOTP code: a fresh step (never one used before) that
 *   counts against the login's lockout. When it is right, the code bound
 *   to amount and payee is kept and the payment becomes ACTC, in one
 *   transaction (psu_payment_totp).
 * - or, method=key, one of the PSU's passkeys or security keys instead
 *   of the code: its challenge is derived from the authentication code
 *   and the page's token (src/psu/passkey.h), so the key signs for this
 *   amount and payee; then as a TOTP code (psu_payment_key).
 *
 * The booking checks the authentication code again in both cases.
 *
 * CSRF: the form carries a sealed "payconfirm" token bound to the PSU,
 * the payment and the session. Single use: a repeated post gets the
 * first post's result (SCA passed: the same redirect).
 * At the end the browser goes to TPP-Redirect-URI, or on failure to
 * TPP-Nok-Redirect-URI (without one, a bank page saying it failed).
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <openssl/rand.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/crypto.h"
#include "db/db.h"
#include "metrics/metrics.h"
#include "pis/authorise.h"
#include "pis/payments_page.h"
#include "pis/pis.h"
#include "pis/sca_code.h"
#include "psu/passkey.h"
#include "psu/payment_path.h"
#include "psu/psu_session.h"
#include "psu/totp_code.h"
#include "web/forms.h"
#include "web/pages.h"

enum confirm_phase {
	CONFIRM_INPUT,
	CONFIRM_KEY,
	CONFIRM_OUTCOME,
	CONFIRM_DEVICE
};

#define CONFIRM_NONCE_LEN	32

struct confirm_ctx {
	enum confirm_phase	phase;
	struct db_query		q;
	char			id[AUTHORISE_ID_LEN + 1];
	long long		psu_id;
	/* What the code was made over, and the code (for the key step). */
	char			amount[32], currency[8], iban[40], name[128];
	uint8_t			mac[SCA_CODE_LEN];
	char			kid[KEYRING_ID_MAX + 1];
};

static const char sql_input[] =
    "SELECT psu_id, username, totp_box, amount_minor, currency, "
    "creditor_iban, creditor_name FROM psu_payment_totp_input($1, $2, $3)";
static const char sql_outcome[] =
    "SELECT outcome, ok_uri, nok_uri FROM psu_payment_totp($1, $2, $3, $4, "
    "$5, $6, $7, $8, $9, $10, $11)";
static const char sql_key[] =
    "SELECT outcome, ok_uri, nok_uri FROM psu_payment_key($1, $2, $3, $4, "
    "$5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)";
static const char sql_device[] =
    "SELECT outcome, ok_uri, nok_uri FROM psu_payment_device($1, $2, $3, "
    "$4, $5, $6, $7, $8, $9, $10)";

static void
confirm_free(struct http_request *req)
{
	struct confirm_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
}

/* The time step the posted code matches (window of totp_verify), or -1. */
static long long
confirm_step(struct http_request *req, struct confirm_ctx *ctx)
{
	return (otp_code_step(req, "psu", db_value(&ctx->q, 0, 1),
	    db_value(&ctx->q, 0, 2), -1));
}

static enum db_next
confirm_start(struct http_request *req, struct confirm_ctx *ctx)
{
	const char	*session;
	uint8_t		 digest[32];

	if (psu_payment_path_id(req->path, ctx->id) == -1) {
		pages_message(req, 404, "error_title", "payment_unknown");
		return (DB_ANSWERED);
	}
	if ((session = psu_session_cookie(req)) == NULL) {
		psu_session_login(req, req->path);
		return (DB_ANSWERED);
	}
	crypto_sha256(session, strlen(session), digest);
	db_query_begin(&ctx->q, req, sql_input);
	db_param_bin(&ctx->q, digest, sizeof(digest));
	db_param_int(&ctx->q, app_cfg.session_idle);
	db_param(&ctx->q, ctx->id);
	ctx->phase = CONFIRM_INPUT;
	return (DB_QUERY);
}

static int
confirm_wants_device(struct http_request *req)
{
	const char	*method = forms_arg(req, "method");

	return (method != NULL && strcmp(method, "device") == 0);
}

/* The device challenge for this payment (psu_payment_device). */
static enum db_next
confirm_device(struct http_request *req, struct confirm_ctx *ctx,
    const struct authorise_shown *shown, const uint8_t *mac, const char *kid)
{
	uint8_t	nonce[CONFIRM_NONCE_LEN];

	if (RAND_bytes(nonce, sizeof(nonce)) != 1) {
		respond_server_error(req, "challenge nonce");
		return (DB_ANSWERED);
	}
	db_query_begin(&ctx->q, req, sql_device);
	db_param(&ctx->q, ctx->id);
	db_param_int(&ctx->q, ctx->psu_id);
	db_param_bin(&ctx->q, nonce, sizeof(nonce));
	db_param_int(&ctx->q, pis_settings()->sca_seconds);
	db_param(&ctx->q, shown->amount_minor);
	db_param(&ctx->q, shown->currency);
	db_param(&ctx->q, shown->creditor_iban);
	db_param(&ctx->q, shown->creditor_name);
	db_param_bin(&ctx->q, mac, SCA_CODE_LEN);
	db_param(&ctx->q, kid);
	ctx->phase = CONFIRM_DEVICE;
	return (DB_QUERY);
}

/* The values the code was made over, and the code (its key's id). */
static void
confirm_param_code(struct confirm_ctx *ctx)
{
	db_param(&ctx->q, ctx->amount);
	db_param(&ctx->q, ctx->currency);
	db_param(&ctx->q, ctx->iban);
	db_param(&ctx->q, ctx->name);
	db_param_bin(&ctx->q, ctx->mac, sizeof(ctx->mac));
	db_param(&ctx->q, ctx->kid);
}

static int
confirm_wants_key(struct http_request *req)
{
	const char	*method = forms_arg(req, "method");

	return (method != NULL && strcmp(method, "key") == 0);
}

/* The posted key's assertion checked, then psu_payment_key. */
static enum db_next
confirm_key(struct http_request *req, struct confirm_ctx *ctx)
{
	uint8_t		challenge[WEBAUTHN_CHALLENGE_LEN] = { 0 }, hash[32];
	uint32_t	count = 0;
	long long	key_id;
	int		ok;

	ok = passkey_payment_challenge(ctx->mac, sizeof(ctx->mac),
	    forms_arg(req, "csrf"), forms_arg(req, "key_nonce"),
	    challenge) == 0 && passkey_assertion(req, &ctx->q, challenge,
	    &count, "payment");
	crypto_sha256(challenge, sizeof(challenge), hash);
	key_id = passkey_key_id(&ctx->q);
	db_query_begin(&ctx->q, req, sql_key);
	db_param(&ctx->q, ctx->id);
	db_param_int(&ctx->q, ctx->psu_id);
	if (key_id == 0)
		db_param(&ctx->q, NULL);
	else
		db_param_int(&ctx->q, key_id);
	db_param(&ctx->q, ok ? "true" : "false");
	db_param_int(&ctx->q, count);
	db_param_bin(&ctx->q, hash, sizeof(hash));
	db_param_int(&ctx->q, FORMS_STEP_TTL);
	db_param_int(&ctx->q, app_cfg.login_max_failures);
	db_param_int(&ctx->q, app_cfg.login_lock_seconds);
	confirm_param_code(ctx);
	ctx->phase = CONFIRM_OUTCOME;
	return (DB_QUERY);
}

static enum db_next
confirm_check(struct http_request *req, struct confirm_ctx *ctx)
{
	struct sca_code_input	in;
	struct authorise_shown	shown;
	char			binding[AUTHORISE_BINDING_MAX];
	long long		step;

	/* The session ended (idle rule), or no payment of its PSU. */
	if (db_rows(&ctx->q) != 1) {
		psu_session_login(req, req->path);
		return (DB_ANSWERED);
	}
	(void)snprintf(ctx->amount, sizeof(ctx->amount), "%s",
	    db_value(&ctx->q, 0, 3));
	(void)snprintf(ctx->currency, sizeof(ctx->currency), "%s",
	    db_value(&ctx->q, 0, 4));
	(void)snprintf(ctx->iban, sizeof(ctx->iban), "%s",
	    db_value(&ctx->q, 0, 5));
	(void)snprintf(ctx->name, sizeof(ctx->name), "%s",
	    db_value(&ctx->q, 0, 6));
	shown.amount_minor = ctx->amount;
	shown.currency = ctx->currency;
	shown.creditor_iban = ctx->iban;
	shown.creditor_name = ctx->name;
	/* Bound to this PSU, session, payment and the values shown. */
	if (authorise_binding(ctx->id, psu_session_cookie(req), &shown,
	    binding, sizeof(binding)) == -1 || forms_open_step("payconfirm",
	    forms_arg(req, "csrf"), binding, &ctx->psu_id) == -1 ||
	    ctx->psu_id != db_int(&ctx->q, 0, 0)) {
		pages_message(req, 403, "error_title", "error_csrf");
		return (DB_ANSWERED);
	}
	in.payment_id = ctx->id;
	in.amount_minor = ctx->amount;
	in.currency = ctx->currency;
	in.creditor_iban = ctx->iban;
	in.creditor_name = ctx->name;
	if (sca_code_make(&app_form_keys, &in, ctx->mac, ctx->kid) == -1) {
		respond_server_error(req, "sca code");
		return (DB_ANSWERED);
	}
	if (confirm_wants_device(req))
		return (confirm_device(req, ctx, &shown, ctx->mac, ctx->kid));
	if (confirm_wants_key(req)) {
		passkey_key_read(&ctx->q, req, ctx->psu_id);
		ctx->phase = CONFIRM_KEY;
		return (DB_QUERY);
	}
	step = confirm_step(req, ctx);
	db_query_begin(&ctx->q, req, sql_outcome);
	db_param(&ctx->q, ctx->id);
	db_param_int(&ctx->q, ctx->psu_id);
	otp_param_step(&ctx->q, step);
	confirm_param_code(ctx);
	ctx->phase = CONFIRM_OUTCOME;
	return (DB_QUERY);
}

static void
confirm_redirect(struct http_request *req, struct confirm_ctx *ctx, int col)
{
	if (db_is_null(&ctx->q, 0, col) || *db_value(&ctx->q, 0, col) == '\0') {
		pages_message(req, 200, "authorise_failed_title",
		    "authorise_failed");
		return;
	}
	http_response_header(req, "location", db_value(&ctx->q, 0, col));
	respond_raw(req, 303, NULL, NULL, 0);
}

static void
confirm_outcome(struct http_request *req, struct confirm_ctx *ctx)
{
	const char	*outcome = db_value(&ctx->q, 0, 0);

	/* Only outcomes of the code itself count as SCA outcomes. */
	if (strcmp(outcome, "ok") == 0 || strcmp(outcome, "failed") == 0 ||
	    strcmp(outcome, "locked") == 0)
		metrics_sca("payment", outcome);
	if (strcmp(outcome, "ok") == 0)
		confirm_redirect(req, ctx, 1);
	else if (strcmp(outcome, "locked") == 0)
		pages_message(req, 403, "locked_title", "locked");
	else if (strcmp(outcome, "failed") == 0)
		pages_message(req, 401, "error_title", "authorise_code_wrong");
	else if (strcmp(outcome, "device") == 0)
		pages_message(req, 409, "error_title", "authorise_device");
	else if (strcmp(outcome, "held") == 0)
		pages_message(req, 409, "error_title", "authorise_held");
	else
		confirm_redirect(req, ctx, 2);
}

/* After the device challenge: the page waits for the decision. */
static void
confirm_device_outcome(struct http_request *req, struct confirm_ctx *ctx)
{
	const char	*outcome = db_value(&ctx->q, 0, 0);

	if (strcmp(outcome, "waiting") == 0) {
		http_response_header(req, "location", req->path);
		respond_raw(req, 303, NULL, NULL, 0);
	} else if (strcmp(outcome, "ok") == 0) {
		confirm_redirect(req, ctx, 1);
	} else if (strcmp(outcome, "no_device") == 0) {
		pages_message(req, 409, "error_title", "authorise_no_device");
	} else if (strcmp(outcome, "changed") == 0) {
		pages_message(req, 409, "error_title", "authorise_changed");
	} else if (strcmp(outcome, "held") == 0) {
		pages_message(req, 409, "error_title", "authorise_held");
	} else {
		confirm_redirect(req, ctx, 2);
	}
}

static enum db_next
confirm_step_next(struct http_request *req, void *arg)
{
	struct confirm_ctx	*ctx = arg;

	switch (ctx->phase) {
	case CONFIRM_INPUT:
		return (confirm_check(req, ctx));
	case CONFIRM_KEY:
		return (confirm_key(req, ctx));
	case CONFIRM_OUTCOME:
		confirm_outcome(req, ctx);
		return (DB_ANSWERED);
	case CONFIRM_DEVICE:
		confirm_device_outcome(req, ctx);
		return (DB_ANSWERED);
	}
	respond_server_error(req, "confirm phase");
	return (DB_ANSWERED);
}

int
pis_authorise_confirm(struct http_request *req)
{
	struct confirm_ctx	*ctx;

	if (!http_state_exists(req)) {
		http_populate_post(req);
		ctx = http_state_create(req, sizeof(*ctx), confirm_free);
		if (confirm_start(req, ctx) == DB_ANSWERED)
			return (KORE_RESULT_OK);
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, confirm_step_next, ctx,
	    "authorise confirm"));
}

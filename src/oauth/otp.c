/*
 * POST /auth/login/otp: the second factor, a TOTP code (RFC 6238), each
 * code accepted once per PSU. Success opens a browser session (idle
 * timeout, RTS Art. 4(3)(d)) and shows the consent page.
 */
#include <sys/types.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "app/app.h"
#include "common/encoding.h"
#include "common/secretbox.h"
#include "common/totp.h"
#include "db/db.h"
#include "oauth/login.h"
#include "oauth/oauth.h"
#include "web/forms.h"
#include "web/pages.h"

int	oauth_login_otp(struct http_request *);

enum otp_phase {
	OTP_SEED,
	OTP_OUTCOME,
	OTP_ACCOUNTS
};

struct otp_ctx {
	enum otp_phase		phase;
	struct form_state	fs;
	struct db_query		q;
	long long		psu_id;
	char			session[37];
};

static const char sql_seed[] =
    "SELECT username, totp_box, totp_last_step FROM psu WHERE id = $1";
static const char sql_outcome[] =
    "SELECT login_totp($1, $2, $3, $4, $5, $6)";
static const char sql_accounts[] =
    "SELECT resource_id, iban, name, currency FROM account "
    "WHERE psu_id = $1 ORDER BY id";

static int	otp_next_page(struct http_request *, struct otp_ctx *);

static void
otp_free(struct http_request *req)
{
	struct otp_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
	forms_clear(&ctx->fs);
	OPENSSL_cleanse(ctx->session, sizeof(ctx->session));
}

void
otp_page(struct http_request *req, int status, struct form_state *fs,
    const char *step, const char *error_key)
{
	char	csrf[FORMS_TOKEN_MAX];

	if (forms_csrf_issue(req, fs->authreq, csrf, sizeof(csrf)) == -1) {
		respond_server_error(req, "otp csrf");
		return;
	}
	pages_render(req, status, "otp", json_pack("{s:s, s:s, s:s, s:s?}",
	    "authreq", fs->authreq, "csrf", csrf, "step", step,
	    "error", error_key ? pages_text(req, error_key) : NULL));
}

/* Six digits, spaces ignored (people type "123 456"). */
static int
otp_normalise(const char *in, char out[7])
{
	size_t	n;

	for (n = 0; in != NULL && *in != '\0'; in++) {
		if (*in == ' ')
			continue;
		if (!isdigit((unsigned char)*in) || n == 6)
			return (-1);
		out[n++] = *in;
	}
	out[n] = '\0';
	return (n == 6 ? 0 : -1);
}

/* The matched time step, or -1. */
static long long
otp_match(struct http_request *req, struct otp_ctx *ctx)
{
	uint8_t		seed[64];
	char		aad[128], code[7];
	int64_t		matched;
	int		len, ok;

	if (db_rows(&ctx->q) != 1 ||
	    otp_normalise(forms_arg(req, "otp"), code) == -1)
		return (-1);
	snprintf(aad, sizeof(aad), "totp:psu:%s", db_value(&ctx->q, 0, 0));
	len = secretbox_open(&app_totp_keys, db_value(&ctx->q, 0, 1), aad,
	    seed, sizeof(seed));
	if (len <= 0) {
		kore_log(LOG_ERR, "psu %lld: TOTP seed does not decrypt",
		    ctx->psu_id);
		return (-1);
	}
	ok = totp_verify(seed, (size_t)len, code, (int64_t)time(NULL),
	    db_int(&ctx->q, 0, 2), &matched);
	OPENSSL_cleanse(seed, sizeof(seed));
	return (ok == 1 ? (long long)matched : -1);
}

static int
otp_start(struct http_request *req, struct otp_ctx *ctx)
{
	http_populate_post(req);
	if (forms_verify(req, &ctx->fs) == -1 ||
	    forms_open_step("pwok", forms_arg(req, "step"), ctx->fs.authreq,
	    &ctx->psu_id) == -1) {
		pages_message(req, 403, "error_title", "error_csrf");
		return (KORE_RESULT_OK);
	}
	db_query_begin(&ctx->q, req, sql_seed);
	db_param_int(&ctx->q, ctx->psu_id);
	ctx->phase = OTP_SEED;
	return (KORE_RESULT_RETRY);
}

static void
otp_check(struct http_request *req, struct otp_ctx *ctx)
{
	uint8_t		digest[32];
	long long	step;

	step = otp_match(req, ctx);
	if (oauth_new_secret(ctx->session, digest) == -1) {
		respond_server_error(req, "otp session");
		return;
	}
	db_query_begin(&ctx->q, req, sql_outcome);
	db_param_int(&ctx->q, ctx->psu_id);
	if (step < 0)
		db_param(&ctx->q, NULL);
	else
		db_param_int(&ctx->q, step);
	db_param_int(&ctx->q, app_cfg.login_max_failures);
	db_param_int(&ctx->q, app_cfg.login_lock_seconds);
	db_param_bin(&ctx->q, digest, sizeof(digest));
	db_param_int(&ctx->q, app_cfg.session_idle);
	ctx->phase = OTP_OUTCOME;
}

static int
otp_outcome(struct http_request *req, struct otp_ctx *ctx)
{
	const char	*outcome;

	outcome = db_value(&ctx->q, 0, 0);
	if (strcmp(outcome, "locked") == 0) {
		pages_message(req, 403, "locked_title", "locked");
		return (KORE_RESULT_OK);
	}
	if (strcmp(outcome, "ok") != 0) {
		otp_page(req, 401, &ctx->fs, forms_arg(req, "step"),
		    "error_login");
		return (KORE_RESULT_OK);
	}
	respond_set_cookie(req, FORMS_SESSION_COOKIE, ctx->session, "/auth",
	    app_cfg.session_idle * 12);
	if (otp_next_page(req, ctx))
		return (KORE_RESULT_OK);
	db_query_begin(&ctx->q, req, sql_accounts);
	db_param_int(&ctx->q, ctx->psu_id);
	ctx->phase = OTP_ACCOUNTS;
	return (KORE_RESULT_RETRY);
}

/*
 * A login for one of the bank's own pages ({"next": "/auth/..."}) ends
 * with a redirect there; only fixed local paths are accepted.
 */
static int
otp_next_page(struct http_request *req, struct otp_ctx *ctx)
{
	const char	*next;

	next = json_string_value(json_object_get(ctx->fs.request, "next"));
	if (next == NULL)
		return (0);
	if (strncmp(next, "/auth/", 6) != 0 || strstr(next, "//") != NULL ||
	    strpbrk(next, "\\\r\n") != NULL)
		next = "/auth/consents";
	http_response_header(req, "location", next);
	respond_raw(req, 303, NULL, NULL, 0);
	return (1);
}

int
oauth_login_otp(struct http_request *req)
{
	struct otp_ctx	*ctx;
	int		 rc;

	if (!http_state_exists(req)) {
		ctx = http_state_create(req, sizeof(*ctx), otp_free);
		if ((rc = otp_start(req, ctx)) != KORE_RESULT_RETRY)
			return (rc);
	}
	ctx = http_state_get(req);

	for (;;) {
		switch (db_query_poll(&ctx->q)) {
		case DB_PENDING:
			return (KORE_RESULT_RETRY);
		case DB_FAILED:
			respond_server_error(req, "otp query");
			return (KORE_RESULT_OK);
		case DB_READY:
			break;
		}
		switch (ctx->phase) {
		case OTP_SEED:
			otp_check(req, ctx);
			if (ctx->phase != OTP_OUTCOME)
				return (KORE_RESULT_OK);
			break;
		case OTP_OUTCOME:
			if (otp_outcome(req, ctx) == KORE_RESULT_OK)
				return (KORE_RESULT_OK);
			break;
		case OTP_ACCOUNTS:
			consent_page(req, &ctx->fs, ctx->psu_id, &ctx->q);
			return (KORE_RESULT_OK);
		}
	}
}

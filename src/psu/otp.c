/*
 * POST /auth/login/otp: the second factor, a TOTP code (RFC 6238), each
 * code accepted once per PSU. Success opens a browser session (idle
 * timeout, RTS Art. 4(3)(d)) and shows the consent page.
 *
 * Single-use: the session id is derived from the flow and the PSU
 * (forms_derive_secret), and the flow's accepted time step is recorded
 * (auth_flow). The same form posted again with the same code (a double
 * click, the back button) is recognised as a repeat: no failure counted,
 * no second session, the same cookie and the same next page; a repeat
 * after the session has ended says so.
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
#include "metrics/metrics.h"
#include "app/app.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "common/secretbox.h"
#include "common/totp.h"
#include "db/db.h"
#include "psu/login.h"
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
	uint8_t			session_digest[32];
	uint8_t			flow_digest[32];
};

static const char sql_seed[] =
    "SELECT p.username, p.totp_box, f.totp_step "
    "FROM psu p LEFT JOIN auth_flow f ON f.flow_hash = $2 "
    "AND f.psu_id = p.id AND f.expires_at > now() WHERE p.id = $1";
static const char sql_outcome[] =
    "SELECT login_totp_flow($1, $2, $3, $4, $5, $6, $7, $8)";
static const char sql_accounts[] =
    "SELECT resource_id, iban, name, currency FROM account "
    "WHERE psu_id = $1 ORDER BY id";

static int	otp_next_page(struct http_request *, struct otp_ctx *);

/* The time step this flow's TOTP step accepted, or -1. */
static long long
otp_flow_step(struct otp_ctx *ctx)
{
	return (db_is_null(&ctx->q, 0, 2) ? -1 : db_int(&ctx->q, 0, 2));
}

/* code is the one of step (a repeat of the accepted post). */
static int
otp_is_step(const uint8_t *seed, size_t len, const char code[7],
    long long step)
{
	uint32_t	value;
	char		expect[16];

	if (step < 0 || (value = totp_hotp(seed, len, (uint64_t)step,
	    TOTP_DIGITS)) == TOTP_ERROR)
		return (0);
	(void)snprintf(expect, sizeof(expect), "%06u", (unsigned int)value);
	return (crypto_equal(expect, code, 6));
}

static void
otp_free(struct http_request *req)
{
	struct otp_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
	forms_clear(&ctx->fs);
	OPENSSL_cleanse(ctx->session, sizeof(ctx->session));
	OPENSSL_cleanse(ctx->session_digest, sizeof(ctx->session_digest));
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
int
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

long long
otp_code_step(struct http_request *req, const char *kind,
    const char *subject, const char *sealed_seed, long long accepted)
{
	uint8_t		seed[64];
	char		aad[128], code[7];
	int64_t		matched;
	int		len, ok;

	if (otp_normalise(forms_arg(req, "otp"), code) == -1)
		return (-1);
	(void)snprintf(aad, sizeof(aad), "totp:%s:%s", kind, subject);
	len = secretbox_open(&app_totp_keys, sealed_seed, aad, seed,
	    sizeof(seed));
	if (len <= 0) {
		/* The subject (a user name) stays out of the log. */
		kore_log(LOG_ERR, "error id=%s %s: TOTP seed does not "
		    "decrypt", respond_request_id(req), kind);
		return (-1);
	}
	if (otp_is_step(seed, (size_t)len, code, accepted)) {
		OPENSSL_cleanse(seed, sizeof(seed));
		return (accepted);
	}
	ok = totp_verify(seed, (size_t)len, code, (int64_t)time(NULL), -1,
	    &matched);
	OPENSSL_cleanse(seed, sizeof(seed));
	return (ok == 1 ? (long long)matched : -1);
}

/*
 * The time step the code matches, or -1: the step this flow accepted
 * before (a repeat, at any time while the flow lives), else a step of the
 * window around now, fresh or not; login_totp_flow decides under the
 * PSU's lock, so a repeat racing the first post is recognised too.
 */
static long long
otp_match(struct http_request *req, struct otp_ctx *ctx)
{
	if (db_rows(&ctx->q) != 1)
		return (-1);
	return (otp_code_step(req, "psu", db_value(&ctx->q, 0, 0),
	    db_value(&ctx->q, 0, 1), otp_flow_step(ctx)));
}

static enum oauth_next
otp_start(struct http_request *req, struct otp_ctx *ctx)
{
	const char	*flow;

	http_populate_post(req);
	if (forms_verify(req, &ctx->fs) == -1 ||
	    forms_open_step("pwok", forms_arg(req, "step"), ctx->fs.authreq,
	    &ctx->psu_id) == -1 ||
	    (flow = json_string_value(json_object_get(ctx->fs.request,
	    "flow"))) == NULL) {
		pages_message(req, 403, "error_title", "error_csrf");
		return (OAUTH_ANSWERED);
	}
	crypto_sha256(flow, strlen(flow), ctx->flow_digest);
	if (forms_flow_secret(&ctx->fs, "psu-session", ctx->psu_id,
	    ctx->session, ctx->session_digest) == -1) {
		respond_server_error(req, "otp session");
		return (OAUTH_ANSWERED);
	}
	db_query_begin(&ctx->q, req, sql_seed);
	db_param_int(&ctx->q, ctx->psu_id);
	db_param_bin(&ctx->q, ctx->flow_digest, sizeof(ctx->flow_digest));
	ctx->phase = OTP_SEED;
	return (OAUTH_QUERY);
}

static enum oauth_next
otp_check(struct http_request *req, struct otp_ctx *ctx)
{
	long long	step;

	step = otp_match(req, ctx);
	db_query_begin(&ctx->q, req, sql_outcome);
	db_param_bin(&ctx->q, ctx->flow_digest, sizeof(ctx->flow_digest));
	db_param_int(&ctx->q, ctx->psu_id);
	if (step < 0)
		db_param(&ctx->q, NULL);
	else
		db_param_int(&ctx->q, step);
	db_param_int(&ctx->q, app_cfg.login_max_failures);
	db_param_int(&ctx->q, app_cfg.login_lock_seconds);
	db_param_bin(&ctx->q, ctx->session_digest,
	    sizeof(ctx->session_digest));
	db_param_int(&ctx->q, app_cfg.session_idle);
	db_param_int(&ctx->q, FORMS_AUTHREQ_TTL);
	ctx->phase = OTP_OUTCOME;
	return (OAUTH_QUERY);
}

static enum oauth_next
otp_outcome(struct http_request *req, struct otp_ctx *ctx)
{
	const char	*outcome;

	outcome = db_value(&ctx->q, 0, 0);
	metrics_sca("login", outcome);
	if (strcmp(outcome, "locked") == 0) {
		pages_message(req, 403, "locked_title", "locked");
		return (OAUTH_ANSWERED);
	}
	if (strcmp(outcome, "expired") == 0) {
		pages_message(req, 401, "error_title", "error_session");
		return (OAUTH_ANSWERED);
	}
	if (strcmp(outcome, "ok") != 0) {
		otp_page(req, 401, &ctx->fs, forms_arg(req, "step"),
		    "error_login");
		return (OAUTH_ANSWERED);
	}
	respond_set_cookie(req, FORMS_SESSION_COOKIE, ctx->session, "/auth",
	    app_cfg.session_idle * 12);
	if (otp_next_page(req, ctx))
		return (OAUTH_ANSWERED);
	db_query_begin(&ctx->q, req, sql_accounts);
	db_param_int(&ctx->q, ctx->psu_id);
	ctx->phase = OTP_ACCOUNTS;
	return (OAUTH_QUERY);
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

static enum oauth_next
otp_step(struct http_request *req, void *arg)
{
	struct otp_ctx	*ctx = arg;

	switch (ctx->phase) {
	case OTP_SEED:
		return (otp_check(req, ctx));
	case OTP_OUTCOME:
		return (otp_outcome(req, ctx));
	case OTP_ACCOUNTS:
		consent_page(req, &ctx->fs, ctx->psu_id, &ctx->q);
		return (OAUTH_ANSWERED);
	}
	respond_server_error(req, "otp phase");
	return (OAUTH_ANSWERED);
}

int
oauth_login_otp(struct http_request *req)
{
	struct otp_ctx	*ctx;

	if (!http_state_exists(req)) {
		ctx = http_state_create(req, sizeof(*ctx), otp_free);
		if (otp_start(req, ctx) == OAUTH_ANSWERED)
			return (KORE_RESULT_OK);
	}
	ctx = http_state_get(req);
	return (oauth_finish(req, &ctx->q, otp_step, ctx, "otp query"));
}

/*
 * POST /auth/login: the PSU's first factor (username and password).
 *
 * Every failure looks the same (RTS Art. 4(3)(a)); a lock is revealed
 * only to someone who then gives the right password (Art. 4(4)). The
 * password is checked in a Kore task, never on the event loop.
 *
 * A login for a payment's authorise page ({"next":
 * "/auth/payments/{id}/authorise"}) ends here: the password opens a
 * session for that page only (psu_payment_login) and the PSU's second
 * factor is the payment's own SCA on the page (device or TOTP), so no
 * TOTP is asked twice.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/peer.h"
#include "api/respond.h"
#include "app/app.h"
#include "common/crypto.h"
#include "db/db.h"
#include "psu/login.h"
#include "oauth/oauth.h"
#include "psu/password_task.h"
#include "pis/authorise.h"
#include "web/forms.h"
#include "web/pages.h"

int	oauth_login(struct http_request *);

enum login_phase {
	LOGIN_LOOKUP,
	LOGIN_PASSWORD,
	LOGIN_OUTCOME
};

struct login_ctx {
	enum login_phase	phase;
	struct form_state	fs;
	struct db_query		q;
	struct password_job	pw;
	long long		psu_id;
	int			password_ok;
	/* A login for a payment's authorise page: its session. */
	int			payment;
	char			session[37];
	uint8_t			session_digest[32];
};

static const char sql_lookup[] =
    "SELECT rate_ok, psu_id, password_hash FROM login_lookup($1, $2, $3)";
static const char sql_factor[] =
    "SELECT login_factor($1, $2, $3, $4, false)";
static const char sql_payment[] =
    "SELECT psu_payment_login($1, $2, $3, $4, $5, $6, $7)";

static void
login_free(struct http_request *req)
{
	struct login_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
	password_job_end(&ctx->pw);
	forms_clear(&ctx->fs);
	OPENSSL_cleanse(ctx->session, sizeof(ctx->session));
}

/* The payment id of a login for its authorise page into id, or -1. */
static int
login_payment_id(struct login_ctx *ctx, char id[AUTHORISE_ID_LEN + 1])
{
	const char	*next;

	next = json_string_value(json_object_get(ctx->fs.request, "next"));
	if (next == NULL)
		return (-1);
	return (authorise_path_id(next, id));
}

/*
 * A fresh login page for request (an OAuth request, or {"next": path} for
 * the bank's own pages): the request, with a random flow id, is sealed
 * into the form, nothing is written to the database.
 */
void
login_page_new(struct http_request *req, json_t *request)
{
	char	authreq[FORMS_TOKEN_MAX], csrf[FORMS_TOKEN_MAX], flow[37];

	if (crypto_uuid(flow) == -1 ||
	    json_object_set_new(request, "flow", json_string(flow)) == -1 ||
	    forms_seal_authreq(request, authreq, sizeof(authreq)) == -1 ||
	    forms_csrf_issue(req, authreq, csrf, sizeof(csrf)) == -1) {
		respond_server_error(req, "login seal");
		return;
	}
	pages_render(req, 200, "login", json_pack("{s:s, s:s, s:O}",
	    "authreq", authreq, "csrf", csrf, "request", request));
}

void
login_page(struct http_request *req, int status, struct form_state *fs,
    const char *error_key)
{
	char	csrf[FORMS_TOKEN_MAX];

	if (forms_csrf_issue(req, fs->authreq, csrf, sizeof(csrf)) == -1) {
		respond_server_error(req, "login csrf");
		return;
	}
	pages_render(req, status, "login", json_pack("{s:s, s:s, s:O, s:s?}",
	    "authreq", fs->authreq, "csrf", csrf, "request", fs->request,
	    "error", error_key ? pages_text(req, error_key) : NULL));
}

/*
 * The password step changes nothing when it succeeds (no session, no
 * row): a repeated post checks the password again and shows the TOTP
 * page again, the result of the first post.
 */
static enum oauth_next
login_start(struct http_request *req, struct login_ctx *ctx)
{
	const char	*username, *password;
	char		 addr[PEER_ADDR_MAX];

	http_populate_post(req);
	if (forms_verify(req, &ctx->fs) == -1) {
		pages_message(req, 403, "error_title", "error_csrf");
		return (OAUTH_ANSWERED);
	}
	username = forms_arg(req, "username");
	password = forms_arg(req, "password");
	if (username == NULL || password == NULL || *username == '\0' ||
	    *password == '\0') {
		login_page(req, 401, &ctx->fs, "error_login");
		return (OAUTH_ANSWERED);
	}
	db_query_begin(&ctx->q, req, sql_lookup);
	db_param(&ctx->q, username);
	db_param(&ctx->q, peer_addr(req, addr, sizeof(addr)));
	db_param_int(&ctx->q, app_cfg.login_rate_per_minute);
	ctx->phase = LOGIN_LOOKUP;
	return (OAUTH_QUERY);
}

static void
login_finish(struct http_request *req, struct login_ctx *ctx,
    const char *outcome)
{
	char	step[FORMS_TOKEN_MAX];

	if (strcmp(outcome, "locked") == 0) {
		pages_message(req, 403, "locked_title", "locked");
		return;
	}
	if (strcmp(outcome, "ok") != 0 || !ctx->password_ok) {
		login_page(req, 401, &ctx->fs, "error_login");
		return;
	}
	if (ctx->payment) {
		/* Only a fixed local path (login_payment_id). */
		respond_set_cookie(req, FORMS_SESSION_COOKIE, ctx->session,
		    "/auth", app_cfg.session_idle * 12);
		http_response_header(req, "location", json_string_value(
		    json_object_get(ctx->fs.request, "next")));
		respond_raw(req, 303, NULL, NULL, 0);
		return;
	}
	if (forms_seal_step("pwok", ctx->psu_id, ctx->fs.authreq, step,
	    sizeof(step)) == -1) {
		respond_server_error(req, "login step seal");
		return;
	}
	otp_page(req, 200, &ctx->fs, step, NULL);
}

/* The verdict of the password task is in: record the factor's outcome. */
static void
login_factor_begin(struct http_request *req, struct login_ctx *ctx)
{
	char	id[AUTHORISE_ID_LEN + 1];

	ctx->payment = login_payment_id(ctx, id) == 0;
	/* The payment page's session, derived as the TOTP step derives its
	 * own: a repeated post opens no second one. */
	if (ctx->payment && forms_flow_secret(&ctx->fs, "psu-payment-session",
	    ctx->psu_id, ctx->session, ctx->session_digest) == -1) {
		ctx->payment = 0;
		ctx->password_ok = 0;
	}
	/* Unknown users take the same round trip (no timing hint). */
	db_query_begin(&ctx->q, req, ctx->payment ? sql_payment : sql_factor);
	if (ctx->psu_id == 0)
		db_param(&ctx->q, NULL);
	else
		db_param_int(&ctx->q, ctx->psu_id);
	db_param(&ctx->q, ctx->password_ok ? "true" : "false");
	db_param_int(&ctx->q, app_cfg.login_max_failures);
	db_param_int(&ctx->q, app_cfg.login_lock_seconds);
	if (ctx->payment) {
		db_param_bin(&ctx->q, ctx->session_digest,
		    sizeof(ctx->session_digest));
		db_param_int(&ctx->q, app_cfg.session_idle);
		db_param(&ctx->q, id);
	}
	ctx->phase = LOGIN_OUTCOME;
}

static enum oauth_next
login_step(struct http_request *req, void *arg)
{
	struct login_ctx	*ctx = arg;
	const char		*hash;

	switch (ctx->phase) {
	case LOGIN_LOOKUP:
		if (!db_bool(&ctx->q, 0, 0)) {
			pages_message(req, 429, "error_title", "error_rate");
			return (OAUTH_ANSWERED);
		}
		ctx->psu_id = db_is_null(&ctx->q, 0, 1) ? 0 :
		    db_int(&ctx->q, 0, 1);
		hash = ctx->psu_id ? db_value(&ctx->q, 0, 2) : NULL;
		password_job_start(&ctx->pw, req, hash,
		    forms_arg(req, "password"));
		db_query_end(&ctx->q);
		ctx->phase = LOGIN_PASSWORD;
		return (OAUTH_WAIT);
	case LOGIN_OUTCOME:
		login_finish(req, ctx, db_value(&ctx->q, 0, 0));
		return (OAUTH_ANSWERED);
	case LOGIN_PASSWORD:
		break;
	}
	respond_server_error(req, "login phase");
	return (OAUTH_ANSWERED);
}

/* Re-entered while the password task runs; RETRY until its verdict. */
static int
login_password_wait(struct http_request *req, struct login_ctx *ctx)
{
	switch (password_job_poll(&ctx->pw)) {
	case PASSWORD_PENDING:
		return (KORE_RESULT_RETRY);
	case PASSWORD_MATCH:
		ctx->password_ok = 1;
		break;
	case PASSWORD_MISMATCH:
		ctx->password_ok = 0;
		break;
	}
	login_factor_begin(req, ctx);
	return (KORE_RESULT_OK);
}

int
oauth_login(struct http_request *req)
{
	struct login_ctx	*ctx;

	if (!http_state_exists(req)) {
		ctx = http_state_create(req, sizeof(*ctx), login_free);
		if (login_start(req, ctx) == OAUTH_ANSWERED)
			return (KORE_RESULT_OK);
	}
	ctx = http_state_get(req);
	if (ctx->phase == LOGIN_PASSWORD &&
	    login_password_wait(req, ctx) == KORE_RESULT_RETRY)
		return (KORE_RESULT_RETRY);
	return (oauth_finish(req, &ctx->q, login_step, ctx, "login query"));
}

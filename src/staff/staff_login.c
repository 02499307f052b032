/*
 * GET /staff, POST /staff/login, POST /staff/login/otp: the staff login.
 * The PSU login's pieces (sealed form state with a CSRF token bound to a
 * pre-login cookie, argon2 in a Kore task, TOTP) with the staff table,
 * the same lockout rules and a session cookie scoped to /staff. Every
 * outcome is an audit row (staff_login_factor).
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
#include "staff/staff.h"
#include "web/forms.h"
#include "web/pages.h"

int	staff_login_page(struct http_request *);
int	staff_login(struct http_request *);
int	staff_login_otp(struct http_request *);

enum staff_login_phase {
	SL_LOOKUP,
	SL_PASSWORD,
	SL_OUTCOME,
	SL_SEED,
	SL_TOTP
};

struct staff_login_ctx {
	enum staff_login_phase	phase;
	struct form_state	fs;
	struct db_query		q;
	struct password_job	pw;
	long long		staff_id;
	int			password_ok;
	char			addr[PEER_ADDR_MAX];
	char			session[37];
	uint8_t			session_digest[32];
};

static const char sql_lookup[] =
    "SELECT rate_ok, staff_id, password_hash "
    "FROM staff_login_lookup($1, $2, $3)";
static const char sql_factor[] =
    "SELECT staff_login_factor($1, $2, 'password', $3, $4, $5, $6)";
static const char sql_seed[] =
    "SELECT username, totp_box FROM staff WHERE id = $1";
static const char sql_totp[] =
    "SELECT staff_login_totp($1, $2, $3, $4, $5, $6, $7)";

static void
staff_login_free(struct http_request *req)
{
	struct staff_login_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
	password_job_end(&ctx->pw);
	forms_clear(&ctx->fs);
	OPENSSL_cleanse(ctx->session, sizeof(ctx->session));
}

static void
staff_page_with(struct http_request *req, int status, const char *tmpl,
    const char *authreq, const char *step, const char *error_key)
{
	char	csrf[FORMS_TOKEN_MAX];

	if (forms_csrf_issue_at(req, STAFF_PATH, authreq, csrf,
	    sizeof(csrf)) == -1) {
		respond_server_error(req, "staff login csrf");
		return;
	}
	pages_render(req, status, tmpl, json_pack(
	    "{s:s, s:s, s:s, s:s?, s:s?}", "title", pages_text(req,
	    step ? "otp_title" : "staff_login_title"), "authreq", authreq,
	    "csrf", csrf, "step", step,
	    "error", error_key ? pages_text(req, error_key) : NULL));
}

void
staff_login_form(struct http_request *req, int status, const char *error_key)
{
	json_t	*request;
	char	 authreq[FORMS_TOKEN_MAX], flow[37];

	request = json_pack("{s:s}", "next", STAFF_PATH "/home");
	if (crypto_uuid(flow) == -1 || request == NULL ||
	    json_object_set_new(request, "flow", json_string(flow)) == -1 ||
	    forms_seal_authreq(request, authreq, sizeof(authreq)) == -1) {
		json_decref(request);
		respond_server_error(req, "staff login seal");
		return;
	}
	json_decref(request);
	staff_page_with(req, status, "staff_login", authreq, NULL, error_key);
}

int
staff_login_page(struct http_request *req)
{
	http_populate_get(req);
	staff_login_form(req, 200, NULL);
	return (KORE_RESULT_OK);
}

static enum oauth_next
staff_password_start(struct http_request *req, struct staff_login_ctx *ctx)
{
	const char	*username, *password;

	username = forms_arg(req, "username");
	password = forms_arg(req, "password");
	if (username == NULL || password == NULL || *username == '\0' ||
	    *password == '\0') {
		staff_page_with(req, 401, "staff_login", ctx->fs.authreq, NULL,
		    "error_login");
		return (OAUTH_ANSWERED);
	}
	db_query_begin(&ctx->q, req, sql_lookup);
	db_param(&ctx->q, username);
	db_param(&ctx->q, ctx->addr);
	db_param_int(&ctx->q, app_cfg.login_rate_per_minute);
	ctx->phase = SL_LOOKUP;
	return (OAUTH_QUERY);
}

static void
staff_password_outcome(struct http_request *req, struct staff_login_ctx *ctx,
    const char *outcome)
{
	char	step[FORMS_TOKEN_MAX];

	if (strcmp(outcome, "locked") == 0) {
		pages_message(req, 403, "locked_title", "locked");
		return;
	}
	if (strcmp(outcome, "ok") != 0 || !ctx->password_ok) {
		staff_page_with(req, 401, "staff_login", ctx->fs.authreq, NULL,
		    "error_login");
		return;
	}
	if (forms_seal_step("staffpw", ctx->staff_id, ctx->fs.authreq, step,
	    sizeof(step)) == -1) {
		respond_server_error(req, "staff step seal");
		return;
	}
	staff_page_with(req, 200, "staff_otp", ctx->fs.authreq, step, NULL);
}

static void
staff_factor_begin(struct http_request *req, struct staff_login_ctx *ctx)
{
	db_query_begin(&ctx->q, req, sql_factor);
	if (ctx->staff_id == 0)
		db_param(&ctx->q, NULL);
	else
		db_param_int(&ctx->q, ctx->staff_id);
	db_param(&ctx->q, forms_arg(req, "username"));
	db_param(&ctx->q, ctx->password_ok ? "true" : "false");
	db_param_int(&ctx->q, app_cfg.login_max_failures);
	db_param_int(&ctx->q, app_cfg.login_lock_seconds);
	db_param(&ctx->q, ctx->addr);
	ctx->phase = SL_OUTCOME;
}

/* The TOTP code's time step, or -1 (after the seed query). */
static long long
staff_totp_match(struct http_request *req, struct staff_login_ctx *ctx)
{
	if (db_rows(&ctx->q) != 1)
		return (-1);
	return (otp_code_step(req, "staff", db_value(&ctx->q, 0, 0),
	    db_value(&ctx->q, 0, 1), -1));
}

static enum oauth_next
staff_totp_check(struct http_request *req, struct staff_login_ctx *ctx)
{
	long long	step;

	step = staff_totp_match(req, ctx);
	/*
	 * Derived from the login form's flow and the member, so the same
	 * TOTP form posted again (a double click) names the session the
	 * first post opened: staff_login_totp answers the repeat with the
	 * first outcome instead of counting a failure.
	 */
	if (forms_flow_secret(&ctx->fs, "staff-session", ctx->staff_id,
	    ctx->session, ctx->session_digest) == -1) {
		respond_server_error(req, "staff session id");
		return (OAUTH_ANSWERED);
	}
	db_query_begin(&ctx->q, req, sql_totp);
	db_param_int(&ctx->q, ctx->staff_id);
	if (step < 0)
		db_param(&ctx->q, NULL);
	else
		db_param_int(&ctx->q, step);
	db_param_int(&ctx->q, app_cfg.login_max_failures);
	db_param_int(&ctx->q, app_cfg.login_lock_seconds);
	db_param_bin(&ctx->q, ctx->session_digest,
	    sizeof(ctx->session_digest));
	db_param_int(&ctx->q, app_cfg.staff_session_idle);
	db_param(&ctx->q, ctx->addr);
	ctx->phase = SL_TOTP;
	return (OAUTH_QUERY);
}

static void
staff_totp_outcome(struct http_request *req, struct staff_login_ctx *ctx,
    const char *outcome)
{
	if (strcmp(outcome, "locked") == 0) {
		pages_message(req, 403, "locked_title", "locked");
		return;
	}
	if (strcmp(outcome, "expired") == 0) {
		staff_login_form(req, 401, "error_staff_session");
		return;
	}
	if (strcmp(outcome, "ok") != 0) {
		staff_page_with(req, 401, "staff_otp", ctx->fs.authreq,
		    forms_arg(req, "step"), "error_login");
		return;
	}
	/* The browser keeps it for a working day; the database idles it. */
	respond_set_cookie(req, STAFF_COOKIE, ctx->session, STAFF_PATH,
	    12 * 3600);
	http_response_header(req, "location", STAFF_PATH "/home");
	respond_raw(req, 303, NULL, NULL, 0);
}

static enum oauth_next
staff_login_step(struct http_request *req, void *arg)
{
	struct staff_login_ctx	*ctx = arg;
	const char		*hash;

	switch (ctx->phase) {
	case SL_LOOKUP:
		if (!db_bool(&ctx->q, 0, 0)) {
			pages_message(req, 429, "error_title", "error_rate");
			return (OAUTH_ANSWERED);
		}
		ctx->staff_id = db_is_null(&ctx->q, 0, 1) ? 0 :
		    db_int(&ctx->q, 0, 1);
		hash = ctx->staff_id ? db_value(&ctx->q, 0, 2) : NULL;
		password_job_start(&ctx->pw, req, hash,
		    forms_arg(req, "password"));
		db_query_end(&ctx->q);
		ctx->phase = SL_PASSWORD;
		return (OAUTH_WAIT);
	case SL_OUTCOME:
		staff_password_outcome(req, ctx, db_value(&ctx->q, 0, 0));
		return (OAUTH_ANSWERED);
	case SL_SEED:
		return (staff_totp_check(req, ctx));
	case SL_TOTP:
		staff_totp_outcome(req, ctx, db_value(&ctx->q, 0, 0));
		return (OAUTH_ANSWERED);
	case SL_PASSWORD:
		break;
	}
	respond_server_error(req, "staff login phase");
	return (OAUTH_ANSWERED);
}

static struct staff_login_ctx *
staff_login_begin(struct http_request *req)
{
	struct staff_login_ctx	*ctx;

	ctx = http_state_create(req, sizeof(*ctx), staff_login_free);
	http_populate_post(req);
	peer_addr(req, ctx->addr, sizeof(ctx->addr));
	if (forms_verify(req, &ctx->fs) == -1 ||
	    json_object_get(ctx->fs.request, "next") == NULL) {
		pages_message(req, 403, "error_title", "error_csrf_staff");
		return (NULL);
	}
	return (ctx);
}

int
staff_login(struct http_request *req)
{
	struct staff_login_ctx	*ctx;

	if (!http_state_exists(req)) {
		if ((ctx = staff_login_begin(req)) == NULL ||
		    staff_password_start(req, ctx) == OAUTH_ANSWERED)
			return (KORE_RESULT_OK);
	}
	ctx = http_state_get(req);
	if (ctx->phase == SL_PASSWORD) {
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
		staff_factor_begin(req, ctx);
	}
	return (oauth_finish(req, &ctx->q, staff_login_step, ctx,
	    "staff login query"));
}

int
staff_login_otp(struct http_request *req)
{
	struct staff_login_ctx	*ctx;

	if (!http_state_exists(req)) {
		if ((ctx = staff_login_begin(req)) == NULL)
			return (KORE_RESULT_OK);
		if (forms_open_step("staffpw", forms_arg(req, "step"),
		    ctx->fs.authreq, &ctx->staff_id) == -1) {
			pages_message(req, 403, "error_title",
			    "error_csrf_staff");
			return (KORE_RESULT_OK);
		}
		db_query_begin(&ctx->q, req, sql_seed);
		db_param_int(&ctx->q, ctx->staff_id);
		ctx->phase = SL_SEED;
	}
	ctx = http_state_get(req);
	return (oauth_finish(req, &ctx->q, staff_login_step, ctx,
	    "staff otp query"));
}

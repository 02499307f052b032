/*
 * POST /auth/login: the PSU's first factor (username and password), and
 * the PSU's kind of the login state machine (login_machine.h); the TOTP
 * step is otp.c.
 *
 * A login for a payment's authorise page ({"next":
 * "/auth/payments/{id}/authorise"}) ends here: the password opens a
 * session for that page only (psu_payment_login) and the PSU's second
 * factor is the payment's own SCA on the page (device or TOTP), so no
 * TOTP is asked twice. Success of the TOTP step opens a browser session
 * (idle timeout, RTS Art. 4(3)(d)) and shows the consent page, or goes
 * back to the bank's own page the login was for. For a Berlin Group
 * consent (the request's "bg") the consent page gets the consent's
 * access and the PSU's accounts in one JSON value instead of the rows.
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/crypto.h"
#include "psu/login.h"
#include "psu/login_machine.h"
#include "psu/payment_path.h"
#include "web/pages.h"

int	psu_login(struct http_request *);

/* Column 1: the PSU's key ids for the TOTP page (login_machine.h). */
static const char sql_factor[] =
    "SELECT login_factor($1, $2, $3, $4, false), psu_key_ids($1)";
static const char sql_payment[] =
    "SELECT psu_payment_login($1, $2, $3, $4, $5, $6, $7), NULL::json";
static const char sql_accounts[] =
    "SELECT resource_id, iban, name, currency FROM account "
    "WHERE psu_id = $1 ORDER BY id";
/* A Berlin Group consent: what it asks and the PSU's accounts, as JSON. */
static const char sql_bg_consent[] =
    "SELECT bg_consent_page($2, $1)";

static psu_login_oauth_page	psu_oauth_page;

void
psu_login_set_oauth_page(psu_login_oauth_page page)
{
	psu_oauth_page = page;
}

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

static void
psu_login_page(struct http_request *req, struct login *lg, int status,
    const char *error_key)
{
	char	csrf[FORMS_TOKEN_MAX];

	if (forms_csrf_issue(req, lg->fs.authreq, csrf, sizeof(csrf)) == -1) {
		respond_server_error(req, "login csrf");
		return;
	}
	pages_render(req, status, "login", json_pack("{s:s, s:s, s:O, s:s?}",
	    "authreq", lg->fs.authreq, "csrf", csrf, "request",
	    lg->fs.request, "error", error_key ? pages_text(req, error_key) :
	    NULL));
}

static const char *
psu_login_next(struct login *lg)
{
	return (json_string_value(json_object_get(lg->fs.request, "next")));
}

/*
 * The password's outcome. A login for a payment's authorise page opens
 * that page's session, derived as the TOTP step derives its own.
 */
static void
psu_login_factor(struct http_request *req, struct login *lg)
{
	const char	*next;

	next = psu_login_next(lg);
	lg->password_session = next != NULL &&
	    psu_payment_path_id(next, lg->scope) == 0;
	if (lg->password_session && forms_flow_secret(&lg->fs,
	    "psu-payment-session", lg->subject_id, lg->session,
	    lg->session_digest) == -1) {
		lg->password_session = 0;
		lg->password_ok = 0;
	}
	db_query_begin(&lg->q, req, lg->password_session ? sql_payment :
	    sql_factor);
	if (lg->subject_id == 0)
		db_param(&lg->q, NULL);
	else
		db_param_int(&lg->q, lg->subject_id);
	db_param(&lg->q, lg->password_ok ? "true" : "false");
	db_param_int(&lg->q, app_cfg.login_max_failures);
	db_param_int(&lg->q, app_cfg.login_lock_seconds);
	if (lg->password_session) {
		db_param_bin(&lg->q, lg->session_digest,
		    sizeof(lg->session_digest));
		db_param_int(&lg->q, app_cfg.session_idle);
		db_param(&lg->q, lg->scope);
	}
}

static void
psu_login_expired(struct http_request *req, struct login *lg)
{
	(void)lg;
	pages_message(req, 401, "error_title", "error_session");
}

/*
 * A login for one of the bank's own pages ({"next": "/auth/..."}) ends
 * with a redirect there (only fixed local paths); an OAuth login with the
 * consent page, after the PSU's accounts are read.
 */
static enum login_after
psu_login_done(struct http_request *req, struct login *lg)
{
	const char	*next;
	json_t		*bg;

	if ((next = psu_login_next(lg)) != NULL) {
		if (strncmp(next, "/auth/", 6) != 0 ||
		    strstr(next, "//") != NULL ||
		    strpbrk(next, "\\\r\n") != NULL)
			next = "/auth/consents";
		http_response_header(req, "location", next);
		respond_raw(req, 303, NULL, NULL, 0);
		return (LOGIN_ANSWERED);
	}
	bg = json_object_get(lg->fs.request, "bg");
	db_query_begin(&lg->q, req, bg != NULL ? sql_bg_consent :
	    sql_accounts);
	db_param_int(&lg->q, lg->subject_id);
	if (bg != NULL)
		db_param(&lg->q, json_string_value(json_object_get(bg,
		    "consent_id")));
	return (LOGIN_QUERIED);
}

static void
psu_login_after(struct http_request *req, struct login *lg)
{
	if (psu_oauth_page == NULL) {
		respond_server_error(req, "login oauth page");
		return;
	}
	psu_oauth_page(req, &lg->fs, lg->subject_id, &lg->q);
}

static int
psu_cookie_age(void)
{
	return (app_cfg.session_idle * 12);
}

const struct login_kind psu_login_kind = {
	.subject = "psu",
	.step_name = "pwok",
	.session_name = "psu-session",
	.cookie = FORMS_SESSION_COOKIE,
	.cookie_path = "/auth",
	.csrf_error = "error_csrf",
	.metrics = "login",
	.sql_lookup = "SELECT rate_ok, psu_id, password_hash "
	    "FROM login_lookup($1, $2, $3)",
	.cookie_age = psu_cookie_age,
	.factor = psu_login_factor,
	.seed = psu_totp_seed,
	.totp = psu_totp_outcome,
	.login_page = psu_login_page,
	.otp_page = psu_otp_page,
	.expired = psu_login_expired,
	.done = psu_login_done,
	.after = psu_login_after,
	.key_read = psu_key_read,
	.key_outcome = psu_key_outcome,
};

int
psu_login(struct http_request *req)
{
	return (login_password(req, &psu_login_kind));
}

/*
 * GET /staff, POST /staff/login, POST /staff/login/otp, POST
 * /staff/login/key: the staff login, the PSU's login state machine
 * (src/psu/login_machine.h) with the staff table, the same lockout rules
 * and a session cookie scoped to /staff. The second element is the TOTP
 * code or an approved security key (staff_keys.c); an admin holding an
 * approved key must use it. Every outcome is an audit row
 * (staff_login_factor).
 */
#include <sys/types.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/crypto.h"
#include "psu/login_machine.h"
#include "psu/passkey.h"
#include "psu/totp_code.h"
#include "staff/staff.h"
#include "web/forms.h"
#include "web/pages.h"

int	staff_login_page(struct http_request *);
int	staff_login(struct http_request *);
int	staff_login_otp(struct http_request *);
int	staff_login_key(struct http_request *);

static const char sql_factor[] =
    "SELECT staff_login_factor($1, $2, 'password', $3, $4, $5, $6), "
    "staff_key_ids($1)";
static const char sql_seed[] =
    "SELECT username, totp_box, NULL, staff_key_ids(id) FROM staff "
    "WHERE id = $1";
static const char sql_key_read[] =
    "SELECT k.id, k.alg, encode(k.public_key, 'hex'), staff_key_ids($1) "
    "FROM (SELECT 1) one LEFT JOIN staff_key k ON k.staff_id = $1 "
    "AND k.credential_id = $2 AND k.approved_at IS NOT NULL "
    "AND k.removed_at IS NULL";
static const char sql_key[] =
    "SELECT staff_login_key($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";
static const char sql_totp[] =
    "SELECT staff_login_totp($1, $2, $3, $4, $5, $6, $7)";

static void
staff_page_with(struct http_request *req, int status, const char *tmpl,
    const char *authreq, const char *step, const char *error_key,
    json_t *keys)
{
	char	csrf[FORMS_TOKEN_MAX];

	if (forms_csrf_issue_at(req, STAFF_PATH, authreq, csrf,
	    sizeof(csrf)) == -1) {
		json_decref(keys);
		respond_server_error(req, "staff login csrf");
		return;
	}
	pages_render(req, status, tmpl, json_pack(
	    "{s:s, s:s, s:s, s:s?, s:s?, s:o*}", "title", pages_text(req,
	    step ? "otp_title" : "staff_login_title"), "authreq", authreq,
	    "csrf", csrf, "step", step,
	    "error", error_key ? pages_text(req, error_key) : NULL,
	    "keys", keys));
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
	staff_page_with(req, status, "staff_login", authreq, NULL, error_key,
	    NULL);
}

int
staff_login_page(struct http_request *req)
{
	http_populate_get(req);
	staff_login_form(req, 200, NULL);
	return (KORE_RESULT_OK);
}

static void
staff_login_again(struct http_request *req, struct login *lg, int status,
    const char *error_key)
{
	staff_page_with(req, status, "staff_login", lg->fs.authreq, NULL,
	    error_key, NULL);
}

static void
staff_otp_again(struct http_request *req, struct login *lg, int status,
    const char *step, const char *error_key)
{
	staff_page_with(req, status, "staff_otp", lg->fs.authreq, step,
	    error_key, passkey_login_offer(PASSKEY_STAFF, lg->key_ids, step));
}

static void
staff_login_factor(struct http_request *req, struct login *lg)
{
	db_query_begin(&lg->q, req, sql_factor);
	if (lg->subject_id == 0)
		db_param(&lg->q, NULL);
	else
		db_param_int(&lg->q, lg->subject_id);
	db_param(&lg->q, forms_arg(req, "username"));
	db_param(&lg->q, lg->password_ok ? "true" : "false");
	db_param_int(&lg->q, app_cfg.login_max_failures);
	db_param_int(&lg->q, app_cfg.login_lock_seconds);
	db_param(&lg->q, lg->addr);
}

static void
staff_totp_seed(struct http_request *req, struct login *lg)
{
	db_query_begin(&lg->q, req, sql_seed);
	db_param_int(&lg->q, lg->subject_id);
}

static void
staff_totp_outcome(struct http_request *req, struct login *lg,
    long long step)
{
	db_query_begin(&lg->q, req, sql_totp);
	db_param_int(&lg->q, lg->subject_id);
	otp_param_step(&lg->q, step);
	db_param_bin(&lg->q, lg->session_digest, sizeof(lg->session_digest));
	db_param_int(&lg->q, app_cfg.staff_session_idle);
	db_param(&lg->q, lg->addr);
}

static void
staff_key_read(struct http_request *req, struct login *lg)
{
	passkey_key_read_sql(&lg->q, req, sql_key_read, lg->subject_id);
}

static void
staff_key_outcome(struct http_request *req, struct login *lg,
    long long key_id, int ok, uint32_t count,
    const uint8_t challenge_hash[32])
{
	db_query_begin(&lg->q, req, sql_key);
	db_param_int(&lg->q, lg->subject_id);
	if (key_id == 0)
		db_param(&lg->q, NULL);
	else
		db_param_int(&lg->q, key_id);
	db_param(&lg->q, ok ? "true" : "false");
	db_param_int(&lg->q, count);
	db_param_bin(&lg->q, challenge_hash, 32);
	db_param_int(&lg->q, FORMS_STEP_TTL);
	db_param_int(&lg->q, app_cfg.login_max_failures);
	db_param_int(&lg->q, app_cfg.login_lock_seconds);
	db_param_bin(&lg->q, lg->session_digest, sizeof(lg->session_digest));
	db_param_int(&lg->q, app_cfg.staff_session_idle);
	db_param(&lg->q, lg->addr);
}

static void
staff_login_expired(struct http_request *req, struct login *lg)
{
	(void)lg;
	staff_login_form(req, 401, "error_staff_session");
}

static enum login_after
staff_login_done(struct http_request *req, struct login *lg)
{
	(void)lg;
	http_response_header(req, "location", STAFF_PATH "/home");
	respond_raw(req, 303, NULL, NULL, 0);
	return (LOGIN_ANSWERED);
}

static void
staff_login_after(struct http_request *req, struct login *lg)
{
	(void)lg;
	respond_server_error(req, "staff login after");
}

/* The browser keeps it for a working day; the database idles it. */
static int
staff_cookie_age(void)
{
	return (12 * 3600);
}

static const struct login_kind staff_login_kind = {
	.subject = "staff",
	.step_name = "staffpw",
	.session_name = "staff-session",
	.cookie = STAFF_COOKIE,
	.cookie_path = STAFF_PATH,
	.csrf_error = "error_csrf_staff",
	.metrics = NULL,
	.sql_lookup = "SELECT rate_ok, staff_id, password_hash "
	    "FROM staff_login_lookup($1, $2, $3)",
	.cookie_age = staff_cookie_age,
	.factor = staff_login_factor,
	.seed = staff_totp_seed,
	.totp = staff_totp_outcome,
	.login_page = staff_login_again,
	.otp_page = staff_otp_again,
	.expired = staff_login_expired,
	.done = staff_login_done,
	.after = staff_login_after,
	.key_read = staff_key_read,
	.key_outcome = staff_key_outcome,
};

int
staff_login(struct http_request *req)
{
	return (login_password(req, &staff_login_kind));
}

int
staff_login_otp(struct http_request *req)
{
	return (login_totp(req, &staff_login_kind));
}

int
staff_login_key(struct http_request *req)
{
	return (login_key(req, &staff_login_kind));
}

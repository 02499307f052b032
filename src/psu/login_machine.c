/*
 * The login state machine of login_machine.h: the steps PSUs and staff
 * share. Every failure looks the same (RTS Art. 4(3)(a)); a lock is
 * revealed only to someone who then gives a right factor (Art. 4(4)).
 */
#include <sys/types.h>

#include <string.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/crypto.h"
#include "metrics/metrics.h"
#include "psu/login_machine.h"
#include "psu/passkey.h"
#include "psu/totp_code.h"
#include "web/pages.h"

static void
login_free(struct http_request *req)
{
	struct login	*lg = http_state_get(req);

	db_query_end(&lg->q);
	password_job_end(&lg->pw);
	password_request_wipe(req);
	forms_clear(&lg->fs);
	OPENSSL_cleanse(lg->session, sizeof(lg->session));
	OPENSSL_cleanse(lg->session_digest, sizeof(lg->session_digest));
	json_decref(lg->key_ids);
}

/* The subject's key ids from column col of the result, for the page. */
static void
login_keep_keys(struct login *lg, int col)
{
	if (lg->kind->key_read == NULL || db_rows(&lg->q) != 1 ||
	    db_is_null(&lg->q, 0, col))
		return;
	json_decref(lg->key_ids);
	lg->key_ids = json_loads(db_value(&lg->q, 0, col), 0, NULL);
}

/* The state of a new request with a verified form, or NULL (answered). */
static struct login *
login_begin(struct http_request *req, const struct login_kind *kind)
{
	struct login	*lg;
	const char	*flow;

	lg = http_state_create(req, sizeof(*lg), login_free);
	lg->kind = kind;
	http_populate_post(req);
	peer_addr(req, lg->addr, sizeof(lg->addr));
	if (forms_verify(req, &lg->fs) == -1 || (flow = json_string_value(
	    json_object_get(lg->fs.request, "flow"))) == NULL) {
		pages_message(req, 403, "error_title", kind->csrf_error);
		return (NULL);
	}
	crypto_sha256(flow, strlen(flow), lg->flow_digest);
	return (lg);
}

/* The browser already holds the session this login's form opened. */
static int
login_holds_session(struct http_request *req, struct login *lg)
{
	char	*value;

	http_populate_cookies(req);
	if (!http_request_cookie(req, lg->kind->cookie, &value) ||
	    strlen(value) != sizeof(lg->session) - 1)
		return (0);
	return (crypto_equal(value, lg->session, sizeof(lg->session) - 1));
}

/*
 * A used code, or a repeat from a browser without the session: refused
 * and never a session. A password session's page is the kind's next
 * page, which without the cookie asks for a login of its own.
 */
static void
login_used(struct http_request *req, struct login *lg)
{
	if (!lg->password_session) {
		lg->kind->otp_page(req, lg, 401, forms_arg(req, "step"),
		    "error_login_used");
		return;
	}
	if (lg->kind->done(req, lg) != LOGIN_ANSWERED)
		respond_server_error(req, "login repeat");
}

/*
 * The outcome of the factor that opens a session. Only the post that
 * opened it sends its cookie: anyone else with the same form (its hidden
 * fields and the used code) gets no session.
 */
static enum db_next
login_session_outcome(struct http_request *req, struct login *lg,
    const char *outcome)
{
	if (strcmp(outcome, "locked") == 0) {
		pages_message(req, 403, "locked_title", "locked");
		return (DB_ANSWERED);
	}
	if (strcmp(outcome, "expired") == 0) {
		lg->kind->expired(req, lg);
		return (DB_ANSWERED);
	}
	if (strcmp(outcome, "used") == 0 || (strcmp(outcome, "repeat") == 0 &&
	    !login_holds_session(req, lg))) {
		login_used(req, lg);
		return (DB_ANSWERED);
	}
	if (strcmp(outcome, "key_required") == 0) {
		lg->kind->otp_page(req, lg, 401, forms_arg(req, "step"),
		    "error_key_required");
		return (DB_ANSWERED);
	}
	if (strcmp(outcome, "ok") == 0) {
		respond_set_cookie(req, lg->kind->cookie, lg->session,
		    lg->kind->cookie_path, lg->kind->cookie_age());
	} else if (strcmp(outcome, "repeat") != 0) {
		if (lg->password_session)
			lg->kind->login_page(req, lg, 401, "error_login");
		else
			lg->kind->otp_page(req, lg, 401,
			    forms_arg(req, "step"), "error_login");
		return (DB_ANSWERED);
	}
	if (lg->kind->done(req, lg) == LOGIN_ANSWERED)
		return (DB_ANSWERED);
	lg->state = LOGIN_AFTER;
	return (DB_QUERY);
}

static void
login_factor_outcome(struct http_request *req, struct login *lg,
    const char *outcome)
{
	char	step[FORMS_TOKEN_MAX];

	if (strcmp(outcome, "locked") == 0) {
		pages_message(req, 403, "locked_title", "locked");
		return;
	}
	if (strcmp(outcome, "ok") != 0 || !lg->password_ok) {
		lg->kind->login_page(req, lg, 401, "error_login");
		return;
	}
	if (forms_seal_step(lg->kind->step_name, lg->subject_id,
	    lg->fs.authreq, step, sizeof(step)) == -1) {
		respond_server_error(req, "login step seal");
		return;
	}
	lg->kind->otp_page(req, lg, 200, step, NULL);
}

static enum db_next
login_lookup_done(struct http_request *req, struct login *lg)
{
	const char	*hash;

	if (!db_bool(&lg->q, 0, 0)) {
		pages_message(req, 429, "error_title", "error_rate");
		return (DB_ANSWERED);
	}
	lg->subject_id = db_is_null(&lg->q, 0, 1) ? 0 : db_int(&lg->q, 0, 1);
	/* Unknown users take the same time (a dummy hash). */
	hash = lg->subject_id ? db_value(&lg->q, 0, 2) : NULL;
	password_job_start(&lg->pw, req, hash, forms_arg(req, "password"));
	db_query_end(&lg->q);
	lg->state = LOGIN_PASSWORD;
	return (DB_WAIT);
}

/* The seed is read: the code's time step goes to the kind's outcome. */
static enum db_next
login_seed_done(struct http_request *req, struct login *lg)
{
	long long	step, accepted;

	step = -1;
	if (db_rows(&lg->q) == 1) {
		accepted = db_is_null(&lg->q, 0, 2) ? -1 : db_int(&lg->q, 0, 2);
		step = otp_code_step(req, lg->kind->subject,
		    db_value(&lg->q, 0, 0), db_value(&lg->q, 0, 1), accepted);
	}
	lg->kind->totp(req, lg, step);
	lg->state = LOGIN_TOTP;
	return (DB_QUERY);
}

static enum db_next
login_key_done(struct http_request *req, struct login *lg)
{
	uint8_t		 challenge[WEBAUTHN_CHALLENGE_LEN] = { 0 }, hash[32];
	long long	 key_id;
	uint32_t	 count = 0;
	int		 ok;

	ok = passkey_challenge(PASSKEY_LOGIN, forms_arg(req, "step"),
	    forms_arg(req, "key_nonce"), challenge) == 0 &&
	    passkey_assertion(req, &lg->q, challenge, &count,
	    lg->kind->subject);
	crypto_sha256(challenge, sizeof(challenge), hash);
	key_id = passkey_key_id(&lg->q);
	lg->kind->key_outcome(req, lg, key_id, ok, count, hash);
	lg->state = LOGIN_KEY;
	return (DB_QUERY);
}

static enum db_next
login_step(struct http_request *req, void *arg)
{
	struct login	*lg = arg;

	switch (lg->state) {
	case LOGIN_LOOKUP:
		return (login_lookup_done(req, lg));
	case LOGIN_FACTOR:
		login_keep_keys(lg, 1);
		if (lg->password_session && lg->password_ok)
			return (login_session_outcome(req, lg,
			    db_value(&lg->q, 0, 0)));
		login_factor_outcome(req, lg, db_value(&lg->q, 0, 0));
		return (DB_ANSWERED);
	case LOGIN_SEED:
		login_keep_keys(lg, 3);
		return (login_seed_done(req, lg));
	case LOGIN_KEY_READ:
		login_keep_keys(lg, 3);
		return (login_key_done(req, lg));
	case LOGIN_KEY:
		if (lg->kind->metrics != NULL)
			metrics_sca(lg->kind->metrics, db_value(&lg->q, 0, 0));
		return (login_session_outcome(req, lg, db_value(&lg->q, 0, 0)));
	case LOGIN_TOTP:
		if (lg->kind->metrics != NULL)
			metrics_sca(lg->kind->metrics, db_value(&lg->q, 0, 0));
		return (login_session_outcome(req, lg, db_value(&lg->q, 0, 0)));
	case LOGIN_AFTER:
		lg->kind->after(req, lg);
		return (DB_ANSWERED);
	case LOGIN_PASSWORD:
		break;
	}
	respond_server_error(req, "login state");
	return (DB_ANSWERED);
}

/* Re-entered while the password task runs; RETRY until its verdict. */
static int
login_password_wait(struct http_request *req, struct login *lg)
{
	switch (password_job_poll(&lg->pw)) {
	case PASSWORD_PENDING:
		return (KORE_RESULT_RETRY);
	case PASSWORD_MATCH:
		lg->password_ok = 1;
		break;
	case PASSWORD_MISMATCH:
		lg->password_ok = 0;
		break;
	}
	lg->kind->factor(req, lg);
	lg->state = LOGIN_FACTOR;
	return (KORE_RESULT_OK);
}

/*
 * The password step changes nothing when it succeeds (no session, no
 * row), unless the kind opens a session with it: a repeated post checks
 * the password again and shows the TOTP page again.
 */
static int
login_password_start(struct http_request *req, struct login *lg)
{
	const char	*username, *password;

	username = forms_arg(req, "username");
	password = forms_arg(req, "password");
	if (username == NULL || password == NULL || *username == '\0' ||
	    *password == '\0') {
		lg->kind->login_page(req, lg, 401, "error_login");
		return (KORE_RESULT_OK);
	}
	db_query_begin(&lg->q, req, lg->kind->sql_lookup);
	db_param(&lg->q, username);
	db_param(&lg->q, lg->addr);
	db_param_int(&lg->q, app_cfg.login_rate_per_minute);
	lg->state = LOGIN_LOOKUP;
	return (KORE_RESULT_RETRY);
}

/*
 * The sealed "password passed" step of the TOTP and key forms, and the
 * session id it would open; -1 when answered.
 */
static int
login_step_open(struct http_request *req, struct login *lg)
{
	if (forms_open_step(lg->kind->step_name, forms_arg(req, "step"),
	    lg->fs.authreq, &lg->subject_id) == -1) {
		pages_message(req, 403, "error_title", lg->kind->csrf_error);
		return (-1);
	}
	if (forms_flow_secret(&lg->fs, lg->kind->session_name,
	    lg->subject_id, lg->session, lg->session_digest) == -1) {
		respond_server_error(req, "login session id");
		return (-1);
	}
	return (0);
}

static int
login_totp_start(struct http_request *req, struct login *lg)
{
	if (login_step_open(req, lg) == -1)
		return (KORE_RESULT_OK);
	lg->kind->seed(req, lg);
	lg->state = LOGIN_SEED;
	return (KORE_RESULT_RETRY);
}

/* The key form: the same sealed step as the TOTP form's. */
static int
login_key_start(struct http_request *req, struct login *lg)
{
	if (lg->kind->key_read == NULL) {
		pages_message(req, 403, "error_title", lg->kind->csrf_error);
		return (KORE_RESULT_OK);
	}
	if (login_step_open(req, lg) == -1)
		return (KORE_RESULT_OK);
	lg->kind->key_read(req, lg);
	lg->state = LOGIN_KEY_READ;
	return (KORE_RESULT_RETRY);
}

int
login_password(struct http_request *req, const struct login_kind *kind)
{
	struct login	*lg;

	if (!http_state_exists(req) && ((lg = login_begin(req, kind)) ==
	    NULL || login_password_start(req, lg) == KORE_RESULT_OK))
		return (KORE_RESULT_OK);
	lg = http_state_get(req);
	if (lg->state == LOGIN_PASSWORD &&
	    login_password_wait(req, lg) == KORE_RESULT_RETRY)
		return (KORE_RESULT_RETRY);
	return (db_drive(req, &lg->q, login_step, lg, "login query"));
}

/* The TOTP and key forms: their start, then the queries. */
static int
login_second(struct http_request *req, const struct login_kind *kind,
    int (*start)(struct http_request *, struct login *), const char *what)
{
	struct login	*lg;

	if (!http_state_exists(req) && ((lg = login_begin(req, kind)) ==
	    NULL || start(req, lg) == KORE_RESULT_OK))
		return (KORE_RESULT_OK);
	lg = http_state_get(req);
	return (db_drive(req, &lg->q, login_step, lg, what));
}

int
login_totp(struct http_request *req, const struct login_kind *kind)
{
	return (login_second(req, kind, login_totp_start, "otp query"));
}

int
login_key(struct http_request *req, const struct login_kind *kind)
{
	return (login_second(req, kind, login_key_start, "key query"));
}

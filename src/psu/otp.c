/*
 * POST /auth/login/otp: the PSU's second factor, a TOTP code (RFC 6238),
 * each code accepted once per PSU (login_machine.h has the steps).
 *
 * Single-use: the session id is derived from the flow and the PSU
 * (forms_flow_secret), and the flow's accepted time step is recorded
 * (auth_flow). The same form posted again with the same code (a double
 * click, the back button) is a repeat: no failure counted, no second
 * session; the browser holding the session gets the same next page, any
 * other client no session; a repeat after the session has ended says so.
 */
#include <sys/types.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "psu/login.h"
#include "psu/login_machine.h"
#include "psu/passkey.h"
#include "psu/totp_code.h"
#include "web/pages.h"

int	psu_login_otp(struct http_request *);

static const char sql_seed[] =
    "SELECT p.username, p.totp_box, f.totp_step, psu_key_ids(p.id) "
    "FROM psu p LEFT JOIN auth_flow f ON f.flow_hash = $2 "
    "AND f.psu_id = p.id AND f.expires_at > now() WHERE p.id = $1";
static const char sql_outcome[] =
    "SELECT login_totp_flow($1, $2, $3, $4, $5, $6, $7, $8)";

void
psu_otp_page(struct http_request *req, struct login *lg, int status,
    const char *step, const char *error_key)
{
	char	csrf[FORMS_TOKEN_MAX];

	if (forms_csrf_issue(req, lg->fs.authreq, csrf, sizeof(csrf)) == -1) {
		respond_server_error(req, "otp csrf");
		return;
	}
	pages_render(req, status, "otp", json_pack("{s:s, s:s, s:s, s:s?, "
	    "s:o*}", "authreq", lg->fs.authreq, "csrf", csrf, "step", step,
	    "error", error_key ? pages_text(req, error_key) : NULL,
	    "keys", passkey_login_offer("psu", lg->key_ids, step)));
}

/* The seed, and the time step this flow's TOTP step accepted before. */
void
psu_totp_seed(struct http_request *req, struct login *lg)
{
	db_query_begin(&lg->q, req, sql_seed);
	db_param_int(&lg->q, lg->subject_id);
	db_param_bin(&lg->q, lg->flow_digest, sizeof(lg->flow_digest));
}

/*
 * login_totp_flow decides under the PSU's lock, so a repeat racing the
 * first post is recognised too.
 */
void
psu_totp_outcome(struct http_request *req, struct login *lg, long long step)
{
	db_query_begin(&lg->q, req, sql_outcome);
	db_param_bin(&lg->q, lg->flow_digest, sizeof(lg->flow_digest));
	db_param_int(&lg->q, lg->subject_id);
	otp_param_step(&lg->q, step);
	db_param_bin(&lg->q, lg->session_digest, sizeof(lg->session_digest));
	db_param_int(&lg->q, app_cfg.session_idle);
	db_param_int(&lg->q, FORMS_AUTHREQ_TTL);
}

int
psu_login_otp(struct http_request *req)
{
	return (login_totp(req, &psu_login_kind));
}

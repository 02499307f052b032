/*
 * POST /auth/login/key: the PSU's second factor as a passkey or a FIDO2
 * security key (WebAuthn) instead of the TOTP code, on the TOTP page's
 * sealed step (login_machine.h has the steps; passkey.h the challenge).
 *
 * The password is the knowledge element (RTS Art. 6) and the key's
 * signature the possession element (Art. 7): the private key never
 * leaves the authenticator and cannot be copied from the signature. The
 * key must also verify the user (flag UV: its PIN or a biometric), so a
 * stolen key alone signs nothing. Single use, repeats and lockout are the
 * TOTP step's (login_key_flow).
 */
#include <sys/types.h>

#include <kore.h>
#include <http.h>

#include "common/config.h"
#include "psu/login.h"
#include "psu/login_machine.h"
#include "psu/passkey.h"
#include "web/forms.h"

int	psu_login_key(struct http_request *);

static const char sql_outcome[] =
    "SELECT login_key_flow($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
    "$12)";

void
psu_key_read(struct http_request *req, struct login *lg)
{
	passkey_key_read(&lg->q, req, lg->subject_id);
}

void
psu_key_outcome(struct http_request *req, struct login *lg, long long key_id,
    int ok, uint32_t count, const uint8_t challenge_hash[32])
{
	db_query_begin(&lg->q, req, sql_outcome);
	db_param_bin(&lg->q, lg->flow_digest, sizeof(lg->flow_digest));
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
	db_param_int(&lg->q, app_cfg.session_idle);
	db_param_int(&lg->q, FORMS_AUTHREQ_TTL);
}

int
psu_login_key(struct http_request *req)
{
	return (login_key(req, &psu_login_kind));
}

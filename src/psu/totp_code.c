/*
 * A typed TOTP code checked against a subject's sealed seed; shared by
 * the login (PSU and staff) and the payment page's TOTP.
 */
#include <sys/types.h>

#include <ctype.h>
#include <stdio.h>
#include <time.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/crypto.h"
#include "common/secretbox.h"
#include "common/totp.h"
#include "db/db.h"
#include "psu/totp_code.h"
#include "web/forms.h"

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

void
otp_param_step(struct db_query *q, long long step)
{
	if (step < 0)
		db_param(q, NULL);
	else
		db_param_int(q, step);
	db_param_int(q, app_cfg.login_max_failures);
	db_param_int(q, app_cfg.login_lock_seconds);
}

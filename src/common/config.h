/*
 * Process-wide state of psd2gate: loaded once in the parent before the
 * workers fork, read-only afterwards.
 */
#ifndef PSD2_CONFIG_H
#define PSD2_CONFIG_H

#include <stdint.h>

#include "common/keyring.h"

struct app_config {
	int		cookie_secure;
	int64_t		access_token_ttl;
	int64_t		code_ttl;
	int64_t		session_idle;
	int64_t		login_max_failures;
	int64_t		login_lock_seconds;
	int64_t		login_rate_per_minute;
	int64_t		token_rate_per_minute;
	int64_t		consent_default_days;
	int64_t		consent_max_days;
	int64_t		purge_interval;
	int64_t		staff_session_idle;
	int64_t		audit_seal_interval;
	int64_t		probe_seconds;
	char		instance[65];
};

extern struct app_config	app_cfg;
extern struct keyring		app_form_keys;
extern struct keyring		app_totp_keys;
extern struct keyring		app_client_keys;	/* client secrets */

#define APP_DB		"db"

/* app_cfg from the settings, after settings_validate(). */
void	config_load(void);
/* The key rings of psd2_*_keys: 0, or -1 with a message in err. */
int	config_load_keys(char *, size_t);

#endif

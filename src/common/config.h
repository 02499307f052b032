/*
 * Process-wide state of psd2gate that every layer reads: the settings of
 * the configuration file as values, and the key rings. Loaded once in the
 * parent before the workers fork, read-only afterwards.
 */
#ifndef PSD2_CONFIG_H
#define PSD2_CONFIG_H

#include <stddef.h>
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
};

extern struct app_config	app_cfg;
extern struct keyring		app_form_keys;
extern struct keyring		app_totp_keys;
extern struct keyring		app_client_keys;	/* client secrets */

/* The name psd2_db is registered under in Kore's pgsql layer. */
#define APP_DB		"db"

/*
 * Fills app_cfg from the loaded settings (settings_load), which
 * settings_validate() has checked before.
 */
void	config_load(void);

/*
 * Loads the three key rings named by psd2_form_keys, psd2_totp_keys and
 * psd2_client_keys. Returns 0, or -1 with a message naming the setting
 * in err.
 */
int	config_load_keys(char *, size_t);

#endif

/*
 * The process-wide configuration values and key rings (see config.h).
 */
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "common/config.h"
#include "common/settings.h"

struct app_config	app_cfg;
struct keyring		app_form_keys;
struct keyring		app_client_keys;
struct keyring		app_totp_keys;

/*
 * psd2_instance, else the host name: one name per instance, the key of
 * its rows in kpi_minute and kpi_incident. Read in the parent: the
 * workers' seccomp filter has no uname.
 */
static void
config_instance(void)
{
	const char	*v;

	if ((v = settings_get("instance", NULL)) != NULL) {
		snprintf(app_cfg.instance, sizeof(app_cfg.instance), "%s", v);
		return;
	}
	if (gethostname(app_cfg.instance, sizeof(app_cfg.instance)) == -1 ||
	    app_cfg.instance[0] == '\0')
		snprintf(app_cfg.instance, sizeof(app_cfg.instance), "psd2gate");
	app_cfg.instance[sizeof(app_cfg.instance) - 1] = '\0';
}

void
config_load(void)
{
	app_cfg.cookie_secure = settings_bool("cookie_secure", 1);
	app_cfg.access_token_ttl = settings_int("access_token_ttl", 900);
	app_cfg.code_ttl = settings_int("code_ttl", 60);
	app_cfg.session_idle = settings_int("session_idle", 300);
	app_cfg.login_max_failures = settings_int("login_max_failures", 5);
	app_cfg.login_lock_seconds = settings_int("login_lock_seconds", 300);
	app_cfg.login_rate_per_minute =
	    settings_int("login_rate_per_minute", 30);
	app_cfg.token_rate_per_minute =
	    settings_int("token_rate_per_minute", 0);
	app_cfg.consent_default_days = settings_int("consent_default_days", 90);
	app_cfg.consent_max_days = settings_int("consent_max_days", 180);
	app_cfg.purge_interval = settings_int("purge_interval", 60);
	app_cfg.staff_session_idle = settings_int("staff_session_idle", 900);
	app_cfg.audit_seal_interval = settings_int("audit_seal_interval", 5);
	app_cfg.probe_seconds = settings_get("probe_url", NULL) != NULL ?
	    settings_int("probe_seconds", 30) : 0;
	config_instance();
}

static int
config_load_ring(const char *setting, struct keyring *kr, char *err,
    size_t errlen)
{
	char	path[PATH_MAX], why[256];

	if (settings_path(setting, NULL, path, sizeof(path)) == -1) {
		snprintf(err, errlen, "psd2_%s is not set", setting);
		return (-1);
	}
	if (keyring_load(kr, path, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "psd2_%s: %s (psd2ctl keys-init creates "
		    "it)", setting, why);
		return (-1);
	}
	return (0);
}

int
config_load_keys(char *err, size_t errlen)
{
	if (config_load_ring("form_keys", &app_form_keys, err, errlen) == -1 ||
	    config_load_ring("totp_keys", &app_totp_keys, err, errlen) == -1 ||
	    config_load_ring("client_keys", &app_client_keys, err,
	    errlen) == -1)
		return (-1);
	return (0);
}

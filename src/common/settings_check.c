/*
 * Every psd2_ setting the programs of the project read, with its type and
 * range, checked once when a program starts: a bad value stops startup
 * with a message naming the setting, instead of surfacing later in a
 * worker at its first request. A name not listed here is refused too, so
 * that a misspelt setting is not silently replaced by its default.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"
#include "webauthn.h"

enum setting_type {
	SET_INT,	/* decimal integer in [min, max] */
	SET_BOOL,	/* yes/no, on/off, 1/0 */
	SET_TEXT,	/* any non-empty text */
	SET_PATH,	/* a file or folder, relative to the file's folder */
	SET_WORD,	/* one of the words in choices */
	SET_ROLES,	/* PSD2 role names (settings_roles) */
	SET_VIDPID,	/* USB vendor:product, 4 hex digits each */
	SET_URL,	/* http(s)://host[:port], no path, query or fragment */
	SET_ORIGIN,	/* a WebAuthn origin: https://domain[:port], or
			   http://localhost[:port] (webauthn_rp_id) */
};

struct setting_rule {
	const char		*name;
	enum setting_type	 type;
	int64_t			 min;
	int64_t			 max;
	const char		*choices;	/* SET_WORD: space separated */
};

static const struct setting_rule	rules[] = {
	{ "environment", SET_WORD, 0, 0, "sandbox production" },
	{ "db", SET_TEXT, 0, 0, NULL },
	/* psd2ctl's connections (migration 083: roles). */
	{ "ctl_db", SET_TEXT, 0, 0, NULL },
	{ "migrate_db", SET_TEXT, 0, 0, NULL },
	{ "form_keys", SET_PATH, 0, 0, NULL },
	{ "totp_keys", SET_PATH, 0, 0, NULL },
	{ "client_keys", SET_PATH, 0, 0, NULL },
	{ "audit_keys", SET_PATH, 0, 0, NULL },
	{ "audit_seal_interval", SET_INT, 0, 3600, NULL },
	{ "cookie_secure", SET_BOOL, 0, 0, NULL },
	{ "access_token_ttl", SET_INT, 1, 86400, NULL },
	{ "code_ttl", SET_INT, 1, 60, NULL },
	/* RTS Art. 4(3)(d): at most 5 minutes without activity. */
	{ "session_idle", SET_INT, 1, 300, NULL },
	/* Staff pages: at most 15 minutes without activity. */
	{ "staff_session_idle", SET_INT, 1, 900, NULL },
	/* RTS Art. 4(3)(b): at most five consecutive failures. */
	{ "login_max_failures", SET_INT, 1, 5, NULL },
	{ "login_lock_seconds", SET_INT, 1, 30 * 86400, NULL },
	{ "login_rate_per_minute", SET_INT, 0, 1000000, NULL },
	{ "token_rate_per_minute", SET_INT, 0, 1000000, NULL },
	{ "consent_default_days", SET_INT, 1, 180, NULL },
	{ "consent_max_days", SET_INT, 1, 180, NULL },
	{ "purge_interval", SET_INT, 1, 86400, NULL },
	{ "page_size", SET_INT, 1, 1000, NULL },
	/* RTS Art. 36(5)(b): four a day; the consent's frequencyPerDay
	 * applies first, this may only lower it. */
	{ "unattended_limit", SET_INT, 1, 4, NULL },
	{ "access_log_retention_days", SET_INT, 1, 3650, NULL },
	{ "signing_required", SET_BOOL, 0, 0, NULL },
	{ "unsigned_roles", SET_ROLES, 0, 0, NULL },
	{ "trust_dir", SET_PATH, 0, 0, NULL },
	{ "crl_dir", SET_PATH, 0, 0, NULL },
	/* The replay memory (24 h, psd2_purge_ais) must outlast 2 x skew:
	 * see src/db/migrations/060_ais_one_way.sql. */
	{ "clock_skew", SET_INT, 1, 3600, NULL },
	{ "cert_cache", SET_INT, 1, 100000, NULL },
	/* RFC 8414: the issuer of the metadata document, and (RFC 8705 5)
	 * the base URL of the listener asking for client certificates. */
	{ "issuer", SET_URL, 0, 0, NULL },
	{ "mtls_base", SET_URL, 0, 0, NULL },
	{ "device_vidpid", SET_VIDPID, 0, 0, NULL },
	{ "device_manufacturer_ca", SET_PATH, 0, 0, NULL },
	{ "device_host", SET_TEXT, 0, 0, NULL },
	{ "device_lease_seconds", SET_INT, 1, 3600, NULL },
	{ "device_rescan_ms", SET_INT, 10, 600000, NULL },
	{ "device_hotplug", SET_BOOL, 0, 0, NULL },
	{ "device_busy_retry_ms", SET_INT, 1, 600000, NULL },
	/* Payment initiation: the device challenge's deadline (a device
	 * counts at most 600 s, PROTOCOL.md 5.3; the daemon needs 2 s). */
	{ "pis_sca_seconds", SET_INT, 3, 600, NULL },
	{ "pis_sweep_ms", SET_INT, 100, 60000, NULL },
	/* Redirect SCA: from initiation until the PSU has authorised on the
	 * page (or chosen the authenticator); then it ends RJCT timed out. */
	{ "pis_redirect_seconds", SET_INT, 3, 3600, NULL },
	{ "device_metrics_file", SET_PATH, 0, 0, NULL },
	/* The instance's name in the KPI rows (default: the host name);
	 * several instances on one host need one each. */
	{ "instance", SET_TEXT, 0, 0, NULL },
	/* RTS Art. 32 KPIs (src/metrics/kpi.h): off records nothing. */
	{ "kpi_recording", SET_BOOL, 0, 0, NULL },
	{ "kpi_flush_seconds", SET_INT, 1, 300, NULL },
	/* The bank's country (EEA): domestic or cross-border payments and
	 * the time zone of the fraud statistics' half-years. */
	{ "bank_country", SET_WORD, 0, 0, "AT BE BG CY CZ DE DK EE ES FI "
	    "FR GR HR HU IE IS IT LI LT LU LV MT NL NO PL PT RO SE SI SK" },
	/* Downtime (EBA GL 2.2): the probe's base URL (the public
	 * listener on a loopback address), seconds between its rounds (0:
	 * no probe) and the host name it sends over https (SNI and Host). */
	{ "probe_url", SET_URL, 0, 0, NULL },
	{ "probe_seconds", SET_INT, 0, 3600, NULL },
	{ "probe_host", SET_TEXT, 0, 0, NULL },
	/* Passkeys and security keys (WebAuthn): the origin of the PSU's
	 * pages where they are offered; its host is the relying party id.
	 * Not set: no keys. */
	{ "webauthn_origin", SET_ORIGIN, 0, 0, NULL },
	/* Staff security keys: the staff pages' origin, the attestation
	 * roots (PEM) and the AAGUIDs (models) accepted. All three, or
	 * none: no staff keys. */
	{ "staff_webauthn_origin", SET_ORIGIN, 0, 0, NULL },
	{ "staff_key_roots", SET_PATH, 0, 0, NULL },
	{ "staff_key_aaguids", SET_TEXT, 0, 0, NULL },
};

static const char *const	role_names[] = {
	"PSP_AS", "PSP_PI", "PSP_AI", "PSP_IC"	/* bits 0x01 .. 0x08 */
};

/*
 * An issuer identifier (RFC 8414 2): https, a host, an optional port,
 * nothing after; plain http only on the loopback address (sandbox).
 */
static int
url_valid(const char *v)
{
	const char	*host;
	size_t		 i;

	if (strncmp(v, "https://", 8) == 0)
		host = v + 8;
	else if (strncmp(v, "http://127.0.0.1", 16) == 0 &&
	    (v[16] == '\0' || v[16] == ':'))
		host = v + 7;
	else
		return (0);
	if (*host == '\0' || *host == ':')
		return (0);
	for (i = 0; host[i] != '\0'; i++) {
		if (!isalnum((unsigned char)host[i]) && host[i] != '.' &&
		    host[i] != '-' && host[i] != ':')
			return (0);
	}
	return (1);
}

int
settings_parse_roles(const char *v, int *out)
{
	char	 word[16];
	size_t	 len, i;
	int	 bits = 0, found;

	while (*v != '\0') {
		len = strcspn(v, " \t,");
		if (len == 0) {
			v++;
			continue;
		}
		if (len >= sizeof(word))
			return (-1);
		memcpy(word, v, len);
		word[len] = '\0';
		found = 0;
		for (i = 0; i < sizeof(role_names) / sizeof(role_names[0]);
		    i++) {
			if (strcmp(word, role_names[i]) == 0) {
				bits |= 1 << i;
				found = 1;
			}
		}
		if (!found && strcmp(word, "none") != 0)
			return (-1);
		v += len;
	}
	*out = bits;
	return (0);
}

static int
word_in(const char *v, const char *choices)
{
	size_t	len, vlen = strlen(v);

	while (*choices != '\0') {
		len = strcspn(choices, " ");
		if (len == vlen && strncmp(choices, v, len) == 0)
			return (1);
		choices += len;
		if (*choices == ' ')
			choices++;
	}
	return (0);
}

static int
vidpid_valid(const char *v)
{
	size_t	i;

	if (strlen(v) != 9 || v[4] != ':')
		return (0);
	for (i = 0; i < 9; i++) {
		if (i != 4 && !isxdigit((unsigned char)v[i]))
			return (0);
	}
	return (1);
}

static int
rule_check(const struct setting_rule *r, const char *v, char *err,
    size_t errlen)
{
	char	rp_id[256];
	int64_t	n;
	int	b;

	switch (r->type) {
	case SET_INT:
		if (settings_parse_int(v, &n) == -1) {
			snprintf(err, errlen, "psd2_%s: not an integer: \"%s\"",
			    r->name, v);
			return (-1);
		}
		if (n < r->min || n > r->max) {
			snprintf(err, errlen, "psd2_%s: %lld is out of range "
			    "(%lld to %lld)", r->name, (long long)n,
			    (long long)r->min, (long long)r->max);
			return (-1);
		}
		return (0);
	case SET_BOOL:
		if (settings_parse_bool(v, &b) == 0)
			return (0);
		snprintf(err, errlen, "psd2_%s: not yes or no: \"%s\"",
		    r->name, v);
		return (-1);
	case SET_WORD:
		if (word_in(v, r->choices))
			return (0);
		snprintf(err, errlen, "psd2_%s: \"%s\" is not one of: %s",
		    r->name, v, r->choices);
		return (-1);
	case SET_ROLES:
		if (settings_parse_roles(v, &b) == 0)
			return (0);
		snprintf(err, errlen, "psd2_%s: \"%s\" is not a list of PSD2 "
		    "roles (PSP_AS, PSP_PI, PSP_AI, PSP_IC, or none)", r->name,
		    v);
		return (-1);
	case SET_VIDPID:
		if (vidpid_valid(v))
			return (0);
		snprintf(err, errlen, "psd2_%s: \"%s\" is not vendor:product "
		    "(4 hex digits each)", r->name, v);
		return (-1);
	case SET_URL:
		if (url_valid(v))
			return (0);
		snprintf(err, errlen, "psd2_%s: \"%s\" is not https://host"
		    "[:port] (no path, query or fragment; http only for "
		    "127.0.0.1)", r->name, v);
		return (-1);
	case SET_ORIGIN:
		if (webauthn_rp_id(v, rp_id, sizeof(rp_id)) == 0)
			return (0);
		snprintf(err, errlen, "psd2_%s: \"%s\" is not https://domain"
		    "[:port] or http://localhost[:port]", r->name, v);
		return (-1);
	case SET_TEXT:
	case SET_PATH:
		if (*v != '\0')
			return (0);
		snprintf(err, errlen, "psd2_%s: has no value", r->name);
		return (-1);
	}
	return (-1);
}

/* What one setting cannot say alone. */
static int
settings_relations(char *err, size_t errlen)
{
	int64_t	def, max;
	int	required;

	if (settings_parse_bool(settings_get("signing_required", "yes"),
	    &required) == 0 && required &&
	    settings_get("unsigned_roles", NULL) != NULL) {
		snprintf(err, errlen, "psd2_unsigned_roles applies only with "
		    "psd2_signing_required no");
		return (-1);
	}
	if (settings_parse_int(settings_get("consent_default_days", "90"),
	    &def) == 0 && settings_parse_int(settings_get("consent_max_days",
	    "180"), &max) == 0 && def > max) {
		snprintf(err, errlen, "psd2_consent_default_days (%lld) is "
		    "more than psd2_consent_max_days (%lld)", (long long)def,
		    (long long)max);
		return (-1);
	}
	/* TPPs configure themselves from the metadata (RFC 8414): in
	 * production its issuer is never taken from a Host header. */
	if (settings_production() &&
	    settings_get("issuer", NULL) == NULL) {
		snprintf(err, errlen, "psd2_issuer is required in production");
		return (-1);
	}
	/* WebAuthn on http://localhost is for trying the sandbox. */
	if (settings_production() &&
	    strncmp(settings_get("webauthn_origin", "https://"), "https://",
	    8) != 0) {
		snprintf(err, errlen, "psd2_webauthn_origin must be https in "
		    "production");
		return (-1);
	}
	if (settings_production() &&
	    strncmp(settings_get("staff_webauthn_origin", "https://"),
	    "https://", 8) != 0) {
		snprintf(err, errlen, "psd2_staff_webauthn_origin must be "
		    "https in production");
		return (-1);
	}
	if ((settings_get("staff_webauthn_origin", NULL) == NULL) !=
	    (settings_get("staff_key_roots", NULL) == NULL) ||
	    (settings_get("staff_key_roots", NULL) == NULL) !=
	    (settings_get("staff_key_aaguids", NULL) == NULL)) {
		snprintf(err, errlen, "psd2_staff_webauthn_origin, "
		    "psd2_staff_key_roots and psd2_staff_key_aaguids go "
		    "together: all three, or none (no staff keys)");
		return (-1);
	}
	/* The instance column of kpi_minute and kpi_incident. */
	if (strlen(settings_get("instance", "")) > 64) {
		snprintf(err, errlen, "psd2_instance: more than 64 characters");
		return (-1);
	}
	return (0);
}

int
settings_validate(char *err, size_t errlen)
{
	const struct setting_rule	*r;
	const char			*name, *value;
	size_t				 i, k;

	for (i = 0; settings_at(i, &name, &value) == 0; i++) {
		r = NULL;
		for (k = 0; k < sizeof(rules) / sizeof(rules[0]); k++) {
			if (strcmp(rules[k].name, name) == 0)
				r = &rules[k];
		}
		if (r == NULL) {
			snprintf(err, errlen, "psd2_%s: unknown setting", name);
			return (-1);
		}
		if (rule_check(r, value, err, errlen) == -1)
			return (-1);
	}
	return (settings_relations(err, errlen));
}

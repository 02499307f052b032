/*
 * The request of POST /xs2a/v1/consents (src/bg/README.md "Consents"):
 * its headers and its JSON body, checked here precisely; the first error
 * is the one reported, with the path of the offending element. The
 * access object leaves here normalised (consent.access_request): the
 * lists sent, every IBAN of balances and transactions also in accounts;
 * or the one "allAccounts" form.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kore.h>
#include <http.h>

#include <jansson.h>

#include "ais/ais.h"
#include "bg/consents.h"
#include "common/crypto.h"
#include "common/iban.h"
#include "oauth/oauth.h"

#define CONSENT_BODY_MAX	16384
#define CONSENT_LIST_MAX	20
#define CONSENT_PATH_MAX	64
/* Lowered to psd2_unattended_limit anyway: only bounds the number. */
#define CONSENT_FREQUENCY_MAX	1000

static const char *const consent_lists[] = {
	"accounts", "balances", "transactions", NULL
};
static const char *const consent_all_forms[] = {
	"availableAccounts", "availableAccountsWithBalance", "allPsd2", NULL
};
/* Members of the guidelines that this bank does not offer. */
static const char *const consent_access_unsupported[] = {
	"additionalInformation", "restrictedTo", NULL
};
static const char *const consent_ref_unsupported[] = {
	"bban", "pan", "maskedPan", "msisdn", "other", "cashAccountType", NULL
};
static const char *const consent_members[] = {
	"access", "recurringIndicator", "validUntil", "frequencyPerDay",
	"combinedServiceIndicator", NULL
};

static int
consent_in(const char *const *words, const char *word)
{
	for (; *words != NULL; words++) {
		if (strcmp(*words, word) == 0)
			return (1);
	}
	return (0);
}

static int
consent_currency_valid(const char *s)
{
	return (strlen(s) == 3 && s[0] >= 'A' && s[0] <= 'Z' &&
	    s[1] >= 'A' && s[1] <= 'Z' && s[2] >= 'A' && s[2] <= 'Z');
}

/* The reference's members: iban and currency only. 0 or -1 (recorded). */
static int
consent_ref_members(struct bg_call *c, json_t *ref, const char *path)
{
	const char	*key;
	json_t		*v;

	json_object_foreach(ref, key, v) {
		if (strcmp(key, "iban") == 0 || strcmp(key, "currency") == 0)
			continue;
		if (consent_in(consent_ref_unsupported, key)) {
			xs2a_input_error(&c->x, 400, "PARAMETER_NOT_SUPPORTED",
			    path, "Accounts are referenced by iban only, not "
			    "by %.40s.", key);
			return (-1);
		}
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", path,
		    "%.40s is not a member of an account reference.", key);
		return (-1);
	}
	return (0);
}

/* Appends {"iban"[, "currency"]} to out unless its IBAN is there. */
static int
consent_ref_add(json_t *out, const char *iban, json_t *currency)
{
	size_t	i;
	json_t	*r;

	json_array_foreach(out, i, r) {
		if (strcmp(json_string_value(json_object_get(r, "iban")),
		    iban) == 0)
			return (0);
	}
	r = json_pack("{s:s}", "iban", iban);
	if (currency != NULL)
		json_object_set(r, "currency", currency);
	return (json_array_append_new(out, r));
}

/* One element of a list, into out. 0 or -1 (recorded). */
static int
consent_ref(struct bg_call *c, json_t *ref, const char *list, size_t i,
    json_t *out)
{
	char		 path[CONSENT_PATH_MAX], sub[CONSENT_PATH_MAX + 16];
	json_t		*iban, *cur;
	const char	*s;

	snprintf(path, sizeof(path), "access.%s[%zu]", list, i);
	if (!json_is_object(ref)) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", path,
		    "%s must be an account reference {\"iban\": ...}.", path);
		return (-1);
	}
	if (consent_ref_members(c, ref, path) == -1)
		return (-1);
	snprintf(sub, sizeof(sub), "%s.iban", path);
	iban = json_object_get(ref, "iban");
	s = json_is_string(iban) ? json_string_value(iban) : NULL;
	if (s == NULL || !iban_valid(s, strlen(s))) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", sub,
		    "%s must be an IBAN (electronic format, no spaces).", sub);
		return (-1);
	}
	cur = json_object_get(ref, "currency");
	if (cur != NULL && (!json_is_string(cur) ||
	    !consent_currency_valid(json_string_value(cur)))) {
		snprintf(sub, sizeof(sub), "%s.currency", path);
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", sub,
		    "%s must be an ISO 4217 currency code.", sub);
		return (-1);
	}
	if (consent_ref_add(out, s, cur) == -1)
		return (-1);
	return (0);
}

/* A list of references: *n gets its length. NULL on error (recorded). */
static json_t *
consent_list(struct bg_call *c, json_t *list, const char *name, size_t *n)
{
	char	path[CONSENT_PATH_MAX];
	json_t	*out, *ref;
	size_t	 i;

	snprintf(path, sizeof(path), "access.%s", name);
	if (!json_is_array(list)) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", path,
		    "%s must be a list of account references.", path);
		return (NULL);
	}
	*n = json_array_size(list);
	if (*n > CONSENT_LIST_MAX) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", path,
		    "%s names more than %d accounts.", path,
		    CONSENT_LIST_MAX);
		return (NULL);
	}
	out = json_array();
	json_array_foreach(list, i, ref) {
		if (consent_ref(c, ref, name, i, out) == -1) {
			json_decref(out);
			return (NULL);
		}
	}
	if (json_array_size(out) != *n) {
		json_decref(out);
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", path,
		    "%s names an IBAN more than once.", path);
		return (NULL);
	}
	return (out);
}

/* The access members: known ones only. 0 or -1 (recorded). */
static int
consent_access_members(struct bg_call *c, json_t *access)
{
	char		 path[CONSENT_PATH_MAX];
	const char	*key;
	json_t		*v;

	json_object_foreach(access, key, v) {
		if (consent_in(consent_lists, key) ||
		    consent_in(consent_all_forms, key))
			continue;
		snprintf(path, sizeof(path), "access.%.40s", key);
		if (consent_in(consent_access_unsupported, key))
			xs2a_input_error(&c->x, 400, "PARAMETER_NOT_SUPPORTED",
			    path, "%s is not supported.", path);
		else
			xs2a_input_error(&c->x, 400, "FORMAT_ERROR", path,
			    "%s is not a member of access.", path);
		return (-1);
	}
	return (0);
}

/* {"availableAccounts" | ... : "allAccounts"}: NULL on error. */
static json_t *
consent_all_form(struct bg_call *c, json_t *access, const char *form,
    struct bg_consent_input *in)
{
	char		 path[CONSENT_PATH_MAX];
	const char	*v;

	snprintf(path, sizeof(path), "access.%s", form);
	v = json_string_value(json_object_get(access, form));
	if (v != NULL && strcmp(v, "allAccountsWithOwnerName") == 0) {
		xs2a_input_error(&c->x, 400, "PARAMETER_NOT_SUPPORTED", path,
		    "%s: allAccountsWithOwnerName is not supported.", path);
		return (NULL);
	}
	if (v == NULL || strcmp(v, "allAccounts") != 0) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", path,
		    "%s must be \"allAccounts\".", path);
		return (NULL);
	}
	snprintf(in->kind, sizeof(in->kind), "%s", form);
	return (json_pack("{s:s}", form, "allAccounts"));
}

/*
 * The lists: all empty (bankOffered: the PSU picks) or all naming
 * accounts (dedicated). NULL on error.
 */
static json_t *
consent_lists_form(struct bg_call *c, json_t *access,
    struct bg_consent_input *in)
{
	json_t		*out, *all, *list, *ref;
	size_t		 n, i, j, total, empty;

	out = json_object();
	all = json_array();
	json_object_set_new(out, "accounts", all);
	total = empty = 0;
	for (i = 0; consent_lists[i] != NULL; i++) {
		if (json_object_get(access, consent_lists[i]) == NULL)
			continue;
		list = consent_list(c, json_object_get(access,
		    consent_lists[i]), consent_lists[i], &n);
		if (list == NULL) {
			json_decref(out);
			return (NULL);
		}
		json_array_foreach(list, j, ref)
			(void)consent_ref_add(all, json_string_value(
			    json_object_get(ref, "iban")),
			    json_object_get(ref, "currency"));
		if (i > 0)
			json_object_set(out, consent_lists[i], list);
		json_decref(list);
		total += n;
		empty += n == 0;
	}
	if (total > 0 && empty > 0) {
		json_decref(out);
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "access",
		    "Either every list of access names accounts, or every "
		    "list is empty (the PSU chooses the accounts).");
		return (NULL);
	}
	snprintf(in->kind, sizeof(in->kind), "%s",
	    total > 0 ? "dedicated" : "bankOffered");
	return (out);
}

/* The access object, normalised: NULL on error (recorded). */
static json_t *
consent_access(struct bg_call *c, json_t *access, struct bg_consent_input *in)
{
	const char	*form;
	size_t		 i, lists, forms;

	if (!json_is_object(access)) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "access",
		    "access is required: an object.");
		return (NULL);
	}
	if (consent_access_members(c, access) == -1)
		return (NULL);
	lists = forms = 0;
	form = NULL;
	for (i = 0; consent_lists[i] != NULL; i++)
		lists += json_object_get(access, consent_lists[i]) != NULL;
	for (i = 0; consent_all_forms[i] != NULL; i++) {
		if (json_object_get(access, consent_all_forms[i]) != NULL) {
			form = consent_all_forms[i];
			forms++;
		}
	}
	if (forms + (lists > 0) != 1) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "access",
		    "access takes either the lists accounts, balances and "
		    "transactions, or one of availableAccounts, "
		    "availableAccountsWithBalance and allPsd2.");
		return (NULL);
	}
	if (form != NULL)
		return (consent_all_form(c, access, form, in));
	return (consent_lists_form(c, access, in));
}

/* Today's date in the bank's time zone (the service's), YYYY-MM-DD. */
static void
consent_today(char *out, size_t len)
{
	struct tm	tm;
	time_t		now;

	now = time(NULL);
	localtime_r(&now, &tm);
	if (strftime(out, len, "%Y-%m-%d", &tm) == 0)
		out[0] = '\0';
}

static void
consent_valid_until(struct bg_call *c, json_t *v, struct bg_consent_input *in)
{
	char		 today[BG_DATE_LEN + 1];
	const char	*s;

	s = json_string_value(v);
	if (s == NULL || !ais_date_valid(s)) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "validUntil",
		    "validUntil is required: a date YYYY-MM-DD.");
		return;
	}
	consent_today(today, sizeof(today));
	if (strcmp(s, today) < 0) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "validUntil",
		    "validUntil is in the past.");
		return;
	}
	snprintf(in->valid_until, sizeof(in->valid_until), "%s", s);
}

static void
consent_frequency(struct bg_call *c, json_t *v, struct bg_consent_input *in)
{
	json_int_t	n;

	if (!json_is_integer(v) || (n = json_integer_value(v)) < 1) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "frequencyPerDay",
		    "frequencyPerDay is required: an integer, at least 1.");
		return;
	}
	if (!in->recurring && n != 1) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "frequencyPerDay",
		    "A one-off consent (recurringIndicator false) has "
		    "frequencyPerDay 1.");
		return;
	}
	in->frequency = n > CONSENT_FREQUENCY_MAX ? CONSENT_FREQUENCY_MAX :
	    (int)n;
}

/* Top-level members: the five of the guidelines only. */
static int
consent_members_known(struct bg_call *c, json_t *doc)
{
	const char	*key;
	json_t		*v;

	json_object_foreach(doc, key, v) {
		if (consent_in(consent_members, key))
			continue;
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", key,
		    "%.40s is not a member of a consent request.", key);
		return (-1);
	}
	return (0);
}

static void
consent_body(struct bg_call *c, json_t *doc, struct bg_consent_input *in)
{
	json_t	*access, *v;

	if (consent_members_known(c, doc) == -1)
		return;
	if ((access = consent_access(c, json_object_get(doc, "access"),
	    in)) == NULL)
		return;
	v = json_object_get(doc, "recurringIndicator");
	if (!json_is_boolean(v)) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR",
		    "recurringIndicator",
		    "recurringIndicator is required: true or false.");
		json_decref(access);
		return;
	}
	in->recurring = json_is_true(v);
	consent_valid_until(c, json_object_get(doc, "validUntil"), in);
	consent_frequency(c, json_object_get(doc, "frequencyPerDay"), in);
	v = json_object_get(doc, "combinedServiceIndicator");
	if (!json_is_boolean(v))
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR",
		    "combinedServiceIndicator",
		    "combinedServiceIndicator is required: true or false.");
	else if (json_is_true(v))
		xs2a_input_error(&c->x, 400, "SESSIONS_NOT_SUPPORTED",
		    "combinedServiceIndicator",
		    "Sessions combining account information and payment "
		    "initiation are not supported.");
	if (c->x.input.status == 0)
		in->access = json_dumps(access, JSON_COMPACT);
	json_decref(access);
}

/* A header that is absent, "true" or "false": -1 otherwise (recorded). */
static int
consent_bool_header(struct http_request *req, struct bg_call *c,
    const char *name, const char *display)
{
	const char	*v;

	if (!http_request_header(req, name, &v))
		return (0);
	if (strcmp(v, "true") == 0)
		return (1);
	if (strcmp(v, "false") != 0)
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", display,
		    "%s must be true or false.", display);
	return (0);
}

static int
consent_url_valid(const char *s)
{
	size_t	i, len;

	len = strlen(s);
	if (len == 0 || len > BG_URL_MAX)
		return (0);
	for (i = 0; i < len; i++) {
		if (s[i] <= ' ' || s[i] == 0x7f)
			return (0);
	}
	return (1);
}

void
bg_redirect_headers(struct http_request *req, struct bg_call *c,
    struct bg_redirects *r)
{
	r->ok = r->nok = NULL;
	if (http_request_header(req, "tpp-redirect-uri", &r->ok) &&
	    !consent_url_valid(r->ok))
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "TPP-Redirect-URI",
		    "TPP-Redirect-URI must be a URI.");
	if (http_request_header(req, "tpp-nok-redirect-uri", &r->nok) &&
	    !consent_url_valid(r->nok))
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR",
		    "TPP-Nok-Redirect-URI",
		    "TPP-Nok-Redirect-URI must be a URI.");
	if (r->nok != NULL && r->ok == NULL)
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR",
		    "TPP-Nok-Redirect-URI",
		    "TPP-Nok-Redirect-URI is sent with TPP-Redirect-URI only.");
}

void
bg_consent_input(struct http_request *req, struct bg_call *c,
    struct bg_consent_input *in)
{
	const char		*ip;
	json_t			*doc;

	memset(in, 0, sizeof(*in));
	if (!http_request_header(req, "psu-ip-address", &ip))
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "PSU-IP-Address",
		    "PSU-IP-Address is required here.");
	bg_redirect_headers(req, c, &in->redirects);
	in->explicit_start = consent_bool_header(req, c,
	    "tpp-explicit-authorisation-preferred",
	    "TPP-Explicit-Authorisation-Preferred");
	doc = xs2a_json_body(req, &c->x, CONSENT_BODY_MAX);
	if (!json_is_object(doc))
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "body",
		    "The body must be a JSON object: access, "
		    "recurringIndicator, validUntil, frequencyPerDay, "
		    "combinedServiceIndicator.");
	else
		consent_body(c, doc, in);
	json_decref(doc);
}

void
bg_consent_input_clear(struct bg_consent_input *in)
{
	free(in->access);
	in->access = NULL;
}

int
bg_base_url(struct http_request *req, struct bg_call *c, char *out,
    size_t len)
{
	if (oauth_issuer(req, out, len) == 0)
		return (0);
	xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "Host",
	    "The Host header is not a host name or address.");
	return (-1);
}

int
bg_consent_path_id(struct http_request *req, char *out)
{
	if (bg_path_segment(req->path, BG_CONSENTS, out, BG_UUID_LEN + 1) ==
	    -1 || !crypto_is_uuid(out))
		return (-1);
	return (0);
}

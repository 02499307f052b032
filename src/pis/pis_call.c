/*
 * The driver shared by the payment endpoints (see pis.h): what C settles
 * before the query, the one query, and the one answer. The AIS driver's
 * pattern (src/ais/ais_call.c) with the payment refusals and statuses.
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/crypto.h"
#include "common/settings.h"
#include "pis/pis.h"

static const char sql_bearer_only[] =
    "SELECT refusal, detail, status, body FROM pis_bearer_only($1, $2)";

/*
 * The refusals of pis_refusal (migrations/070_pis.sql) and how each is
 * answered. text NULL: the function's detail is the text; path NULL:
 * none, except resource_unknown, whose detail is the path.
 */
struct pis_refusal_def {
	const char	*name;
	int		 status;
	const char	*code;
	const char	*path;
	const char	*text;
};

static const struct pis_refusal_def	pis_refusals[] = {
	{ "certificate_of_another_tpp", 401, "CERTIFICATE_INVALID", NULL,
	    "The certificate does not belong to the TPP of the access "
	    "token." },
	{ "request_id_used", 400, "FORMAT_ERROR", "x-request-id",
	    "x-request-id already used" },
	{ "consent_scope", 401, "CONSENT_INVALID", NULL, NULL },
	{ "resource_unknown", 404, "RESOURCE_UNKNOWN", NULL,
	    "The payment or authorisation is unknown." },
	{ "account_unknown", 403, "RESOURCE_UNKNOWN", "debtorAccount.iban",
	    "The debtor account is not among the accounts of the consent." },
	{ "debtor_currency", 400, "FORMAT_ERROR", "debtorAccount.iban",
	    "SEPA credit transfers need a EUR debtor account." },
	{ "redirect_uri", 400, "FORMAT_ERROR", "TPP-Redirect-URI", NULL },
	{ "nok_redirect_uri", 400, "FORMAT_ERROR", "TPP-Nok-Redirect-URI",
	    "TPP-Nok-Redirect-URI is not a redirect URI registered for this "
	    "client." },
	{ "cancellation_invalid", 405, "CANCELLATION_INVALID", NULL,
	    "The payment can no longer be cancelled: its authorisation is "
	    "final." },
};

static struct pis_settings	pis_cfg;

void
pis_settings_load(void)
{
	pis_cfg.sca_seconds = (int)settings_int("pis_sca_seconds", 120);
	pis_cfg.sweep_ms = (int)settings_int("pis_sweep_ms", 1000);
	pis_cfg.redirect_seconds = (int)settings_int("pis_redirect_seconds",
	    600);
}

const struct pis_settings *
pis_settings(void)
{
	return (&pis_cfg);
}

static void
pis_call_free(struct http_request *req)
{
	struct pis_call	*c = http_state_get(req);

	db_query_end(&c->q);
	kore_free(c->answer_body);
	kore_free(c->answer_location);
	OPENSSL_cleanse(c, sizeof(*c));
}

struct pis_call *
pis_call_new(struct http_request *req)
{
	return (http_state_create(req, sizeof(struct pis_call),
	    pis_call_free));
}

static void __attribute__((format(printf, 5, 0)))
pis_refusal_set(struct ais_refusal *r, int status, const char *code,
    const char *path, const char *fmt, va_list ap)
{
	r->status = status;
	snprintf(r->code, sizeof(r->code), "%s", code);
	snprintf(r->path, sizeof(r->path), "%s", path ? path : "");
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
}

static void __attribute__((format(printf, 5, 6)))
pis_refuse(struct pis_call *c, int status, const char *code,
    const char *path, const char *fmt, ...)
{
	va_list	ap;

	if (c->refusal.status != 0)
		return;
	va_start(ap, fmt);
	pis_refusal_set(&c->refusal, status, code, path, fmt, ap);
	va_end(ap);
}

void
pis_input_error(struct pis_call *c, int status, const char *code,
    const char *path, const char *fmt, ...)
{
	va_list	ap;

	if (c->input.status != 0)
		return;
	va_start(ap, fmt);
	pis_refusal_set(&c->input, status, code, path, fmt, ap);
	va_end(ap);
}

/* The token of "Authorization: Bearer <token>"; "" for anything else. */
static const char *
pis_bearer(struct http_request *req, int *is_bearer)
{
	const char	*hdr;

	*is_bearer = 0;
	if (!http_request_header(req, "authorization", &hdr))
		return ("");
	if (strncasecmp(hdr, "Bearer ", 7) != 0)
		return ("");
	hdr += 7;
	while (*hdr == ' ')
		hdr++;
	*is_bearer = 1;
	return (hdr);
}

/* Step 1: the verdict, the role PSP_PI, PSU-IP-Address, the input. */
static void
pis_settle(struct http_request *req, struct pis_call *c)
{
	const struct tpp_verdict	*v = &c->verdict;
	const char			*ip;
	char				 text[AIS_TEXT_MAX];

	if (v->status != 0) {
		pis_refuse(c, v->status, v->code, NULL, "%s", v->text);
		return;
	}
	if (!tpp_has_role(v, TPP_ROLE_PI)) {
		tpp_role_text(v, TPP_ROLE_PI, text, sizeof(text));
		if (v->signed_request)
			pis_refuse(c, 403, "SERVICE_BLOCKED", NULL, "%s", text);
		else
			pis_refuse(c, 401, "SIGNATURE_MISSING", NULL, "%s",
			    text);
		return;
	}
	if (http_request_header(req, "psu-ip-address", &ip) &&
	    ais_ip_normalise(ip, c->psu_ip) == -1) {
		c->psu_ip[0] = '\0';
		pis_refuse(c, 400, "FORMAT_ERROR", "PSU-IP-Address",
		    "PSU-IP-Address must be an IPv4 or IPv6 address.");
		return;
	}
	if (c->input.status != 0)
		c->refusal = c->input;
}

int
pis_begin(struct http_request *req, struct pis_call *c, const char *sql)
{
	uint8_t		digest[32];
	int		is_bearer;

	c->token = pis_bearer(req, &is_bearer);
	if (!is_bearer || !crypto_is_uuid(c->token)) {
		respond_bearer_error(req, 0, c->token);
		c->answered = 1;
		return (0);
	}
	tpp_verify_request(req, &c->verdict);
	pis_settle(req, c);
	crypto_sha256(c->token, strlen(c->token), digest);

	db_query_begin(&c->q, req, c->refusal.status != 0 ?
	    sql_bearer_only : sql);
	db_param_bin(&c->q, digest, sizeof(digest));
	db_param(&c->q, c->verdict.peer_x5t[0] ? c->verdict.peer_x5t : NULL);
	if (c->refusal.status != 0)
		return (0);
	db_param(&c->q, c->verdict.org_id[0] ? c->verdict.org_id : NULL);
	db_param(&c->q, c->verdict.signed_request &&
	    c->verdict.request_id[0] ? c->verdict.request_id : NULL);
	db_param(&c->q, c->psu_ip[0] ? c->psu_ip : NULL);
	return (1);
}

static void
pis_refused(struct http_request *req, struct pis_call *c, const char *name,
    const char *detail)
{
	const struct pis_refusal_def	*d;
	size_t				 i;

	if (strcmp(name, "token_invalid") == 0 ||
	    strcmp(name, "token_expired") == 0) {
		respond_bearer_error(req, strcmp(name, "token_expired") == 0,
		    c->token);
		return;
	}
	for (i = 0; i < sizeof(pis_refusals) / sizeof(pis_refusals[0]); i++) {
		d = &pis_refusals[i];
		if (strcmp(d->name, name) != 0)
			continue;
		if (strcmp(name, "resource_unknown") == 0) {
			respond_tpp_error(req, d->status, d->code, detail,
			    d->text);
			return;
		}
		respond_tpp_error(req, d->status, d->code, d->path,
		    d->text ? d->text : detail);
		return;
	}
	respond_server_error(req, "pis refusal unknown");
}

/* The one place that writes the answer of a call that reached the DB. */
static void
pis_answer(struct http_request *req, struct pis_call *c)
{
	const char	*body;
	int		 status;

	if (db_rows(&c->q) != 1) {
		respond_server_error(req, "pis answer");
		return;
	}
	if (!db_is_null(&c->q, 0, 0)) {
		pis_refused(req, c, db_value(&c->q, 0, 0),
		    db_is_null(&c->q, 0, 1) ? "" : db_value(&c->q, 0, 1));
		return;
	}
	if (c->refusal.status != 0) {
		respond_tpp_error(req, c->refusal.status, c->refusal.code,
		    c->refusal.path[0] ? c->refusal.path : NULL,
		    c->refusal.text);
		return;
	}
	status = (int)db_int(&c->q, 0, 2);
	if (db_is_null(&c->q, 0, 3)) {
		respond_raw(req, status, NULL, NULL, 0);
		return;
	}
	body = db_value(&c->q, 0, 3);
	respond_raw(req, status, "application/json", body, strlen(body));
}

static const char sql_wake[] = "SELECT pis_wake($1)";

/*
 * A committed initiation (201): keeps the answer and starts pis_wake()
 * for its payment (the id ends the Location). 0 when it did.
 */
static int
pis_wake_begin(struct http_request *req, struct pis_call *c)
{
	const char	*loc, *id;

	if (db_rows(&c->q) != 1 || !db_is_null(&c->q, 0, 0) ||
	    c->refusal.status != 0 || db_is_null(&c->q, 0, 2) ||
	    db_int(&c->q, 0, 2) != 201 || db_is_null(&c->q, 0, 1) ||
	    db_is_null(&c->q, 0, 3))
		return (-1);
	loc = db_value(&c->q, 0, 1);
	if ((id = strrchr(loc, '/')) == NULL)
		return (-1);
	c->answer_location = kore_strdup(loc);
	c->answer_body = kore_strdup(db_value(&c->q, 0, 3));
	c->waking = 1;
	db_query_begin(&c->q, req, sql_wake);
	db_param(&c->q, c->answer_location + (id + 1 - loc));
	return (0);
}

static void
pis_answer_created(struct http_request *req, struct pis_call *c)
{
	http_response_header(req, "location", c->answer_location);
	respond_raw(req, 201, "application/json", c->answer_body,
	    strlen(c->answer_body));
}

int
pis_finish(struct http_request *req, struct pis_call *c)
{
	enum db_status	st;

	if (c->answered)
		return (KORE_RESULT_OK);
	for (;;) {
		st = db_query_poll(&c->q);
		if (st == DB_PENDING)
			return (KORE_RESULT_RETRY);
		if (c->waking) {
			/* The payment is committed whatever the wake-up did. */
			if (st == DB_FAILED)
				kore_log(LOG_NOTICE, "pis: wake-up for %s not "
				    "sent; the daemons' sweep finds it",
				    c->answer_location);
			pis_answer_created(req, c);
			return (KORE_RESULT_OK);
		}
		if (st == DB_FAILED) {
			respond_server_error(req, "pis query");
			return (KORE_RESULT_OK);
		}
		if (pis_wake_begin(req, c) == -1)
			break;
	}
	pis_answer(req, c);
	return (KORE_RESULT_OK);
}

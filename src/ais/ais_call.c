/*
 * The driver shared by the AIS endpoints (see ais.h): what C settles
 * before the query, the one query, and the one answer.
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "ais/ais.h"
#include "api/respond.h"
#include "common/crypto.h"
#include "common/settings.h"

/* The refusal path: only the bearer check, same columns as the data. */
static const char sql_bearer_only[] =
    "SELECT refusal, detail, body FROM ais_bearer_only($1, $2)";

/*
 * The refusals the SQL functions name (type ais_refusal of
 * src/db/migrations/060_ais_one_way.sql) and how each is answered. text
 * NULL: the function's detail is the text. path NULL: none, or the
 * endpoint's resource path for resource_unknown.
 */
struct ais_refusal_def {
	const char	*name;
	int		 status;
	const char	*code;
	const char	*path;
	const char	*text;
};

static const struct ais_refusal_def	ais_refusals[] = {
	{ "certificate_of_another_tpp", 401, "CERTIFICATE_INVALID", NULL,
	    "The certificate does not belong to the TPP of the access "
	    "token." },
	{ "request_id_used", 400, "FORMAT_ERROR", "x-request-id",
	    "x-request-id already used" },
	{ "consent_scope", 401, "CONSENT_INVALID", NULL, NULL },
	{ "period_invalid", 400, "PERIOD_INVALID", "dateFrom", NULL },
	{ "resource_unknown", 404, "RESOURCE_UNKNOWN", NULL,
	    "The account is unknown or not covered by the consent." },
	{ "access_exceeded", 429, "ACCESS_EXCEEDED", NULL,
	    "The access limit without the PSU present is reached for "
	    "today." },
};

static struct ais_settings	ais_cfg;

void
ais_settings_load(void)
{
	ais_cfg.page_size = (int)settings_int("page_size", 50);
	ais_cfg.unattended_limit = (int)settings_int("unattended_limit", 4);
}

const struct ais_settings *
ais_settings(void)
{
	return (&ais_cfg);
}

static void
ais_call_free(struct http_request *req)
{
	struct ais_call	*c = http_state_get(req);

	db_query_end(&c->q);
	OPENSSL_cleanse(c, sizeof(*c));
}

struct ais_call *
ais_call_new(struct http_request *req)
{
	return (http_state_create(req, sizeof(struct ais_call),
	    ais_call_free));
}

static void __attribute__((format(printf, 5, 0)))
ais_refusal_set(struct ais_refusal *r, int status, const char *code,
    const char *path, const char *fmt, va_list ap)
{
	r->status = status;
	snprintf(r->code, sizeof(r->code), "%s", code);
	snprintf(r->path, sizeof(r->path), "%s", path ? path : "");
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
}

static void __attribute__((format(printf, 5, 6)))
ais_refuse(struct ais_call *c, int status, const char *code,
    const char *path, const char *fmt, ...)
{
	va_list	ap;

	if (c->refusal.status != 0)
		return;
	va_start(ap, fmt);
	ais_refusal_set(&c->refusal, status, code, path, fmt, ap);
	va_end(ap);
}

void
ais_input_error(struct ais_call *c, int status, const char *code,
    const char *path, const char *fmt, ...)
{
	va_list	ap;

	/* The first error found is the one reported. */
	if (c->input.status != 0)
		return;
	va_start(ap, fmt);
	ais_refusal_set(&c->input, status, code, path, fmt, ap);
	va_end(ap);
}

/*
 * The token of "Authorization: Bearer <token>", which the spec's 401 body
 * names. Anything else (no header, another scheme) yields "": a Basic
 * credential sent by mistake is never echoed.
 */
static const char *
ais_bearer(struct http_request *req, int *is_bearer)
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

/* One of the roles (TPP_ROLE_* bits) is in the verdict. */
static int
ais_role_ok(const struct tpp_verdict *v, int roles)
{
	int	bit;

	for (bit = 1; bit <= roles; bit <<= 1) {
		if ((roles & bit) && tpp_has_role(v, bit))
			return (1);
	}
	return (0);
}

/* Step 1 of ais.h: the verdict, the role, PSU-IP-Address, the input. */
static void
ais_settle(struct http_request *req, struct ais_call *c, int roles)
{
	const struct tpp_verdict	*v = &c->verdict;
	const char			*ip;
	char				 text[AIS_TEXT_MAX];

	if (v->status != 0) {
		ais_refuse(c, v->status, v->code, NULL, "%s", v->text);
		return;
	}
	if (!ais_role_ok(v, roles)) {
		tpp_role_text(v, roles, text, sizeof(text));
		if (v->signed_request)
			ais_refuse(c, 403, "SERVICE_BLOCKED", NULL, "%s", text);
		else
			ais_refuse(c, 401, "SIGNATURE_MISSING", NULL, "%s",
			    text);
		return;
	}
	if (http_request_header(req, "psu-ip-address", &ip) &&
	    ais_ip_normalise(ip, c->psu_ip) == -1) {
		c->psu_ip[0] = '\0';
		ais_refuse(c, 400, "FORMAT_ERROR", "PSU-IP-Address",
		    "PSU-IP-Address must be an IPv4 or IPv6 address.");
		return;
	}
	if (c->input.status != 0)
		c->refusal = c->input;
}

int
ais_begin(struct http_request *req, struct ais_call *c, const char *sql,
    int roles)
{
	uint8_t		digest[32];
	int		is_bearer;

	c->token = ais_bearer(req, &is_bearer);
	/* Our tokens are UUIDs: anything else is answered at once. */
	if (!is_bearer || !crypto_is_uuid(c->token)) {
		respond_bearer_error(req, 0, c->token);
		c->answered = 1;
		return (0);
	}
	tpp_verify_request(req, &c->verdict);
	ais_settle(req, c, roles);
	crypto_sha256(c->token, strlen(c->token), digest);

	/* The bearer token is still answered first (spec part 7). */
	db_query_begin(&c->q, req, c->refusal.status != 0 ?
	    sql_bearer_only : sql);
	db_param_bin(&c->q, digest, sizeof(digest));
	/* RFC 8705: a token bound to a QWAC needs that QWAC's connection. */
	db_param(&c->q, c->verdict.peer_x5t[0] ? c->verdict.peer_x5t : NULL);
	if (c->refusal.status != 0)
		return (0);
	db_param(&c->q, c->verdict.org_id[0] ? c->verdict.org_id : NULL);
	/* Replay marks only for requests whose signature verified. */
	db_param(&c->q, c->verdict.signed_request &&
	    c->verdict.request_id[0] ? c->verdict.request_id : NULL);
	db_param(&c->q, c->psu_ip[0] ? c->psu_ip : NULL);
	db_param_int(&c->q, ais_cfg.unattended_limit);
	return (1);
}

static void
ais_refused(struct http_request *req, struct ais_call *c, const char *name,
    const char *detail)
{
	const struct ais_refusal_def	*d;
	size_t				 i;

	if (strcmp(name, "token_invalid") == 0 ||
	    strcmp(name, "token_expired") == 0) {
		respond_bearer_error(req, strcmp(name, "token_expired") == 0,
		    c->token);
		return;
	}
	for (i = 0; i < sizeof(ais_refusals) / sizeof(ais_refusals[0]); i++) {
		d = &ais_refusals[i];
		if (strcmp(d->name, name) != 0)
			continue;
		respond_tpp_error(req, d->status, d->code,
		    d->path ? d->path : strcmp(name, "resource_unknown") == 0 ?
		    c->resource_path : NULL, d->text ? d->text : detail);
		return;
	}
	respond_server_error(req, "ais refusal unknown");
}

/* The one place that writes the answer of a call that reached the DB. */
static void
ais_answer(struct http_request *req, struct ais_call *c)
{
	const char	*body;

	if (db_rows(&c->q) != 1) {
		respond_server_error(req, "ais answer");
		return;
	}
	if (!db_is_null(&c->q, 0, 0)) {
		ais_refused(req, c, db_value(&c->q, 0, 0),
		    db_is_null(&c->q, 0, 1) ? "" : db_value(&c->q, 0, 1));
	} else if (c->refusal.status != 0) {
		respond_tpp_error(req, c->refusal.status, c->refusal.code,
		    c->refusal.path[0] ? c->refusal.path : NULL,
		    c->refusal.text);
	} else if (db_is_null(&c->q, 0, 2)) {
		respond_raw(req, 204, NULL, NULL, 0);
	} else {
		body = db_value(&c->q, 0, 2);
		respond_raw(req, 200, "application/json", body, strlen(body));
	}
}

int
ais_finish(struct http_request *req, struct ais_call *c)
{
	if (c->answered)
		return (KORE_RESULT_OK);
	switch (db_query_poll(&c->q)) {
	case DB_PENDING:
		return (KORE_RESULT_RETRY);
	case DB_FAILED:
		respond_server_error(req, "ais query");
		return (KORE_RESULT_OK);
	case DB_READY:
		break;
	}
	ais_answer(req, c);
	return (KORE_RESULT_OK);
}

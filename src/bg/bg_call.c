/*
 * The driver of the standard interface's calls (see bg.h): the headers
 * every call shares, the refusals the SQL functions name and the one
 * answer. The TPP verdict, the bearer token's form and PSU-IP-Address
 * are the contract's (src/api/xs2a_call.c).
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "api/xs2a_call.h"
#include "bg/bg.h"
#include "common/crypto.h"
#include "common/encoding.h"

#define BG_VALUE_MAX	64

static const char sql_bearer_only[] =
    "SELECT refusal, detail, status, body, location "
    "FROM bg_bearer_only($1, $2)";

/* type bg_refusal of migrations/150_bg_consents.sql */
static const struct xs2a_refusal_def	bg_refusals[] = {
	{ "certificate_of_another_tpp", 401, "CERTIFICATE_INVALID", NULL,
	    "The certificate does not belong to the TPP of the access "
	    "token." },
	{ "request_id_used", 400, "FORMAT_ERROR", "X-Request-ID",
	    "X-Request-ID was already used by this TPP." },
	{ "format_error", 400, "FORMAT_ERROR", NULL, NULL },
	{ "redirect_uri_unknown", 400, "FORMAT_ERROR", "TPP-Redirect-URI",
	    NULL },
	{ "parameter_not_supported", 400, "PARAMETER_NOT_SUPPORTED", NULL,
	    NULL },
	{ "period_invalid", 400, "PERIOD_INVALID", "dateFrom", NULL },
	{ "consent_unknown", 403, "CONSENT_UNKNOWN", "Consent-ID",
	    "The consent is unknown to this TPP's access token." },
	{ "consent_invalid", 401, "CONSENT_INVALID", NULL, NULL },
	{ "consent_expired", 401, "CONSENT_EXPIRED", NULL,
	    "The consent has expired." },
	{ "service_blocked", 403, "SERVICE_BLOCKED", NULL, NULL },
	{ "resource_not_covered", 403, "RESOURCE_UNKNOWN", "account-id",
	    "The account is not covered by the consent." },
	{ "resource_unknown", 404, "RESOURCE_UNKNOWN", NULL,
	    "The resource is unknown." },
	{ "authorisation_unknown", 403, "RESOURCE_UNKNOWN", "authorisationId",
	    "The authorisation is unknown for this consent." },
	{ "status_invalid", 409, "STATUS_INVALID", NULL, NULL },
	{ "access_exceeded", 429, "ACCESS_EXCEEDED", NULL,
	    "The access limit without the PSU present is reached for "
	    "today." },
};

static void
bg_call_free(struct http_request *req)
{
	struct bg_call	*c = http_state_get(req);

	xs2a_call_clear(&c->x);
}

struct bg_call *
bg_call_new(struct http_request *req)
{
	struct bg_call	*c;

	c = http_state_create(req, sizeof(struct bg_call), bg_call_free);
	c->x.standard = 1;
	return (c);
}

/* A UUID header: 1 present and valid, 0 absent, -1 malformed. */
static int
bg_uuid_header(struct http_request *req, const char *name, char *out)
{
	const char	*v;

	out[0] = '\0';
	if (!http_request_header(req, name, &v))
		return (0);
	if (!crypto_is_uuid(v))
		return (-1);
	snprintf(out, BG_UUID_LEN + 1, "%s", v);
	return (1);
}

void
bg_request_id(struct http_request *req, struct xs2a_call *x, char *out)
{
	int	r;

	r = bg_uuid_header(req, "x-request-id", out);
	if (r != 1)
		xs2a_input_error(x, 400, "FORMAT_ERROR", "X-Request-ID",
		    r == 0 ? "X-Request-ID is required." :
		    "X-Request-ID must be a UUID.");
}

static void
bg_headers(struct http_request *req, struct bg_call *c,
    enum bg_consent_header consent, char *request_id)
{
	int	r;

	bg_request_id(req, &c->x, request_id);
	if (consent == BG_CONSENT_NONE)
		return;
	r = bg_uuid_header(req, "consent-id", c->consent_id);
	if (r == -1 || (r == 0 && consent == BG_CONSENT_REQUIRED))
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "Consent-ID",
		    r == 0 ? "Consent-ID is required." :
		    "Consent-ID must be a consentId (a UUID).");
}

int
bg_begin(struct http_request *req, struct bg_call *c, const char *sql,
    int roles, enum bg_consent_header consent)
{
	char	request_id[BG_UUID_LEN + 1];

	bg_headers(req, c, consent, request_id);
	if (!xs2a_begin(req, &c->x, sql, sql_bearer_only, roles))
		return (0);
	db_param(&c->x.q, request_id);
	db_param(&c->x.q, c->consent_id[0] ? c->consent_id : NULL);
	return (1);
}

/*
 * The refusals whose path depends on the call: a redirect URI that is
 * not registered (detail: the header), a consent named in the path
 * (consentId) rather than by Consent-ID. 1 when answered.
 */
static int
bg_answer_path_refusal(struct http_request *req, struct bg_call *c)
{
	const char	*name, *header;
	char		 text[XS2A_TEXT_MAX];

	if (db_is_null(&c->x.q, 0, 0))
		return (0);
	name = db_value(&c->x.q, 0, 0);
	if (strcmp(name, "redirect_uri_unknown") == 0) {
		header = db_is_null(&c->x.q, 0, 1) ? "TPP-Redirect-URI" :
		    db_value(&c->x.q, 0, 1);
		snprintf(text, sizeof(text), "%s is not one of the client's "
		    "registered redirect URIs.", header);
		respond_tpp_error(req, 400, "FORMAT_ERROR", header, text);
		return (1);
	}
	if (c->consent_in_path && strcmp(name, "consent_unknown") == 0) {
		respond_tpp_error(req, 403, "CONSENT_UNKNOWN", "consentId",
		    "The consent is unknown to this TPP's access token.");
		return (1);
	}
	return (0);
}

/* The one place that writes the answer of a call that reached the DB. */
static enum db_next
bg_answer(struct http_request *req, void *arg)
{
	struct bg_call	*c = arg;
	const char	*body;
	int		 status;

	if (db_rows(&c->x.q) != 1) {
		respond_server_error(req, "bg answer");
		return (DB_ANSWERED);
	}
	if (bg_answer_path_refusal(req, c) ||
	    xs2a_answer_refusal(req, &c->x, bg_refusals,
	    sizeof(bg_refusals) / sizeof(bg_refusals[0])))
		return (DB_ANSWERED);
	status = db_is_null(&c->x.q, 0, 2) ? 200 :
	    (int)strtol(db_value(&c->x.q, 0, 2), NULL, 10);
	if (status == 201 && c->sca_approach != NULL)
		http_response_header(req, "aspsp-sca-approach",
		    c->sca_approach);
	if (!db_is_null(&c->x.q, 0, 4))
		http_response_header(req, "location",
		    db_value(&c->x.q, 0, 4));
	if (db_is_null(&c->x.q, 0, 3)) {
		respond_raw(req, status == 200 ? 204 : status, NULL, NULL, 0);
		return (DB_ANSWERED);
	}
	body = db_value(&c->x.q, 0, 3);
	respond_raw(req, status, "application/json", body, strlen(body));
	return (DB_ANSWERED);
}

int
bg_finish(struct http_request *req, struct bg_call *c)
{
	if (c->x.answered)
		return (KORE_RESULT_OK);
	return (db_drive(req, &c->x.q, bg_answer, c, "bg query"));
}

static struct bg_param *
bg_param_find(struct bg_param *params, size_t n, const char *name,
    size_t len)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (strlen(params[i].name) == len &&
		    memcmp(params[i].name, name, len) == 0)
			return (&params[i]);
	}
	return (NULL);
}

static void
bg_param_store(struct bg_call *c, struct bg_param *p, const char *raw,
    size_t len)
{
	if (p->seen) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", p->name,
		    "%s is given more than once.", p->name);
		return;
	}
	p->seen = 1;
	if (len >= BG_VALUE_MAX || form_decode(raw, len, p->value,
	    BG_VALUE_MAX) < 0) {
		p->value[0] = '\0';
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", p->name,
		    "%s is malformed.", p->name);
	}
}

/* A name for the error text: letters, digits, "._-", others '?'. */
static void
bg_param_name(const char *raw, size_t len, char *out, size_t outlen)
{
	size_t	i;
	char	ch;

	for (i = 0; i < len && i + 1 < outlen; i++) {
		ch = raw[i];
		out[i] = ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
		    ch == '-') ? ch : '?';
	}
	out[i] = '\0';
}

void
bg_query_params(struct http_request *req, struct bg_call *c,
    struct bg_param *params, size_t n)
{
	const char	*p, *end, *eq;
	char		 name[BG_VALUE_MAX];
	struct bg_param	*param;
	size_t		 nlen;

	p = req->query_string ? req->query_string : "";
	while (*p != '\0') {
		end = p + strcspn(p, "&");
		eq = memchr(p, '=', (size_t)(end - p));
		nlen = (size_t)((eq ? eq : end) - p);
		eq = eq ? eq + 1 : end;
		if ((param = bg_param_find(params, n, p, nlen)) != NULL) {
			bg_param_store(c, param, eq, (size_t)(end - eq));
		} else if (nlen > 0) {
			bg_param_name(p, nlen, name, sizeof(name));
			xs2a_input_error(&c->x, 400, "PARAMETER_NOT_SUPPORTED",
			    NULL, "The query parameter %s is not supported "
			    "here.", name);
		}
		p = *end ? end + 1 : end;
	}
}

int
bg_path_segment(const char *path, const char *prefix, char *out, size_t len)
{
	size_t	plen, slen;

	plen = strlen(prefix);
	if (strncmp(path, prefix, plen) != 0)
		return (-1);
	path += plen;
	slen = strcspn(path, "/");
	if (slen == 0 || slen >= len)
		return (-1);
	memcpy(out, path, slen);
	out[slen] = '\0';
	return (0);
}

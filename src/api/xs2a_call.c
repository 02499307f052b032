/*
 * The part of an XS2A call that the account-information and payment
 * families share (see xs2a_call.h).
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/request.h"
#include "api/respond.h"
#include "api/xs2a_call.h"
#include "common/crypto.h"

void
xs2a_call_clear(struct xs2a_call *c)
{
	db_query_end(&c->q);
	OPENSSL_cleanse(c, sizeof(*c));
}

static void __attribute__((format(printf, 5, 0)))
xs2a_refusal_set(struct xs2a_refusal *r, int status, const char *code,
    const char *path, const char *fmt, va_list ap)
{
	r->status = status;
	snprintf(r->code, sizeof(r->code), "%s", code);
	snprintf(r->path, sizeof(r->path), "%s", path ? path : "");
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
}

static void __attribute__((format(printf, 5, 6)))
xs2a_refuse(struct xs2a_call *c, int status, const char *code,
    const char *path, const char *fmt, ...)
{
	va_list	ap;

	if (c->refusal.status != 0)
		return;
	va_start(ap, fmt);
	xs2a_refusal_set(&c->refusal, status, code, path, fmt, ap);
	va_end(ap);
}

void
xs2a_input_error(struct xs2a_call *c, int status, const char *code,
    const char *path, const char *fmt, ...)
{
	va_list	ap;

	/* The first error found is the one reported. */
	if (c->input.status != 0)
		return;
	va_start(ap, fmt);
	xs2a_refusal_set(&c->input, status, code, path, fmt, ap);
	va_end(ap);
}

enum xs2a_scheme {
	XS2A_NO_TOKEN,
	XS2A_BEARER,
	XS2A_DPOP	/* RFC 9449 7.1: a DPoP-bound token and its proof */
};

/*
 * The token of "Authorization: Bearer <token>" or "DPoP <token>", which
 * the spec's 401 body names. Anything else (no header, another scheme)
 * yields "": a Basic credential sent by mistake is never echoed.
 */
static const char *
xs2a_token(struct http_request *req, enum xs2a_scheme *scheme)
{
	const char	*hdr;

	*scheme = XS2A_NO_TOKEN;
	if (!http_request_header(req, "authorization", &hdr))
		return ("");
	if (strncasecmp(hdr, "Bearer ", 7) == 0) {
		*scheme = XS2A_BEARER;
		hdr += 7;
	} else if (strncasecmp(hdr, "DPoP ", 5) == 0) {
		*scheme = XS2A_DPOP;
		hdr += 5;
	} else
		return ("");
	while (*hdr == ' ')
		hdr++;
	return (hdr);
}

/*
 * The DPoP proof of a DPoP-scheme request: 0 and its binding kept (and a
 * fresh nonce for the client's next proof), or -1 with the 401 sent.
 */
static int
xs2a_dpop(struct http_request *req, struct xs2a_call *c)
{
	struct dpop_proof	p;
	char			nonce[DPOP_NONCE_MAX];

	switch (dpop_check(req, c->token, &p)) {
	case DPOP_NONE:
		respond_dpop_error(req, c->standard, 0, "The DPoP scheme needs "
		    "a DPoP proof header.");
		return (-1);
	case DPOP_NONCE:
		respond_dpop_error(req, c->standard, 1, p.why);
		return (-1);
	case DPOP_INVALID:
		respond_dpop_error(req, c->standard, 0, p.why);
		return (-1);
	case DPOP_OK:
		break;
	}
	(void)snprintf(c->binding, sizeof(c->binding), "%s", p.binding);
	if (dpop_nonce(nonce, sizeof(nonce)) == 0)
		http_response_header(req, "dpop-nonce", nonce);
	return (0);
}

/* One of the roles (TPP_ROLE_* bits) is in the verdict. */
static int
xs2a_role_ok(const struct tpp_verdict *v, int roles)
{
	int	bit;

	for (bit = 1; bit <= roles; bit <<= 1) {
		if ((roles & bit) && tpp_has_role(v, bit))
			return (1);
	}
	return (0);
}

/* Step 1: the verdict, the role, PSU-IP-Address, the input. */
static void
xs2a_settle(struct http_request *req, struct xs2a_call *c, int roles)
{
	const struct tpp_verdict	*v = &c->verdict;
	const char			*ip;
	char				 text[XS2A_TEXT_MAX];

	if (v->status != 0) {
		xs2a_refuse(c, v->status, v->code, NULL, "%s", v->text);
		return;
	}
	if (!xs2a_role_ok(v, roles)) {
		tpp_role_text(v, roles, text, sizeof(text));
		if (v->signed_request)
			xs2a_refuse(c, 403, "SERVICE_BLOCKED", NULL, "%s",
			    text);
		else
			xs2a_refuse(c, 401, "SIGNATURE_MISSING", NULL, "%s",
			    text);
		return;
	}
	if (http_request_header(req, "psu-ip-address", &ip) &&
	    request_ip_normalise(ip, c->psu_ip) == -1) {
		c->psu_ip[0] = '\0';
		xs2a_refuse(c, 400, "FORMAT_ERROR", "PSU-IP-Address",
		    "PSU-IP-Address must be an IPv4 or IPv6 address.");
		return;
	}
	if (c->input.status != 0)
		c->refusal = c->input;
}

int
xs2a_begin(struct http_request *req, struct xs2a_call *c, const char *sql,
    const char *bearer_only_sql, int roles)
{
	uint8_t			digest[32];
	enum xs2a_scheme	scheme;
	const char		*binding;

	c->token = xs2a_token(req, &scheme);
	/* Our tokens are UUIDs: anything else is answered at once. */
	if (scheme == XS2A_NO_TOKEN || !crypto_is_uuid(c->token)) {
		if (c->standard)
			respond_bg_token_error(req, 0);
		else
			respond_bearer_error(req, 0, c->token);
		c->answered = 1;
		return (0);
	}
	if (scheme == XS2A_DPOP && xs2a_dpop(req, c) == -1) {
		c->answered = 1;
		return (0);
	}
	tpp_verify_request(req, &c->verdict);
	xs2a_settle(req, c, roles);
	crypto_sha256(c->token, strlen(c->token), digest);

	/* The bearer token is still answered first (spec part 7). */
	db_query_begin(&c->q, req, c->refusal.status != 0 ?
	    bearer_only_sql : sql);
	db_param_bin(&c->q, digest, sizeof(digest));
	/*
	 * The binding (token_binding_cnf, 20_oauth.sql): a token bound to a
	 * DPoP key needs a proof of it (RFC 9449), one bound to a QWAC that
	 * QWAC's connection (RFC 8705).
	 */
	binding = c->binding[0] ? c->binding :
	    c->verdict.peer_x5t[0] ? c->verdict.peer_x5t : NULL;
	db_param(&c->q, binding);
	if (c->refusal.status != 0)
		return (0);
	db_param(&c->q, c->verdict.org_id[0] ? c->verdict.org_id : NULL);
	/* Replay marks only for requests whose signature verified. */
	db_param(&c->q, c->verdict.signed_request &&
	    c->verdict.request_id[0] ? c->verdict.request_id : NULL);
	db_param(&c->q, c->psu_ip[0] ? c->psu_ip : NULL);
	return (1);
}

static void
xs2a_refused(struct http_request *req, struct xs2a_call *c,
    const struct xs2a_refusal_def *defs, size_t ndefs, const char *name,
    const char *detail)
{
	const struct xs2a_refusal_def	*d;
	const char			*path;
	size_t				 i;

	if (strcmp(name, "token_invalid") == 0 ||
	    strcmp(name, "token_expired") == 0) {
		if (c->standard)
			respond_bg_token_error(req,
			    strcmp(name, "token_expired") == 0);
		else
			respond_bearer_error(req,
			    strcmp(name, "token_expired") == 0, c->token);
		return;
	}
	for (i = 0; i < ndefs; i++) {
		d = &defs[i];
		if (strcmp(d->name, name) != 0)
			continue;
		path = d->path;
		if (path == NULL && strcmp(name, "resource_unknown") == 0)
			path = c->resource_path ? c->resource_path :
			    detail[0] ? detail : NULL;
		respond_tpp_error(req, d->status, d->code, path,
		    d->text ? d->text : detail);
		return;
	}
	respond_server_error(req, "xs2a refusal unknown");
}

int
xs2a_answer_refusal(struct http_request *req, struct xs2a_call *c,
    const struct xs2a_refusal_def *defs, size_t ndefs)
{
	if (!db_is_null(&c->q, 0, 0)) {
		xs2a_refused(req, c, defs, ndefs, db_value(&c->q, 0, 0),
		    db_is_null(&c->q, 0, 1) ? "" : db_value(&c->q, 0, 1));
		return (1);
	}
	if (c->refusal.status != 0) {
		respond_tpp_error(req, c->refusal.status, c->refusal.code,
		    c->refusal.path[0] ? c->refusal.path : NULL,
		    c->refusal.text);
		return (1);
	}
	return (0);
}

char *
xs2a_body(struct http_request *req, struct xs2a_call *c, size_t max,
    size_t *len)
{
	if (req->http_body_length > max) {
		*len = 0;
		xs2a_input_error(c, 413, "FORMAT_ERROR", NULL,
		    "The request body is too large (at most %zu bytes here).",
		    max);
		return (NULL);
	}
	return (request_body(req, max, len));
}

json_t *
xs2a_json_body(struct http_request *req, struct xs2a_call *c, size_t max)
{
	json_t		*doc;
	json_error_t	 jerr;
	char		*body;
	size_t		 len;

	if ((body = xs2a_body(req, c, max, &len)) == NULL)
		return (NULL);
	doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	kore_free(body);
	return (doc);
}

/*
 * The driver shared by the AIS endpoints (see ais.h): TPP verdict, bearer
 * token, the one query, and the answer it decides.
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

#define PAGE_SIZE_MAX	1000

const struct ais_settings *
ais_settings(void)
{
	static struct ais_settings	s;
	static int			loaded;
	int64_t				v;

	if (loaded)
		return (&s);
	v = settings_int("page_size", 50);
	if (v < 1 || v > PAGE_SIZE_MAX)
		fatal("psd2_page_size must be 1..%d", PAGE_SIZE_MAX);
	s.page_size = (int)v;
	v = settings_int("unattended_limit", 4);
	if (v < 0 || v > 1000)
		fatal("psd2_unattended_limit must be 0..1000");
	s.unattended_limit = (int)v;
	loaded = 1;
	return (&s);
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

void
ais_input_error(struct ais_call *c, int status, const char *code,
    const char *path, const char *fmt, ...)
{
	va_list	ap;

	/* The first error found is the one reported. */
	if (c->has_input_error)
		return;
	c->has_input_error = 1;
	c->input_status = status;
	snprintf(c->input_code, sizeof(c->input_code), "%s", code);
	snprintf(c->input_path, sizeof(c->input_path), "%s", path);
	va_start(ap, fmt);
	vsnprintf(c->input_text, sizeof(c->input_text), fmt, ap);
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

int
ais_begin(struct http_request *req, struct ais_call *c, const char *sql,
    int roles)
{
	const struct ais_settings	*s;
	const char			*ip;
	uint8_t				 digest[32];
	int				 is_bearer;

	s = ais_settings();
	c->token = ais_bearer(req, &is_bearer);
	/* Our tokens are UUIDs: anything else is answered at once. */
	if (!is_bearer || !crypto_is_uuid(c->token)) {
		respond_bearer_error(req, 0, c->token);
		return (-1);
	}
	tpp_verify_request(req, &c->verdict);
	c->roles = roles;
	crypto_sha256(c->token, strlen(c->token), digest);

	db_query_begin(&c->q, req, sql);
	db_param_bin(&c->q, digest, sizeof(digest));
	db_param(&c->q, c->verdict.status == 0 ? "true" : "false");
	db_param(&c->q, ais_role_ok(&c->verdict, roles) ? "true" : "false");
	db_param(&c->q, c->verdict.org_id[0] ? c->verdict.org_id : NULL);
	/* Replay marks only for requests whose signature verified. */
	db_param(&c->q, c->verdict.status == 0 && c->verdict.signed_request &&
	    c->verdict.request_id[0] ? c->verdict.request_id : NULL);
	/* RFC 8705: a token bound to a QWAC needs that QWAC's connection. */
	db_param(&c->q, c->verdict.peer_x5t[0] ? c->verdict.peer_x5t : NULL);
	db_param(&c->q, http_request_header(req, "psu-ip-address", &ip) &&
	    *ip != '\0' ? "true" : "false");
	db_param_int(&c->q, s->unattended_limit);
	return (0);
}

void
ais_param_input_ok(struct ais_call *c)
{
	db_param(&c->q, c->has_input_error ? "false" : "true");
}

static void
ais_answer(struct http_request *req, struct ais_call *c)
{
	const char	*code, *path, *body;
	char		 text[256];
	int		 status;

	if (db_rows(&c->q) != 1 || db_is_null(&c->q, 0, 0)) {
		respond_server_error(req, "ais answer");
		return;
	}
	status = (int)db_int(&c->q, 0, 0);
	code = db_is_null(&c->q, 0, 1) ? "" : db_value(&c->q, 0, 1);
	path = db_is_null(&c->q, 0, 2) ? NULL : db_value(&c->q, 0, 2);
	body = db_value(&c->q, 0, 4);

	if (status == 200) {
		respond_raw(req, 200, "application/json", body, strlen(body));
	} else if (status == 204) {
		respond_raw(req, 204, NULL, NULL, 0);
	} else if (strcmp(code, "bearer_invalid") == 0 ||
	    strcmp(code, "bearer_expired") == 0) {
		respond_bearer_error(req, code[7] == 'e', c->token);
	} else if (strcmp(code, "verdict") == 0) {
		respond_tpp_error(req, c->verdict.status, c->verdict.code, NULL,
		    c->verdict.text);
	} else if (strcmp(code, "SERVICE_BLOCKED") == 0) {
		tpp_role_text(&c->verdict, c->roles, text, sizeof(text));
		respond_tpp_error(req, status, code, NULL, text);
	} else if (strcmp(code, "input") == 0) {
		respond_tpp_error(req, c->input_status, c->input_code,
		    c->input_path[0] ? c->input_path : NULL, c->input_text);
	} else {
		respond_tpp_error(req, status, code, path,
		    db_value(&c->q, 0, 3));
	}
}

int
ais_finish(struct http_request *req, struct ais_call *c)
{
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

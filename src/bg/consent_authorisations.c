/*
 * The authorisation sub-resources of a consent (src/bg/README.md "SCA of
 * a consent"): POST /xs2a/v1/consents/{consentId}/authorisations starts
 * one (body empty or {}; the approach follows TPP-Redirect-URI), GET
 * lists their ids, GET .../authorisations/{authorisationId} reads its
 * scaStatus. One query each (32_bg_consents.sql).
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include <jansson.h>

#include "bg/consents.h"
#include "common/crypto.h"
#include "tpp/tpp.h"

int	bg_consent_authorisations(struct http_request *);

#define AUTH_BODY_MAX	1024
#define AUTH_SEGMENT	"/authorisations/"

static const char sql_start[] =
    "SELECT refusal, detail, status, body, location "
    "FROM bg_consent_authorisation_start($1, $2, $3, $4, $5, $6, $7, $8, "
    "$9, $10, $11)";
static const char sql_read[] =
    "SELECT refusal, detail, status, body, location "
    "FROM bg_consent_authorisations($1, $2, $3, $4, $5, $6, $7, $8, $9, "
    "$10)";

/* The body of a start: nothing, or an empty JSON object. */
static void
auth_body(struct http_request *req, struct bg_call *c)
{
	json_t		*doc;

	if (req->http_body_length == 0)
		return;
	doc = xs2a_json_body(req, &c->x, AUTH_BODY_MAX);
	if (!json_is_object(doc) || json_object_size(doc) != 0)
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "body",
		    "The body of a start of the authorisation is empty or "
		    "{}.");
	json_decref(doc);
}

static void
auth_start(struct http_request *req, struct bg_call *c, const char *id)
{
	struct bg_redirects	r;
	char			base[BG_URL_MAX];

	c->sca_approach = "REDIRECT";
	auth_body(req, c);
	bg_redirect_headers(req, c, &r);
	(void)bg_base_url(req, c, base, sizeof(base));
	if (!bg_begin(req, c, sql_start, TPP_ROLE_AI, BG_CONSENT_NONE))
		return;
	db_param(&c->x.q, id);
	db_param(&c->x.q, r.ok);
	db_param(&c->x.q, r.nok);
	db_param(&c->x.q, base);
}

/* {authorisationId} of the path, or NULL (none, or no UUID). */
static const char *
auth_path_id(const char *path)
{
	const char	*p;

	if ((p = strstr(path, AUTH_SEGMENT)) == NULL)
		return (NULL);
	p += strlen(AUTH_SEGMENT);
	return (crypto_is_uuid(p) ? p : NULL);
}

static void
auth_read(struct http_request *req, struct bg_call *c, const char *id)
{
	int	one;

	one = strstr(req->path, AUTH_SEGMENT) != NULL;
	if (!bg_begin(req, c, sql_read, TPP_ROLE_AI, BG_CONSENT_NONE))
		return;
	db_param(&c->x.q, id);
	db_param(&c->x.q, one ? "true" : "false");
	db_param(&c->x.q, one ? auth_path_id(req->path) : NULL);
}

int
bg_consent_authorisations(struct http_request *req)
{
	struct bg_call	*c;
	char		 id[BG_UUID_LEN + 1];
	const char	*known;

	if (!http_state_exists(req)) {
		if (!bg_method(req, strstr(req->path, AUTH_SEGMENT) != NULL ?
		    HTTP_METHOD_GET : HTTP_METHOD_GET | HTTP_METHOD_POST))
			return (KORE_RESULT_OK);
		c = bg_call_new(req);
		c->consent_in_path = 1;
		/* An id that is no UUID is no consent of this TPP's. */
		known = bg_consent_path_id(req, id) == 0 ? id : NULL;
		if (req->method == HTTP_METHOD_POST)
			auth_start(req, c, known);
		else
			auth_read(req, c, known);
	}
	return (bg_finish(req, http_state_get(req)));
}

/*
 * The consent resource of the standard interface (src/bg/README.md
 * "Consents"): POST /xs2a/v1/consents creates one (and, unless the TPP
 * prefers to start it explicitly, its authorisation); GET
 * /xs2a/v1/consents/{consentId} reads it, GET .../status its status,
 * DELETE ends it. One query each (32_bg_consents.sql).
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "ais/ais.h"
#include "bg/consents.h"
#include "common/config.h"
#include "tpp/tpp.h"

int	bg_consents_create(struct http_request *);
int	bg_consent(struct http_request *);

static const char sql_create[] =
    "SELECT refusal, detail, status, body, location "
    "FROM bg_consent_create($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
    "$12, $13, $14, $15, $16, $17, $18)";
static const char sql_get[] =
    "SELECT refusal, detail, status, body, location "
    "FROM bg_consent_get($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
static const char sql_delete[] =
    "SELECT refusal, detail, status, body, location "
    "FROM bg_consent_delete($1, $2, $3, $4, $5, $6, $7, $8)";

/* Every authorisation approach is announced as REDIRECT (the OAuth
   approach is subsumed by it in the guidelines' ASPSP-SCA-Approach). */
#define BG_SCA_APPROACH	"REDIRECT"

static void
consents_create_start(struct http_request *req, struct bg_call *c)
{
	struct bg_consent_input	 in;
	char			 base[BG_URL_MAX];

	c->sca_approach = BG_SCA_APPROACH;
	bg_consent_input(req, c, &in);
	(void)bg_base_url(req, c, base, sizeof(base));
	if (bg_begin(req, c, sql_create, TPP_ROLE_AI, BG_CONSENT_NONE)) {
		db_param(&c->x.q, in.kind);
		db_param(&c->x.q, in.access);
		db_param(&c->x.q, in.recurring ? "true" : "false");
		db_param(&c->x.q, in.valid_until);
		db_param_int(&c->x.q, in.frequency);
		db_param(&c->x.q, in.redirects.ok);
		db_param(&c->x.q, in.redirects.nok);
		db_param(&c->x.q, in.explicit_start ? "true" : "false");
		db_param_int(&c->x.q, app_cfg.consent_max_days);
		db_param_int(&c->x.q, ais_settings()->unattended_limit);
		db_param(&c->x.q, base);
	}
	bg_consent_input_clear(&in);
}

int
bg_consents_create(struct http_request *req)
{
	if (!http_state_exists(req)) {
		if (!bg_method(req, HTTP_METHOD_POST))
			return (KORE_RESULT_OK);
		consents_create_start(req, bg_call_new(req));
	}
	return (bg_finish(req, http_state_get(req)));
}

static int
consent_path_is_status(const char *path)
{
	size_t	len;

	len = strlen(path);
	return (len > 7 && strcmp(path + len - 7, "/status") == 0);
}

static void
consent_start(struct http_request *req, struct bg_call *c)
{
	char	id[BG_UUID_LEN + 1];
	int	known, del;

	c->consent_in_path = 1;
	known = bg_consent_path_id(req, id) == 0;
	del = req->method == HTTP_METHOD_DELETE;
	if (!bg_begin(req, c, del ? sql_delete : sql_get, TPP_ROLE_AI,
	    BG_CONSENT_NONE))
		return;
	/* An id that is no UUID is no consent of this TPP's either. */
	db_param(&c->x.q, known ? id : NULL);
	if (del)
		return;
	db_param(&c->x.q, consent_path_is_status(req->path) ? "status" :
	    "consent");
	db_param_int(&c->x.q, ais_settings()->unattended_limit);
}

/* GET and DELETE /xs2a/v1/consents/{consentId}, GET .../status. */
int
bg_consent(struct http_request *req)
{
	if (!http_state_exists(req)) {
		if (!bg_method(req, consent_path_is_status(req->path) ?
		    HTTP_METHOD_GET : HTTP_METHOD_GET | HTTP_METHOD_DELETE))
			return (KORE_RESULT_OK);
		consent_start(req, bg_call_new(req));
	}
	return (bg_finish(req, http_state_get(req)));
}

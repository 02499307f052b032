/*
 * GET and DELETE /auth/v1/psd2/consents/current: the TPP reads the
 * consent behind its access token, or ends it (terminatedByTpp, 204);
 * the consent's tokens stop working at once.
 */
#include <sys/types.h>

#include <kore.h>
#include <http.h>

#include "ais/ais.h"

int	ais_consent_current(struct http_request *);

static const char sql_consent[] =
    "SELECT refusal, detail, body "
    "FROM ais_consent_current($1, $2, $3, $4, $5, $6, $7)";

int
ais_consent_current(struct http_request *req)
{
	struct xs2a_call	*c;

	if (!http_state_exists(req)) {
		c = ais_call_new(req);
		/* An AIS or a confirmation-of-funds consent. */
		if (ais_begin(req, c, sql_consent, TPP_ROLE_AI | TPP_ROLE_IC))
			db_param(&c->q, req->method == HTTP_METHOD_DELETE ?
			    "true" : "false");
	}
	return (ais_finish(req, http_state_get(req)));
}

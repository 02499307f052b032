/*
 * GET /auth/v1/psd2/account/account-list (spec 4.4): the accounts of the
 * token's consent.
 */
#include <sys/types.h>

#include <kore.h>
#include <http.h>

#include "ais/ais.h"

int	ais_account_list(struct http_request *);

static const char sql_list[] =
    "SELECT refusal, detail, body "
    "FROM ais_account_list($1, $2, $3, $4, $5, $6)";

int
ais_account_list(struct http_request *req)
{
	struct xs2a_call	*c;

	if (!http_state_exists(req)) {
		c = ais_call_new(req);
		(void)ais_begin(req, c, sql_list, TPP_ROLE_AI);
	}
	return (ais_finish(req, http_state_get(req)));
}

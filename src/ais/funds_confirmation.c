/*
 * POST /auth/v1/psd2/funds-confirmations (Berlin Group confirmation of
 * funds, scope FUND_AVAILABILITY): the body of funds_input.h
 *   -> {"fundsAvailable": true|false}
 * compared in integer minor units in PostgreSQL.
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "ais/ais.h"
#include "ais/funds_input.h"

int	ais_funds_confirmation(struct http_request *);

static const char sql_funds[] =
    "SELECT refusal, detail, body "
    "FROM ais_funds_confirmation($1, $2, $3, $4, $5, $6, $7, $8, $9)";

int
ais_funds_confirmation(struct http_request *req)
{
	struct xs2a_call		*c;
	struct funds_input	 in;

	if (!http_state_exists(req)) {
		c = ais_call_new(req);
		c->resource_path = "account.iban";
		memset(&in, 0, sizeof(in));
		funds_input_parse(req, c, &in);
		if (ais_begin(req, c, sql_funds, TPP_ROLE_IC)) {
			db_param(&c->q, in.iban);
			db_param(&c->q, in.currency);
			db_param_int(&c->q, in.minor);
		}
	}
	return (ais_finish(req, http_state_get(req)));
}

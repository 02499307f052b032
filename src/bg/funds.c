/*
 * POST /xs2a/v1/funds-confirmations (src/bg/README.md "Funds
 * confirmation"): the body of the contract's confirmation of funds
 * (src/ais/funds_input.h) -> {"fundsAvailable": true|false}. The token
 * must carry FUND_AVAILABILITY, the certificate the role PSP_IC; a
 * Consent-ID, if sent, must name the token's consent. The SQL is
 * bg_funds_confirmation (src/db/functions/34_bg_accounts.sql), which
 * runs the contract's check (ais_funds_check).
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "ais/funds_input.h"
#include "bg/bg.h"

int	bg_funds_confirmation(struct http_request *);

static const char sql_funds[] =
    "SELECT refusal, detail, status, body, location "
    "FROM bg_funds_confirmation($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

int
bg_funds_confirmation(struct http_request *req)
{
	struct bg_call		*c;
	struct funds_input	 in;

	if (!http_state_exists(req)) {
		if (!bg_method(req, HTTP_METHOD_POST))
			return (KORE_RESULT_OK);
		c = bg_call_new(req);
		memset(&in, 0, sizeof(in));
		funds_input_parse(req, &c->x, &in);
		bg_query_params(req, c, NULL, 0);
		if (bg_begin(req, c, sql_funds, TPP_ROLE_IC,
		    BG_CONSENT_OPTIONAL)) {
			db_param(&c->x.q, in.iban);
			db_param(&c->x.q, in.currency);
			db_param_int(&c->x.q, in.minor);
		}
	}
	return (bg_finish(req, http_state_get(req)));
}

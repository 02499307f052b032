/*
 * GET /auth/v1/psd2/account/account-balance (spec 4.5): a GET whose JSON
 * body {"referenceId": "<resourceId>"} names the account (Kore patch 0004
 * makes the body of a GET readable).
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include <jansson.h>

#include "ais/ais.h"

int	ais_account_balance(struct http_request *);

/* Far more than {"referenceId": "<64 characters>"} needs. */
#define BALANCE_BODY_MAX	4096

static const char sql_balance[] =
    "SELECT refusal, detail, body "
    "FROM ais_account_balance($1, $2, $3, $4, $5, $6, $7)";

/* The referenceId of the body, or NULL with the input error recorded. */
static char *
balance_reference(struct http_request *req, struct xs2a_call *c)
{
	json_t		*doc, *ref;
	char		*out;

	out = NULL;
	doc = xs2a_json_body(req, c, BALANCE_BODY_MAX);
	if (!json_is_object(doc)) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", "body",
		    "The body must be a JSON object {\"referenceId\": "
		    "\"<resourceId>\"}.");
	} else if ((ref = json_object_get(doc, "referenceId")) == NULL) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", "referenceId",
		    "referenceId is required.");
	} else if (!json_is_string(ref)) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", "referenceId",
		    "referenceId must be a string.");
	} else {
		out = kore_strdup(json_string_value(ref));
	}
	json_decref(doc);
	return (out);
}

int
ais_account_balance(struct http_request *req)
{
	struct xs2a_call	*c;
	char		*ref;

	if (!http_state_exists(req)) {
		c = ais_call_new(req);
		c->resource_path = "referenceId";
		ref = balance_reference(req, c);
		if (ais_begin(req, c, sql_balance, TPP_ROLE_AI))
			db_param(&c->q, ref);
		kore_free(ref);
	}
	return (ais_finish(req, http_state_get(req)));
}

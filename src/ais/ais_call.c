/*
 * The driver of the AIS endpoints (see ais.h): their refusals, their
 * parameter $6 and the body of their answer; the rest of the call is
 * shared with the payments (src/api/xs2a_call.c).
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "ais/ais.h"
#include "api/respond.h"
#include "api/xs2a_call.h"
#include "common/settings.h"

/* The refusal path: only the bearer check, same columns as the data. */
static const char sql_bearer_only[] =
    "SELECT refusal, detail, body FROM ais_bearer_only($1, $2)";

/*
 * The refusals the SQL functions name (type ais_refusal of
 * src/db/migrations/060_ais_one_way.sql) and how each is answered
 * (struct xs2a_refusal_def).
 */
static const struct xs2a_refusal_def	ais_refusals[] = {
	{ "certificate_of_another_tpp", 401, "CERTIFICATE_INVALID", NULL,
	    "The certificate does not belong to the TPP of the access "
	    "token." },
	{ "request_id_used", 400, "FORMAT_ERROR", "x-request-id",
	    "x-request-id already used" },
	{ "consent_scope", 401, "CONSENT_INVALID", NULL, NULL },
	{ "period_invalid", 400, "PERIOD_INVALID", "dateFrom", NULL },
	{ "resource_unknown", 404, "RESOURCE_UNKNOWN", NULL,
	    "The account is unknown or not covered by the consent." },
	{ "access_exceeded", 429, "ACCESS_EXCEEDED", NULL,
	    "The access limit without the PSU present is reached for "
	    "today." },
};

static struct ais_settings	ais_cfg;

void
ais_settings_load(void)
{
	ais_cfg.page_size = (int)settings_int("page_size", 50);
	ais_cfg.unattended_limit = (int)settings_int("unattended_limit", 4);
}

const struct ais_settings *
ais_settings(void)
{
	return (&ais_cfg);
}

static void
ais_call_free(struct http_request *req)
{
	xs2a_call_clear(http_state_get(req));
}

struct xs2a_call *
ais_call_new(struct http_request *req)
{
	return (http_state_create(req, sizeof(struct xs2a_call),
	    ais_call_free));
}

int
ais_begin(struct http_request *req, struct xs2a_call *c, const char *sql,
    int roles)
{
	if (!xs2a_begin(req, c, sql, sql_bearer_only, roles))
		return (0);
	db_param_int(&c->q, ais_cfg.unattended_limit);
	return (1);
}

/* The one place that writes the answer of a call that reached the DB. */
static enum db_next
ais_answer(struct http_request *req, void *arg)
{
	struct xs2a_call	*c = arg;
	const char		*body;

	if (db_rows(&c->q) != 1) {
		respond_server_error(req, "ais answer");
		return (DB_ANSWERED);
	}
	if (xs2a_answer_refusal(req, c, ais_refusals,
	    sizeof(ais_refusals) / sizeof(ais_refusals[0])))
		return (DB_ANSWERED);
	if (db_is_null(&c->q, 0, 2)) {
		respond_raw(req, 204, NULL, NULL, 0);
	} else {
		body = db_value(&c->q, 0, 2);
		respond_raw(req, 200, "application/json", body, strlen(body));
	}
	return (DB_ANSWERED);
}

int
ais_finish(struct http_request *req, struct xs2a_call *c)
{
	if (c->answered)
		return (KORE_RESULT_OK);
	return (db_drive(req, &c->q, ais_answer, c, "ais query"));
}

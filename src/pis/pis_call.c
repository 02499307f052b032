/*
 * The driver of the payment endpoints (see pis.h): their refusals, the
 * status column of their answer and the wake-up after a 201; the rest of
 * the call is shared with AIS (src/api/xs2a_call.c).
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/settings.h"
#include "pis/pis.h"

static const char sql_bearer_only[] =
    "SELECT refusal, detail, status, body FROM pis_bearer_only($1, $2)";

/* The refusals of pis_refusal (migrations/070_pis.sql), answered so. */
static const struct xs2a_refusal_def	pis_refusals[] = {
	{ "certificate_of_another_tpp", 401, "CERTIFICATE_INVALID", NULL,
	    "The certificate does not belong to the TPP of the access "
	    "token." },
	{ "request_id_used", 400, "FORMAT_ERROR", "x-request-id",
	    "x-request-id already used" },
	{ "consent_scope", 401, "CONSENT_INVALID", NULL, NULL },
	{ "resource_unknown", 404, "RESOURCE_UNKNOWN", NULL,
	    "The payment or authorisation is unknown." },
	{ "account_unknown", 403, "RESOURCE_UNKNOWN", "debtorAccount.iban",
	    "The debtor account is not among the accounts of the consent." },
	{ "debtor_currency", 400, "FORMAT_ERROR", "debtorAccount.iban",
	    "SEPA credit transfers need a EUR debtor account." },
	{ "redirect_uri", 400, "FORMAT_ERROR", "TPP-Redirect-URI", NULL },
	{ "nok_redirect_uri", 400, "FORMAT_ERROR", "TPP-Nok-Redirect-URI",
	    "TPP-Nok-Redirect-URI is not a redirect URI registered for this "
	    "client." },
	{ "cancellation_invalid", 405, "CANCELLATION_INVALID", NULL,
	    "The payment can no longer be cancelled: its authorisation is "
	    "final." },
	{ "status_invalid", 409, "STATUS_INVALID", NULL, NULL },
	{ "execution_date_invalid", 400, "EXECUTION_DATE_INVALID",
	    "requestedExecutionDate", NULL },
};

static struct pis_settings	pis_cfg;

void
pis_settings_load(void)
{
	pis_cfg.sca_seconds = (int)settings_int("pis_sca_seconds", 120);
	pis_cfg.sweep_ms = (int)settings_int("pis_sweep_ms", 1000);
	pis_cfg.redirect_seconds = (int)settings_int("pis_redirect_seconds",
	    600);
}

const struct pis_settings *
pis_settings(void)
{
	return (&pis_cfg);
}

static void
pis_call_free(struct http_request *req)
{
	struct pis_call	*c = http_state_get(req);

	kore_free(c->answer_body);
	kore_free(c->answer_location);
	xs2a_call_clear(&c->x);
}

struct pis_call *
pis_call_new(struct http_request *req)
{
	return (http_state_create(req, sizeof(struct pis_call),
	    pis_call_free));
}

int
pis_begin(struct http_request *req, struct pis_call *c, const char *sql)
{
	return (xs2a_begin(req, &c->x, sql, sql_bearer_only, TPP_ROLE_PI));
}

/* The one place that writes the answer of a call that reached the DB. */
static void
pis_answer(struct http_request *req, struct pis_call *c)
{
	const char	*body;
	int		 status;

	if (db_rows(&c->x.q) != 1) {
		respond_server_error(req, "pis answer");
		return;
	}
	if (xs2a_answer_refusal(req, &c->x, pis_refusals,
	    sizeof(pis_refusals) / sizeof(pis_refusals[0])))
		return;
	status = (int)db_int(&c->x.q, 0, 2);
	if (db_is_null(&c->x.q, 0, 3)) {
		respond_raw(req, status, NULL, NULL, 0);
		return;
	}
	body = db_value(&c->x.q, 0, 3);
	respond_raw(req, status, "application/json", body, strlen(body));
}

static const char sql_wake[] = "SELECT pis_wake($1)";

/*
 * A committed initiation (201): keeps the answer and starts pis_wake()
 * for its payment (the id ends the Location). 0 when it did.
 */
static int
pis_wake_begin(struct http_request *req, struct pis_call *c)
{
	const char	*loc, *id;

	if (db_rows(&c->x.q) != 1 || !db_is_null(&c->x.q, 0, 0) ||
	    c->x.refusal.status != 0 || db_is_null(&c->x.q, 0, 2) ||
	    db_int(&c->x.q, 0, 2) != 201 || db_is_null(&c->x.q, 0, 1) ||
	    db_is_null(&c->x.q, 0, 3))
		return (-1);
	loc = db_value(&c->x.q, 0, 1);
	if ((id = strrchr(loc, '/')) == NULL)
		return (-1);
	c->answer_location = kore_strdup(loc);
	c->answer_body = kore_strdup(db_value(&c->x.q, 0, 3));
	c->waking = 1;
	db_query_begin(&c->x.q, req, sql_wake);
	db_param(&c->x.q, c->answer_location + (id + 1 - loc));
	return (0);
}

/*
 * The standard's ASPSP-SCA-Approach of a 201: the approach pis_wake()
 * returned. Left out only when the wake-up failed (the payment stands).
 */
static void
pis_answer_approach(struct http_request *req, struct pis_call *c)
{
	const char	*approach;

	if (!c->x.standard || db_failed(&c->x.q) || db_rows(&c->x.q) != 1 ||
	    db_is_null(&c->x.q, 0, 0))
		return;
	approach = db_value(&c->x.q, 0, 0);
	if (strcmp(approach, "decoupled") == 0)
		http_response_header(req, "aspsp-sca-approach", "DECOUPLED");
	else if (strcmp(approach, "redirect") == 0)
		http_response_header(req, "aspsp-sca-approach", "REDIRECT");
}

static void
pis_answer_created(struct http_request *req, struct pis_call *c)
{
	pis_answer_approach(req, c);
	http_response_header(req, "location", c->answer_location);
	respond_raw(req, 201, "application/json", c->answer_body,
	    strlen(c->answer_body));
}

/* Each result of the call's query, failures included (see pis_finish). */
static enum db_next
pis_step(struct http_request *req, void *arg)
{
	struct pis_call	*c = arg;

	if (c->waking) {
		/* The payment is committed whatever the wake-up did. */
		if (db_failed(&c->x.q))
			kore_log(LOG_NOTICE, "pis: wake-up for %s not sent; "
			    "the daemons' sweep finds it", c->answer_location);
		pis_answer_created(req, c);
		return (DB_ANSWERED);
	}
	if (db_failed(&c->x.q)) {
		respond_server_error(req, "pis query");
		return (DB_ANSWERED);
	}
	if (pis_wake_begin(req, c) == 0)
		return (DB_QUERY);
	pis_answer(req, c);
	return (DB_ANSWERED);
}

int
pis_finish(struct http_request *req, struct pis_call *c)
{
	if (c->x.answered)
		return (KORE_RESULT_OK);
	return (db_drive(req, &c->x.q, pis_step, c, NULL));
}

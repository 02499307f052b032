/*
 * GET /xs2a/v1/accounts/{account-id}/transactions and
 * /xs2a/v1/accounts/{account-id}/transactions/{transactionId}
 * (src/bg/README.md "Account information"). The query takes
 * bookingStatus (booked, pending, both; required), dateFrom (required),
 * dateTo, withBalance and pageIndex; entryReferenceFrom, deltaList,
 * bookingStatus information or all and any other parameter are refused
 * (PARAMETER_NOT_SUPPORTED). The SQL is
 * src/db/functions/34_bg_accounts.sql.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kore.h>
#include <http.h>

#include "ais/ais.h"
#include "bg/account_input.h"
#include "bg/bg.h"

int	bg_transactions(struct http_request *);
int	bg_transaction_details(struct http_request *);

#define TX_VALUE_MAX	64
#define TX_PAGE_DIGITS	9
#define TX_DATE_LEN	11

static const char sql_transactions[] =
    "SELECT refusal, detail, status, body, location "
    "FROM bg_transactions($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
    "$12, $13, $14, $15)";

static const char sql_details[] =
    "SELECT refusal, detail, status, body, location "
    "FROM bg_transaction_details($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

enum tx_param {
	TX_BOOKING,
	TX_FROM,
	TX_TO,
	TX_WITH_BALANCE,
	TX_PAGE,
	TX_NPARAMS
};

struct tx_query {
	char		values[TX_NPARAMS][TX_VALUE_MAX];
	struct bg_param	params[TX_NPARAMS];
	int		with_balance;
	long		page_index;
};

static void
tx_query_init(struct tx_query *tq)
{
	static const char	*names[TX_NPARAMS] = { "bookingStatus",
				    "dateFrom", "dateTo", "withBalance",
				    "pageIndex" };
	int			 i;

	memset(tq, 0, sizeof(*tq));
	for (i = 0; i < TX_NPARAMS; i++) {
		tq->params[i].name = names[i];
		tq->params[i].value = tq->values[i];
	}
}

static void
tx_booking(struct bg_call *c, const struct bg_param *p)
{
	if (!p->seen) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "bookingStatus",
		    "bookingStatus is required: booked, pending or both.");
	} else if (strcmp(p->value, "information") == 0 ||
	    strcmp(p->value, "all") == 0) {
		/* Values of the guidelines this bank does not offer. */
		xs2a_input_error(&c->x, 400, "PARAMETER_NOT_SUPPORTED",
		    "bookingStatus", "bookingStatus %s is not supported: "
		    "booked, pending or both.", p->value);
	} else if (strcmp(p->value, "booked") != 0 &&
	    strcmp(p->value, "pending") != 0 &&
	    strcmp(p->value, "both") != 0) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "bookingStatus",
		    "bookingStatus must be booked, pending or both.");
	}
}

/* Today in UTC, as the service's date (YYYY-MM-DD). */
static void
tx_today(char *out, size_t len)
{
	struct tm	tm;
	time_t		now;

	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(out, len, "%Y-%m-%d", &tm);
}

static void
tx_dates(struct bg_call *c, const struct tx_query *tq)
{
	const struct bg_param	*from = &tq->params[TX_FROM];
	const struct bg_param	*to = &tq->params[TX_TO];
	char			 today[TX_DATE_LEN];

	if (!from->seen) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "dateFrom",
		    "dateFrom is required (YYYY-MM-DD).");
		return;
	}
	if (!ais_date_valid(from->value)) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "dateFrom",
		    "dateFrom must be a date YYYY-MM-DD.");
		return;
	}
	if (to->seen && !ais_date_valid(to->value)) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "dateTo",
		    "dateTo must be a date YYYY-MM-DD.");
		return;
	}
	tx_today(today, sizeof(today));
	/* Dates YYYY-MM-DD compare as strings. */
	if (strcmp(from->value, to->seen ? to->value : today) > 0)
		xs2a_input_error(&c->x, 400, "PERIOD_INVALID", "dateFrom",
		    "dateFrom %s is after dateTo %s.", from->value,
		    to->seen ? to->value : today);
}

static void
tx_page(struct bg_call *c, struct tx_query *tq)
{
	const struct bg_param	*p = &tq->params[TX_PAGE];
	size_t			 len;

	if (!p->seen)
		return;
	len = strlen(p->value);
	if (len == 0 || len > TX_PAGE_DIGITS ||
	    strspn(p->value, "0123456789") != len) {
		xs2a_input_error(&c->x, 400, "FORMAT_ERROR", "pageIndex",
		    "pageIndex must be an integer from 0 to 999999999.");
		return;
	}
	tq->page_index = strtol(p->value, NULL, 10);
}

static void
tx_parse(struct http_request *req, struct bg_call *c, struct tx_query *tq)
{
	tx_query_init(tq);
	bg_query_params(req, c, tq->params, TX_NPARAMS);
	tx_booking(c, &tq->params[TX_BOOKING]);
	tx_dates(c, tq);
	tq->with_balance = bg_with_balance(c, &tq->params[TX_WITH_BALANCE]);
	tx_page(c, tq);
}

int
bg_transactions(struct http_request *req)
{
	struct bg_call	*c;
	struct tx_query	 tq;
	char		 account[BG_ID_MAX + 1];

	if (!http_state_exists(req)) {
		if (!bg_method(req, HTTP_METHOD_GET))
			return (KORE_RESULT_OK);
		c = bg_call_new(req);
		bg_account_id(req, account, sizeof(account));
		tx_parse(req, c, &tq);
		if (bg_begin(req, c, sql_transactions, TPP_ROLE_AI,
		    BG_CONSENT_REQUIRED)) {
			db_param_int(&c->x.q, ais_settings()->unattended_limit);
			db_param(&c->x.q, account[0] ? account : NULL);
			db_param(&c->x.q, tq.values[TX_BOOKING]);
			db_param(&c->x.q, tq.values[TX_FROM]);
			db_param(&c->x.q, tq.params[TX_TO].seen ?
			    tq.values[TX_TO] : NULL);
			db_param(&c->x.q, tq.with_balance ? "true" : "false");
			db_param_int(&c->x.q, tq.page_index);
			db_param_int(&c->x.q, ais_settings()->page_size);
		}
	}
	return (bg_finish(req, http_state_get(req)));
}

/* The {transactionId} segment when it can be one at all, else "". */
static void
tx_transaction_id(struct http_request *req, const char *account, char *out,
    size_t len)
{
	char	prefix[sizeof(BG_ACCOUNTS_PREFIX) + BG_ID_MAX + 16];

	out[0] = '\0';
	if (account[0] == '\0')
		return;
	snprintf(prefix, sizeof(prefix), "%s%s/transactions/",
	    BG_ACCOUNTS_PREFIX, account);
	if (bg_path_segment(req->path, prefix, out, len) == -1 ||
	    !ais_resource_id_valid(out))
		out[0] = '\0';
}

int
bg_transaction_details(struct http_request *req)
{
	struct bg_call	*c;
	char		 account[BG_ID_MAX + 1], tx[BG_ID_MAX + 1];

	if (!http_state_exists(req)) {
		if (!bg_method(req, HTTP_METHOD_GET))
			return (KORE_RESULT_OK);
		c = bg_call_new(req);
		bg_account_id(req, account, sizeof(account));
		tx_transaction_id(req, account, tx, sizeof(tx));
		bg_query_params(req, c, NULL, 0);
		if (bg_begin(req, c, sql_details, TPP_ROLE_AI,
		    BG_CONSENT_REQUIRED)) {
			db_param_int(&c->x.q, ais_settings()->unattended_limit);
			db_param(&c->x.q, account[0] ? account : NULL);
			/* "" names no transaction: 404 after the account. */
			db_param(&c->x.q, tx);
		}
	}
	return (bg_finish(req, http_state_get(req)));
}

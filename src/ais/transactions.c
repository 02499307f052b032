/*
 * GET /auth/v1/psd2/account/{account-id}/transactions (spec 4.6).
 * account-id is the account's resourceId; dateFrom, dateTo (YYYY-MM-DD,
 * inclusive, default the last 90 days up to today) and pageIndex
 * (zero-based, default 0) come from the query, which is parsed here from
 * the raw query string so that a malformed value is reported, never
 * silently dropped.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "ais/ais.h"
#include "common/encoding.h"

int	ais_transactions(struct http_request *);

#define TX_PREFIX	"/auth/v1/psd2/account/"
#define TX_SUFFIX	"/transactions"
#define TX_VALUE_MAX	64
#define TX_PAGE_DIGITS	9

static const char sql_transactions[] =
    "SELECT refusal, detail, body "
    "FROM ais_transactions($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

struct tx_query {
	char	from[TX_VALUE_MAX];
	char	to[TX_VALUE_MAX];
	char	page[TX_VALUE_MAX];
	char	account[TX_VALUE_MAX + 1];
	int	has_from;
	int	has_to;
	int	has_page;
	long	page_index;
};

/* The account-id path segment, when it can be a resourceId at all. */
static void
tx_account(struct http_request *req, struct tx_query *tq)
{
	const char	*start;
	size_t		 len;

	tq->account[0] = '\0';
	start = req->path + strlen(TX_PREFIX);
	len = strlen(start);
	if (len <= strlen(TX_SUFFIX))
		return;
	len -= strlen(TX_SUFFIX);
	if (len > TX_VALUE_MAX)
		return;
	memcpy(tq->account, start, len);
	tq->account[len] = '\0';
	if (!ais_resource_id_valid(tq->account))
		tq->account[0] = '\0';
}

/* Stores one decoded query value; a repeated parameter is an error. */
static void
tx_store(struct xs2a_call *c, const char *name, const char *raw, size_t len,
    char *out, int *seen)
{
	if (*seen) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", name,
		    "%s is given more than once.", name);
		return;
	}
	*seen = 1;
	if (len >= TX_VALUE_MAX || form_decode(raw, len, out,
	    TX_VALUE_MAX) < 0) {
		out[0] = '\0';
		xs2a_input_error(c, 400, "FORMAT_ERROR", name,
		    "%s is malformed.", name);
	}
}

static void
tx_parse_query(struct http_request *req, struct xs2a_call *c,
    struct tx_query *tq)
{
	const char	*p, *end, *eq;
	size_t		 nlen;

	p = req->query_string ? req->query_string : "";
	while (*p != '\0') {
		end = p + strcspn(p, "&");
		eq = memchr(p, '=', (size_t)(end - p));
		nlen = (size_t)((eq ? eq : end) - p);
		eq = eq ? eq + 1 : end;
		if (nlen == 8 && memcmp(p, "dateFrom", 8) == 0)
			tx_store(c, "dateFrom", eq, (size_t)(end - eq),
			    tq->from, &tq->has_from);
		else if (nlen == 6 && memcmp(p, "dateTo", 6) == 0)
			tx_store(c, "dateTo", eq, (size_t)(end - eq),
			    tq->to, &tq->has_to);
		else if (nlen == 9 && memcmp(p, "pageIndex", 9) == 0)
			tx_store(c, "pageIndex", eq, (size_t)(end - eq),
			    tq->page, &tq->has_page);
		p = *end ? end + 1 : end;
	}
}

static void
tx_check(struct xs2a_call *c, struct tx_query *tq)
{
	size_t	i, len;

	if (tq->has_from && !ais_date_valid(tq->from))
		xs2a_input_error(c, 400, "FORMAT_ERROR", "dateFrom",
		    "dateFrom must be a date YYYY-MM-DD.");
	if (tq->has_to && !ais_date_valid(tq->to))
		xs2a_input_error(c, 400, "FORMAT_ERROR", "dateTo",
		    "dateTo must be a date YYYY-MM-DD.");
	if (!tq->has_page)
		return;
	len = strlen(tq->page);
	for (i = 0; i < len; i++) {
		if (tq->page[i] < '0' || tq->page[i] > '9')
			break;
	}
	if (len == 0 || i != len || len > TX_PAGE_DIGITS) {
		xs2a_input_error(c, 400, "FORMAT_ERROR", "pageIndex",
		    "pageIndex must be an integer from 0 to 999999999.");
		return;
	}
	tq->page_index = strtol(tq->page, NULL, 10);
}

/* $7.. of ais_transactions(); only for input without errors. */
static void
tx_params(struct xs2a_call *c, struct tx_query *tq)
{
	db_param(&c->q, tq->account[0] ? tq->account : NULL);
	db_param(&c->q, tq->has_from ? tq->from : NULL);
	db_param(&c->q, tq->has_to ? tq->to : NULL);
	db_param_int(&c->q, tq->page_index);
	db_param_int(&c->q, ais_settings()->page_size);
}

int
ais_transactions(struct http_request *req)
{
	struct xs2a_call	*c;
	struct tx_query	 tq;

	if (!http_state_exists(req)) {
		c = ais_call_new(req);
		c->resource_path = "account-id";
		memset(&tq, 0, sizeof(tq));
		tx_account(req, &tq);
		tx_parse_query(req, c, &tq);
		tx_check(c, &tq);
		if (ais_begin(req, c, sql_transactions, TPP_ROLE_AI))
			tx_params(c, &tq);
	}
	return (ais_finish(req, http_state_get(req)));
}

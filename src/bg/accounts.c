/*
 * GET /xs2a/v1/accounts, /xs2a/v1/accounts/{account-id} and
 * /xs2a/v1/accounts/{account-id}/balances (src/bg/README.md "Account
 * information"); card accounts are not offered (405 SERVICE_INVALID).
 * The SQL is src/db/functions/34_bg_accounts.sql.
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "ais/ais.h"
#include "api/respond.h"
#include "bg/account_input.h"
#include "bg/bg.h"

int	bg_account_list(struct http_request *);
int	bg_account(struct http_request *);
int	bg_account_balances(struct http_request *);
int	bg_card_accounts(struct http_request *);

#define BG_PARAM_MAX	64

static const char sql_list[] =
    "SELECT refusal, detail, status, body, location "
    "FROM bg_account_list($1, $2, $3, $4, $5, $6, $7, $8, $9)";

static const char sql_account[] =
    "SELECT refusal, detail, status, body, location "
    "FROM bg_account($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

static const char sql_balances[] =
    "SELECT refusal, detail, status, body, location "
    "FROM bg_account_balances($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/* The query's withBalance, the only parameter of list and details. */
static int
accounts_with_balance(struct http_request *req, struct bg_call *c)
{
	char		value[BG_PARAM_MAX];
	struct bg_param	param = { "withBalance", value, 0 };

	value[0] = '\0';
	bg_query_params(req, c, &param, 1);
	return (bg_with_balance(c, &param));
}

int
bg_account_list(struct http_request *req)
{
	struct bg_call	*c;
	int		 with_balance;

	if (!http_state_exists(req)) {
		if (!bg_method(req, HTTP_METHOD_GET))
			return (KORE_RESULT_OK);
		c = bg_call_new(req);
		with_balance = accounts_with_balance(req, c);
		if (bg_begin(req, c, sql_list, TPP_ROLE_AI,
		    BG_CONSENT_REQUIRED)) {
			db_param_int(&c->x.q, ais_settings()->unattended_limit);
			db_param(&c->x.q, with_balance ? "true" : "false");
		}
	}
	return (bg_finish(req, http_state_get(req)));
}

int
bg_account(struct http_request *req)
{
	struct bg_call	*c;
	char		 account[BG_ID_MAX + 1];
	int		 with_balance;

	if (!http_state_exists(req)) {
		if (!bg_method(req, HTTP_METHOD_GET))
			return (KORE_RESULT_OK);
		c = bg_call_new(req);
		bg_account_id(req, account, sizeof(account));
		with_balance = accounts_with_balance(req, c);
		if (bg_begin(req, c, sql_account, TPP_ROLE_AI,
		    BG_CONSENT_REQUIRED)) {
			db_param_int(&c->x.q, ais_settings()->unattended_limit);
			db_param(&c->x.q, account[0] ? account : NULL);
			db_param(&c->x.q, with_balance ? "true" : "false");
		}
	}
	return (bg_finish(req, http_state_get(req)));
}

int
bg_account_balances(struct http_request *req)
{
	struct bg_call	*c;
	char		 account[BG_ID_MAX + 1];

	if (!http_state_exists(req)) {
		if (!bg_method(req, HTTP_METHOD_GET))
			return (KORE_RESULT_OK);
		c = bg_call_new(req);
		bg_account_id(req, account, sizeof(account));
		/* No parameters here: any is refused. */
		bg_query_params(req, c, NULL, 0);
		if (bg_begin(req, c, sql_balances, TPP_ROLE_AI,
		    BG_CONSENT_REQUIRED)) {
			db_param_int(&c->x.q, ais_settings()->unattended_limit);
			db_param(&c->x.q, account[0] ? account : NULL);
		}
	}
	return (bg_finish(req, http_state_get(req)));
}

/* The official file allows 405 on the card-accounts paths. */
int
bg_card_accounts(struct http_request *req)
{
	respond_tpp_error(req, 405, "SERVICE_INVALID", NULL,
	    "Card accounts are not offered; the accounts are at "
	    BG_ROOT "/accounts.");
	return (KORE_RESULT_OK);
}

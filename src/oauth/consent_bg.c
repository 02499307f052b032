/*
 * The consent page and the decision of a Berlin Group consent; see
 * consent_bg.h. The page shows the TPP, the access asked (the named
 * IBANs with their rights; "all your accounts" for the kinds that name
 * none; the PSU's accounts to tick for a bank-offered consent),
 * validUntil, frequencyPerDay and whether the consent is one-off or
 * recurring. bg_consent_decide (src/db/functions/33_bg_authorise.sql)
 * stores the decision; the redirect approach then goes back with a 303
 * to TPP-Redirect-URI (approved) or TPP-Nok-Redirect-URI (denied, else
 * TPP-Redirect-URI), the integrated OAuth approach as every
 * authorisation request: the code, or error=access_denied.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "db/db.h"
#include "metrics/metrics.h"
#include "oauth/consent_bg.h"
#include "oauth/oauth.h"
#include "web/forms.h"
#include "web/pages.h"

static const char sql_decide[] =
    "SELECT bg_consent_decide($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
    "$11, $12, $13, $14, $15, $16, $17)";

static const char *
consent_bg_str(json_t *obj, const char *key)
{
	return (json_string_value(json_object_get(obj, key)));
}

static int
consent_bg_is(json_t *bg, const char *key, const char *value)
{
	const char	*v;

	return ((v = consent_bg_str(bg, key)) != NULL && strcmp(v, value) == 0);
}

/* "account details, balances, transactions" in the page's language. */
static json_t *
consent_bg_rights(struct http_request *req, int balances, int transactions)
{
	char	text[256];

	(void)snprintf(text, sizeof(text), "%s%s%s%s%s",
	    pages_text(req, "bg_right_account"),
	    balances ? ", " : "", balances ? pages_text(req,
	    "bg_right_balances") : "", transactions ? ", " : "",
	    transactions ? pages_text(req, "bg_right_transactions") : "");
	return (json_string(text));
}

/* The dedicated consent's IBANs, each with its rights. */
static json_t *
consent_bg_named(struct http_request *req, json_t *page)
{
	json_t	*list, *n;
	size_t	 i;

	list = json_array();
	json_array_foreach(json_object_get(page, "named"), i, n) {
		json_array_append_new(list, json_pack("{s:s, s:s, s:b, s:o}",
		    "iban", consent_bg_str(n, "iban"),
		    "name", consent_bg_str(n, "name") ?
		    consent_bg_str(n, "name") : "",
		    "mine", json_is_true(json_object_get(n, "mine")),
		    "rights", consent_bg_rights(req,
		    json_is_true(json_object_get(n, "balances")),
		    json_is_true(json_object_get(n, "transactions")))));
	}
	return (list);
}

/* The PSU's accounts: checkboxes (bank-offered) or a list. */
static json_t *
consent_bg_accounts(json_t *page)
{
	json_t	*list, *a;
	size_t	 i;

	list = json_array();
	json_array_foreach(json_object_get(page, "accounts"), i, a) {
		json_array_append_new(list, json_pack(
		    "{s:s, s:s, s:s, s:s, s:s+}",
		    "resource_id", consent_bg_str(a, "resource_id"),
		    "iban", consent_bg_str(a, "iban"),
		    "name", consent_bg_str(a, "name"),
		    "currency", consent_bg_str(a, "currency"),
		    "field_id", "account-", consent_bg_str(a, "resource_id")));
	}
	return (list);
}

static json_t *
consent_bg_view(struct http_request *req, json_t *page)
{
	json_t		*view;
	const char	*kind;
	char		 key[64];
	int		 named, pick;

	kind = consent_bg_str(page, "kind");
	named = kind != NULL && strcmp(kind, "dedicated") == 0;
	pick = kind != NULL && strcmp(kind, "bankOffered") == 0;
	(void)snprintf(key, sizeof(key), "bg_kind_%s", kind ? kind : "");
	view = json_pack("{s:b, s:b, s:b, s:o, s:o, s:s, s:o, s:O, s:O, s:s}",
	    "dedicated", named, "pick", pick, "all", !named && !pick,
	    "named", named ? consent_bg_named(req, page) : json_array(),
	    "accounts", consent_bg_accounts(page),
	    "all_text", pages_text(req, key),
	    "rights", consent_bg_rights(req,
	    json_is_true(json_object_get(page, "balances")),
	    json_is_true(json_object_get(page, "transactions"))),
	    "valid_until", json_object_get(page, "valid_until"),
	    "frequency", json_object_get(page, "frequency"),
	    "usage", pages_text(req, json_is_true(json_object_get(page,
	    "recurring")) ? "bg_recurring" : "bg_one_off"));
	return (view);
}

void
consent_bg_page(struct http_request *req, struct form_state *fs,
    struct db_query *q, const char *step, const char *csrf)
{
	json_t	*page, *view;

	if (db_rows(q) != 1 || db_is_null(q, 0, 0) ||
	    (page = json_loads(db_value(q, 0, 0), 0, NULL)) == NULL) {
		pages_message(req, 410, "error_title", "bg_auth_gone");
		return;
	}
	view = consent_bg_view(req, page);
	json_decref(page);
	if (view == NULL) {
		respond_server_error(req, "bg consent page");
		return;
	}
	pages_render(req, 200, "consent", json_pack("{s:s, s:s, s:s, s:O, "
	    "s:o}", "authreq", fs->authreq, "csrf", csrf, "step", step,
	    "request", fs->request, "bg", view));
}

int
consent_bg_read(struct http_request *req, struct form_state *fs,
    char *accounts, size_t len)
{
	int	n;

	(void)snprintf(accounts, len, "{}");
	if ((n = consent_form_decision(req)) != 1)
		return (n);
	if (!consent_bg_is(json_object_get(fs->request, "bg"), "kind",
	    "bankOffered"))
		return (1);
	if ((n = consent_form_accounts(req, accounts, len)) < 0) {
		pages_message(req, 400, "error_title", "error_form");
		return (-1);
	}
	if (n == 0) {
		pages_message(req, 400, "error_title", "error_no_account");
		return (-1);
	}
	return (1);
}

void
consent_bg_query(struct http_request *req, struct db_query *q,
    struct form_state *fs, const struct consent_post *post)
{
	json_t	*bg;
	int	 oauth;

	bg = json_object_get(fs->request, "bg");
	oauth = consent_bg_is(bg, "approach", "OAUTH");
	db_query_begin(q, req, sql_decide);
	db_param_bin(q, post->flow_digest, sizeof(post->flow_digest));
	db_param(q, post->approve ? "true" : "false");
	db_param_bin(q, post->session_digest, sizeof(post->session_digest));
	db_param_int(q, app_cfg.session_idle);
	db_param_int(q, post->psu_id);
	db_param(q, consent_bg_str(fs->request, "client_id"));
	db_param(q, consent_bg_str(bg, "consent_id"));
	db_param(q, consent_bg_str(bg, "authorisation_id"));
	db_param(q, oauth ? "OAUTH" : "REDIRECT");
	db_param(q, post->approve ? post->accounts : "{}");
	db_param(q, oauth ? consent_bg_str(fs->request, "redirect_uri") :
	    NULL);
	db_param(q, consent_bg_str(fs->request, "code_challenge"));
	db_param_bin(q, post->code_digest, sizeof(post->code_digest));
	db_param_int(q, app_cfg.code_ttl);
	db_param(q, post->family);
	db_param(q, consent_bg_str(fs->request, "dpop_jkt"));
	db_param(q, consent_bg_str(fs->request, "par"));
}

/* The redirect approach's way back to the TPP: a 303. */
static void
consent_bg_back(struct http_request *req, json_t *bg, const char *key)
{
	const char	*uri;

	if ((uri = consent_bg_str(bg, key)) == NULL || *uri == '\0') {
		pages_message(req, 200, "done_title", "consent_done");
		return;
	}
	http_response_header(req, "location", uri);
	respond_raw(req, 303, NULL, NULL, 0);
}

/* The outcomes every approach answers with a page. */
static void
consent_bg_page_outcome(struct http_request *req, const char *outcome)
{
	if (strcmp(outcome, "answered") == 0)
		pages_message(req, 200, "done_title", "consent_done");
	else if (strcmp(outcome, "failed_accounts") == 0)
		pages_message(req, 403, "error_title", "bg_failed_accounts");
	else if (strcmp(outcome, "gone") == 0)
		pages_message(req, 410, "error_title", "bg_auth_gone");
	else if (strcmp(outcome, "no_session") == 0)
		pages_message(req, 401, "error_title", "error_session");
	else if (strcmp(outcome, "client_inactive") == 0)
		pages_message(req, 403, "error_title", "bg_client_inactive");
	else
		pages_message(req, 400, "error_title", "error_form");
}

void
consent_bg_finish(struct http_request *req, struct db_query *q,
    struct form_state *fs, const char *code)
{
	json_t		*bg;
	const char	*outcome;
	int		 oauth;

	outcome = db_value(q, 0, 0);
	metrics_sca("consent", outcome);
	bg = json_object_get(fs->request, "bg");
	oauth = consent_bg_is(bg, "approach", "OAUTH");
	if (strcmp(outcome, "ok") == 0 || strcmp(outcome, "repeat_ok") == 0 ||
	    strcmp(outcome, "repeat_code") == 0) {
		if (oauth)
			oauth_redirect_code(req, fs->request, code);
		else
			consent_bg_back(req, bg, "ok_uri");
	} else if (strcmp(outcome, "denied") == 0 ||
	    strcmp(outcome, "repeat_denied") == 0) {
		if (oauth)
			oauth_redirect_error(req, fs->request,
			    "access_denied", "The PSU denied the request.");
		else
			consent_bg_back(req, bg, "nok_uri");
	} else if (oauth && strcmp(outcome, "failed_accounts") == 0) {
		/*
		 * RFC 6749 4.1.2.1: past a valid redirect_uri every failure
		 * goes back to the client. The PSU saw the foreign account
		 * marked on the page before deciding.
		 */
		oauth_redirect_error(req, fs->request, "access_denied",
		    "The consent names an account that is not the PSU's or "
		    "not in the currency named.");
	} else {
		consent_bg_page_outcome(req, outcome);
	}
}

/*
 * The consent page and POST /auth/oauth/consent: the PSU chooses accounts
 * and a validity, then approves (consent + single-use code, one
 * transaction) or denies (error=access_denied).
 *
 * One authorisation request gets one decision (consent_decide): the
 * code is derived from the request's flow id (forms_derive_secret), so a
 * repeated post (double click, back button) is redirected again with the
 * SAME code while it is unspent and unexpired, and shown a page saying
 * the request was answered once the code was exchanged: the TPP would
 * take a spent code sent again for a replay and revoke its tokens. A
 * deny is final too. Nothing is created twice.
 *
 * A Berlin Group consent (the request's key "bg") has its own page and
 * decision (consent_bg.c) in the same form, with the same rules.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "metrics/metrics.h"
#include "common/config.h"
#include "common/crypto.h"
#include "db/db.h"
#include "oauth/consent_bg.h"
#include "oauth/oauth.h"
#include "web/forms.h"
#include "web/pages.h"

int	oauth_consent(struct http_request *);

#define CONSENT_ACCOUNTS_MAX	64
#define RESOURCE_ID_MAX		64

struct consent_ctx {
	struct form_state	fs;
	struct db_query		q;
	char			code[37];
};

static const char sql_decide[] =
    "SELECT consent_decide($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
    "$12, $13, $14, $15, $16, $17)";

static const struct {
	int		 bit;
	const char	*key;
} consent_scope_keys[] = {
	{ OAUTH_SCOPE_AIS,	"scope_ais" },
	{ OAUTH_SCOPE_FUND,	"scope_fund" },
	{ OAUTH_SCOPE_PIS,	"scope_pis" },
};

static void
consent_free(struct http_request *req)
{
	struct consent_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
	forms_clear(&ctx->fs);
	OPENSSL_cleanse(ctx->code, sizeof(ctx->code));
}

static int
consent_scope_bits(struct form_state *fs)
{
	char	canonical[128];

	return (oauth_scope_parse(json_string_value(json_object_get(
	    fs->request, "scope")), canonical, sizeof(canonical)));
}

/* Payment initiation too: the PSU picks the accounts it may pay from. */
static int
consent_needs_accounts(int bits)
{
	return ((bits & (OAUTH_SCOPE_AIS | OAUTH_SCOPE_FUND |
	    OAUTH_SCOPE_PIS)) != 0);
}

void
consent_page(struct http_request *req, struct form_state *fs,
    long long psu_id, struct db_query *accounts)
{
	json_t	*ctx, *scopes, *list;
	char	 step[FORMS_TOKEN_MAX], csrf[FORMS_TOKEN_MAX];
	size_t	 i;
	int	 bits, row;

	bits = consent_scope_bits(fs);
	if (forms_seal_step("consent", psu_id, fs->authreq, step,
	    sizeof(step)) == -1 ||
	    forms_csrf_issue(req, fs->authreq, csrf, sizeof(csrf)) == -1) {
		respond_server_error(req, "consent seal");
		return;
	}
	if (json_object_get(fs->request, "bg") != NULL) {
		consent_bg_page(req, fs, accounts, step, csrf);
		return;
	}
	scopes = json_array();
	for (i = 0; i < sizeof(consent_scope_keys) /
	    sizeof(consent_scope_keys[0]); i++) {
		if (bits & consent_scope_keys[i].bit)
			json_array_append_new(scopes, json_string(
			    pages_text(req, consent_scope_keys[i].key)));
	}
	list = json_array();
	for (row = 0; consent_needs_accounts(bits) &&
	    row < db_rows(accounts); row++) {
		json_array_append_new(list, json_pack(
		    "{s:s, s:s, s:s, s:s, s:s+}",
		    "resource_id", db_value(accounts, row, 0),
		    "iban", db_value(accounts, row, 1),
		    "name", db_value(accounts, row, 2),
		    "currency", db_value(accounts, row, 3),
		    "field_id", "account-", db_value(accounts, row, 0)));
	}
	ctx = json_pack("{s:s, s:s, s:s, s:O, s:o, s:o, s:b, s:I, s:I}",
	    "authreq", fs->authreq, "csrf", csrf, "step", step,
	    "request", fs->request, "scopes", scopes, "accounts", list,
	    "needs_accounts", consent_needs_accounts(bits),
	    "default_days", (json_int_t)app_cfg.consent_default_days,
	    "max_days", (json_int_t)app_cfg.consent_max_days);
	pages_render(req, 200, "consent", ctx);
}

static int
consent_resource_id_valid(const char *s)
{
	size_t	i, len;

	len = strlen(s);
	if (len == 0 || len >= RESOURCE_ID_MAX)
		return (0);
	for (i = 0; i < len; i++) {
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
			return (0);
	}
	return (1);
}

int
consent_form_accounts(struct http_request *req, char *out, size_t len)
{
	struct http_arg	*arg;
	int		 n;

	snprintf(out, len, "{");
	n = 0;
	TAILQ_FOREACH(arg, &req->arguments, list) {
		if (strcmp(arg->name, "account") != 0)
			continue;
		if (!consent_resource_id_valid(arg->s_value) ||
		    n == CONSENT_ACCOUNTS_MAX)
			return (-1);
		snprintf(out + strlen(out), len - strlen(out), "%s\"%s\"",
		    n ? "," : "", arg->s_value);
		n++;
	}
	snprintf(out + strlen(out), len - strlen(out), "}");
	return (n);
}

static int
consent_days(struct http_request *req)
{
	const char	*v;
	char		*end;
	long		 days;

	if ((v = forms_arg(req, "validity_days")) == NULL || *v == '\0')
		return ((int)app_cfg.consent_default_days);
	days = strtol(v, &end, 10);
	if (*end != '\0' || days < 1 || days > app_cfg.consent_max_days)
		return (-1);
	return ((int)days);
}

static const char *
consent_session(struct http_request *req)
{
	char	*value;

	http_populate_cookies(req);
	if (!http_request_cookie(req, FORMS_SESSION_COOKIE, &value))
		return (NULL);
	return (value);
}

int
consent_form_decision(struct http_request *req)
{
	const char	*decision;

	decision = forms_arg(req, "decision");
	if (decision != NULL && strcmp(decision, "deny") == 0)
		return (0);
	if (decision == NULL || strcmp(decision, "approve") != 0) {
		pages_message(req, 400, "error_title", "error_form");
		return (-1);
	}
	return (1);
}

/* The decision and what it needs: 1 approve, 0 deny, -1 answered. */
static int
consent_read(struct http_request *req, struct consent_ctx *ctx,
    char *accounts, size_t accountslen, int *days, int *bits)
{
	int	n;

	if ((n = consent_form_decision(req)) != 1)
		return (n);
	*bits = consent_scope_bits(&ctx->fs);
	n = consent_form_accounts(req, accounts, accountslen);
	*days = consent_days(req);
	if (n < 0 || *days < 0 || *bits <= 0) {
		pages_message(req, 400, "error_title", "error_form");
		return (-1);
	}
	if (consent_needs_accounts(*bits) && n == 0) {
		pages_message(req, 400, "error_title", "error_no_account");
		return (-1);
	}
	return (1);
}

static enum db_next
consent_start(struct http_request *req, struct consent_ctx *ctx)
{
	struct consent_post	 post;
	const char		*session, *flow;
	char			 accounts[CONSENT_ACCOUNTS_MAX *
				    (RESOURCE_ID_MAX + 3)];
	char			 scopes[128], consent_id[37];
	long long		 psu_id;
	int			 approve, days, bits, bg;

	http_populate_post(req);
	if (forms_verify(req, &ctx->fs) == -1 ||
	    forms_open_step("consent", forms_arg(req, "step"),
	    ctx->fs.authreq, &psu_id) == -1 ||
	    (flow = json_string_value(json_object_get(ctx->fs.request,
	    "flow"))) == NULL) {
		pages_message(req, 403, "error_title", "error_csrf");
		return (DB_ANSWERED);
	}
	days = bits = 0;
	accounts[0] = '\0';
	bg = json_object_get(ctx->fs.request, "bg") != NULL;
	approve = bg ? consent_bg_read(req, &ctx->fs, accounts,
	    sizeof(accounts)) : consent_read(req, ctx, accounts,
	    sizeof(accounts), &days, &bits);
	if (approve == -1)
		return (DB_ANSWERED);
	session = consent_session(req);
	if (approve && session == NULL) {
		pages_message(req, 401, "error_title", "error_session");
		return (DB_ANSWERED);
	}
	if (forms_derive_secret("authcode", flow, ctx->code,
	    post.code_digest) == -1 || crypto_uuid(consent_id) == -1 ||
	    crypto_uuid(post.family) == -1) {
		respond_server_error(req, "consent random");
		return (DB_ANSWERED);
	}
	crypto_sha256(flow, strlen(flow), post.flow_digest);
	crypto_sha256(session ? session : "", session ? strlen(session) : 0,
	    post.session_digest);
	post.psu_id = psu_id;
	post.approve = approve;
	post.accounts = accounts;
	if (bg) {
		consent_bg_query(req, &ctx->q, &ctx->fs, &post);
		return (DB_QUERY);
	}
	oauth_scope_array(bits, scopes, sizeof(scopes));

	db_query_begin(&ctx->q, req, sql_decide);
	db_param_bin(&ctx->q, post.flow_digest, sizeof(post.flow_digest));
	db_param(&ctx->q, approve ? "true" : "false");
	db_param_bin(&ctx->q, post.session_digest,
	    sizeof(post.session_digest));
	db_param_int(&ctx->q, app_cfg.session_idle);
	db_param_int(&ctx->q, psu_id);
	db_param(&ctx->q, json_string_value(json_object_get(ctx->fs.request,
	    "client_id")));
	db_param(&ctx->q, scopes);
	db_param(&ctx->q, approve ? accounts : "{}");
	db_param_int(&ctx->q, days);
	db_param(&ctx->q, json_string_value(json_object_get(ctx->fs.request,
	    "redirect_uri")));
	db_param(&ctx->q, json_string_value(json_object_get(ctx->fs.request,
	    "code_challenge")));
	db_param_bin(&ctx->q, post.code_digest, sizeof(post.code_digest));
	db_param_int(&ctx->q, app_cfg.code_ttl);
	db_param(&ctx->q, consent_id);
	db_param(&ctx->q, post.family);
	db_param(&ctx->q, json_string_value(json_object_get(ctx->fs.request,
	    "dpop_jkt")));
	db_param(&ctx->q, json_string_value(json_object_get(ctx->fs.request,
	    "par")));
	return (DB_QUERY);
}

static enum db_next
consent_finish(struct http_request *req, void *arg)
{
	struct consent_ctx	*ctx = arg;
	const char		*outcome;

	if (json_object_get(ctx->fs.request, "bg") != NULL) {
		consent_bg_finish(req, &ctx->q, &ctx->fs, ctx->code);
		return (DB_ANSWERED);
	}
	outcome = db_value(&ctx->q, 0, 0);
	metrics_sca("consent", outcome);
	if (strcmp(outcome, "ok") == 0 ||
	    strcmp(outcome, "repeat_code") == 0) {
		oauth_redirect_code(req, ctx->fs.request, ctx->code);
	} else if (strcmp(outcome, "denied") == 0 ||
	    strcmp(outcome, "repeat_denied") == 0) {
		oauth_redirect_error(req, ctx->fs.request, "access_denied",
		    "The PSU denied the request.");
	} else if (strcmp(outcome, "answered") == 0) {
		pages_message(req, 200, "done_title", "consent_done");
	} else if (strcmp(outcome, "no_session") == 0) {
		pages_message(req, 401, "error_title", "error_session");
	} else if (strcmp(outcome, "client_inactive") == 0) {
		oauth_redirect_error(req, ctx->fs.request, "access_denied",
		    "The TPP is not active.");
	} else {
		pages_message(req, 400, "error_title", "error_form");
	}
	return (DB_ANSWERED);
}

int
oauth_consent(struct http_request *req)
{
	struct consent_ctx	*ctx;

	if (!http_state_exists(req)) {
		ctx = http_state_create(req, sizeof(*ctx), consent_free);
		if (consent_start(req, ctx) == DB_ANSWERED)
			return (KORE_RESULT_OK);
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, consent_finish, ctx,
	    "consent decision"));
}

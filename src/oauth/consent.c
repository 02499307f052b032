/*
 * The consent page and POST /auth/oauth/consent: the PSU chooses accounts
 * and a validity, then approves (consent + single-use code, one
 * transaction) or denies (error=access_denied).
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "app/app.h"
#include "common/crypto.h"
#include "db/db.h"
#include "oauth/login.h"
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

static const char sql_approve[] =
    "SELECT consent_approve($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
    "$12, $13)";

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
}

static int
consent_scope_bits(struct form_state *fs)
{
	char	canonical[128];

	return (oauth_scope_parse(json_string_value(json_object_get(
	    fs->request, "sc")), canonical, sizeof(canonical)));
}

static int
consent_needs_accounts(int bits)
{
	return ((bits & (OAUTH_SCOPE_AIS | OAUTH_SCOPE_FUND)) != 0);
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

/* The ticked accounts as a text[] literal; -1 on a malformed value. */
static int
consent_accounts(struct http_request *req, char *out, size_t len)
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

static int
consent_start(struct http_request *req, struct consent_ctx *ctx)
{
	const char	*decision, *session, *cc;
	char		 accounts[CONSENT_ACCOUNTS_MAX * (RESOURCE_ID_MAX + 3)];
	char		 scopes[128], consent_id[37], family[37];
	uint8_t		 code_digest[32], session_digest[32];
	long long	 psu_id;
	int		 n, days, bits;

	http_populate_post(req);
	if (forms_verify(req, &ctx->fs) == -1 ||
	    forms_open_step("consent", forms_arg(req, "step"),
	    ctx->fs.authreq, &psu_id) == -1) {
		pages_message(req, 403, "error_title", "error_csrf");
		return (KORE_RESULT_OK);
	}
	decision = forms_arg(req, "decision");
	if (decision != NULL && strcmp(decision, "deny") == 0) {
		oauth_redirect_error(req, ctx->fs.request, "access_denied",
		    "The PSU denied the request.");
		return (KORE_RESULT_OK);
	}
	if (decision == NULL || strcmp(decision, "approve") != 0) {
		pages_message(req, 400, "error_title", "error_form");
		return (KORE_RESULT_OK);
	}
	bits = consent_scope_bits(&ctx->fs);
	n = consent_accounts(req, accounts, sizeof(accounts));
	days = consent_days(req);
	if (n < 0 || days < 0 || bits <= 0) {
		pages_message(req, 400, "error_title", "error_form");
		return (KORE_RESULT_OK);
	}
	if (consent_needs_accounts(bits) && n == 0) {
		pages_message(req, 400, "error_title", "error_no_account");
		return (KORE_RESULT_OK);
	}
	if ((session = consent_session(req)) == NULL) {
		pages_message(req, 401, "error_title", "error_session");
		return (KORE_RESULT_OK);
	}
	if (oauth_new_secret(ctx->code, code_digest) == -1 ||
	    crypto_uuid(consent_id) == -1 || crypto_uuid(family) == -1) {
		respond_server_error(req, "consent random");
		return (KORE_RESULT_OK);
	}
	crypto_sha256(session, strlen(session), session_digest);
	oauth_scope_array(bits, scopes, sizeof(scopes));
	cc = json_string_value(json_object_get(ctx->fs.request, "cc"));

	db_query_begin(&ctx->q, req, sql_approve);
	db_param_bin(&ctx->q, session_digest, sizeof(session_digest));
	db_param_int(&ctx->q, app_cfg.session_idle);
	db_param_int(&ctx->q, psu_id);
	db_param(&ctx->q, json_string_value(json_object_get(ctx->fs.request,
	    "c")));
	db_param(&ctx->q, scopes);
	db_param(&ctx->q, accounts);
	db_param_int(&ctx->q, days);
	db_param(&ctx->q, json_string_value(json_object_get(ctx->fs.request,
	    "r")));
	db_param(&ctx->q, cc);
	db_param_bin(&ctx->q, code_digest, sizeof(code_digest));
	db_param_int(&ctx->q, app_cfg.code_ttl);
	db_param(&ctx->q, consent_id);
	db_param(&ctx->q, family);
	return (KORE_RESULT_RETRY);
}

static void
consent_finish(struct http_request *req, struct consent_ctx *ctx)
{
	const char	*outcome;

	outcome = db_value(&ctx->q, 0, 0);
	if (strcmp(outcome, "ok") == 0) {
		oauth_redirect_code(req, ctx->fs.request, ctx->code);
	} else if (strcmp(outcome, "no_session") == 0) {
		pages_message(req, 401, "error_title", "error_session");
	} else if (strcmp(outcome, "client_inactive") == 0) {
		oauth_redirect_error(req, ctx->fs.request, "access_denied",
		    "The TPP is not active.");
	} else {
		pages_message(req, 400, "error_title", "error_form");
	}
}

int
oauth_consent(struct http_request *req)
{
	struct consent_ctx	*ctx;
	int			 rc;

	if (!http_state_exists(req)) {
		ctx = http_state_create(req, sizeof(*ctx), consent_free);
		if ((rc = consent_start(req, ctx)) != KORE_RESULT_RETRY)
			return (rc);
	}
	ctx = http_state_get(req);

	switch (db_query_poll(&ctx->q)) {
	case DB_PENDING:
		return (KORE_RESULT_RETRY);
	case DB_FAILED:
		respond_server_error(req, "consent approve");
		return (KORE_RESULT_OK);
	case DB_READY:
		break;
	}
	consent_finish(req, ctx);
	return (KORE_RESULT_OK);
}

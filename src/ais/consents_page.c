/*
 * The PSU's consents page: GET /auth/consents lists the PSU's consents
 * (TPP, scopes, accounts, valid until, last used) behind the PSU login
 * with the same two factors as the authorisation; POST
 * /auth/consents/revoke revokes one (revokedByPsu), and its tokens stop
 * working at once (the bearer check looks at the consent's status).
 *
 * CSRF: each form carries a sealed "revoke" token bound to the PSU and to
 * the session id (its SHA-256), valid FORMS_STEP_TTL seconds; the session
 * cookie is SameSite=Lax as well.
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/crypto.h"
#include "db/db.h"
#include "psu/psu_session.h"
#include "web/forms.h"
#include "web/pages.h"

int	ais_consents_page(struct http_request *);
int	ais_consents_revoke(struct http_request *);

#define CONSENTS_PATH	"/auth/consents"

struct consents_ctx {
	struct db_query	 q;
	const char	*session;	/* the request's cookie */
	int		 revoking;
};

static const char sql_list[] =
    "SELECT psu_id, consents FROM psu_consents($1, $2)";
static const char sql_revoke[] =
    "SELECT psu_consent_revoke($1, $2, $3, $4)";

static const struct {
	const char	*scope;
	const char	*key;
} consents_scope_keys[] = {
	{ "ACCOUNT_INFORMATION",	"scope_ais" },
	{ "FUND_AVAILABILITY",		"scope_fund" },
	{ "PAYMENT_INITIATION",		"scope_pis" },
};

static void
consents_free(struct http_request *req)
{
	struct consents_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
}

static void
consents_query(struct http_request *req, struct consents_ctx *ctx,
    const char *sql, const char *session)
{
	uint8_t	digest[32];

	ctx->session = session;
	crypto_sha256(session, strlen(session), digest);
	db_query_begin(&ctx->q, req, sql);
	db_param_bin(&ctx->q, digest, sizeof(digest));
	db_param_int(&ctx->q, app_cfg.session_idle);
}

/* Scope names to the page's words, status to its label. */
static void
consents_translate(struct http_request *req, json_t *consent)
{
	json_t		*scopes, *texts, *v;
	const char	*status;
	char		 key[64];
	size_t		 i, j;

	texts = json_array();
	scopes = json_object_get(consent, "scopes");
	json_array_foreach(scopes, i, v) {
		for (j = 0; j < sizeof(consents_scope_keys) /
		    sizeof(consents_scope_keys[0]); j++) {
			if (json_is_string(v) && strcmp(json_string_value(v),
			    consents_scope_keys[j].scope) == 0)
				json_array_append_new(texts, json_string(
				    pages_text(req, consents_scope_keys[j].key)));
		}
	}
	json_object_set_new(consent, "scope_texts", texts);
	status = json_string_value(json_object_get(consent, "status"));
	snprintf(key, sizeof(key), "consents_status_%s",
	    status ? status : "expired");
	json_object_set_new(consent, "status_text",
	    json_string(pages_text(req, key)));
}

static enum db_next
consents_render(struct http_request *req, void *arg)
{
	struct consents_ctx	*ctx = arg;
	json_t			*list, *consent;
	char			 csrf[FORMS_TOKEN_MAX];
	long long		 psu_id;
	size_t			 i;

	if (db_rows(&ctx->q) != 1 || db_is_null(&ctx->q, 0, 0)) {
		psu_session_login(req, CONSENTS_PATH);
		return (DB_ANSWERED);
	}
	psu_id = db_int(&ctx->q, 0, 0);
	list = json_loads(db_value(&ctx->q, 0, 1), 0, NULL);
	if (list == NULL || forms_seal_step("revoke", psu_id, ctx->session,
	    csrf, sizeof(csrf)) == -1) {
		json_decref(list);
		respond_server_error(req, "consents page");
		return (DB_ANSWERED);
	}
	json_array_foreach(list, i, consent)
		consents_translate(req, consent);
	pages_render(req, 200, "consents", json_pack("{s:o, s:s, s:b}",
	    "consents", list, "csrf", csrf, "none", json_array_size(list) == 0));
	return (DB_ANSWERED);
}

int
ais_consents_page(struct http_request *req)
{
	struct consents_ctx	*ctx;
	const char		*session;

	session = psu_session_cookie(req);
	if (!http_state_exists(req)) {
		http_populate_get(req);
		if (session == NULL) {
			psu_session_login(req, CONSENTS_PATH);
			return (KORE_RESULT_OK);
		}
		ctx = http_state_create(req, sizeof(*ctx), consents_free);
		consents_query(req, ctx, sql_list, session);
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, consents_render, ctx, "consents list"));
}

static int
consents_revoke_start(struct http_request *req, const char *session)
{
	struct consents_ctx	*ctx;
	const char		*consent_id;
	long long		 psu_id;

	http_populate_post(req);
	if (session == NULL) {
		psu_session_login(req, CONSENTS_PATH);
		return (KORE_RESULT_OK);
	}
	if (forms_open_step("revoke", forms_arg(req, "csrf"), session,
	    &psu_id) == -1) {
		pages_message(req, 403, "error_title", "error_csrf");
		return (KORE_RESULT_OK);
	}
	consent_id = forms_arg(req, "consent_id");
	if (consent_id == NULL || !crypto_is_uuid(consent_id)) {
		pages_message(req, 400, "error_title", "error_form");
		return (KORE_RESULT_OK);
	}
	ctx = http_state_create(req, sizeof(*ctx), consents_free);
	consents_query(req, ctx, sql_revoke, session);
	db_param_int(&ctx->q, psu_id);
	db_param(&ctx->q, consent_id);
	ctx->revoking = 1;
	return (KORE_RESULT_RETRY);
}

static enum db_next
consents_revoked(struct http_request *req, void *arg)
{
	struct consents_ctx	*ctx = arg;
	const char		*outcome;

	outcome = db_value(&ctx->q, 0, 0);
	if (strcmp(outcome, "ok") == 0) {
		http_response_header(req, "location", CONSENTS_PATH);
		respond_raw(req, 303, NULL, NULL, 0);
	} else if (strcmp(outcome, "no_session") == 0) {
		psu_session_login(req, CONSENTS_PATH);
	} else {
		pages_message(req, 404, "error_title", "consents_unknown");
	}
	return (DB_ANSWERED);
}

int
ais_consents_revoke(struct http_request *req)
{
	struct consents_ctx	*ctx;
	const char		*session;
	int			 rc;

	session = psu_session_cookie(req);
	if (!http_state_exists(req) &&
	    (rc = consents_revoke_start(req, session)) != KORE_RESULT_RETRY)
		return (rc);
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, consents_revoked, ctx,
	    "consents revoke"));
}

/*
 * The PSU's keys page: GET /auth/keys lists the PSU's passkeys and FIDO2
 * security keys (name, added, last used) behind the PSU login, and
 * offers a new one; POST /auth/keys/add registers the key the browser
 * made (WebAuthn 7.1: its attestation object and client data), POST
 * /auth/keys/remove removes one. Each is an audit row.
 *
 * CSRF: each form carries a sealed "keys" token bound to the PSU and to
 * the session id (its SHA-256), valid FORMS_STEP_TTL seconds; a new
 * key's challenge is derived from it (passkey.h) and spent once.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "common/settings.h"
#include "db/db.h"
#include "psu/passkey.h"
#include "psu/psu_session.h"
#include "web/forms.h"
#include "web/pages.h"

int	psu_keys_page(struct http_request *);
int	psu_keys_add(struct http_request *);
int	psu_keys_remove(struct http_request *);

#define KEYS_PATH	"/auth/keys"

struct keys_ctx {
	struct db_query	 q;
	const char	*session;	/* the request's cookie */
};

static const char sql_list[] =
    "SELECT psu_id, username, key_handle, keys FROM psu_keys($1, $2)";
static const char sql_add[] =
    "SELECT psu_key_add($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
static const char sql_remove[] =
    "SELECT psu_key_remove($1, $2, $3, $4)";

static void
keys_free(struct http_request *req)
{
	struct keys_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
}

static struct keys_ctx *
keys_query(struct http_request *req, const char *sql, const char *session)
{
	struct keys_ctx	*ctx;
	uint8_t		 digest[32];

	ctx = http_state_create(req, sizeof(*ctx), keys_free);
	ctx->session = session;
	crypto_sha256(session, strlen(session), digest);
	db_query_begin(&ctx->q, req, sql);
	db_param_bin(&ctx->q, digest, sizeof(digest));
	db_param_int(&ctx->q, app_cfg.session_idle);
	return (ctx);
}

static enum db_next
keys_render(struct http_request *req, void *arg)
{
	struct keys_ctx	*ctx = arg;
	json_t		*keys, *offer;
	char		 csrf[FORMS_TOKEN_MAX], *offer_text;

	if (db_rows(&ctx->q) != 1 || db_is_null(&ctx->q, 0, 0)) {
		psu_session_login(req, KEYS_PATH);
		return (DB_ANSWERED);
	}
	keys = json_loads(db_value(&ctx->q, 0, 3), 0, NULL);
	if (keys == NULL || forms_seal_step("keys", db_int(&ctx->q, 0, 0),
	    ctx->session, csrf, sizeof(csrf)) == -1) {
		json_decref(keys);
		respond_server_error(req, "keys page");
		return (DB_ANSWERED);
	}
	offer = passkey_create_offer("psu", PASSKEY_REGISTER, csrf,
	    db_value(&ctx->q, 0, 2), db_value(&ctx->q, 0, 1), keys, NULL);
	offer_text = offer != NULL ? json_dumps(offer, JSON_COMPACT) : NULL;
	pages_render(req, 200, "keys", json_pack("{s:o, s:s, s:b, s:s?, s:s?, "
	    "s:s?}", "keys", keys, "csrf", csrf, "none",
	    json_array_size(keys) == 0, "offer", offer_text, "nonce",
	    json_string_value(json_object_get(offer, "nonce")), "origin",
	    settings_get("webauthn_origin", NULL)));
	json_decref(offer);
	free(offer_text);
	return (DB_ANSWERED);
}

int
psu_keys_page(struct http_request *req)
{
	struct keys_ctx	*ctx;
	const char	*session;

	session = psu_session_cookie(req);
	if (!http_state_exists(req)) {
		http_populate_get(req);
		if (session == NULL) {
			psu_session_login(req, KEYS_PATH);
			return (KORE_RESULT_OK);
		}
		keys_query(req, sql_list, session);
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, keys_render, ctx, "keys list"));
}

/*
 * The posted form's PSU: the session's, through the sealed token; 0 when
 * answered (no session: the login; a forged or stale form: 403).
 */
static long long
keys_form_psu(struct http_request *req, const char *session)
{
	long long	psu_id;

	http_populate_post(req);
	if (session == NULL) {
		psu_session_login(req, KEYS_PATH);
		return (0);
	}
	if (forms_open_step("keys", forms_arg(req, "csrf"), session,
	    &psu_id) == -1) {
		pages_message(req, 403, "error_title", "error_csrf");
		return (0);
	}
	return (psu_id);
}

static int
keys_add_start(struct http_request *req, const char *session)
{
	struct webauthn_credential	 cred;
	struct keys_ctx			*ctx;
	char				 name[PASSKEY_NAME_MAX + 1], aaguid[37];
	uint8_t				 challenge_hash[32];
	const char			*why;
	long long			 psu_id;

	if ((psu_id = keys_form_psu(req, session)) == 0)
		return (KORE_RESULT_OK);
	if (passkey_name(forms_arg(req, "name"), name, sizeof(name)) == -1) {
		pages_message(req, 400, "error_title", "keys_name_invalid");
		return (KORE_RESULT_OK);
	}
	if ((why = passkey_new_key(req, "psu", PASSKEY_REGISTER, &cred,
	    challenge_hash)) != NULL) {
		kore_log(LOG_NOTICE, "psu key refused: %s", why);
		pages_message(req, 400, "error_title", "keys_refused");
		return (KORE_RESULT_OK);
	}
	uuid_encode(cred.aaguid, aaguid);
	ctx = keys_query(req, sql_add, session);
	db_param_int(&ctx->q, psu_id);
	db_param_bin(&ctx->q, challenge_hash, sizeof(challenge_hash));
	db_param_int(&ctx->q, FORMS_STEP_TTL);
	db_param_bin(&ctx->q, cred.id, cred.id_len);
	db_param_int(&ctx->q, cred.alg);
	db_param_bin(&ctx->q, cred.pk, cred.pk_len);
	db_param_int(&ctx->q, cred.sign_count);
	db_param(&ctx->q, aaguid);
	db_param(&ctx->q, name);
	db_param_int(&ctx->q, PASSKEY_MAX);
	return (KORE_RESULT_RETRY);
}

static enum db_next
keys_changed(struct http_request *req, void *arg)
{
	struct keys_ctx	*ctx = arg;
	const char	*outcome;

	outcome = db_value(&ctx->q, 0, 0);
	if (strcmp(outcome, "ok") == 0 || strcmp(outcome, "used") == 0) {
		http_response_header(req, "location", KEYS_PATH);
		respond_raw(req, 303, NULL, NULL, 0);
	} else if (strcmp(outcome, "no_session") == 0) {
		psu_session_login(req, KEYS_PATH);
	} else if (strcmp(outcome, "duplicate") == 0) {
		pages_message(req, 409, "error_title", "keys_duplicate");
	} else if (strcmp(outcome, "too_many") == 0) {
		pages_message(req, 409, "error_title", "keys_too_many");
	} else {
		pages_message(req, 404, "error_title", "keys_unknown");
	}
	return (DB_ANSWERED);
}

int
psu_keys_add(struct http_request *req)
{
	struct keys_ctx	*ctx;
	const char	*session;
	int		 rc;

	session = psu_session_cookie(req);
	if (!http_state_exists(req) &&
	    (rc = keys_add_start(req, session)) != KORE_RESULT_RETRY)
		return (rc);
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, keys_changed, ctx, "keys add"));
}

static int
keys_remove_start(struct http_request *req, const char *session)
{
	struct keys_ctx	*ctx;
	const char	*key_id;
	long long	 psu_id;

	if ((psu_id = keys_form_psu(req, session)) == 0)
		return (KORE_RESULT_OK);
	key_id = forms_arg(req, "key_id");
	if (!row_id_text(key_id)) {
		pages_message(req, 400, "error_title", "error_form");
		return (KORE_RESULT_OK);
	}
	ctx = keys_query(req, sql_remove, session);
	db_param_int(&ctx->q, psu_id);
	db_param(&ctx->q, key_id);
	return (KORE_RESULT_RETRY);
}

int
psu_keys_remove(struct http_request *req)
{
	struct keys_ctx	*ctx;
	const char	*session;
	int		 rc;

	session = psu_session_cookie(req);
	if (!http_state_exists(req) &&
	    (rc = keys_remove_start(req, session)) != KORE_RESULT_RETRY)
		return (rc);
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, keys_changed, ctx, "keys remove"));
}

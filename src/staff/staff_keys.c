/*
 * GET /staff/keys, POST /staff/keys/add, POST /staff/keys/action: bank
 * staff's FIDO2 security keys (WebAuthn), the staff login's second
 * element beside the TOTP code (staff_login.c).
 *
 * A member adds a key on the keys page; the browser asks the key for a
 * "direct" attestation, and the key is kept only when its attestation
 * certificate chains to a root of psd2_staff_key_roots and its AAGUID
 * (the model) is listed in psd2_staff_key_aaguids (webauthn_trust.h):
 * staff keys are hardware the bank chose, never a synced passkey. A new
 * key signs nothing until another admin approves it (four eyes); from
 * then on an admin logs in with the key only. Admins refuse new keys and
 * remove lost ones; the member withdraws one not yet approved. Each step
 * is an audit row (73_staff_keys.sql).
 */
#include <sys/types.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "common/settings.h"
#include "common/webauthn_trust.h"
#include "db/db.h"
#include "psu/passkey.h"
#include "staff/staff.h"
#include "staff/staff_page.h"
#include "web/forms.h"
#include "web/pages.h"

int	staff_keys_page(struct http_request *);
int	staff_keys_add(struct http_request *);
int	staff_keys_act(struct http_request *);

#define KEYS_PATH	STAFF_PATH "/keys"
/* Keys a member may hold (waiting or approved). */
#define KEYS_MAX	5

/* The roots and models of psd2_staff_key_*; NULL: no staff keys. */
static struct webauthn_trust	*staff_trust;

static const char *const key_actions[] = {
	"approve", "refuse", "withdraw", "remove", NULL
};

static const char *const action_results[] = {
	"ok", "no_key", "not_admin", "same_person", "bad_status", NULL
};

int
staff_keys_init(char *err, size_t errlen)
{
	char	path[PATH_MAX], why[256];

	if (settings_get("staff_key_roots", NULL) == NULL)
		return (0);
	if (settings_path("staff_key_roots", NULL, path, sizeof(path)) == -1) {
		snprintf(err, errlen, "psd2_staff_key_roots: path too long");
		return (-1);
	}
	staff_trust = webauthn_trust_load(path,
	    settings_get("staff_key_aaguids", ""), why, sizeof(why));
	if (staff_trust == NULL) {
		snprintf(err, errlen, "psd2_staff_key_roots or "
		    "psd2_staff_key_aaguids: %s", why);
		return (-1);
	}
	return (0);
}

static int
keys_list_query(struct http_request *req, struct staff_page *p)
{
	db_query_begin(&p->q, req, "SELECT staff_keys_json($1, $2)");
	db_param_int(&p->q, p->who.id);
	db_param(&p->q, p->who.admin ? "true" : "false");
	return (0);
}

static void
keys_list_render(struct http_request *req, struct staff_page *p)
{
	json_t	*data, *offer;
	char	 csrf[FORMS_TOKEN_MAX], *offer_text;

	if ((data = staff_page_json(p)) == NULL ||
	    staff_csrf_issue(&p->who, csrf, sizeof(csrf)) == -1) {
		json_decref(data);
		respond_server_error(req, "staff keys page");
		return;
	}
	offer = staff_trust == NULL ? NULL : passkey_create_offer(
	    PASSKEY_STAFF, PASSKEY_STAFF_REGISTER, csrf, json_string_value(
	    json_object_get(data, "handle")), p->who.username,
	    json_object_get(data, "mine"), "direct");
	offer_text = offer != NULL ? json_dumps(offer, JSON_COMPACT) : NULL;
	json_object_set_new(data, "csrf", json_string(csrf));
	json_object_set_new(data, "none", json_boolean(json_array_size(
	    json_object_get(data, "mine")) == 0));
	json_object_set_new(data, "has_others", json_boolean(json_array_size(
	    json_object_get(data, "others")) > 0));
	if (offer_text != NULL) {
		json_object_set_new(data, "offer", json_string(offer_text));
		json_object_set(data, "nonce", json_object_get(offer,
		    "nonce"));
		json_object_set(data, "origin", json_object_get(offer,
		    "origin"));
	} else {
		json_object_set_new(data, "keys_off", json_true());
	}
	json_object_del(data, "handle");
	json_decref(offer);
	free(offer_text);
	staff_render(req, 200, "staff_keys", data, &p->who);
}

static const struct staff_page_spec keys_list_spec = {
	0, 0, keys_list_query, keys_list_render
};

int
staff_keys_page(struct http_request *req)
{
	return (staff_page_run(req, &keys_list_spec));
}

static int
keys_add_query(struct http_request *req, struct staff_page *p)
{
	struct webauthn_credential	*cred;
	char				 name[PASSKEY_NAME_MAX + 1], aaguid[37];
	uint8_t				 challenge_hash[32];
	const char			*why;

	if (passkey_name(forms_arg(req, "name"), name, sizeof(name)) == -1) {
		staff_message(req, 400, "error_title", "keys_name_invalid",
		    &p->who);
		return (-1);
	}
	cred = kore_calloc(1, sizeof(*cred));
	if (staff_trust == NULL)
		why = "staff keys are not configured";
	else if ((why = passkey_new_key(req, PASSKEY_STAFF,
	    PASSKEY_STAFF_REGISTER, cred, challenge_hash)) == NULL)
		why = webauthn_trust_check(staff_trust, cred);
	if (why != NULL) {
		kore_log(LOG_NOTICE, "staff key refused (%s): %s",
		    p->who.username, why);
		kore_free(cred);
		staff_message(req, 400, "error_title", "staff_keys_refused",
		    &p->who);
		return (-1);
	}
	uuid_encode(cred->aaguid, aaguid);
	db_query_begin(&p->q, req, "SELECT staff_key_add($1, $2, $3, $4, $5, "
	    "$6, $7, $8, $9, $10)");
	db_param_int(&p->q, p->who.id);
	db_param_bin(&p->q, challenge_hash, sizeof(challenge_hash));
	db_param_int(&p->q, FORMS_STEP_TTL);
	db_param_bin(&p->q, cred->id, cred->id_len);
	db_param_int(&p->q, cred->alg);
	db_param_bin(&p->q, cred->pk, cred->pk_len);
	db_param_int(&p->q, cred->sign_count);
	db_param(&p->q, aaguid);
	db_param(&p->q, name);
	db_param_int(&p->q, KEYS_MAX);
	kore_free(cred);
	return (0);
}

static void
keys_back(struct http_request *req)
{
	http_response_header(req, "location", KEYS_PATH);
	respond_raw(req, 303, NULL, NULL, 0);
}

static void
keys_add_render(struct http_request *req, struct staff_page *p)
{
	const char	*result;

	result = db_value(&p->q, 0, 0);
	if (strcmp(result, "ok") == 0 || strcmp(result, "used") == 0)
		keys_back(req);
	else if (strcmp(result, "duplicate") == 0)
		staff_message(req, 409, "error_title", "keys_duplicate",
		    &p->who);
	else if (strcmp(result, "too_many") == 0)
		staff_message(req, 409, "error_title", "staff_keys_too_many",
		    &p->who);
	else
		respond_server_error(req, "staff key add result");
}

static const struct staff_page_spec keys_add_spec = {
	0, 1, keys_add_query, keys_add_render
};

int
staff_keys_add(struct http_request *req)
{
	return (staff_page_run(req, &keys_add_spec));
}

static int
keys_act_query(struct http_request *req, struct staff_page *p)
{
	const char	*id;

	id = staff_page_arg(req, "key_id");
	if (!staff_word_in(staff_page_arg(req, "action"), key_actions) ||
	    !row_id_text(id)) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	db_query_begin(&p->q, req, "SELECT staff_key_action($1, $2, $3)");
	db_param_int(&p->q, p->who.id);
	db_param(&p->q, staff_page_arg(req, "action"));
	db_param(&p->q, id);
	return (0);
}

static void
keys_act_render(struct http_request *req, struct staff_page *p)
{
	if (staff_action_ok(req, p, action_results, "staff_keys_title",
	    "staff_keys_result_"))
		keys_back(req);
}

static const struct staff_page_spec keys_act_spec = {
	0, 1, keys_act_query, keys_act_render
};

int
staff_keys_act(struct http_request *req)
{
	return (staff_page_run(req, &keys_act_spec));
}

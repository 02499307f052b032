/*
 * The TPP registry pages (admin only): the list, registering a
 * TPP, adding an OAuth client (redirect URIs, PKCE, token lifetime; the
 * secret is generated here, stored keyed and salted as psd2ctl stores it
 * (src/common/client_secret.h) and shown once), suspending (a
 * confirmation page first; every token stops at once) and reactivating.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/client_secret.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "common/redirect_uri.h"
#include "common/settings.h"
#include "common/textrule.h"
#include "db/db.h"
#include "staff/staff.h"
#include "staff/staff_page.h"
#include "web/forms.h"
#include "web/pages.h"

int	staff_tpps(struct http_request *);
int	staff_tpp_confirm(struct http_request *);
int	staff_tpp_act(struct http_request *);

static const char *
tpp_arg(struct http_request *req, const char *name)
{
	const char	*v = forms_arg(req, name);

	return (v != NULL && *v != '\0' ? v : NULL);
}

/* The name, NFC, if it keeps the rule for text people read; else NULL. */
static const char *
tpp_name(struct http_request *req, char *out, size_t len)
{
	const char	*v = tpp_arg(req, "name");
	size_t		 n;

	if (v == NULL || textrule_check(v, strlen(v), TEXTRULE_NAME_MAX,
	    out, len, &n) != 0)
		return (NULL);
	return (out);
}

/* ---- GET /staff/tpps ------------------------------------------------ */

static const char *const tpps_keep[] = { "q", NULL };

static int
tpps_query(struct http_request *req, struct staff_page *p)
{
	int	page;

	if (staff_page_number(req, p, &page) == -1)
		return (-1);
	db_query_begin(&p->q, req, "SELECT staff_tpps_json($1, $2, $3)");
	db_param(&p->q, staff_page_arg(req, "q"));
	db_param_int(&p->q, page);
	db_param_int(&p->q, STAFF_LIST_PAGE);
	return (0);
}

static void
tpps_render(struct http_request *req, struct staff_page *p)
{
	json_t	*data;

	if ((data = staff_page_json(p)) == NULL) {
		respond_server_error(req, "staff tpps json");
		return;
	}
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "staff_tpps_title")));
	if (staff_page_arg(req, "q") != NULL)
		json_object_set_new(data, "q",
		    json_string(staff_page_arg(req, "q")));
	staff_pager(req, data, "/staff/tpps", tpps_keep);
	staff_render(req, 200, "staff_tpps", data, &p->who);
}

static const struct staff_page_spec tpps_spec = {
	1, 0, tpps_query, tpps_render
};

int
staff_tpps(struct http_request *req)
{
	return (staff_page_run(req, &tpps_spec));
}

/* ---- GET /staff/tpps/confirm?org_id=&op= ---------------------------- */

static int
tpp_confirm_query(struct http_request *req, struct staff_page *p)
{
	const char	*op = tpp_arg(req, "op");

	if (op == NULL || tpp_arg(req, "org_id") == NULL ||
	    (strcmp(op, "suspend") != 0 && strcmp(op, "activate") != 0)) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	db_query_begin(&p->q, req, "SELECT jsonb_build_object('org_id', "
	    "org_id, 'name', name, 'status', status) FROM tpp "
	    "WHERE org_id = $1");
	db_param(&p->q, tpp_arg(req, "org_id"));
	return (0);
}

static void
tpp_confirm_render(struct http_request *req, struct staff_page *p)
{
	json_t		*tpp;
	const char	*op;
	char		 key[64];

	if ((op = tpp_arg(req, "op")) == NULL)
		op = "";
	if ((tpp = staff_page_json(p)) == NULL) {
		staff_message(req, 404, "error_title", "staff_result_no_tpp",
		    &p->who);
		return;
	}
	snprintf(key, sizeof(key), "staff_confirm_%s", op);
	staff_render(req, 200, "staff_tpp_confirm", json_pack(
	    "{s:s, s:o, s:s, s:s}", "title", pages_text(req,
	    "staff_confirm_title"), "tpp", tpp, "op", op,
	    "question", pages_text(req, key)), &p->who);
}

static const struct staff_page_spec tpp_confirm_spec = {
	1, 0, tpp_confirm_query, tpp_confirm_render
};

int
staff_tpp_confirm(struct http_request *req)
{
	return (staff_page_run(req, &tpp_confirm_spec));
}

/* ---- POST /staff/tpps/action ---------------------------------------- */

/*
 * redirect_uris "a b c" as a PostgreSQL text[] literal, or -1 when one
 * is not a URI a client may have (redirect_uri.h).
 */
static int
tpp_uri_array(const char *list, char *out, size_t len)
{
	const char	*p, *end;
	char		 one[1024];
	size_t		 used;
	int		 n;

	used = 0;
	out[used++] = '{';
	for (p = list, n = 0; *p != '\0'; p = end) {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		end = p + strcspn(p, " ");
		if ((size_t)(end - p) >= sizeof(one) ||
		    used + (size_t)(end - p) + 4 >= len)
			return (-1);
		memcpy(one, p, (size_t)(end - p));
		one[end - p] = '\0';
		if (!redirect_uri_allowed(one, settings_production()))
			return (-1);
		if (n++ > 0)
			out[used++] = ',';
		out[used++] = '"';
		memcpy(out + used, p, (size_t)(end - p));
		used += (size_t)(end - p);
		out[used++] = '"';
	}
	out[used++] = '}';
	out[used] = '\0';
	return (n > 0 ? 0 : -1);
}

static int
tpp_client_query(struct http_request *req, struct staff_page *p,
    const char *actor)
{
	const struct keyring_key	*k;
	uint8_t				 raw[24], sha[32], salt[16], hash[32];
	char				 uris[2048], ttl[16];
	const char			*uri_list, *ttl_arg;
	long				 ttl_value;
	char				*end;

	uri_list = tpp_arg(req, "redirect_uris");
	ttl_arg = tpp_arg(req, "access_ttl");
	ttl_value = ttl_arg ? strtol(ttl_arg, &end, 10) : 900;
	if (uri_list == NULL || tpp_arg(req, "client_id") == NULL ||
	    tpp_uri_array(uri_list, uris, sizeof(uris)) == -1 ||
	    (ttl_arg != NULL && (*end != '\0' || ttl_value < 1 ||
	    ttl_value > 86400)) ||
	    (k = keyring_current(&app_client_keys)) == NULL) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	if (crypto_random(raw, sizeof(raw)) == -1 ||
	    crypto_random(salt, sizeof(salt)) == -1 ||
	    base64url_encode(raw, sizeof(raw), p->secret,
	    sizeof(p->secret)) < 0) {
		respond_server_error(req, "client secret");
		return (-1);
	}
	crypto_sha256(p->secret, strlen(p->secret), sha);
	if (client_secret_hash(k, salt, sha, hash) == -1) {
		respond_server_error(req, "client secret hash");
		return (-1);
	}
	OPENSSL_cleanse(raw, sizeof(raw));
	OPENSSL_cleanse(sha, sizeof(sha));
	snprintf(ttl, sizeof(ttl), "%ld", ttl_value);
	db_query_begin(&p->q, req, "SELECT staff_client_add($1, $2, $3, $4, "
	    "$5, $6, $7, $8, $9)");
	db_param(&p->q, actor);
	db_param(&p->q, tpp_arg(req, "org_id"));
	db_param(&p->q, tpp_arg(req, "client_id"));
	db_param_bin(&p->q, hash, sizeof(hash));
	db_param_bin(&p->q, salt, sizeof(salt));
	db_param(&p->q, k->id);
	db_param(&p->q, uris);
	db_param(&p->q, tpp_arg(req, "pkce_required") ? "true" : "false");
	db_param(&p->q, ttl);
	return (0);
}

static int
tpp_act_query(struct http_request *req, struct staff_page *p)
{
	const char	*op = tpp_arg(req, "op");
	char		 actor[STAFF_USERNAME_MAX + 8];
	char		 name[2 * TEXTRULE_NAME_MAX + 1];

	staff_page_actor(p, actor, sizeof(actor));
	if (op != NULL && tpp_arg(req, "org_id") != NULL) {
		if (strcmp(op, "client_add") == 0)
			return (tpp_client_query(req, p, actor));
		if (strcmp(op, "register") == 0 &&
		    tpp_name(req, name, sizeof(name)) != NULL) {
			db_query_begin(&p->q, req,
			    "SELECT staff_tpp_register($1, $2, $3)");
			db_param(&p->q, actor);
			db_param(&p->q, name);
			db_param(&p->q, tpp_arg(req, "org_id"));
			return (0);
		}
		if (strcmp(op, "suspend") == 0 ||
		    strcmp(op, "activate") == 0) {
			db_query_begin(&p->q, req,
			    "SELECT staff_tpp_status($1, $2, $3)");
			db_param(&p->q, actor);
			db_param(&p->q, tpp_arg(req, "org_id"));
			db_param(&p->q, strcmp(op, "suspend") == 0 ?
			    "suspended" : "active");
			return (0);
		}
	}
	staff_message(req, 400, "error_title", "staff_bad_request", &p->who);
	return (-1);
}

static void
tpp_act_render(struct http_request *req, struct staff_page *p)
{
	const char	*result, *op;
	char		 key[64];
	int		 ok;

	result = db_value(&p->q, 0, 0);
	if ((op = tpp_arg(req, "op")) == NULL)
		op = "";
	ok = strcmp(result, "ok") == 0;
	if (strcmp(result, "ok") != 0 && strcmp(result, "exists") != 0 &&
	    strcmp(result, "no_tpp") != 0 && strcmp(result, "bad_input") != 0) {
		respond_server_error(req, "staff tpp result");
		return;
	}
	if (ok && strcmp(op, "client_add") == 0) {
		staff_render(req, 200, "staff_secret", json_pack(
		    "{s:s, s:s, s:s}", "title", pages_text(req,
		    "staff_tpps_title"), "client_id", forms_arg(req,
		    "client_id"), "secret", p->secret), &p->who);
	} else {
		snprintf(key, sizeof(key), ok ? "staff_done_%s" :
		    "staff_result_%s", ok ? op : result);
		staff_message(req, ok ? 200 : 409, "staff_tpps_title", key,
		    &p->who);
	}
	OPENSSL_cleanse(p->secret, sizeof(p->secret));
}

static const struct staff_page_spec tpp_act_spec = {
	1, 1, tpp_act_query, tpp_act_render
};

int
staff_tpp_act(struct http_request *req)
{
	return (staff_page_run(req, &tpp_act_spec));
}

/*
 * Staff sessions: the cookie holds a random id, the database its SHA-256
 * (web_session, subject_kind 'staff'); forms carry a CSRF token sealed
 * under the form key and bound to that digest, so a token of another
 * session or browser is refused.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/config.h"
#include "common/crypto.h"
#include "common/encoding.h"
#include "common/sealed.h"
#include "db/db.h"
#include "staff/staff.h"
#include "web/forms.h"
#include "web/pages.h"

static const char sql_session[] =
    "SELECT staff_id, username, display_name, role "
    "FROM staff_session($1, $2)";

int
staff_cookie_digest(struct http_request *req, uint8_t digest[32])
{
	char	*value;

	http_populate_cookies(req);
	if (!http_request_cookie(req, STAFF_COOKIE, &value) ||
	    strlen(value) != 36 || !crypto_is_uuid(value))
		return (-1);
	crypto_sha256(value, 36, digest);
	return (0);
}

void
staff_session_query(struct db_query *q, struct http_request *req,
    const uint8_t digest[32])
{
	db_query_begin(q, req, sql_session);
	db_param_bin(q, digest, 32);
	db_param_int(q, app_cfg.staff_session_idle);
}

int
staff_session_read(struct db_query *q, struct staff_who *who)
{
	if (db_rows(q) != 1)
		return (-1);
	who->id = db_int(q, 0, 0);
	snprintf(who->username, sizeof(who->username), "%s",
	    db_value(q, 0, 1));
	snprintf(who->name, sizeof(who->name), "%s", db_value(q, 0, 2));
	who->admin = strcmp(db_value(q, 0, 3), "admin") == 0;
	return (0);
}

static void
staff_csrf_binding(const struct staff_who *who, char out[65])
{
	hex_encode(who->session_digest, sizeof(who->session_digest), out, 65);
}

int
staff_csrf_issue(const struct staff_who *who, char *out, size_t len)
{
	char	binding[65];

	staff_csrf_binding(who, binding);
	if (sealed_make(&app_form_keys, "staff-csrf", binding,
	    (int64_t)time(NULL) + app_cfg.staff_session_idle * 8, out,
	    len) < 0)
		return (-1);
	return (0);
}

int
staff_csrf_valid(struct http_request *req, const struct staff_who *who)
{
	const char	*token;
	char		 binding[65], payload[128];
	int		 len;

	if ((token = forms_arg(req, "csrf")) == NULL)
		return (0);
	len = sealed_open(&app_form_keys, "staff-csrf", token,
	    (int64_t)time(NULL), payload, sizeof(payload));
	staff_csrf_binding(who, binding);
	return (len == 64 && crypto_equal(payload, binding, 64));
}

void
staff_to_login(struct http_request *req)
{
	/* The dead cookie goes; the login page says nothing of why. */
	respond_set_cookie(req, STAFF_COOKIE, "", STAFF_PATH, 0);
	http_response_header(req, "location", STAFF_PATH);
	respond_raw(req, 303, NULL, NULL, 0);
}

void
staff_render(struct http_request *req, int status, const char *name,
    json_t *ctx, const struct staff_who *who)
{
	char	csrf[FORMS_TOKEN_MAX];

	/* A page whose challenge is derived from its token issued it. */
	if (json_object_get(ctx, "csrf") == NULL) {
		if (staff_csrf_issue(who, csrf, sizeof(csrf)) == -1) {
			json_decref(ctx);
			respond_server_error(req, "staff csrf");
			return;
		}
		json_object_set_new(ctx, "csrf", json_string(csrf));
	}
	json_object_set_new(ctx, "staff", json_pack("{s:s, s:s, s:s, s:b}",
	    "username", who->username, "name", who->name,
	    "role", who->admin ? "admin" : "operator", "admin", who->admin));
	/* The navigation marks the page it is on (here.<template>). */
	json_object_set_new(ctx, "here", json_pack("{s:b}", name, 1));
	pages_render(req, status, name, ctx);
}

void
staff_message(struct http_request *req, int status, const char *title_key,
    const char *text_key, const struct staff_who *who)
{
	staff_render(req, status, "staff_message", json_pack(
	    "{s:s, s:s, s:s}", "title", pages_text(req, title_key),
	    "text", pages_text(req, text_key), "id", text_key), who);
}

/*
 * The driver of every staff page after login: the session look-up, the
 * role check (admin-only pages), the CSRF check of a POST, then the
 * page's query (or two: p->then) and its rendering. Pages are given
 * as a spec.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "db/db.h"
#include "staff/staff.h"
#include "staff/staff_page.h"
#include "web/forms.h"
#include "web/pages.h"

static void
staff_page_free(struct http_request *req)
{
	struct staff_page	*p = http_state_get(req);

	db_query_end(&p->q);
	OPENSSL_cleanse(p->secret, sizeof(p->secret));
}

static enum db_next
staff_page_step(struct http_request *req, void *arg)
{
	struct staff_page	*p = arg;

	if (p->phase == 1 && p->then != NULL) {
		if (p->then(req, p) == -1)
			return (DB_ANSWERED);
		p->phase = 2;
		return (DB_QUERY);
	}
	if (p->phase >= 1) {
		p->spec->render(req, p);
		return (DB_ANSWERED);
	}
	if (staff_session_read(&p->q, &p->who) == -1) {
		staff_to_login(req);
		return (DB_ANSWERED);
	}
	if (p->spec->admin_only && !p->who.admin) {
		staff_message(req, 403, "error_title", "staff_forbidden",
		    &p->who);
		return (DB_ANSWERED);
	}
	if (p->spec->post && !staff_csrf_valid(req, &p->who)) {
		staff_message(req, 403, "error_title", "error_csrf_staff",
		    &p->who);
		return (DB_ANSWERED);
	}
	if (p->spec->query(req, p) == -1)
		return (DB_ANSWERED);
	p->phase = 1;
	return (DB_QUERY);
}

int
staff_page_run(struct http_request *req, const struct staff_page_spec *spec)
{
	struct staff_page	*p;

	if (!http_state_exists(req)) {
		p = http_state_create(req, sizeof(*p), staff_page_free);
		p->spec = spec;
		if (spec->post)
			http_populate_post(req);
		else
			http_populate_get(req);
		if (staff_cookie_digest(req, p->who.session_digest) == -1) {
			staff_to_login(req);
			return (KORE_RESULT_OK);
		}
		staff_session_query(&p->q, req, p->who.session_digest);
	}
	p = http_state_get(req);
	return (db_drive(req, &p->q, staff_page_step, p,
	    "staff page query"));
}

json_t *
staff_page_json(struct staff_page *p)
{
	json_t	*v;

	if (db_rows(&p->q) != 1 || db_is_null(&p->q, 0, 0))
		return (NULL);
	v = json_loads(db_value(&p->q, 0, 0), 0, NULL);
	return (v);
}

void
staff_page_actor(const struct staff_page *p, char *out, size_t len)
{
	snprintf(out, len, "staff:%s", p->who.username);
}

const char *
staff_page_arg(struct http_request *req, const char *name)
{
	const char	*v = forms_arg(req, name);

	return (v != NULL && *v != '\0' ? v : NULL);
}

int
staff_page_number(struct http_request *req, struct staff_page *p, int *page)
{
	const char	*v;
	char		*end;
	long		 n;

	*page = 0;
	if ((v = staff_page_arg(req, "page")) == NULL)
		return (0);
	n = strtol(v, &end, 10);
	if (*end != '\0' || n < 0 || n > STAFF_PAGE_MAX) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	*page = (int)n;
	return (0);
}

void
staff_pager(struct http_request *req, json_t *data, const char *action,
    const char *const *keep)
{
	json_t	*pager, *kept;
	size_t	 i;

	pager = json_pack("{s:s, s:O?, s:O?, s:O?}", "action", action,
	    "next", json_object_get(data, "next"),
	    "has_previous", json_object_get(data, "has_previous"),
	    "previous", json_object_get(data, "previous"));
	kept = json_array();
	for (i = 0; keep[i] != NULL; i++) {
		if (staff_page_arg(req, keep[i]) != NULL)
			json_array_append_new(kept, json_pack("{s:s, s:s}",
			    "name", keep[i], "value",
			    staff_page_arg(req, keep[i])));
	}
	json_object_set_new(pager, "keep", kept);
	json_object_set_new(data, "pager", pager);
}

int
staff_word_in(const char *word, const char *const *list)
{
	size_t	i;

	for (i = 0; word != NULL && list[i] != NULL; i++) {
		if (strcmp(word, list[i]) == 0)
			return (1);
	}
	return (0);
}

int
staff_action_ok(struct http_request *req, struct staff_page *p,
    const char *const *results, const char *title, const char *refused)
{
	const char	*result;
	char		 key[64];

	result = db_value(&p->q, 0, 0);
	if (!staff_word_in(result, results)) {
		respond_server_error(req, "staff action result");
		return (0);
	}
	if (strcmp(result, "ok") == 0)
		return (1);
	(void)snprintf(key, sizeof(key), "%s%s", refused, result);
	staff_message(req, 409, title, key, &p->who);
	return (0);
}

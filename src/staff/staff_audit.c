/*
 * GET /staff/audit: the audit log, newest first, filtered by actor and
 * action (a prefix: "device." for every device action), 50 rows a page
 * ("older" pages by id). Every staff member may read it.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "db/db.h"
#include "staff/staff.h"
#include "staff/staff_page.h"
#include "web/forms.h"
#include "web/pages.h"

#define STAFF_AUDIT_PAGE	50

int	staff_audit(struct http_request *);

static int
audit_query(struct http_request *req, struct staff_page *p)
{
	const char	*before;
	char		*end;
	long long	 id;

	before = staff_page_arg(req, "before");
	if (before != NULL) {
		id = strtoll(before, &end, 10);
		if (*end != '\0' || id < 1) {
			staff_message(req, 400, "error_title",
			    "staff_bad_request", &p->who);
			return (-1);
		}
	}
	db_query_begin(&p->q, req, "SELECT staff_audit_json($1, $2, "
	    "$3::bigint, $4)");
	db_param(&p->q, staff_page_arg(req, "actor"));
	db_param(&p->q, staff_page_arg(req, "action"));
	db_param(&p->q, before);
	db_param_int(&p->q, STAFF_AUDIT_PAGE);
	return (0);
}

static void
audit_render(struct http_request *req, struct staff_page *p)
{
	json_t	*data;

	if ((data = staff_page_json(p)) == NULL) {
		respond_server_error(req, "staff audit json");
		return;
	}
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "staff_audit_title")));
	if (staff_page_arg(req, "actor") != NULL)
		json_object_set_new(data, "actor",
		    json_string(staff_page_arg(req, "actor")));
	if (staff_page_arg(req, "action") != NULL)
		json_object_set_new(data, "action",
		    json_string(staff_page_arg(req, "action")));
	staff_render(req, 200, "staff_audit", data, &p->who);
}

static const struct staff_page_spec audit_spec = {
	0, 0, audit_query, audit_render
};

int
staff_audit(struct http_request *req)
{
	return (staff_page_run(req, &audit_spec));
}

/*
 * GET /staff/consents: the consents of both surfaces (the contract's
 * OAuth flow and the Berlin Group interface), newest first, 50 a page,
 * filtered by PSU (username), TPP (organizationIdentifier) and status
 * (the status now: a consent past validUntil shows as expired). Every
 * staff member may read it; staff change nothing here (the PSU revokes
 * on the consents page, the TPP deletes on either surface).
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "db/db.h"
#include "staff/staff.h"
#include "staff/staff_page.h"
#include "web/forms.h"
#include "web/pages.h"

int	staff_consents(struct http_request *);

static const char *const consents_keep[] = { "psu", "tpp", "status", NULL };
static const char *const consents_statuses[] = { "received", "valid",
	"rejected", "expired", "revokedByPsu", "terminatedByTpp", NULL };

static int
consents_query(struct http_request *req, struct staff_page *p)
{
	int	page;

	if (staff_page_number(req, p, &page) == -1)
		return (-1);
	db_query_begin(&p->q, req, "SELECT staff_consents_json($1, $2, $3, "
	    "$4, $5)");
	db_param(&p->q, staff_page_arg(req, "psu"));
	db_param(&p->q, staff_page_arg(req, "tpp"));
	db_param(&p->q, staff_page_arg(req, "status"));
	db_param_int(&p->q, page);
	db_param_int(&p->q, STAFF_LIST_PAGE);
	return (0);
}

static void
consents_filter(struct http_request *req, json_t *data, const char *name)
{
	if (staff_page_arg(req, name) != NULL)
		json_object_set_new(data, name,
		    json_string(staff_page_arg(req, name)));
}

/* The status filter's options, the one asked for selected. */
static void
consents_status_options(struct http_request *req, json_t *data)
{
	const char	*want = staff_page_arg(req, "status");
	json_t		*list;
	size_t		 i;

	list = json_array();
	for (i = 0; consents_statuses[i] != NULL; i++)
		json_array_append_new(list, json_pack("{s:s, s:b}", "value",
		    consents_statuses[i], "selected", want != NULL &&
		    strcmp(want, consents_statuses[i]) == 0));
	json_object_set_new(data, "statuses", list);
}

static void
consents_render(struct http_request *req, struct staff_page *p)
{
	json_t	*data;

	if ((data = staff_page_json(p)) == NULL) {
		respond_server_error(req, "staff consents json");
		return;
	}
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "staff_consents_title")));
	consents_filter(req, data, "psu");
	consents_filter(req, data, "tpp");
	consents_filter(req, data, "status");
	consents_status_options(req, data);
	staff_pager(req, data, "/staff/consents", consents_keep);
	staff_render(req, 200, "staff_consents", data, &p->who);
}

static const struct staff_page_spec consents_spec = {
	0, 0, consents_query, consents_render
};

int
staff_consents(struct http_request *req)
{
	return (staff_page_run(req, &consents_spec));
}

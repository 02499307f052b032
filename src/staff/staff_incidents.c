/*
 * GET /staff/incidents: the downtime incidents (EBA GL 2.2, written by
 * the service: src/app/incidents.c), open ones and past ones, newest
 * first, 50 a page, filtered by KPI class, source (the service's own
 * requests or its probe), state and part of the instance's name. Every staff member may read it;
 * incidents start and end by themselves, staff change nothing here.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "db/db.h"
#include "metrics/downtime.h"
#include "staff/staff.h"
#include "staff/staff_page.h"
#include "web/forms.h"
#include "web/pages.h"

int	staff_incidents(struct http_request *);

static const char *const incidents_keep[] = { "class", "source", "state",
	"instance", NULL };
static const char *const incidents_sources[] = { "service", "probe", NULL };
static const char *const incidents_states[] = { "open", "ended", NULL };

/* The value is one of the list's (or absent): 0, else -1. */
static int
incidents_choice(struct http_request *req, const char *name,
    const char *const *list)
{
	const char	*v;
	size_t		 i;

	if ((v = staff_page_arg(req, name)) == NULL)
		return (0);
	for (i = 0; list[i] != NULL; i++) {
		if (strcmp(v, list[i]) == 0)
			return (0);
	}
	return (-1);
}

static int
incidents_class_ok(struct http_request *req)
{
	const char	*v;
	int		 c;

	if ((v = staff_page_arg(req, "class")) == NULL)
		return (1);
	for (c = 0; c < KPI_CLASSES; c++) {
		if (strcmp(v, kpi_class_name(c)) == 0)
			return (1);
	}
	return (0);
}

static int
incidents_query(struct http_request *req, struct staff_page *p)
{
	int	page;

	if (staff_page_number(req, p, &page) == -1)
		return (-1);
	if (!incidents_class_ok(req) ||
	    incidents_choice(req, "source", incidents_sources) == -1 ||
	    incidents_choice(req, "state", incidents_states) == -1) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	db_query_begin(&p->q, req, "SELECT staff_incidents_json($1, $2, $3, "
	    "$4, $5, $6)");
	db_param(&p->q, staff_page_arg(req, "class"));
	db_param(&p->q, staff_page_arg(req, "source"));
	db_param(&p->q, staff_page_arg(req, "state"));
	db_param(&p->q, staff_page_arg(req, "instance"));
	db_param_int(&p->q, page);
	db_param_int(&p->q, STAFF_LIST_PAGE);
	return (0);
}

/* A filter's options, the one asked for selected. */
static void
incidents_options(struct http_request *req, json_t *data, const char *name,
    const char *key, const char *const *list)
{
	const char	*want = staff_page_arg(req, name);
	json_t		*out;
	size_t		 i;

	out = json_array();
	for (i = 0; list[i] != NULL; i++)
		json_array_append_new(out, json_pack("{s:s, s:b}", "value",
		    list[i], "selected", want != NULL &&
		    strcmp(want, list[i]) == 0));
	json_object_set_new(data, key, out);
}

static void
incidents_render(struct http_request *req, struct staff_page *p)
{
	const char	*classes[KPI_CLASSES + 1];
	json_t		*data;
	int		 c;

	if ((data = staff_page_json(p)) == NULL) {
		respond_server_error(req, "staff incidents json");
		return;
	}
	for (c = 0; c < KPI_CLASSES; c++)
		classes[c] = kpi_class_name(c);
	classes[KPI_CLASSES] = NULL;
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "staff_incidents_title")));
	incidents_options(req, data, "class", "classes", classes);
	incidents_options(req, data, "source", "sources", incidents_sources);
	incidents_options(req, data, "state", "states", incidents_states);
	if (staff_page_arg(req, "instance") != NULL)
		json_object_set_new(data, "instance",
		    json_string(staff_page_arg(req, "instance")));
	staff_pager(req, data, "/staff/incidents", incidents_keep);
	staff_render(req, 200, "staff_incidents", data, &p->who);
}

static const struct staff_page_spec incidents_spec = {
	0, 0, incidents_query, incidents_render
};

int
staff_incidents(struct http_request *req)
{
	return (staff_page_run(req, &incidents_spec));
}

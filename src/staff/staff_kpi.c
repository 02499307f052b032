/*
 * GET /staff/kpi[?quarter=2026Q4]: the KPIs of the current quarter (or
 * the one asked for) for every staff member, the figures of the public
 * statistics (src/web/kpi_page.c) on the staff listener. Read only.
 */
#include <sys/types.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "db/db.h"
#include "staff/staff.h"
#include "staff/staff_page.h"
#include "web/kpi_page.h"
#include "web/pages.h"

int	staff_kpi(struct http_request *);

static int
staff_kpi_query(struct http_request *req, struct staff_page *p)
{
	const char	*q = staff_page_arg(req, "quarter");

	if (q != NULL && !kpi_quarter_valid(q)) {
		staff_message(req, 400, "error_title", "kpi_bad_quarter",
		    &p->who);
		return (-1);
	}
	db_query_begin(&p->q, req, "SELECT kpi_report_json(coalesce($1, "
	    "kpi_current_quarter()))");
	db_param(&p->q, q);
	return (0);
}

static void
staff_kpi_render(struct http_request *req, struct staff_page *p)
{
	json_t	*data;

	if ((data = kpi_page_data(req, db_rows(&p->q) == 1 ?
	    db_value(&p->q, 0, 0) : NULL)) == NULL) {
		respond_server_error(req, "staff kpi json");
		return;
	}
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "kpi_staff_title")));
	staff_render(req, 200, "staff_kpi", data, &p->who);
}

static const struct staff_page_spec staff_kpi_spec = {
	0, 0, staff_kpi_query, staff_kpi_render
};

int
staff_kpi(struct http_request *req)
{
	return (staff_page_run(req, &staff_kpi_spec));
}

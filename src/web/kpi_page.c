/*
 * GET /psd2/statistics?quarter=2026Q4 (HTML, en/de/nl) and
 * GET /psd2/statistics.csv?quarter=2026Q4 on the public listener: the
 * bank's published statistics of the dedicated interface and of its
 * customer interface (the PSU pages), side by side, for anyone to read.
 * Without a quarter, the current one. The figures come from
 * kpi_report_json and kpi_report_csv (src/db/functions/80_kpi.sql), the
 * same as psd2ctl report kpi prints.
 */
#include <sys/types.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "db/db.h"
#include "web/forms.h"
#include "web/kpi_page.h"
#include "web/pages.h"

int	kpi_statistics(struct http_request *);
int	kpi_statistics_csv(struct http_request *);

struct kpi_ctx {
	struct db_query	q;
};

/* The report's column order (kpi_report): ais, pis, funds, oauth, psu. */
static const char *const	kpi_class_keys[] = {
	"kpi_class_ais", "kpi_class_pis", "kpi_class_funds",
	"kpi_class_oauth", "kpi_class_psu_pages"
};

int
kpi_quarter_valid(const char *q)
{
	if (q == NULL || strlen(q) != 6 || !isdigit((unsigned char)q[0]) ||
	    !isdigit((unsigned char)q[1]) || !isdigit((unsigned char)q[2]) ||
	    !isdigit((unsigned char)q[3]) || q[4] != 'Q' ||
	    q[5] < '1' || q[5] > '4')
		return (0);
	return (q[0] == '2' || (q[0] == '1' && q[1] == '9'));
}

json_t *
kpi_page_data(struct http_request *req, const char *text)
{
	json_t		*data, *classes;
	json_error_t	 jerr;
	size_t		 i;

	if (text == NULL || (data = json_loads(text, 0, &jerr)) == NULL)
		return (NULL);
	classes = json_array();
	for (i = 0; i < sizeof(kpi_class_keys) / sizeof(kpi_class_keys[0]);
	    i++)
		json_array_append_new(classes, json_pack("{s:s}", "name",
		    pages_text(req, kpi_class_keys[i])));
	json_object_set_new(data, "classes", classes);
	return (data);
}

static void
kpi_ctx_free(struct http_request *req)
{
	struct kpi_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
}

static enum db_next
kpi_html_answer(struct http_request *req, void *arg)
{
	struct kpi_ctx	*ctx = arg;
	json_t		*data;

	if ((data = kpi_page_data(req, db_rows(&ctx->q) == 1 ?
	    db_value(&ctx->q, 0, 0) : NULL)) == NULL) {
		respond_server_error(req, "statistics json");
		return (DB_ANSWERED);
	}
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "kpi_title")));
	json_object_set_new(data, "wide", json_true());
	pages_render(req, 200, "kpi_statistics", data);
	return (DB_ANSWERED);
}

static enum db_next
kpi_csv_answer(struct http_request *req, void *arg)
{
	struct kpi_ctx	*ctx = arg;
	const char	*csv;
	char		 disp[96];

	if (db_rows(&ctx->q) != 1) {
		respond_server_error(req, "statistics csv");
		return (DB_ANSWERED);
	}
	csv = db_value(&ctx->q, 0, 0);
	snprintf(disp, sizeof(disp), "attachment; filename=\"statistics-%s"
	    ".csv\"", db_value(&ctx->q, 0, 1));
	http_response_header(req, "content-disposition", disp);
	respond_raw(req, 200, "text/csv; charset=utf-8; header=present", csv,
	    strlen(csv));
	return (DB_ANSWERED);
}

/* 0 with the query started, -1 when it answered 400. */
static int
kpi_begin(struct http_request *req, const char *sql, int html)
{
	static const char	 bad[] = "quarter: YYYYQn, e.g. 2026Q4\n";
	struct kpi_ctx		*ctx;
	const char		*q;

	http_populate_get(req);
	q = forms_arg(req, "quarter");
	if (q != NULL && *q != '\0' && !kpi_quarter_valid(q)) {
		if (html) {
			pages_message(req, 400, "error_title",
			    "kpi_bad_quarter");
		} else {
			respond_raw(req, 400, "text/plain; charset=utf-8",
			    bad, sizeof(bad) - 1);
		}
		return (-1);
	}
	ctx = http_state_create(req, sizeof(*ctx), kpi_ctx_free);
	db_query_begin(&ctx->q, req, sql);
	db_param(&ctx->q, q != NULL && *q != '\0' ? q : NULL);
	return (0);
}

int
kpi_statistics(struct http_request *req)
{
	struct kpi_ctx	*ctx;

	if (!http_state_exists(req) && kpi_begin(req, "SELECT "
	    "kpi_report_json(coalesce($1, kpi_current_quarter()))", 1) == -1)
		return (KORE_RESULT_OK);
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, kpi_html_answer, ctx, "statistics"));
}

int
kpi_statistics_csv(struct http_request *req)
{
	struct kpi_ctx	*ctx;

	if (!http_state_exists(req) && kpi_begin(req, "SELECT "
	    "kpi_report_csv(q), q FROM coalesce($1, kpi_current_quarter()) "
	    "AS q", 0) == -1)
		return (KORE_RESULT_OK);
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, kpi_csv_answer, ctx, "statistics"));
}

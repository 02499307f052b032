/*
 * Fraud marks and the fraud statistics (EBA/GL/2018/05), every staff
 * role: GET /staff/fraud lists the marked payments (filter, pager), finds
 * a payment by id and downloads a half-year's statistics;
 * GET /staff/fraud/payment shows one payment with every act on it and a
 * form to mark, correct or withdraw (a reason required); POST
 * /staff/fraud/confirm asks to confirm, POST /staff/fraud/mark does it
 * (staff_fraud_act: the mark and its audit row in one transaction);
 * GET /staff/fraud/report.csv is the CSV of psd2ctl report fraud --csv.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/crypto.h"
#include "common/settings.h"
#include "db/db.h"
#include "staff/staff.h"
#include "staff/staff_page.h"
#include "web/forms.h"
#include "web/pages.h"

int	staff_fraud(struct http_request *);
int	staff_fraud_payment(struct http_request *);
int	staff_fraud_confirm(struct http_request *);
int	staff_fraud_mark(struct http_request *);
int	staff_fraud_report(struct http_request *);

#define FRAUD_COUNTRY_DEFAULT	"DE"

static const char *const fraud_keep[] = { "type", "by", "psu", NULL };
static const char *const fraud_types[] = { "issued_by_fraudster",
	"modified_by_fraudster", "payer_manipulated", NULL };
static const char *const fraud_actions[] = { "mark", "correct", "withdraw",
	NULL };

/* "2026H2": a year and a half. */
static int
fraud_half_ok(const char *v)
{
	return (v != NULL && strlen(v) == 6 &&
	    strspn(v, "0123456789") == 4 && v[4] == 'H' &&
	    (v[5] == '1' || v[5] == '2'));
}

/* Options of a select: value, its words, the one asked for selected. */
static json_t *
fraud_options(struct http_request *req, const char *const *list,
    const char *prefix, const char *want)
{
	json_t	*options;
	char	 key[64];
	size_t	 i;

	options = json_array();
	for (i = 0; list[i] != NULL; i++) {
		snprintf(key, sizeof(key), "%s%s", prefix, list[i]);
		json_array_append_new(options, json_pack("{s:s, s:s, s:b}",
		    "value", list[i], "text", pages_text(req, key),
		    "selected", want != NULL && strcmp(want, list[i]) == 0));
	}
	return (options);
}

static void
fraud_type_text(struct http_request *req, json_t *o)
{
	const char	*type;
	char		 key[64];

	type = json_string_value(json_object_get(o, "type"));
	snprintf(key, sizeof(key), "staff_fraud_type_%s",
	    type != NULL ? type : "withdrawn");
	json_object_set_new(o, "type_text", json_string(pages_text(req, key)));
}

static int
fraud_list_query(struct http_request *req, struct staff_page *p)
{
	int	page;

	if (staff_page_number(req, p, &page) == -1)
		return (-1);
	db_query_begin(&p->q, req, "SELECT staff_fraud_json($1, $2, $3, $4, "
	    "$5)");
	db_param(&p->q, staff_page_arg(req, "type"));
	db_param(&p->q, staff_page_arg(req, "by"));
	db_param(&p->q, staff_page_arg(req, "psu"));
	db_param_int(&p->q, page);
	db_param_int(&p->q, STAFF_LIST_PAGE);
	return (0);
}

static void
fraud_list_render(struct http_request *req, struct staff_page *p)
{
	static const char *const	 type_filter[] = { "issued_by_fraudster",
		"modified_by_fraudster", "payer_manipulated", "withdrawn",
		NULL };
	static const char *const	 by_filter[] = { "psu", "staff", NULL };
	json_t				*data, *row;
	size_t				 i;

	if ((data = staff_page_json(p)) == NULL) {
		respond_server_error(req, "staff fraud json");
		return;
	}
	json_array_foreach(json_object_get(data, "rows"), i, row)
		fraud_type_text(req, row);
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "staff_fraud_title")));
	json_object_set_new(data, "types", fraud_options(req, type_filter,
	    "staff_fraud_type_", staff_page_arg(req, "type")));
	json_object_set_new(data, "bys", fraud_options(req, by_filter,
	    "staff_fraud_by_", staff_page_arg(req, "by")));
	if (staff_page_arg(req, "psu") != NULL)
		json_object_set_new(data, "psu",
		    json_string(staff_page_arg(req, "psu")));
	staff_pager(req, data, "/staff/fraud", fraud_keep);
	staff_render(req, 200, "staff_fraud", data, &p->who);
}

static const struct staff_page_spec fraud_list_spec = {
	0, 0, fraud_list_query, fraud_list_render
};

int
staff_fraud(struct http_request *req)
{
	return (staff_page_run(req, &fraud_list_spec));
}

/* The payment named by "id" (GET) or "payment_id" (the forms). */
static int
fraud_payment_query(struct http_request *req, struct staff_page *p)
{
	const char	*id;

	if ((id = staff_page_arg(req, "id")) == NULL)
		id = staff_page_arg(req, "payment_id");
	if (id == NULL || !crypto_is_uuid(id)) {
		staff_message(req, 400, "error_title", "staff_fraud_bad_id",
		    &p->who);
		return (-1);
	}
	db_query_begin(&p->q, req, "SELECT staff_fraud_payment_json($1)");
	db_param(&p->q, id);
	return (0);
}

/* The payment's data with its words, or NULL when it answered 404. */
static json_t *
fraud_payment_data(struct http_request *req, struct staff_page *p)
{
	json_t	*data, *act;
	size_t	 i;

	if ((data = staff_page_json(p)) == NULL) {
		staff_message(req, 404, "error_title", "staff_fraud_unknown",
		    &p->who);
		return (NULL);
	}
	fraud_type_text(req, data);
	json_object_set_new(data, "marked", json_boolean(
	    json_is_string(json_object_get(data, "type"))));
	json_array_foreach(json_object_get(data, "history"), i, act)
		fraud_type_text(req, act);
	return (data);
}

static void
fraud_payment_render(struct http_request *req, struct staff_page *p)
{
	static const char *const	 unmarked[] = { "mark", NULL };
	static const char *const	 marked[] = { "correct", "withdraw",
		NULL };
	json_t				*data;

	if ((data = fraud_payment_data(req, p)) == NULL)
		return;
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "staff_fraud_payment_title")));
	json_object_set_new(data, "types", fraud_options(req, fraud_types,
	    "staff_fraud_type_", NULL));
	json_object_set_new(data, "actions", fraud_options(req,
	    json_is_true(json_object_get(data, "marked")) ? marked : unmarked,
	    "staff_fraud_act_", NULL));
	staff_render(req, 200, "staff_fraud_payment", data, &p->who);
}

static const struct staff_page_spec fraud_payment_spec = {
	0, 0, fraud_payment_query, fraud_payment_render
};

int
staff_fraud_payment(struct http_request *req)
{
	return (staff_page_run(req, &fraud_payment_spec));
}

/* The posted act: action, type (not for withdraw) and a reason. */
static int
fraud_act_ok(struct http_request *req)
{
	const char	*action = staff_page_arg(req, "action");

	if (!staff_word_in(action, fraud_actions) ||
	    staff_page_arg(req, "reason") == NULL)
		return (0);
	return (strcmp(action, "withdraw") == 0 ||
	    staff_word_in(staff_page_arg(req, "type"), fraud_types));
}

static int
fraud_confirm_query(struct http_request *req, struct staff_page *p)
{
	if (!fraud_act_ok(req)) {
		staff_message(req, 400, "error_title", "staff_fraud_bad_act",
		    &p->who);
		return (-1);
	}
	return (fraud_payment_query(req, p));
}

static void
fraud_confirm_render(struct http_request *req, struct staff_page *p)
{
	json_t		*data;
	const char	*action, *type;
	char		 key[64];

	if ((data = fraud_payment_data(req, p)) == NULL)
		return;
	action = staff_page_arg(req, "action");
	type = strcmp(action, "withdraw") == 0 ? NULL :
	    staff_page_arg(req, "type");
	snprintf(key, sizeof(key), "staff_fraud_confirm_%s", action);
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "staff_confirm_title")));
	json_object_set_new(data, "question", json_string(pages_text(req,
	    key)));
	json_object_set_new(data, "act", json_pack("{s:s, s:s?, s:s}",
	    "action", action, "type", type, "reason",
	    staff_page_arg(req, "reason")));
	if (type != NULL) {
		snprintf(key, sizeof(key), "staff_fraud_type_%s", type);
		json_object_set_new(json_object_get(data, "act"), "type_text",
		    json_string(pages_text(req, key)));
	}
	staff_render(req, 200, "staff_fraud_confirm", data, &p->who);
}

static const struct staff_page_spec fraud_confirm_spec = {
	0, 1, fraud_confirm_query, fraud_confirm_render
};

int
staff_fraud_confirm(struct http_request *req)
{
	return (staff_page_run(req, &fraud_confirm_spec));
}

static int
fraud_mark_query(struct http_request *req, struct staff_page *p)
{
	const char	*id = staff_page_arg(req, "payment_id");
	char		 actor[STAFF_USERNAME_MAX + 8];

	if (!fraud_act_ok(req) || id == NULL || !crypto_is_uuid(id)) {
		staff_message(req, 400, "error_title", "staff_fraud_bad_act",
		    &p->who);
		return (-1);
	}
	staff_page_actor(p, actor, sizeof(actor));
	db_query_begin(&p->q, req,
	    "SELECT staff_fraud_act($1, $2, $3, $4, $5)");
	db_param(&p->q, actor);
	db_param(&p->q, id);
	db_param(&p->q, staff_page_arg(req, "action"));
	db_param(&p->q, staff_page_arg(req, "type"));
	db_param(&p->q, staff_page_arg(req, "reason"));
	return (0);
}

static void
fraud_mark_render(struct http_request *req, struct staff_page *p)
{
	static const char *const	 refusals[] = { "unknown",
		"not_executed", "bad_input", "not_marked", "already", "same",
		NULL };
	const char			*result;
	char				 key[64];
	int				 ok;

	result = db_value(&p->q, 0, 0);
	ok = strcmp(result, "ok") == 0;
	if (!ok && !staff_word_in(result, refusals)) {
		respond_server_error(req, "staff fraud result");
		return;
	}
	snprintf(key, sizeof(key), "staff_fraud_%s_%s", ok ? "done" : "result",
	    ok ? staff_page_arg(req, "action") : result);
	staff_message(req, ok ? 200 : strcmp(result, "unknown") == 0 ? 404 :
	    409, "staff_fraud_title", key, &p->who);
}

static const struct staff_page_spec fraud_mark_spec = {
	0, 1, fraud_mark_query, fraud_mark_render
};

int
staff_fraud_mark(struct http_request *req)
{
	return (staff_page_run(req, &fraud_mark_spec));
}

static int
fraud_report_query(struct http_request *req, struct staff_page *p)
{
	if (!fraud_half_ok(staff_page_arg(req, "half"))) {
		staff_message(req, 400, "error_title", "staff_fraud_bad_half",
		    &p->who);
		return (-1);
	}
	db_query_begin(&p->q, req, "SELECT fraud_report_csv($1, $2)");
	db_param(&p->q, staff_page_arg(req, "half"));
	db_param(&p->q, settings_get("bank_country", FRAUD_COUNTRY_DEFAULT));
	return (0);
}

static void
fraud_report_render(struct http_request *req, struct staff_page *p)
{
	const char	*csv;
	char		 disposition[80];

	if (db_rows(&p->q) != 1 || db_is_null(&p->q, 0, 0)) {
		respond_server_error(req, "staff fraud report");
		return;
	}
	csv = db_value(&p->q, 0, 0);
	snprintf(disposition, sizeof(disposition),
	    "attachment; filename=\"fraud-%s.csv\"",
	    staff_page_arg(req, "half"));
	http_response_header(req, "content-disposition", disposition);
	respond_raw(req, 200, "text/csv; charset=utf-8", csv, strlen(csv));
}

static const struct staff_page_spec fraud_report_spec = {
	0, 0, fraud_report_query, fraud_report_render
};

int
staff_fraud_report(struct http_request *req)
{
	return (staff_page_run(req, &fraud_report_spec));
}

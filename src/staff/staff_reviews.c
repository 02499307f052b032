/*
 * The review queue of transaction monitoring (every role): payments the
 * risk assessment held (src/db/functions/63_pis_risk.sql), the detail of
 * one (the rules that fired with their values, the PSU's history), and
 * four eyes: one member proposes release or reject, another confirms
 * (the proposer is refused). A release starts SCA as for a payment never
 * held; a reject ends it RJCT.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/crypto.h"
#include "db/db.h"
#include "staff/staff.h"
#include "staff/staff_page.h"
#include "web/forms.h"
#include "web/pages.h"

int	staff_reviews(struct http_request *);
int	staff_review(struct http_request *);
int	staff_review_act(struct http_request *);

/* The filter's review statuses; none: those waiting (open, proposed). */
static const char *const reviews_statuses[] = { "open", "proposed",
	"released", "rejected", NULL };

static const char *const reviews_keep[] = { "status", "q", NULL };

/* The "id" argument if it is a payment id, else NULL. */
static const char *
review_id(struct http_request *req)
{
	const char	*id = staff_page_arg(req, "id");

	return (id != NULL && crypto_is_uuid(id) ? id : NULL);
}

/* ---- GET /staff/reviews ------------------------------------------- */

static int
reviews_query(struct http_request *req, struct staff_page *p)
{
	const char	*status = staff_page_arg(req, "status");
	int		 page, i;

	if (staff_page_number(req, p, &page) == -1)
		return (-1);
	for (i = 0; status != NULL && reviews_statuses[i] != NULL; i++)
		if (strcmp(status, reviews_statuses[i]) == 0)
			break;
	if (status != NULL && reviews_statuses[i] == NULL) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	db_query_begin(&p->q, req, "SELECT staff_reviews_json($1, $2, $3, "
	    "$4)");
	db_param(&p->q, status);
	db_param(&p->q, staff_page_arg(req, "q"));
	db_param_int(&p->q, page);
	db_param_int(&p->q, STAFF_LIST_PAGE);
	return (0);
}

static void
reviews_render(struct http_request *req, struct staff_page *p)
{
	const char	*want = staff_page_arg(req, "status");
	json_t		*data, *list;
	size_t		 i;

	if ((data = staff_page_json(p)) == NULL) {
		respond_server_error(req, "staff reviews json");
		return;
	}
	list = json_array();
	for (i = 0; reviews_statuses[i] != NULL; i++)
		json_array_append_new(list, json_pack("{s:s, s:b}", "value",
		    reviews_statuses[i], "selected", want != NULL &&
		    strcmp(want, reviews_statuses[i]) == 0));
	json_object_set_new(data, "statuses", list);
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "staff_reviews_title")));
	if (staff_page_arg(req, "q") != NULL)
		json_object_set_new(data, "q",
		    json_string(staff_page_arg(req, "q")));
	staff_pager(req, data, "/staff/reviews", reviews_keep);
	staff_render(req, 200, "staff_reviews", data, &p->who);
}

static const struct staff_page_spec reviews_spec = {
	0, 0, reviews_query, reviews_render
};

int
staff_reviews(struct http_request *req)
{
	return (staff_page_run(req, &reviews_spec));
}

/* ---- GET /staff/reviews/payment?id= ------------------------------- */

static int
review_query(struct http_request *req, struct staff_page *p)
{
	const char	*id = review_id(req);

	if (id == NULL) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	db_query_begin(&p->q, req, "SELECT staff_review_json($1::uuid)");
	db_param(&p->q, id);
	return (0);
}

static void
review_render(struct http_request *req, struct staff_page *p)
{
	json_t	*review;

	if ((review = staff_page_json(p)) == NULL) {
		staff_message(req, 404, "error_title", "staff_result_no_review",
		    &p->who);
		return;
	}
	staff_render(req, 200, "staff_review", json_pack("{s:s, s:o}",
	    "title", pages_text(req, "staff_review_title"), "review", review),
	    &p->who);
}

static const struct staff_page_spec review_spec = {
	0, 0, review_query, review_render
};

int
staff_review(struct http_request *req)
{
	return (staff_page_run(req, &review_spec));
}

/* ---- POST /staff/reviews/action ----------------------------------- */

static const char *const review_ops[] = { "propose_release",
	"propose_reject", "confirm", "withdraw", NULL };

static int
review_act_query(struct http_request *req, struct staff_page *p)
{
	const char	*op = staff_page_arg(req, "op");
	char		 actor[STAFF_USERNAME_MAX + 8];
	int		 i;

	for (i = 0; op != NULL && review_ops[i] != NULL; i++)
		if (strcmp(op, review_ops[i]) == 0)
			break;
	if (op == NULL || review_ops[i] == NULL || review_id(req) == NULL) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	staff_page_actor(p, actor, sizeof(actor));
	db_query_begin(&p->q, req, "SELECT staff_review_action($1, $2, "
	    "$3::uuid)");
	db_param(&p->q, actor);
	db_param(&p->q, op);
	db_param(&p->q, review_id(req));
	return (0);
}

static void
review_act_render(struct http_request *req, struct staff_page *p)
{
	static const char *const results[] = { "ok", "no_review",
		"bad_status", "same_person", "no_device", NULL };
	const char	*result, *op;
	char		 key[64];
	int		 i, ok;

	result = db_value(&p->q, 0, 0);
	for (i = 0; results[i] != NULL; i++)
		if (strcmp(result, results[i]) == 0)
			break;
	if (results[i] == NULL) {
		respond_server_error(req, "staff review result");
		return;
	}
	if ((op = staff_page_arg(req, "op")) == NULL)
		op = "";
	ok = strcmp(result, "ok") == 0;
	snprintf(key, sizeof(key), ok ? "staff_done_review_%s" :
	    "staff_result_review_%s", ok ? op : result);
	staff_message(req, ok ? 200 : 409, "staff_reviews_title", key,
	    &p->who);
}

static const struct staff_page_spec review_act_spec = {
	0, 1, review_act_query, review_act_render
};

int
staff_review_act(struct http_request *req)
{
	return (staff_page_run(req, &review_act_spec));
}

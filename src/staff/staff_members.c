/*
 * Staff accounts (admin only): GET /staff/members lists them
 * with a link per change to a confirmation page (GET
 * /staff/members/confirm), POST /staff/members/action changes the role,
 * disables (ending the member's sessions), enables or unlocks, each an
 * audit row. New members are added with psd2ctl staff add.
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

int	staff_members(struct http_request *);
int	staff_member_confirm(struct http_request *);
int	staff_member_act(struct http_request *);

static const char *const member_ops[] = {
	"make_admin", "make_operator", "disable", "enable", "unlock", NULL
};

static const char *
member_arg(struct http_request *req, const char *name)
{
	const char	*v = forms_arg(req, name);

	return (v != NULL && *v != '\0' ? v : NULL);
}

static int
member_op_ok(struct http_request *req)
{
	const char	*op = member_arg(req, "op");
	size_t		 i;

	for (i = 0; op != NULL && member_ops[i] != NULL; i++) {
		if (strcmp(op, member_ops[i]) == 0)
			return (member_arg(req, "username") != NULL);
	}
	return (0);
}

static const char *const members_keep[] = { "q", NULL };

static int
members_query(struct http_request *req, struct staff_page *p)
{
	int	page;

	if (staff_page_number(req, p, &page) == -1)
		return (-1);
	db_query_begin(&p->q, req, "SELECT staff_members_json($1, $2, $3)");
	db_param(&p->q, staff_page_arg(req, "q"));
	db_param_int(&p->q, page);
	db_param_int(&p->q, STAFF_LIST_PAGE);
	return (0);
}

static void
members_render(struct http_request *req, struct staff_page *p)
{
	json_t	*data;

	if ((data = staff_page_json(p)) == NULL) {
		respond_server_error(req, "staff members json");
		return;
	}
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "staff_members_title")));
	if (staff_page_arg(req, "q") != NULL)
		json_object_set_new(data, "q",
		    json_string(staff_page_arg(req, "q")));
	staff_pager(req, data, "/staff/members", members_keep);
	staff_render(req, 200, "staff_members", data, &p->who);
}

static const struct staff_page_spec members_spec = {
	1, 0, members_query, members_render
};

int
staff_members(struct http_request *req)
{
	return (staff_page_run(req, &members_spec));
}

static int
member_confirm_query(struct http_request *req, struct staff_page *p)
{
	if (!member_op_ok(req)) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	db_query_begin(&p->q, req, "SELECT 1 FROM staff WHERE username = $1");
	db_param(&p->q, member_arg(req, "username"));
	return (0);
}

static void
member_confirm_render(struct http_request *req, struct staff_page *p)
{
	const char	*op, *username;
	char		 key[64];

	op = member_arg(req, "op");
	username = member_arg(req, "username");
	if (db_rows(&p->q) != 1 || op == NULL || username == NULL) {
		staff_message(req, 404, "error_title",
		    "staff_result_no_staff", &p->who);
		return;
	}
	snprintf(key, sizeof(key), "staff_confirm_%s", op);
	staff_render(req, 200, "staff_member_confirm", json_pack(
	    "{s:s, s:s, s:s, s:s}", "title", pages_text(req,
	    "staff_confirm_title"), "username", username,
	    "op", op, "question", pages_text(req, key)),
	    &p->who);
}

static const struct staff_page_spec member_confirm_spec = {
	1, 0, member_confirm_query, member_confirm_render
};

int
staff_member_confirm(struct http_request *req)
{
	return (staff_page_run(req, &member_confirm_spec));
}

static int
member_act_query(struct http_request *req, struct staff_page *p)
{
	char	actor[STAFF_USERNAME_MAX + 8];

	if (!member_op_ok(req)) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	staff_page_actor(p, actor, sizeof(actor));
	db_query_begin(&p->q, req,
	    "SELECT staff_member_action($1, $2, $3, $4)");
	db_param(&p->q, actor);
	db_param_int(&p->q, p->who.id);
	db_param(&p->q, member_arg(req, "op"));
	db_param(&p->q, member_arg(req, "username"));
	return (0);
}

static void
member_act_render(struct http_request *req, struct staff_page *p)
{
	const char	*result, *op;
	char		 key[64];
	int		 ok;

	result = db_value(&p->q, 0, 0);
	if ((op = member_arg(req, "op")) == NULL)
		op = "";
	ok = strcmp(result, "ok") == 0;
	if (!ok && strcmp(result, "no_staff") != 0 &&
	    strcmp(result, "self") != 0) {
		respond_server_error(req, "staff member result");
		return;
	}
	snprintf(key, sizeof(key), ok ? "staff_done_%s" : "staff_result_%s",
	    ok ? op : result);
	staff_message(req, ok ? 200 : 409, "staff_members_title", key,
	    &p->who);
}

static const struct staff_page_spec member_act_spec = {
	1, 1, member_act_query, member_act_render
};

int
staff_member_act(struct http_request *req)
{
	return (staff_page_run(req, &member_act_spec));
}

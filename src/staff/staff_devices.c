/*
 * The authenticator pages: the list (filter by status, search
 * by serial or PSU), a confirmation page for every action (it works
 * without JavaScript; for an assignment it searches the PSU), the action
 * itself, and a PSU's page. Every change goes through
 * staff_device_action (70_staff.sql): one transaction with its audit
 * row; an assignment waits for a second staff member's approval.
 * Enrolment verifies the attestation first (staff_enrol.c).
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "db/db.h"
#include "staff/staff.h"
#include "staff/staff_enrol.h"
#include "staff/staff_page.h"
#include "web/forms.h"
#include "web/pages.h"

int	staff_devices(struct http_request *);
int	staff_device_confirm(struct http_request *);
int	staff_device_act(struct http_request *);
int	staff_psu_page(struct http_request *);

static const char *const staff_device_actions[] = {
	"enrol", "assign_request", "assign_approve", "assign_reject",
	"unassign", "block", "retire", NULL
};

static const char *const staff_device_results[] = {
	"ok", "no_device", "no_psu", "bad_status", "psu_has_device",
	"pending_exists", "no_request", "same_person", "key_changed",
	"attestation_invalid", NULL
};

/* Each device gets its status in the page's language. */
static void
staff_label_devices(struct http_request *req, json_t *list)
{
	json_t		*d;
	const char	*status;
	size_t		 i;
	char		 key[64];

	json_array_foreach(list, i, d) {
		status = json_string_value(json_object_get(d, "status"));
		snprintf(key, sizeof(key), "device_status_%s",
		    status != NULL ? status : "");
		json_object_set_new(d, "status_label",
		    json_string(pages_text(req, key)));
	}
}

/* ---- GET /staff/devices -------------------------------------------- */

static const char *const devices_keep[] = { "status", "q", NULL };

static int
devices_query(struct http_request *req, struct staff_page *p)
{
	int	page;

	if (staff_page_number(req, p, &page) == -1)
		return (-1);
	db_query_begin(&p->q, req, "SELECT staff_devices_json($1, $2, $3, "
	    "$4)");
	db_param(&p->q, staff_page_arg(req, "status"));
	db_param(&p->q, staff_page_arg(req, "q"));
	db_param_int(&p->q, page);
	db_param_int(&p->q, STAFF_LIST_PAGE);
	return (0);
}

static void
devices_render(struct http_request *req, struct staff_page *p)
{
	json_t		*data, *statuses;
	const char	*status, *names[] = { "not_enrolled", "active",
			    "blocked", "retired", NULL };
	char		 key[64];
	size_t		 i;

	if ((data = staff_page_json(p)) == NULL) {
		respond_server_error(req, "staff devices json");
		return;
	}
	staff_label_devices(req, json_object_get(data, "devices"));
	staff_pager(req, data, "/staff/devices", devices_keep);
	status = staff_page_arg(req, "status");
	statuses = json_array();
	for (i = 0; names[i] != NULL; i++) {
		snprintf(key, sizeof(key), "device_status_%s", names[i]);
		json_array_append_new(statuses, json_pack("{s:s, s:s, s:b}",
		    "value", names[i], "label", pages_text(req, key),
		    "selected", status && strcmp(status, names[i]) == 0));
	}
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "staff_devices_title")));
	json_object_set_new(data, "statuses", statuses);
	if (staff_page_arg(req, "q") != NULL)
		json_object_set_new(data, "q",
		    json_string(staff_page_arg(req, "q")));
	staff_render(req, 200, "staff_devices", data, &p->who);
}

static const struct staff_page_spec devices_spec = {
	0, 0, devices_query, devices_render
};

int
staff_devices(struct http_request *req)
{
	return (staff_page_run(req, &devices_spec));
}

/* ---- GET /staff/devices/confirm?serial=&action=[&q=] ---------------- */

static int
confirm_query(struct http_request *req, struct staff_page *p)
{
	if (!staff_word_in(staff_page_arg(req, "action"), staff_device_actions) ||
	    staff_page_arg(req, "serial") == NULL) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	db_query_begin(&p->q, req,
	    "SELECT staff_device_confirm_json($1, $2)");
	db_param(&p->q, staff_page_arg(req, "serial"));
	db_param(&p->q, staff_page_arg(req, "q"));
	return (0);
}

static void
confirm_render(struct http_request *req, struct staff_page *p)
{
	json_t		*data;
	const char	*action;
	char		 key[64];

	if ((data = staff_page_json(p)) == NULL) {
		staff_message(req, 404, "error_title", "staff_result_no_device",
		    &p->who);
		return;
	}
	/* Checked by confirm_query; the fallback keeps the compiler sure. */
	if ((action = staff_page_arg(req, "action")) == NULL)
		action = "";
	snprintf(key, sizeof(key), "staff_confirm_%s", action);
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "staff_confirm_title")));
	json_object_set_new(data, "action", json_string(action));
	json_object_set_new(data, "question", json_string(pages_text(req,
	    key)));
	json_object_set_new(data, "is_assign",
	    json_boolean(strcmp(action, "assign_request") == 0));
	if (staff_page_arg(req, "q") != NULL)
		json_object_set_new(data, "q", json_string(staff_page_arg(req,
		    "q")));
	staff_render(req, 200, "staff_confirm", data, &p->who);
}

static const struct staff_page_spec confirm_spec = {
	0, 0, confirm_query, confirm_render
};

int
staff_device_confirm(struct http_request *req)
{
	return (staff_page_run(req, &confirm_spec));
}

/* ---- POST /staff/devices/action ------------------------------------ */

static int
act_query(struct http_request *req, struct staff_page *p)
{
	char	actor[STAFF_USERNAME_MAX + 8];

	if (!staff_word_in(staff_page_arg(req, "action"), staff_device_actions) ||
	    staff_page_arg(req, "serial") == NULL ||
	    (strcmp(staff_page_arg(req, "action"), "assign_request") == 0 &&
	    staff_page_arg(req, "psu") == NULL)) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	if (strcmp(staff_page_arg(req, "action"), "enrol") == 0) {
		staff_enrol_query(req, p, staff_page_arg(req, "serial"));
		return (0);
	}
	staff_page_actor(p, actor, sizeof(actor));
	db_query_begin(&p->q, req,
	    "SELECT staff_device_action($1, $2, $3, $4)");
	db_param(&p->q, actor);
	db_param(&p->q, staff_page_arg(req, "action"));
	db_param(&p->q, staff_page_arg(req, "serial"));
	db_param(&p->q, staff_page_arg(req, "psu"));
	return (0);
}

static void
act_render(struct http_request *req, struct staff_page *p)
{
	const char	*action;
	char		 key[64];

	if (!staff_action_ok(req, p, staff_device_results,
	    "staff_devices_title", "staff_result_"))
		return;
	if ((action = staff_page_arg(req, "action")) == NULL)
		action = "";
	snprintf(key, sizeof(key), "staff_done_%s", action);
	staff_message(req, 200, "staff_devices_title", key, &p->who);
}

static const struct staff_page_spec act_spec = {
	0, 1, act_query, act_render
};

int
staff_device_act(struct http_request *req)
{
	return (staff_page_run(req, &act_spec));
}

/* ---- GET /staff/psu?username= -------------------------------------- */

static int
psu_query(struct http_request *req, struct staff_page *p)
{
	if (staff_page_arg(req, "username") == NULL) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	db_query_begin(&p->q, req, "SELECT staff_psu_json($1)");
	db_param(&p->q, staff_page_arg(req, "username"));
	return (0);
}

static void
psu_render(struct http_request *req, struct staff_page *p)
{
	json_t	*data;

	if ((data = staff_page_json(p)) == NULL) {
		staff_message(req, 404, "error_title", "staff_result_no_psu",
		    &p->who);
		return;
	}
	staff_label_devices(req, json_object_get(data, "devices"));
	json_object_set_new(data, "title", json_string(pages_text(req,
	    "staff_psu_title")));
	staff_render(req, 200, "staff_psu", data, &p->who);
}

static const struct staff_page_spec psu_spec = {
	0, 0, psu_query, psu_render
};

int
staff_psu_page(struct http_request *req)
{
	return (staff_page_run(req, &psu_spec));
}

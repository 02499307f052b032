/*
 * POST /staff/psu/key: a PSU's lost passkey or security key removed by
 * staff with four eyes, from the PSU's page (/staff/psu): one member
 * proposes the removal with a reason, another confirms it (the proposer
 * is refused), anyone withdraws a proposal. Every role may; each step is
 * an audit row (staff_psu_key_action, 22_psu_keys.sql). The PSU removes
 * their own keys on /auth/keys without staff.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "common/encoding.h"
#include "db/db.h"
#include "staff/staff.h"
#include "staff/staff_page.h"
#include "web/pages.h"

int	staff_psu_key_act(struct http_request *);

static const char *const key_actions[] = {
	"propose", "withdraw", "confirm", NULL
};

static const char *const key_results[] = {
	"ok", "no_key", "no_reason", "bad_status", "same_person", NULL
};

static int
key_query(struct http_request *req, struct staff_page *p)
{
	const char	*id;
	char		 actor[STAFF_USERNAME_MAX + 8];

	id = staff_page_arg(req, "key_id");
	if (!staff_word_in(staff_page_arg(req, "action"), key_actions) ||
	    !row_id_text(id)) {
		staff_message(req, 400, "error_title", "staff_bad_request",
		    &p->who);
		return (-1);
	}
	staff_page_actor(p, actor, sizeof(actor));
	db_query_begin(&p->q, req,
	    "SELECT staff_psu_key_action($1, $2, $3, $4)");
	db_param(&p->q, actor);
	db_param(&p->q, staff_page_arg(req, "action"));
	db_param(&p->q, id);
	db_param(&p->q, staff_page_arg(req, "reason"));
	return (0);
}

static void
key_render(struct http_request *req, struct staff_page *p)
{
	char	key[64];

	if (!staff_action_ok(req, p, key_results, "staff_psu_keys",
	    "staff_key_result_"))
		return;
	snprintf(key, sizeof(key), "staff_done_key_%s",
	    staff_page_arg(req, "action"));
	staff_message(req, 200, "staff_psu_keys", key, &p->who);
}

static const struct staff_page_spec key_spec = {
	0, 1, key_query, key_render
};

int
staff_psu_key_act(struct http_request *req)
{
	return (staff_page_run(req, &key_spec));
}

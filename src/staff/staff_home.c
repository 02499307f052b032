/*
 * GET /staff/home (the member's start page) and POST /staff/logout.
 */
#include <sys/types.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "db/db.h"
#include "staff/staff.h"
#include "web/forms.h"
#include "web/pages.h"

int	staff_home(struct http_request *);
int	staff_logout(struct http_request *);

enum staff_home_phase {
	SH_SESSION,
	SH_LOGOUT
};

struct staff_home_ctx {
	enum staff_home_phase	phase;
	struct db_query		q;
	struct staff_who	who;
	int			logout;
};

static void
staff_home_free(struct http_request *req)
{
	struct staff_home_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
}

static enum db_next
staff_home_step(struct http_request *req, void *arg)
{
	struct staff_home_ctx	*ctx = arg;

	switch (ctx->phase) {
	case SH_SESSION:
		if (staff_session_read(&ctx->q, &ctx->who) == -1) {
			staff_to_login(req);
			return (DB_ANSWERED);
		}
		if (!ctx->logout) {
			staff_render(req, 200, "staff_home", json_pack("{s:s}",
			    "title", pages_text(req, "staff_home_title")),
			    &ctx->who);
			return (DB_ANSWERED);
		}
		if (!staff_csrf_valid(req, &ctx->who)) {
			staff_message(req, 403, "error_title",
			    "error_csrf_staff", &ctx->who);
			return (DB_ANSWERED);
		}
		db_query_begin(&ctx->q, req, "SELECT staff_logout($1)");
		db_param_bin(&ctx->q, ctx->who.session_digest, 32);
		ctx->phase = SH_LOGOUT;
		return (DB_QUERY);
	case SH_LOGOUT:
		staff_to_login(req);
		return (DB_ANSWERED);
	}
	respond_server_error(req, "staff home phase");
	return (DB_ANSWERED);
}

static int
staff_home_run(struct http_request *req, int logout)
{
	struct staff_home_ctx	*ctx;

	if (!http_state_exists(req)) {
		ctx = http_state_create(req, sizeof(*ctx), staff_home_free);
		ctx->logout = logout;
		if (logout)
			http_populate_post(req);
		else
			http_populate_get(req);
		if (staff_cookie_digest(req, ctx->who.session_digest) == -1) {
			staff_to_login(req);
			return (KORE_RESULT_OK);
		}
		staff_session_query(&ctx->q, req, ctx->who.session_digest);
		ctx->phase = SH_SESSION;
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, staff_home_step, ctx,
	    "staff home query"));
}

int
staff_home(struct http_request *req)
{
	return (staff_home_run(req, 0));
}

int
staff_logout(struct http_request *req)
{
	return (staff_home_run(req, 1));
}

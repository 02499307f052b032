/*
 * The one polling loop of the OAuth handlers (see oauth.h), as ais_finish
 * is for the AIS endpoints: a handler's steps say what they did, this
 * loop decides whether Kore re-enters the handler.
 */
#include <sys/types.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "db/db.h"
#include "oauth/oauth.h"

int
oauth_finish(struct http_request *req, struct db_query *q, oauth_step step,
    void *ctx, const char *what)
{
	for (;;) {
		switch (db_query_poll(q)) {
		case DB_PENDING:
			return (KORE_RESULT_RETRY);
		case DB_FAILED:
			respond_server_error(req, what);
			return (KORE_RESULT_OK);
		case DB_READY:
			break;
		}
		switch (step(req, ctx)) {
		case OAUTH_ANSWERED:
			return (KORE_RESULT_OK);
		case OAUTH_WAIT:
			return (KORE_RESULT_RETRY);
		case OAUTH_QUERY:
			break;
		}
	}
}

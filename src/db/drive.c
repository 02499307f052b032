/*
 * The one polling loop of the handlers (see db.h): a handler's steps say
 * what they did, this loop decides whether Kore re-enters the handler.
 */
#include <sys/types.h>

#include <kore.h>
#include <http.h>

#include "db/db.h"

int
db_drive(struct http_request *req, struct db_query *q, db_step step,
    void *ctx, const char *what)
{
	for (;;) {
		switch (db_query_poll(q)) {
		case DB_PENDING:
			return (KORE_RESULT_RETRY);
		case DB_FAILED:
			if (what == NULL)
				break;
			db_answer_failed(req, what);
			return (KORE_RESULT_OK);
		case DB_READY:
			break;
		}
		switch (step(req, ctx)) {
		case DB_ANSWERED:
			return (KORE_RESULT_OK);
		case DB_WAIT:
			return (KORE_RESULT_RETRY);
		case DB_QUERY:
			break;
		}
	}
}

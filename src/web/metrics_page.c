/*
 * GET /metrics on the metrics listener only (conf/metrics.conf): the
 * shared counters of every worker, and the device challenges by status
 * and outcome as the database has them (what the daemons and the service
 * decided, whichever instance asked).
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>
#include <http.h>

#include "api/respond.h"
#include "db/db.h"
#include "metrics/metrics.h"

int	page_metrics(struct http_request *);

static const char sql_challenges[] =
    "SELECT status, coalesce(outcome, ''), count(*) FROM device_challenge "
    "GROUP BY 1, 2 ORDER BY 1, 2";

struct metrics_ctx {
	struct db_query	q;
};

static void
metrics_ctx_free(struct http_request *req)
{
	struct metrics_ctx	*ctx = http_state_get(req);

	db_query_end(&ctx->q);
}

static void
metrics_challenges(struct kore_buf *b, struct db_query *q, int ok)
{
	int	i;

	kore_buf_appendf(b, "# HELP psd2_device_challenges Device challenges "
	    "in the database by status and outcome.\n"
	    "# TYPE psd2_device_challenges gauge\n");
	for (i = 0; ok && i < db_rows(q); i++) {
		/* Values come from CHECK-constrained columns: no escaping. */
		kore_buf_appendf(b, "psd2_device_challenges{status=\"%s\","
		    "outcome=\"%s\"} %lld\n", db_value(q, i, 0),
		    db_value(q, i, 1), db_int(q, i, 2));
	}
	kore_buf_appendf(b, "# HELP psd2_device_challenges_read Whether the "
	    "device challenges could be read from the database.\n"
	    "# TYPE psd2_device_challenges_read gauge\n"
	    "psd2_device_challenges_read %d\n", ok);
}

/* The counters, and the challenges unless their query failed. */
static enum db_next
metrics_answer(struct http_request *req, void *arg)
{
	struct metrics_ctx	*ctx = arg;
	struct kore_buf		*b;
	char			*text;
	size_t			 len;

	text = metrics_render(&len);
	b = kore_buf_alloc(len + 1024);
	kore_buf_append(b, text, len);
	kore_free(text);
	metrics_challenges(b, &ctx->q, !db_failed(&ctx->q));
	respond_raw(req, 200, "text/plain; version=0.0.4; charset=utf-8",
	    b->data, b->offset);
	kore_buf_free(b);
	return (DB_ANSWERED);
}

int
page_metrics(struct http_request *req)
{
	struct metrics_ctx	*ctx;

	if (!http_state_exists(req)) {
		ctx = http_state_create(req, sizeof(*ctx), metrics_ctx_free);
		db_query_begin(&ctx->q, req, sql_challenges);
	}
	ctx = http_state_get(req);
	return (db_drive(req, &ctx->q, metrics_answer, ctx, NULL));
}

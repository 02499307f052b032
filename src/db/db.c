/*
 * Async query driver over kore_pgsql. The first call of db_query_poll()
 * sends the query (or waits in Kore's queue for a free connection); later
 * calls follow kore_pgsql's states until the result set is kept and the
 * connection released. A query that could not run because the database
 * is unreachable is remembered for the failure answer (503).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "db/db.h"
#include "metrics/metrics.h"

enum {
	DBQ_NEW,
	DBQ_SENT,
	DBQ_DONE,
	DBQ_FAILED
};

/*
 * The request whose query just failed for want of a connection. Every
 * handler answers DB_FAILED at once with the failure answer, which asks
 * db_unavailable(); the next query of any request clears it.
 */
static struct http_request	*db_unavailable_req;

static struct db_request_hooks	 db_hooks;

void
db_init(const struct db_request_hooks *hooks)
{
	db_hooks = *hooks;
}

static const char *
db_request_id(struct db_query *q)
{
	if (q->req == NULL || db_hooks.request_id == NULL)
		return ("-");
	return (db_hooks.request_id(q->req));
}

void
db_answer_failed(struct http_request *req, const char *what)
{
	if (db_hooks.failed == NULL)
		fatal("db: no failure answer (db_init) for %s", what);
	db_hooks.failed(req, what);
}

void
db_query_begin(struct db_query *q, struct http_request *req, const char *sql)
{
	db_unavailable_req = NULL;
	db_query_end(q);
	memset(q, 0, sizeof(*q));
	q->req = req;
	q->sql = sql;
	q->state = DBQ_NEW;
}

static void
db_param_add(struct db_query *q, const void *v, size_t len, int format)
{
	if (q->nparams == DB_PARAMS_MAX)
		fatal("db: too many parameters for %s", q->sql);
	if (v == NULL) {
		q->values[q->nparams] = NULL;
		q->lengths[q->nparams] = 0;
	} else {
		q->values[q->nparams] = kore_malloc(len + 1);
		memcpy(q->values[q->nparams], v, len);
		q->values[q->nparams][len] = '\0';
		q->lengths[q->nparams] = (int)len;
	}
	q->formats[q->nparams] = format;
	q->nparams++;
}

void
db_param(struct db_query *q, const char *v)
{
	db_param_add(q, v, v ? strlen(v) : 0, 0);
}

void
db_param_int(struct db_query *q, long long v)
{
	char	buf[24];

	snprintf(buf, sizeof(buf), "%lld", v);
	db_param(q, buf);
}

void
db_param_bin(struct db_query *q, const void *v, size_t len)
{
	db_param_add(q, v, len, 1);
}

static void
db_unbind(struct db_query *q)
{
	if (q->bound) {
		kore_pgsql_cleanup(&q->pg);
		q->bound = 0;
	}
}

/*
 * The request id rides in a comment ahead of the statement: PostgreSQL
 * shows it in pg_stat_activity and in its log lines of a failed or slow
 * statement, at no extra round trip, and pg_stat_statements ignores
 * comments. The id is a UUID or '-' (the request_id hook): nothing to
 * escape.
 */
static const char *
db_text(struct db_query *q)
{
	if (q->text == NULL) {
		if (asprintf(&q->text, "/* rid=%s */ %s", db_request_id(q),
		    q->sql) == -1) {
			q->text = NULL;
			return (q->sql);
		}
	}
	return (q->text);
}

static void
db_log(struct db_query *q, const char *what, const char *error)
{
	kore_log(LOG_ERR, "db id=%s %s: %s", db_request_id(q), what,
	    error != NULL ? error : "unknown error");
}

/* Not sent: log, release the connection now (a broken one is dropped). */
static int
db_send_failed(struct db_query *q)
{
	q->unavailable = (q->pg.flags & KORE_PGSQL_UNAVAILABLE) != 0;
	metrics_count(q->unavailable ? METRICS_DB_UNAVAILABLE :
	    METRICS_DB_ERRORS, NULL, NULL, NULL, NULL);
	db_log(q, q->unavailable ? "unavailable" : "not sent", q->pg.error);
	db_unbind(q);
	return (DB_FAILED);
}

static int
db_send(struct db_query *q)
{
	if (!q->bound) {
		kore_pgsql_init(&q->pg);
		kore_pgsql_bind_request(&q->pg, q->req);
		q->bound = 1;
	}
	if (!kore_pgsql_setup(&q->pg, APP_DB, KORE_PGSQL_ASYNC)) {
		/*
		 * No free connection: Kore queued us (a connection is being
		 * made, or a busy one will be released) and wakes us later.
		 */
		if (q->pg.state == KORE_PGSQL_STATE_INIT) {
			if (q->queued_us == 0)
				q->queued_us = metrics_now_us();
			return (DB_PENDING);
		}
		return (db_send_failed(q));
	}
	q->sent_us = metrics_now_us();
	metrics_observe_us(METRICS_DB_POOL_WAIT, q->queued_us != 0 ?
	    q->sent_us - q->queued_us : 0);
	if (!kore_pgsql_query_param_fields(&q->pg, db_text(q), 0, q->nparams,
	    (const char **)q->values, q->lengths, q->formats))
		return (db_send_failed(q));
	q->state = DBQ_SENT;
	return (DB_PENDING);
}

enum db_status
db_query_poll(struct db_query *q)
{
	int	rc;

	db_unavailable_req = NULL;
	switch (q->state) {
	case DBQ_NEW:
		if ((rc = db_send(q)) == DB_FAILED) {
			q->state = DBQ_FAILED;
			if (q->unavailable)
				db_unavailable_req = q->req;
		}
		return (rc);
	case DBQ_DONE:
		return (DB_READY);
	case DBQ_FAILED:
		return (DB_FAILED);
	}

	for (;;) {
		switch (q->pg.state) {
		case KORE_PGSQL_STATE_WAIT:
			return (DB_PENDING);
		case KORE_PGSQL_STATE_RESULT:
			/* Keep the first result set; later ones are drained. */
			if (q->result == NULL) {
				q->result = q->pg.result;
				q->pg.result = NULL;
			}
			kore_pgsql_continue(&q->pg);
			break;
		case KORE_PGSQL_STATE_ERROR:
			db_log(q, "query", q->pg.error);
			metrics_count(METRICS_DB_ERRORS, NULL, NULL, NULL,
			    NULL);
			q->state = DBQ_FAILED;
			db_unbind(q);
			return (DB_FAILED);
		case KORE_PGSQL_STATE_COMPLETE:
			metrics_observe_us(METRICS_DB_QUERY,
			    metrics_now_us() - q->sent_us);
			db_unbind(q);
			q->state = DBQ_DONE;
			return (DB_READY);
		default:
			kore_pgsql_continue(&q->pg);
			break;
		}
	}
}

void
db_query_end(struct db_query *q)
{
	int	i;

	if (q->req == NULL)
		return;
	db_unbind(q);
	if (q->result != NULL)
		PQclear(q->result);
	for (i = 0; i < q->nparams; i++)
		kore_free(q->values[i]);
	free(q->text);
	memset(q, 0, sizeof(*q));
}

int
db_unavailable(struct http_request *req, int *retry)
{
	u_int64_t	ms;

	if (req == NULL || req != db_unavailable_req)
		return (0);
	db_unavailable_req = NULL;
	ms = kore_pgsql_retry_after(APP_DB);
	*retry = ms > 1000 ? (int)((ms + 999) / 1000) : 1;
	return (1);
}

int
db_failed(struct db_query *q)
{
	return (q->state == DBQ_FAILED);
}

PGresult *
db_result(struct db_query *q)
{
	return (q->result);
}

int
db_rows(struct db_query *q)
{
	return (q->result ? PQntuples(q->result) : 0);
}

const char *
db_value(struct db_query *q, int row, int col)
{
	return (PQgetvalue(q->result, row, col));
}

int
db_is_null(struct db_query *q, int row, int col)
{
	return (PQgetisnull(q->result, row, col));
}

long long
db_int(struct db_query *q, int row, int col)
{
	return (strtoll(PQgetvalue(q->result, row, col), NULL, 10));
}

int
db_bool(struct db_query *q, int row, int col)
{
	return (PQgetvalue(q->result, row, col)[0] == 't');
}

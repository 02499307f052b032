/*
 * A worker's own PostgreSQL connection for LISTEN (see pgconn.h). Its socket is
 * registered level-triggered in Kore's epoll set with a struct kore_event
 * of its own, so the worker's loop calls pgconn_event() when it is
 * readable (or writable while libpq has output pending); nothing here
 * ever waits.
 */
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <kore.h>

#include "db/pgconn.h"

/* Kore's pool's PGSQL_BACKOFF_MIN, _MAX and PGSQL_CONNECT_TIMEOUT. */
#define PGCONN_BACKOFF_MIN	250
#define PGCONN_BACKOFF_MAX	2000
#define PGCONN_CONNECT_TIMEOUT	5000
/* Not one of Kore's KORE_TYPE_* values: only our handler reads it. */
#define PGCONN_EVENT_TYPE	0x70

enum pgconn_state {
	PGCONN_DOWN,
	PGCONN_CONNECTING,
	PGCONN_UP
};

struct pgconn_job {
	TAILQ_ENTRY(pgconn_job)	 list;
	char			*sql;
	int			 n;
	char			*params[PGCONN_PARAMS_MAX];
	pgconn_cb		 cb;
	void			*arg;
};

static struct {
	struct kore_event	 evt;
	enum pgconn_state	 state;
	PGconn			*db;
	int			 fd;		/* registered in epoll, or -1 */
	int			 want_write;
	char			*conninfo;
	struct pgconn_hooks	 hooks;
	u_int64_t		 reconnect_at;
	u_int64_t		 connect_started;
	u_int64_t		 connect_timeout;
	int			 backoff;
	struct pgconn_job	*inflight;
	PGresult		*result;	/* first result of inflight */
	TAILQ_HEAD(, pgconn_job) queue;
} P;

static void	pgconn_event(void *, int);
static void	pgconn_send_next(void);

static void
pgconn_job_free(struct pgconn_job *j)
{
	int	i;

	for (i = 0; i < j->n; i++)
		kore_free(j->params[i]);
	kore_free(j->sql);
	kore_free(j);
}

/* Registers the socket for reading, and writing while wanted. */
static void
pgconn_watch(int write)
{
	int	fd;

	fd = PQsocket(P.db);
	if (fd < 0)
		return;
	/* libpq closed the old socket (epoll forgot it): a new one. */
	P.fd = fd;
	P.want_write = write;
	kore_platform_event_schedule(fd, EPOLLIN | EPOLLRDHUP |
	    (write ? EPOLLOUT : 0), 0, &P.evt);
}

static void
pgconn_down(const char *why)
{
	struct pgconn_job	*j;

	if (P.state != PGCONN_DOWN)
		kore_log(LOG_NOTICE, "%s connection lost: %s", P.hooks.name,
		    why);
	if (P.fd != -1 && P.db != NULL && PQsocket(P.db) == P.fd)
		kore_platform_disable_read(P.fd);
	P.fd = -1;
	if (P.db != NULL)
		PQfinish(P.db);
	P.db = NULL;
	P.state = PGCONN_DOWN;
	P.reconnect_at = kore_time_ms() + (u_int64_t)P.backoff;
	P.backoff = P.backoff * 2 > PGCONN_BACKOFF_MAX ? PGCONN_BACKOFF_MAX :
	    P.backoff * 2;
	if (P.result != NULL)
		PQclear(P.result);
	P.result = NULL;
	/* Whoever waits hears of the failure; the decider sweeps again
	 * after the reconnect. */
	if ((j = P.inflight) != NULL) {
		P.inflight = NULL;
		if (j->cb != NULL)
			j->cb(NULL, j->arg);
		pgconn_job_free(j);
	}
	while ((j = TAILQ_FIRST(&P.queue)) != NULL) {
		TAILQ_REMOVE(&P.queue, j, list);
		if (j->cb != NULL)
			j->cb(NULL, j->arg);
		pgconn_job_free(j);
	}
}

static void
pgconn_connect(void)
{
	const char	*keys[] = { "dbname", "application_name", NULL };
	const char	*vals[] = { P.conninfo, P.hooks.application_name,
			    NULL };

	P.db = PQconnectStartParams(keys, vals, 1);
	P.connect_started = kore_time_ms();
	if (P.db == NULL || PQstatus(P.db) == CONNECTION_BAD) {
		P.state = PGCONN_CONNECTING;
		pgconn_down(P.db ? PQerrorMessage(P.db) : "out of memory");
		return;
	}
	P.state = PGCONN_CONNECTING;
	/* As if PQconnectPoll had answered PGRES_POLLING_WRITING. */
	pgconn_watch(1);
}

static void
pgconn_connect_poll(void)
{
	switch (PQconnectPoll(P.db)) {
	case PGRES_POLLING_READING:
		pgconn_watch(0);
		return;
	case PGRES_POLLING_WRITING:
		pgconn_watch(1);
		return;
	case PGRES_POLLING_OK:
		break;
	default:
		pgconn_down(PQerrorMessage(P.db));
		return;
	}
	if (PQsetnonblocking(P.db, 1) == -1) {
		pgconn_down(PQerrorMessage(P.db));
		return;
	}
	P.state = PGCONN_UP;
	P.backoff = PGCONN_BACKOFF_MIN;
	pgconn_watch(0);
	kore_log(LOG_INFO, "%s connection up", P.hooks.name);
	if (P.hooks.connected != NULL)
		P.hooks.connected();
}

static void
pgconn_notifies(void)
{
	PGnotify	*n;

	while (P.db != NULL && (n = PQnotifies(P.db)) != NULL) {
		if (P.hooks.notify != NULL)
			P.hooks.notify(n->relname, n->extra);
		PQfreemem(n);
	}
}

/* Collects the inflight query's results; delivers when it is complete. */
static void
pgconn_results(void)
{
	struct pgconn_job	*j;
	PGresult		*res;
	ExecStatusType		 st;

	while (P.inflight != NULL && P.db != NULL && !PQisBusy(P.db)) {
		if ((res = PQgetResult(P.db)) != NULL) {
			if (P.result == NULL)
				P.result = res;
			else
				PQclear(res);
			continue;
		}
		j = P.inflight;
		P.inflight = NULL;
		res = P.result;
		P.result = NULL;
		st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
		if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
			kore_log(LOG_ERR, "%s query failed: %s", P.hooks.name,
			    res ? PQresultErrorMessage(res) : "no result");
			if (j->cb != NULL)
				j->cb(NULL, j->arg);
		} else if (j->cb != NULL) {
			j->cb(res, j->arg);
		}
		if (res != NULL)
			PQclear(res);
		pgconn_job_free(j);
		pgconn_send_next();
	}
}

static void
pgconn_flush(void)
{
	int	rc;

	if ((rc = PQflush(P.db)) == -1) {
		pgconn_down(PQerrorMessage(P.db));
		return;
	}
	if ((rc == 1) != P.want_write)
		pgconn_watch(rc == 1);
}

static void
pgconn_send_next(void)
{
	struct pgconn_job	*j;

	if (P.state != PGCONN_UP || P.inflight != NULL ||
	    (j = TAILQ_FIRST(&P.queue)) == NULL)
		return;
	TAILQ_REMOVE(&P.queue, j, list);
	P.inflight = j;
	if (!PQsendQueryParams(P.db, j->sql, j->n, NULL,
	    (const char *const *)j->params, NULL, NULL, 0)) {
		pgconn_down(PQerrorMessage(P.db));
		return;
	}
	pgconn_flush();
}

static void
pgconn_event(void *arg, int error)
{
	(void)arg;
	P.evt.flags &= ~(KORE_EVENT_READ | KORE_EVENT_WRITE);
	if (P.db == NULL)
		return;
	if (P.state == PGCONN_CONNECTING) {
		pgconn_connect_poll();
		return;
	}
	if (error) {
		pgconn_down("socket error or hang-up");
		return;
	}
	if (P.want_write)
		pgconn_flush();
	if (P.db == NULL)
		return;
	if (!PQconsumeInput(P.db)) {
		pgconn_down(PQerrorMessage(P.db));
		return;
	}
	pgconn_results();
	pgconn_notifies();
	if (P.db != NULL && PQstatus(P.db) != CONNECTION_OK)
		pgconn_down(PQerrorMessage(P.db));
}

/*
 * PQconnectPoll() ignores connect_timeout: applied here, read as the
 * pool reads it.
 */
static u_int64_t
pgconn_connect_timeout(const char *conninfo)
{
	PQconninfoOption	*opts, *opt;
	u_int64_t		 ms;
	long			 secs;

	ms = PGCONN_CONNECT_TIMEOUT;
	if ((opts = PQconninfoParse(conninfo, NULL)) == NULL)
		return (ms);
	for (opt = opts; opt->keyword != NULL; opt++) {
		if (strcmp(opt->keyword, "connect_timeout") != 0 ||
		    opt->val == NULL)
			continue;
		secs = strtol(opt->val, NULL, 10);
		if (secs > 0 && secs <= 3600)
			ms = (u_int64_t)secs * 1000;
	}
	PQconninfoFree(opts);
	return (ms);
}

void
pgconn_start(const char *conninfo, const struct pgconn_hooks *hooks)
{
	memset(&P, 0, sizeof(P));
	TAILQ_INIT(&P.queue);
	P.evt.type = PGCONN_EVENT_TYPE;
	P.evt.handle = pgconn_event;
	P.fd = -1;
	P.backoff = PGCONN_BACKOFF_MIN;
	P.conninfo = kore_strdup(conninfo);
	P.connect_timeout = pgconn_connect_timeout(conninfo);
	P.hooks = *hooks;
	pgconn_connect();
}

void
pgconn_tick(void)
{
	if (P.conninfo == NULL)
		return;
	if (P.state == PGCONN_CONNECTING &&
	    kore_time_ms() - P.connect_started > P.connect_timeout) {
		pgconn_down("connect timed out");
		return;
	}
	if (P.state == PGCONN_DOWN && kore_time_ms() >= P.reconnect_at)
		pgconn_connect();
}

int
pgconn_up(void)
{
	return (P.state == PGCONN_UP);
}

int
pgconn_query(const char *sql, int n, const char *const *params,
    pgconn_cb cb, void *arg)
{
	struct pgconn_job	*j;
	int			 i;

	if (P.state != PGCONN_UP || n > PGCONN_PARAMS_MAX)
		return (-1);
	j = kore_calloc(1, sizeof(*j));
	j->sql = kore_strdup(sql);
	j->n = n;
	for (i = 0; i < n; i++)
		j->params[i] = params[i] ? kore_strdup(params[i]) : NULL;
	j->cb = cb;
	j->arg = arg;
	TAILQ_INSERT_TAIL(&P.queue, j, list);
	pgconn_send_next();
	return (0);
}

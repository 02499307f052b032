/*
 * One PostgreSQL connection of a worker's own, outside Kore's pool, for
 * LISTEN and the queries of its owner (the payment decider). Non-blocking
 * throughout: connected with PQconnectStart/PQconnectPoll, its socket in
 * Kore's event loop, queries queued and sent one at a time. Reconnected
 * as the pool's connections are (Kore patch 0020): a connect bounded by
 * connect_timeout of the connection string (5 s without one), and after
 * a failure a backoff of 250 ms doubling to 2 s.
 */
#ifndef PSD2_DB_PGCONN_H
#define PSD2_DB_PGCONN_H

#include <libpq-fe.h>

#define PGCONN_PARAMS_MAX	8

/* res is NULL when the query failed or the connection was lost; the
 * callee must not PQclear it. */
typedef void	(*pgconn_cb)(PGresult *res, void *arg);

struct pgconn_hooks {
	const char	*name;		/* of the owner, starts its log lines */
	const char	*application_name;	/* in pg_stat_activity */
	void		 (*connected)(void);	/* after every (re)connect */
	void		 (*notify)(const char *channel, const char *payload);
};

/* Starts connecting to conninfo (psd2_db); later calls of pgconn_tick()
 * retry after a failure. */
void	pgconn_start(const char *conninfo, const struct pgconn_hooks *);

/* Reconnects when the backoff has passed, gives up a connect that takes
 * longer than the connect timeout. Call from a timer. */
void	pgconn_tick(void);

int	pgconn_up(void);

/*
 * Queues a query with text parameters (NULL: SQL NULL); copies them.
 * Returns 0, or -1 when the connection is down (cb is not called).
 */
int	pgconn_query(const char *sql, int n, const char *const *params,
	    pgconn_cb cb, void *arg);

#endif

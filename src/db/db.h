/*
 * One asynchronous PostgreSQL query bound to an HTTP request, driven from
 * a handler that Kore re-enters (KORE_RESULT_RETRY) until it is done
 * (db_drive, the one query loop of the handlers). The worker's event loop
 * never blocks on the database.
 */
#ifndef PSD2_DB_H
#define PSD2_DB_H

#include <kore.h>
#include <http.h>
#include <pgsql.h>

/* The most parameters of one query (bg_consent_create takes 18). */
#define DB_PARAMS_MAX	20

enum db_status {
	DB_PENDING,	/* handler returns KORE_RESULT_RETRY */
	DB_READY,	/* db_result() holds the rows */
	DB_FAILED	/* logged; answered with the failure answer */
};

/*
 * What the request layer above hands down, once in each worker before
 * any query: the id of a request (its log lines and statements carry
 * it) and the answer to a request whose query failed (the spec's 500
 * body naming what, or 503 when db_unavailable()).
 */
struct db_request_hooks {
	const char	*(*request_id)(struct http_request *);
	void		 (*failed)(struct http_request *, const char *what);
};

void	db_init(const struct db_request_hooks *);

struct db_query {
	struct kore_pgsql	 pg;
	struct http_request	*req;
	PGresult		*result;
	const char		*sql;
	int			 nparams;
	char			*values[DB_PARAMS_MAX];
	int			 lengths[DB_PARAMS_MAX];
	int			 formats[DB_PARAMS_MAX];
	int			 state;
	int			 bound;
	int			 unavailable;
	char			*text;		/* sql with the request id */
	uint64_t		 queued_us;	/* waiting for a connection */
	uint64_t		 sent_us;
};

/* Text parameters; NULL is SQL NULL. Copies the values. */
void		 db_query_begin(struct db_query *, struct http_request *,
		    const char *);
void		 db_param(struct db_query *, const char *);
void		 db_param_int(struct db_query *, long long);
void		 db_param_bin(struct db_query *, const void *, size_t);
enum db_status	 db_query_poll(struct db_query *);
void		 db_query_end(struct db_query *);

/*
 * Right after DB_FAILED: 1 when the query of this request did not run
 * because no working database connection could be had (Kore's pgsql
 * layer reconnects with a backoff, conf/kore-patches/0020), with the
 * seconds until the next connection attempt (at least 1) in *retry.
 */
int		 db_unavailable(struct http_request *, int *);

/* What a step of a handler did with a result; see db_drive(). */
enum db_next {
	DB_ANSWERED,	/* the answer was sent */
	DB_QUERY,	/* the next query was started on the same db_query */
	DB_WAIT		/* a task runs: Kore re-enters the handler */
};

typedef enum db_next	(*db_step)(struct http_request *, void *);

/*
 * The one query loop of the handlers: polls q and hands each result to
 * step, which answers or starts the next query (or a task). A failed
 * query gets the failure answer naming what; with what NULL it goes to
 * step as well, which finds db_failed(q) true. Returns the handler's
 * result for Kore: KORE_RESULT_RETRY while a query or a task runs.
 */
int		 db_drive(struct http_request *, struct db_query *, db_step,
		    void *, const char *);
int		 db_failed(struct db_query *);
/* The failure answer of db_init(), for a step that takes failures. */
void		 db_answer_failed(struct http_request *, const char *);

PGresult	*db_result(struct db_query *);
int		 db_rows(struct db_query *);
const char	*db_value(struct db_query *, int, int);
int		 db_is_null(struct db_query *, int, int);
long long	 db_int(struct db_query *, int, int);
int		 db_bool(struct db_query *, int, int);

#endif

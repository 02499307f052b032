/*
 * One asynchronous PostgreSQL query bound to an HTTP request, driven from
 * a handler that Kore re-enters (KORE_RESULT_RETRY) until it is done. The
 * worker's event loop never blocks on the database.
 */
#ifndef PSD2_DB_H
#define PSD2_DB_H

#include <kore.h>
#include <http.h>
#include <pgsql.h>

#define DB_PARAMS_MAX	16

enum db_status {
	DB_PENDING,	/* handler returns KORE_RESULT_RETRY */
	DB_READY,	/* db_result() holds the rows */
	DB_FAILED	/* logged; answer with respond_server_error() */
};

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

PGresult	*db_result(struct db_query *);
int		 db_rows(struct db_query *);
const char	*db_value(struct db_query *, int, int);
int		 db_is_null(struct db_query *, int, int);
long long	 db_int(struct db_query *, int, int);
int		 db_bool(struct db_query *, int, int);

#endif

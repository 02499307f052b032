/*
 * The sandbox's booking (see booking.h): pis_book() in PostgreSQL, on the
 * decider's connection.
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>

#include "pis/booking.h"
#include "pis/pgconn.h"

#define BOOKING_BATCH	"64"

static const char sql_book[] = "SELECT pis_book($1)";
static const char sql_unbooked[] = "SELECT pis_unbooked(" BOOKING_BATCH ")";

struct booking_sweep_ctx {
	void	(*done)(void *);
	void	*arg;
};

static void
booking_done(PGresult *res, void *arg)
{
	char	*id = arg;

	if (res != NULL && PQntuples(res) == 1 &&
	    strcmp(PQgetvalue(res, 0, 0), "none") != 0)
		kore_log(LOG_INFO, "pis: payment %s %s", id,
		    PQgetvalue(res, 0, 0));
	kore_free(id);
}

void
booking_request(const char *payment_id)
{
	char		*id;
	const char	*p[1];

	id = kore_strdup(payment_id);
	p[0] = id;
	if (pgconn_query(sql_book, 1, p, booking_done, id) == -1)
		kore_free(id);
}

static void
booking_unbooked(PGresult *res, void *arg)
{
	struct booking_sweep_ctx	*x = arg;
	int				 row;

	if (res != NULL) {
		for (row = 0; row < PQntuples(res); row++)
			booking_request(PQgetvalue(res, row, 0));
	}
	x->done(x->arg);
	kore_free(x);
}

int
booking_sweep(void (*done)(void *), void *arg)
{
	struct booking_sweep_ctx	*x;

	x = kore_calloc(1, sizeof(*x));
	x->done = done;
	x->arg = arg;
	if (pgconn_query(sql_unbooked, 0, NULL, booking_unbooked, x) == -1) {
		kore_free(x);
		return (-1);
	}
	return (0);
}

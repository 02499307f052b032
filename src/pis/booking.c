/*
 * The sandbox's booking (see booking.h): pis_book() in PostgreSQL, on the
 * decider's connection. A payment authorised with an authentication code
 * (redirect SCA by TOTP or on the authenticator, sca_code.h) is checked
 * first: the code must be the one
 * of the payment as it is now, and pis_book_coded() books only if the row
 * under its lock still holds the values checked here.
 */
#include <sys/types.h>

#include <string.h>

#include <kore.h>

#include "common/config.h"
#include "common/encoding.h"

#include "pis/booking.h"
#include "db/pgconn.h"
#include "pis/sca_code.h"

#define BOOKING_BATCH	"64"

static const char sql_code[] =
    "SELECT method, auth_code_kid, auth_code_hex, amount_minor, currency, "
    "creditor_iban, creditor_name FROM pis_book_input($1)";
static const char sql_book[] =
    "SELECT pis_book_coded($1, $2, $3, $4, $5, $6)";
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

/*
 * 1 when the payment needs no code or its code verifies. A code is kept
 * for redirect SCA (TOTP, a key, or the authenticator chosen on the
 * page); TOTP and keys always have one, decoupled SCA none (its
 * signature was verified).
 */
static int
booking_code_ok(PGresult *res, const struct sca_code_input *in)
{
	uint8_t		 mac[SCA_CODE_LEN];
	const char	*hex, *method;
	int		 len, coded;

	method = PQgetisnull(res, 0, 0) ? "" : PQgetvalue(res, 0, 0);
	coded = strcmp(method, "totp") == 0 || strcmp(method, "key") == 0;
	if (PQgetisnull(res, 0, 1) && PQgetisnull(res, 0, 2))
		return (!coded);
	if (PQgetisnull(res, 0, 1) || PQgetisnull(res, 0, 2))
		return (0);
	hex = PQgetvalue(res, 0, 2);
	if ((len = hex_decode(hex, strlen(hex), mac, sizeof(mac))) == -1)
		return (0);
	return (sca_code_verify(&app_form_keys, in, PQgetvalue(res, 0, 1),
	    mac, (size_t)len));
}

static void
booking_checked(PGresult *res, void *arg)
{
	char			*id = arg;
	struct sca_code_input	 in;
	const char		*p[6];

	if (res == NULL || PQntuples(res) != 1 || PQgetisnull(res, 0, 3)) {
		kore_free(id);
		return;
	}
	in.payment_id = id;
	in.amount_minor = PQgetvalue(res, 0, 3);
	in.currency = PQgetvalue(res, 0, 4);
	in.creditor_iban = PQgetvalue(res, 0, 5);
	in.creditor_name = PQgetvalue(res, 0, 6);
	p[0] = id;
	p[1] = booking_code_ok(res, &in) ? "true" : "false";
	p[2] = in.amount_minor;
	p[3] = in.currency;
	p[4] = in.creditor_iban;
	p[5] = in.creditor_name;
	/* libpq copies the parameters when it sends the query. */
	if (pgconn_query(sql_book, 6, p, booking_done, id) == -1)
		kore_free(id);
}

void
booking_request(const char *payment_id)
{
	char		*id;
	const char	*p[1];

	id = kore_strdup(payment_id);
	p[0] = id;
	if (pgconn_query(sql_code, 1, p, booking_checked, id) == -1)
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

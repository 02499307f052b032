/*
 * Account information endpoints (spec 4.4 to 4.6, funds confirmation,
 * consents/current). Every call is one PostgreSQL round trip: the
 * endpoint's SQL function (src/db/migrations/010_ais.sql) takes the
 * bearer token's digest, the TPP verdict and the parsed input, does every
 * check in the documented order and writes the access record, and returns
 * an outcome or the finished JSON body, which is passed through as is.
 *
 * Order of answers: bearer token (the spec's 401 bodies), TPP verdict,
 * certificate organisation vs the token's TPP, PSD2 role, x-request-id
 * replay, scope, input format, period, resource, unattended limit.
 */
#ifndef PSD2_AIS_H
#define PSD2_AIS_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "tpp/tpp.h"

struct http_request;

#define AIS_TEXT_MAX	256

struct ais_call {
	struct db_query		q;
	struct tpp_verdict	verdict;
	const char		*token;		/* as sent, for the 401 body */
	int			 roles;		/* TPP_ROLE_* the endpoint needs */
	int			 has_input_error;
	int			 input_status;
	char			 input_code[32];
	char			 input_path[64];
	char			 input_text[AIS_TEXT_MAX];
};

struct ais_settings {
	int	page_size;		/* psd2_page_size */
	int	unattended_limit;	/* psd2_unattended_limit, 0 = off */
};

const struct ais_settings	*ais_settings(void);

/* http_state for an endpoint: a fresh ais_call freed with the request. */
struct ais_call	*ais_call_new(struct http_request *);

/* Records an input error; answered only if the SQL prelude passes. */
void	ais_input_error(struct ais_call *, int, const char *, const char *,
	    const char *, ...) __attribute__((format(printf, 5, 6)));

/*
 * Verifies the request (TPP verdict), reads the bearer token and starts
 * the query sql with the common parameters $1..$7: token digest,
 * verdict ok, role ok (any of the TPP_ROLE_* bits of roles),
 * certificate org id, x-request-id, PSU present, unattended limit. Returns 0, or -1 when an answer was sent (a token
 * that cannot be one of ours: 401 without asking the database).
 */
int	ais_begin(struct http_request *, struct ais_call *, const char *,
	    int);
/* $8 of the endpoints that take input: no input error was recorded. */
void	ais_param_input_ok(struct ais_call *);

/* Drives the query and answers; a Kore handler result. */
int	ais_finish(struct http_request *, struct ais_call *);

/* The request body (at most max bytes) as a NUL-terminated kore_malloc'ed
 * string, or NULL when there is none. *len gets its length. */
char	*ais_body(struct http_request *, size_t, size_t *);

/* Strict YYYY-MM-DD calendar date (years 1000..9999). */
int	ais_date_valid(const char *);

/* Account resource ids: [A-Za-z0-9._-]{1,64}. */
int	ais_resource_id_valid(const char *);

#endif

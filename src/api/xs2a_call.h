/*
 * What every TPP-facing XS2A call (account information, funds
 * confirmation, payments) does the same way, before and after its one
 * query: the bearer token's form, the TPP verdict and PSD2 role, the
 * PSU-IP-Address header, the first input error, the common query
 * parameters, and the answer of a refusal. The families keep only what
 * differs: their refusal tables, their own parameters and the body of a
 * success (src/ais/ais_call.c, src/pis/pis_call.c).
 */
#ifndef PSD2_XS2A_CALL_H
#define PSD2_XS2A_CALL_H

#include <stddef.h>

#include <jansson.h>

#include "api/request.h"
#include "db/db.h"
#include "tpp/dpop.h"
#include "tpp/tpp.h"

struct http_request;

#define XS2A_TEXT_MAX	256
#define XS2A_IP_MAX	REQUEST_IP_MAX

/* A refusal settled in C (status 0: none). */
struct xs2a_refusal {
	int	status;
	char	code[40];
	char	path[64];
	char	text[XS2A_TEXT_MAX];
};

/*
 * A refusal an SQL function names, and how it is answered. text NULL:
 * the function's detail is the text. path NULL for resource_unknown:
 * the call's resource_path, else the function's detail.
 */
struct xs2a_refusal_def {
	const char	*name;
	int		 status;
	const char	*code;
	const char	*path;
	const char	*text;
};

struct xs2a_call {
	struct db_query		q;
	struct tpp_verdict	verdict;
	const char		*token;		/* as sent, for the 401 body */
	const char		*resource_path;	/* path of RESOURCE_UNKNOWN */
	int			 answered;	/* sent before any query */
	int			 standard;	/* the Berlin Group surface:
						   its 401 bodies */
	struct xs2a_refusal	 input;		/* first input error */
	struct xs2a_refusal	 refusal;	/* what step 1 settled */
	char			 psu_ip[XS2A_IP_MAX];	/* "" when absent */
	/* A verified DPoP proof's binding (tpp/dpop.h), "" for Bearer. */
	char			 binding[DPOP_BINDING_MAX];
};

/* Ends the call's query and wipes it (it held the bearer token). */
void	xs2a_call_clear(struct xs2a_call *);

/*
 * The request body (at most max bytes; request_body). A body over max
 * records the input error 413, the same answer as Kore's own limit, not
 * a malformed body.
 */
char	*xs2a_body(struct http_request *, struct xs2a_call *, size_t,
	    size_t *);

/*
 * The request body parsed as JSON (duplicate names refused): the
 * document, or NULL when there is no body, it is over max (the 413 of
 * xs2a_body recorded) or it is not JSON. The caller checks its type and
 * json_decref()s it.
 */
json_t	*xs2a_json_body(struct http_request *, struct xs2a_call *, size_t);

/* Records an input error (the first one is reported). */
void	xs2a_input_error(struct xs2a_call *, int, const char *, const char *,
	    const char *, ...) __attribute__((format(printf, 5, 6)));

/*
 * Step 1 and the start of step 2 for a call needing one of roles
 * (TPP_ROLE_* bits). Returns 1 when sql was started with the common
 * parameters
 *	$1 token digest, $2 TLS client certificate thumbprint (x5t#S256),
 *	$3 certificate organizationIdentifier, $4 x-request-id (signed
 *	requests only), $5 PSU-IP-Address
 * and the caller must add its own ($6...); 0 when it must not: the answer
 * was sent (c->answered), or a refusal waits for bearer_only_sql, the
 * bearer check alone (parameters $1 and $2).
 */
int	xs2a_begin(struct http_request *, struct xs2a_call *, const char *,
	    const char *, int);

/*
 * For a query that returned its one row (column 0 a refusal name,
 * column 1 its detail): answers the refusal the function named, else the
 * one step 1 settled. Returns 1 when it answered, 0 when the call
 * succeeded and the caller writes the body.
 */
int	xs2a_answer_refusal(struct http_request *, struct xs2a_call *,
	    const struct xs2a_refusal_def *, size_t);

#endif

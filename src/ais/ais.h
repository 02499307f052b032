/*
 * Account information endpoints (spec 4.4 to 4.6, funds confirmation,
 * consents/current). The path of one call runs one way:
 *
 *	1. C settles everything it can judge alone, before any query: the
 *	   bearer token's form, the TPP verdict (signature, certificate,
 *	   role), the PSU-IP-Address header and the endpoint's input.
 *	2. One query, one round trip. Either the endpoint's SQL function
 *	   (src/db/functions/30_ais.sql), which does the
 *	   bearer check, the certificate's TPP against the token's, the
 *	   x-request-id replay mark, the consent, the unattended limit, the
 *	   access record and the data in one transaction, and returns the
 *	   finished body or one named refusal (enum ais_refusal); or, when
 *	   step 1 already refused, only the bearer check.
 *	3. The answer is written once, by ais_finish().
 *
 * Order of answers: bearer token (the spec's 401 bodies), TPP verdict,
 * PSD2 role, PSU-IP-Address and input format, certificate organisation
 * vs the token's TPP, x-request-id replay, scope, period, resource,
 * unattended limit.
 */
#ifndef PSD2_AIS_H
#define PSD2_AIS_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "tpp/tpp.h"

struct http_request;

#define AIS_TEXT_MAX	256
/* inet_ntop's INET6_ADDRSTRLEN, without <arpa/inet.h> here. */
#define AIS_IP_MAX	46

/* A refusal settled in C (status 0: none). */
struct ais_refusal {
	int	status;
	char	code[40];
	char	path[64];
	char	text[AIS_TEXT_MAX];
};

struct ais_call {
	struct db_query		q;
	struct tpp_verdict	verdict;
	const char		*token;		/* as sent, for the 401 body */
	const char		*resource_path;	/* path of RESOURCE_UNKNOWN */
	int			 answered;	/* sent before any query */
	struct ais_refusal	 input;		/* first input error */
	struct ais_refusal	 refusal;	/* what step 1 settled */
	char			 psu_ip[AIS_IP_MAX];	/* "" when absent */
};

struct ais_settings {
	int	page_size;		/* psd2_page_size */
	int	unattended_limit;	/* psd2_unattended_limit (1..4) */
};

/* Reads the settings in the parent (validated by settings_validate()). */
void				 ais_settings_load(void);
const struct ais_settings	*ais_settings(void);

/* http_state for an endpoint: a fresh ais_call freed with the request. */
struct ais_call	*ais_call_new(struct http_request *);

/* Records an input error (the first one is reported). */
void	ais_input_error(struct ais_call *, int, const char *, const char *,
	    const char *, ...) __attribute__((format(printf, 5, 6)));

/*
 * Step 1 and the start of step 2 for an endpoint needing one of roles
 * (TPP_ROLE_* bits). Returns 1 when the endpoint's query sql was started
 * with the common parameters
 *	$1 token digest, $2 TLS client certificate thumbprint (x5t#S256),
 *	$3 certificate organizationIdentifier, $4 x-request-id (signed
 *	requests only), $5 PSU-IP-Address, $6 psd2_unattended_limit
 * and the endpoint must add its own ($7...); 0 when it must not (the
 * answer was sent, or a refusal waits for the bearer check).
 */
int	ais_begin(struct http_request *, struct ais_call *, const char *,
	    int);

/* Drives the query and writes the answer; a Kore handler result. */
int	ais_finish(struct http_request *, struct ais_call *);

/* The request body (at most max bytes) as a NUL-terminated kore_malloc'ed
 * string, or NULL when there is none. *len gets its length. */
char	*ais_body(struct http_request *, size_t, size_t *);

/* Strict YYYY-MM-DD calendar date (years 1000..9999). */
int	ais_date_valid(const char *);

/* Account resource ids: [A-Za-z0-9._-]{1,64}. */
int	ais_resource_id_valid(const char *);

/* An IPv4 or IPv6 address as inet_pton(3) reads it, normalised into out
 * (AIS_IP_MAX). Returns 0, or -1. */
int	ais_ip_normalise(const char *, char *);

#endif

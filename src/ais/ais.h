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

#include "api/xs2a_call.h"

struct http_request;

/* inet_ntop's INET6_ADDRSTRLEN, without <arpa/inet.h> here. */
#define AIS_IP_MAX	XS2A_IP_MAX

struct ais_settings {
	int	page_size;		/* psd2_page_size */
	int	unattended_limit;	/* psd2_unattended_limit (1..4) */
};

/* Reads the settings in the parent (validated by settings_validate()). */
void				 ais_settings_load(void);
const struct ais_settings	*ais_settings(void);

/* http_state for an endpoint: a fresh call freed with the request. */
struct xs2a_call	*ais_call_new(struct http_request *);

/*
 * Step 1 and the start of step 2 for an endpoint needing one of roles
 * (TPP_ROLE_* bits): xs2a_begin() with, after its $1 to $5, $6
 * psd2_unattended_limit. Returns 1 when the endpoint must add its own
 * parameters ($7...); 0 when it must not.
 */
int	ais_begin(struct http_request *, struct xs2a_call *, const char *,
	    int);

/* Drives the query and writes the answer; a Kore handler result. */
int	ais_finish(struct http_request *, struct xs2a_call *);

/* The request body (at most max bytes) as a NUL-terminated kore_malloc'ed
 * string, or NULL when there is none. *len gets its length. A body over
 * max records the call's input error 413. */
char	*ais_body(struct http_request *, struct xs2a_call *, size_t,
	    size_t *);

/* Strict YYYY-MM-DD calendar date (years 1000..9999). */
int	ais_date_valid(const char *);

/* Account resource ids: [A-Za-z0-9._-]{1,64}. */
int	ais_resource_id_valid(const char *);

/* An IPv4 or IPv6 address as inet_pton(3) reads it, normalised into out
 * (AIS_IP_MAX). Returns 0, or -1. */
int	ais_ip_normalise(const char *, char *);

#endif

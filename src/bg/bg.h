/*
 * The Berlin Group standard interface under /xs2a/v1 (src/bg/README.md).
 * Every call runs one way, like the contract's account information
 * (src/ais/ais.h):
 *
 *	1. C settles what it can judge alone: the bearer token's form, the
 *	   TPP verdict and role, X-Request-ID (required, a UUID),
 *	   Consent-ID (a UUID where the call needs one), PSU-IP-Address and
 *	   the endpoint's input.
 *	2. One query: the endpoint's SQL function (src/db/functions/
 *	   32_bg_consents.sql, 34_bg_accounts.sql) checks the token, the
 *	   certificate's TPP, the replay mark, the consent and the resource,
 *	   does the work and returns the finished body or one named refusal
 *	   (type bg_refusal, migration 150); when step 1 already refused,
 *	   only the bearer check (bg_bearer_only).
 *	3. bg_finish() writes the one answer.
 */
#ifndef PSD2_BG_H
#define PSD2_BG_H

#include <stddef.h>

#include "api/xs2a_call.h"

struct http_request;

#define BG_ROOT		"/xs2a/v1"
#define BG_UUID_LEN	36

struct bg_call {
	struct xs2a_call	x;
	char			consent_id[BG_UUID_LEN + 1];	/* "" absent */
	const char		*sca_approach;	/* ASPSP-SCA-Approach of a
						   201, or NULL */
	int			 consent_in_path;	/* consentId is a path
							   segment: refusals
							   name it */
};

/* Consent-ID is required by the call (accounts), optional, or not read. */
enum bg_consent_header {
	BG_CONSENT_NONE,
	BG_CONSENT_OPTIONAL,
	BG_CONSENT_REQUIRED
};

/*
 * The methods the handler's path takes (HTTP_METHOD_* bits; HEAD goes
 * with GET; src/bg/bg_route.c). Returns 1 when the request's method is
 * one of them, else answers 405 SERVICE_INVALID with Allow and returns 0
 * (the handler then returns KORE_RESULT_OK).
 */
int	bg_method(struct http_request *, int);

/*
 * X-Request-ID, required on every call and a UUID: copied to out (at
 * least BG_UUID_LEN + 1 bytes), else the call's FORMAT_ERROR recorded.
 */
void	bg_request_id(struct http_request *, struct xs2a_call *, char *);

/* http_state for an endpoint: a fresh call freed with the request. */
struct bg_call	*bg_call_new(struct http_request *);

/*
 * Step 1 and the start of step 2 for a call needing one of roles
 * (TPP_ROLE_* bits). sql takes the parameters
 *	$1 token digest, $2 x5t#S256 of the TLS client certificate,
 *	$3 certificate organizationIdentifier, $4 X-Request-ID of a signed
 *	request, $5 PSU-IP-Address, $6 X-Request-ID (every request),
 *	$7 Consent-ID (NULL when absent)
 * and returns (refusal, detail, status, body, location). Returns 1 when
 * the endpoint must add its own parameters ($8...), 0 when it must not.
 */
int	bg_begin(struct http_request *, struct bg_call *, const char *, int,
	    enum bg_consent_header);

/* Drives the query and writes the answer; a Kore handler result. */
int	bg_finish(struct http_request *, struct bg_call *);

/*
 * Reads the raw query string: calls fn for each name=value pair, the
 * value form-decoded into a buffer of len bytes (-1 when it does not fit
 * or is malformed). A name given twice is a FORMAT_ERROR recorded here.
 */
struct bg_param {
	const char	*name;
	char		*value;		/* at least 64 bytes */
	int		 seen;
};
void	bg_query_params(struct http_request *, struct bg_call *,
	    struct bg_param *, size_t);

/* The path segment after prefix, up to the next '/' or the end. */
int	bg_path_segment(const char *, const char *, char *, size_t);

#endif

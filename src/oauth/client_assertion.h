/*
 * private_key_jwt (RFC 7523 2.2 and 3, OpenID Connect Core 9, FAPI 2.0
 * Security Profile 5.3.2.1): the client sends client_assertion_type
 * urn:ietf:params:oauth:client-assertion-type:jwt-bearer and
 * client_assertion, a JWT it signed with PS256, ES256 or EdDSA under a
 * key of its registered JWK Set (src/common/jws.h). Its claims:
 *	iss, sub	the client_id, both
 *	aud		the issuer, a string: no endpoint's URL, no array
 *			(FAPI 2.0 5.3.2.1 item 8, against audience
 *			injection)
 *	exp		required; past by at most CLIENT_ASSERTION_SKEW
 *			seconds, and at most CLIENT_ASSERTION_LIFETIME
 *			(plus the skew) ahead
 *	iat, nbf	optional; at most CLIENT_ASSERTION_SKEW seconds in
 *			the future (FAPI 2.0: up to 10 s accepted, over 60 s
 *			refused)
 *	jti		required, 1 to 256 bytes; spent once per client
 *			(oauth_assertion_spend) and remembered until exp
 *			plus the skew
 */
#ifndef PSD2_CLIENT_ASSERTION_H
#define PSD2_CLIENT_ASSERTION_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct http_request;

#define CLIENT_ASSERTION_TYPE \
	"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#define CLIENT_ASSERTION_SKEW		10
#define CLIENT_ASSERTION_LIFETIME	3600
#define CLIENT_ASSERTION_JTI_MAX	256

struct client_assertion {
	uint8_t		jti_hash[32];	/* SHA-256 of the jti */
	long long	keep_until;	/* exp plus the skew, Unix time */
};

/* 1 when the request carries client_assertion or its type. */
int	client_assertion_sent(struct http_request *);

/*
 * The assertion's client: its iss, read before anything is verified (to
 * find the client's keys); client_assertion_verify then checks it. 0, or
 * -1 with invalid_client sent.
 */
int	client_assertion_client_id(struct http_request *, char *, size_t);

/*
 * The request's assertion verified against jwks (the client's JWK Set as
 * JSON text) and its claims checked for client_id. 0 and out filled, or
 * -1 with invalid_client sent.
 */
int	client_assertion_verify(struct http_request *, const char *,
	    const char *, struct client_assertion *);

/* invalid_client sent, naming the rule (why) the assertion broke. */
void	client_assertion_refuse(struct http_request *, const char *);

/*
 * The same against a JWK Set already parsed, answering nothing: 0 and out
 * filled, or -1 and *why the rule broken.
 */
int	client_assertion_check(struct http_request *, const char *,
	    const json_t *, struct client_assertion *, const char **);

#endif

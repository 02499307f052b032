/*
 * DPoP (RFC 9449): a TPP proves, with each request, that it holds the
 * private key its access token is bound to. The proof is a JWT in the
 * DPoP header, signed with PS256, ES256 or EdDSA by the key its header
 * carries (src/common/jws.h), whose claims are:
 *	jti	1 to 256 bytes, used once (the database spends it with the
 *		request's query: dpop_proof_spend, 20_oauth.sql)
 *	htm	the request's method
 *	htu	the request's URL without query and fragment: the scheme and
 *		Host it came to, or psd2_issuer's or psd2_mtls_base's origin,
 *		and the path
 *	iat	at most DPOP_IAT_WINDOW seconds old, DPOP_SKEW ahead
 *	nonce	one this bank issued (DPoP-Nonce) within DPOP_NONCE_TTL
 *		seconds: sealed with the form keys, so every worker and
 *		instance knows it without a database
 *	ath	with an access token, the base64url SHA-256 of the token
 * A request carries at most one DPoP header.
 */
#ifndef PSD2_DPOP_H
#define PSD2_DPOP_H

#include <stddef.h>

#include "common/jws.h"

struct http_request;

#define DPOP_IAT_WINDOW		60
#define DPOP_SKEW		10
#define DPOP_NONCE_TTL		300
#define DPOP_JTI_MAX		256
#define DPOP_NONCE_MAX		160
/* "dpop " JKT " " hex(SHA-256) " " Unix time, and the NUL. */
#define DPOP_BINDING_MAX	(5 + JWS_THUMBPRINT_LEN + 1 + 64 + 1 + 20 + 1)

enum dpop_result {
	DPOP_NONE,	/* no DPoP header */
	DPOP_OK,	/* verified: see struct dpop_proof */
	DPOP_NONCE,	/* use_dpop_nonce: no nonce, or not a fresh one */
	DPOP_INVALID	/* invalid_dpop_proof: why says which rule */
};

struct dpop_proof {
	char	jkt[JWS_THUMBPRINT_LEN + 1];
	/*
	 * What the database is given as the request's binding
	 * (token_binding_cnf): the key's thumbprint, the SHA-256 of the
	 * thumbprint and the jti, and until when the jti is kept.
	 */
	char	binding[DPOP_BINDING_MAX];
	char	why[128];
};

/*
 * The request's DPoP proof. token: the access token it comes with (its
 * hash is the proof's ath), or NULL at the token and PAR endpoints.
 */
enum dpop_result	dpop_check(struct http_request *, const char *,
			    struct dpop_proof *);

/* A fresh nonce for the DPoP-Nonce header; 0, or -1. */
int			dpop_nonce(char *, size_t);

#endif

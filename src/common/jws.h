/*
 * Compact JWS (RFC 7515) verification against a client's JWK Set
 * (RFC 7517), for the three signature algorithms the FAPI 2.0 Security
 * Profile allows (5.4.1): PS256 (RSA-PSS, SHA-256, MGF1 SHA-256, salt of
 * 32 bytes, RFC 7518 3.5; keys of 2048 to 8192 bits), ES256 (P-256,
 * r || s of 32 bytes each, RFC 7518 3.4) and EdDSA (Ed25519 only,
 * RFC 8037). Never "none", never HMAC, never RS256.
 *
 * Debian's JOSE libraries each lack one of the three (libjwt 1.10 has
 * neither PS256 nor EdDSA; cjose 0.6 has no EdDSA), so the parsing is
 * here, strict and fuzzed (tests/fuzz/fuzz_jws.c), and the cryptography
 * is OpenSSL's.
 *
 * Keys of a set: kty RSA (n, e), EC (crv P-256, x, y) or OKP (crv
 * Ed25519, x); "use", when present, "sig"; "alg", when present, the one
 * the key serves; no private member (d, p, q, dp, dq, qi, oth, k). A
 * header's "kid" picks the key of that kid; without one every key of
 * the algorithm's type is tried. A header with "crit" is refused: no
 * extension is understood here.
 */
#ifndef PSD2_JWS_H
#define PSD2_JWS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Longest compact JWS read (an RSA-8192 signature is 1366 characters). */
#define JWS_COMPACT_MAX		8192
/* Most keys in a client's set. */
#define JWS_KEYS_MAX		16

enum jws_result {
	JWS_OK = 0,
	JWS_MALFORMED,		/* not three base64url parts, header no JSON */
	JWS_ALG_REFUSED,	/* alg not PS256, ES256 or EdDSA; or crit */
	JWS_NO_KEY,		/* no key of the set fits alg and kid */
	JWS_BAD_SIGNATURE,	/* no fitting key verifies the signature */
	JWS_NOT_DPOP		/* a proof without typ dpop+jwt or public jwk */
};

/* An RFC 7638 SHA-256 thumbprint, base64url. */
#define JWS_THUMBPRINT_LEN	43

/*
 * Verifies compact against jwks (a JWK Set object). On JWS_OK the
 * decoded payload is in payload (not NUL-terminated; *payloadlen bytes
 * of at most payloadmax) and alg, when not NULL, names the algorithm.
 */
enum jws_result	jws_verify(const char *compact, const json_t *jwks,
		    uint8_t *payload, size_t payloadmax, size_t *payloadlen,
		    const char **alg);

/*
 * A DPoP proof (RFC 9449 4.2): typ dpop+jwt, alg one of the three, and
 * the public key in the header's jwk, which verifies the signature. On
 * JWS_OK, as jws_verify, and thumb gets the key's thumbprint.
 */
enum jws_result	jws_verify_dpop(const char *compact, uint8_t *payload,
		    size_t payloadmax, size_t *payloadlen,
		    char thumb[JWS_THUMBPRINT_LEN + 1]);

/* The RFC 7638 SHA-256 thumbprint of a public key; 0, or -1. */
int		jws_thumbprint(const json_t *jwk,
		    char out[JWS_THUMBPRINT_LEN + 1]);

/*
 * 0 when jwks is a JWK Set of 1 to JWS_KEYS_MAX keys that jws_verify
 * can use (public, of an allowed type and size, kids distinct); else
 * -1 and why in why.
 */
int		jws_jwks_check(const json_t *jwks, char *why, size_t whylen);

/* A short English text for a result, for error descriptions. */
const char	*jws_result_text(enum jws_result);

#endif

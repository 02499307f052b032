/*
 * The signing string shared by both signature forms, the rules on which
 * headers must be signed, and the public-key verification itself.
 */
#ifndef PSD2_TPP_SIGNATURE_H
#define PSD2_TPP_SIGNATURE_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

enum tpp_sig_alg {
	TPP_SIG_NONE,
	TPP_SIG_RSA_SHA256,	/* rsa-sha256, RS256: RSASSA-PKCS1-v1_5 */
	TPP_SIG_RSA_SHA512,	/* rsa-sha512 */
	TPP_SIG_PSS_SHA256,	/* PS256: RSASSA-PSS, MGF1-SHA256, salt 32 */
	TPP_SIG_ECDSA_SHA256,	/* ecdsa-sha256, ES256: P-256 only */
};

/* A request header by name (lower case): value, or NULL; *count set. */
typedef const char	*(*tpp_header_fn)(void *, const char *, int *);

/* draft-cavage algorithm name, or the key's default when name is NULL. */
enum tpp_sig_alg	tpp_sig_alg_cavage(const char *, EVP_PKEY *);
/* JWS alg name. */
enum tpp_sig_alg	tpp_sig_alg_jws(const char *);

/*
 * The Berlin Group rules on the signed list: digest and x-request-id
 * always; psu-id, psu-corporate-id and tpp-redirect-uri when sent; no
 * name twice. With need_date also date: this bank's rule for
 * draft-cavage signatures, so that the clock skew bounds how long a
 * captured signature stays usable (a JWS signs its time as sigT).
 * Returns 0, or -1 with a reason.
 */
int	tpp_sig_rules(const char *const *, size_t, int need_date,
	    tpp_header_fn, void *, char *, size_t);

/*
 * "name: value" lines joined by "\n" in list order. (request-target) is
 * "<method lower case> <target>". A named header that is not sent, or
 * is sent twice, is an error. Returns the length, or -1 with a reason.
 */
int	tpp_sig_string(const char *const *, size_t, tpp_header_fn, void *,
	    const char *method, const char *target, char *out, size_t outlen,
	    char *err, size_t errlen);

/*
 * 1 when sig is a valid signature of data under key with alg; 0
 * otherwise (also when alg does not fit the key). jws selects the JWS
 * encoding of ECDSA signatures (r || s); draft-cavage ECDSA signatures
 * are DER, and r || s is accepted there too.
 */
int	tpp_sig_verify(EVP_PKEY *, enum tpp_sig_alg, int jws,
	    const void *data, size_t len, const uint8_t *sig, size_t siglen);

/* A short reason the key cannot sign with alg, or NULL when it fits. */
const char	*tpp_sig_key_misfit(EVP_PKEY *, enum tpp_sig_alg);

#endif

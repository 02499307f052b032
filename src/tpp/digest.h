/*
 * The Digest request header (RFC 3230 as the Berlin Group uses it):
 *	SHA-256=<base64>   or   SHA-512=<base64>
 * Algorithm names in any letter case (the interface spec writes
 * "sha-256="). Pure functions over bytes: no Kore, no I/O.
 */
#ifndef PSD2_TPP_DIGEST_H
#define PSD2_TPP_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define TPP_DIGEST_SHA256	1
#define TPP_DIGEST_SHA512	2
#define TPP_DIGEST_MAX_LEN	64

struct tpp_digest {
	int	alg;			/* TPP_DIGEST_* */
	size_t	len;			/* 32 or 64 */
	uint8_t	value[TPP_DIGEST_MAX_LEN];
};

/*
 * Parses the header. RFC 3230 allows a comma-separated list of
 * "alg=value" pairs; the list may name algorithms we do not know, which
 * are skipped, but it must hold exactly one SHA-256 or SHA-512 entry so
 * that no unverified hash travels under the signature. Returns 0, or -1
 * with a reason for the TPP developer in err.
 */
int	tpp_digest_parse(const char *hdr, struct tpp_digest *out,
	    char *err, size_t errlen);

/* 1 when the digest is the hash of the len bytes at body, else 0. */
int	tpp_digest_matches(const struct tpp_digest *, const void *body,
	    size_t len);

#endif

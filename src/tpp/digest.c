/*
 * Digest header: parsing and comparison with the exact body bytes. An
 * empty (or absent) body hashes the empty string.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "common/encoding.h"
#include "tpp/digest.h"

#define DIGEST_HDR_MAX	1024

static int
digest_alg(const char *name, size_t len)
{
	if (len == 7 && strncasecmp(name, "SHA-256", 7) == 0)
		return (TPP_DIGEST_SHA256);
	if (len == 7 && strncasecmp(name, "SHA-512", 7) == 0)
		return (TPP_DIGEST_SHA512);
	return (0);
}

static int
digest_entry(const char *p, size_t len, struct tpp_digest *out, int *found,
    char *err, size_t errlen)
{
	const char	*eq;
	size_t		 nlen, vlen;
	int		 alg, n;

	/* Optional whitespace around a list element. */
	while (len > 0 && (*p == ' ' || *p == '\t'))
		p++, len--;
	while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
		len--;
	if ((eq = memchr(p, '=', len)) == NULL || eq == p) {
		snprintf(err, errlen, "digest must be SHA-256=<base64> or "
		    "SHA-512=<base64>");
		return (-1);
	}
	nlen = eq - p;
	vlen = len - nlen - 1;
	if ((alg = digest_alg(p, nlen)) == 0)
		return (0);	/* another algorithm: not ours to check */
	if (*found) {
		snprintf(err, errlen, "digest names SHA-256 or SHA-512 "
		    "more than once");
		return (-1);
	}
	n = base64_decode(eq + 1, vlen, out->value, sizeof(out->value));
	out->alg = alg;
	out->len = alg == TPP_DIGEST_SHA256 ? 32 : 64;
	if (n < 0 || (size_t)n != out->len) {
		snprintf(err, errlen, "digest value is not the base64 of a "
		    "%s hash", alg == TPP_DIGEST_SHA256 ? "SHA-256" : "SHA-512");
		return (-1);
	}
	*found = 1;
	return (0);
}

int
tpp_digest_parse(const char *hdr, struct tpp_digest *out, char *err,
    size_t errlen)
{
	const char	*p, *comma;
	size_t		 len;
	int		 found;

	memset(out, 0, sizeof(*out));
	if ((len = strlen(hdr)) == 0 || len > DIGEST_HDR_MAX) {
		snprintf(err, errlen, "digest header is empty or too long");
		return (-1);
	}
	found = 0;
	for (p = hdr; ; p = comma + 1) {
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (digest_entry(p, len, out, &found, err, errlen) == -1)
			return (-1);
		if (comma == NULL)
			break;
	}
	if (!found) {
		snprintf(err, errlen, "digest must use SHA-256 or SHA-512");
		return (-1);
	}
	return (0);
}

int
tpp_digest_matches(const struct tpp_digest *d, const void *body, size_t len)
{
	uint8_t		 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen;
	const EVP_MD	*alg;

	alg = d->alg == TPP_DIGEST_SHA512 ? EVP_sha512() : EVP_sha256();
	if (body == NULL)
		body = "";
	if (EVP_Digest(body, len, md, &mdlen, alg, NULL) != 1 ||
	    mdlen != d->len)
		return (0);
	/* Not a secret, but a uniform compare costs nothing. */
	return (CRYPTO_memcmp(md, d->value, mdlen) == 0);
}

/*
 * Cryptographic helpers: thin wrappers so that callers never touch
 * OpenSSL directly for the common cases and never fall back to weaker
 * primitives (rand(), memcmp()) by accident.
 */
#include <limits.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "crypto.h"

static const char	hexdigits[] = "0123456789abcdef";

int
crypto_random(void *buf, size_t len)
{
	uint8_t		*p = buf;
	int		 chunk;

	/* RAND_bytes takes an int length; feed large requests in chunks. */
	while (len > 0) {
		chunk = len > INT_MAX ? INT_MAX : (int)len;
		if (RAND_bytes(p, chunk) != 1)
			return (-1);
		p += chunk;
		len -= (size_t)chunk;
	}
	return (0);
}

void
crypto_sha256(const void *data, size_t len, uint8_t out[32])
{
	SHA256(data, len, out);
}

static void
hex_lower(const uint8_t *in, size_t len, char *out)
{
	size_t		i;

	for (i = 0; i < len; i++) {
		out[i * 2] = hexdigits[in[i] >> 4];
		out[i * 2 + 1] = hexdigits[in[i] & 0x0f];
	}
	out[len * 2] = '\0';
}

void
crypto_sha256_hex(const void *data, size_t len, char out[65])
{
	uint8_t		digest[CRYPTO_SHA256_LEN];

	crypto_sha256(data, len, digest);
	hex_lower(digest, sizeof(digest), out);
}

int
crypto_hmac_sha256_checked(const void *key, size_t keylen, const void *data,
    size_t len, uint8_t out[32])
{
	unsigned int		outlen = CRYPTO_SHA256_LEN;
	static const uint8_t	empty = 0;

	/* HMAC() takes a NULL key as "reuse the last one": never pass it. */
	if (key == NULL)
		key = &empty;
	if (data == NULL)
		data = &empty;
	if (keylen > INT_MAX || HMAC(EVP_sha256(), key, (int)keylen, data,
	    len, out, &outlen) == NULL || outlen != CRYPTO_SHA256_LEN) {
		OPENSSL_cleanse(out, CRYPTO_SHA256_LEN);
		return (-1);
	}
	return (0);
}

void
crypto_hmac_sha256(const void *key, size_t keylen, const void *data,
    size_t len, uint8_t out[32])
{
	(void)crypto_hmac_sha256_checked(key, keylen, data, len, out);
}

int
crypto_equal(const void *a, const void *b, size_t len)
{
	return (CRYPTO_memcmp(a, b, len) == 0);
}

void
crypto_uuid_format(const uint8_t bytes[16], char out[37])
{
	uint8_t		raw[16];
	size_t		i, o;

	memcpy(raw, bytes, sizeof(raw));
	raw[6] = (raw[6] & 0x0f) | 0x40;	/* version 4 */
	raw[8] = (raw[8] & 0x3f) | 0x80;	/* RFC 4122 variant */

	for (i = 0, o = 0; i < sizeof(raw); i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hexdigits[raw[i] >> 4];
		out[o++] = hexdigits[raw[i] & 0x0f];
	}
	out[o] = '\0';
	OPENSSL_cleanse(raw, sizeof(raw));
}

int
crypto_uuid(char out[37])
{
	uint8_t		raw[16];

	if (crypto_random(raw, sizeof(raw)) == -1)
		return (-1);
	crypto_uuid_format(raw, out);
	OPENSSL_cleanse(raw, sizeof(raw));
	return (0);
}

static int
is_hex(char c)
{
	return ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F'));
}

int
crypto_is_uuid(const char *s)
{
	size_t		i;

	if (s == NULL)
		return (0);
	/* Stops at the NUL: a short string fails before reading past it. */
	for (i = 0; i < CRYPTO_UUID_LEN; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return (0);
		} else if (!is_hex(s[i]))
			return (0);
	}
	return (s[CRYPTO_UUID_LEN] == '\0');
}

void
crypto_short_hash(const char *secret, char out[13])
{
	char		hex[65];

	if (secret == NULL)
		secret = "";
	crypto_sha256_hex(secret, strlen(secret), hex);
	memcpy(out, hex, 12);
	out[12] = '\0';
}

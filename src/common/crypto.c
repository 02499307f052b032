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
#include "encoding.h"

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

void
crypto_sha256_hex(const void *data, size_t len, char out[65])
{
	uint8_t		digest[CRYPTO_SHA256_LEN];

	crypto_sha256(data, len, digest);
	(void)hex_encode(digest, sizeof(digest), out, 65);
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

	memcpy(raw, bytes, sizeof(raw));
	raw[6] = (raw[6] & 0x0f) | 0x40;	/* version 4 */
	raw[8] = (raw[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
	uuid_encode(raw, out);
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

int
crypto_is_uuid(const char *s)
{
	return (uuid_decode(s, NULL) == 0);
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

/*
 * Small cryptographic helpers over OpenSSL: randomness, SHA-256, HMAC,
 * constant-time comparison and UUID-shaped random identifiers.
 * Kore-independent, so the service and the operator CLI share them.
 */
#ifndef PSD2_CRYPTO_H
#define PSD2_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#define CRYPTO_SHA256_LEN	32
#define CRYPTO_UUID_LEN		36	/* without the NUL */

/* Fills buf with len bytes from RAND_bytes. Returns 0, or -1 on failure. */
int	crypto_random(void *buf, size_t len);

void	crypto_sha256(const void *data, size_t len, uint8_t out[32]);

/* Lower-case hex of the SHA-256 of data, NUL-terminated. */
void	crypto_sha256_hex(const void *data, size_t len, char out[65]);

/*
 * HMAC-SHA256. The void form zeroes out on an (unlikely) OpenSSL
 * failure; code that verifies a MAC uses the checked form, so that a
 * failure can never make an all-zero MAC valid.
 */
void	crypto_hmac_sha256(const void *key, size_t keylen,
	    const void *data, size_t len, uint8_t out[32]);
int	crypto_hmac_sha256_checked(const void *key, size_t keylen,
	    const void *data, size_t len, uint8_t out[32]);

/* 1 if the len bytes at a and b are equal, else 0; constant time. */
int	crypto_equal(const void *a, const void *b, size_t len);

/* A random RFC 4122 version-4 UUID, lower-case. Returns 0 or -1. */
int	crypto_uuid(char out[37]);

/* 16 bytes (random or a MAC) in the shape of a version-4 UUID. */
void	crypto_uuid_format(const uint8_t bytes[16], char out[37]);

/* 1 if s is exactly 8-4-4-4-12 hex digits (any case), else 0. */
int	crypto_is_uuid(const char *s);

/*
 * First 12 hex chars of SHA-256(secret): lets log lines correlate a
 * secret (token, code) without containing it.
 */
void	crypto_short_hash(const char *secret, char out[13]);

#endif

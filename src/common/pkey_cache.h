/*
 * A process's cache of public keys parsed into OpenSSL's form, by their
 * bytes. Building an EVP_PKEY from a JWK's numbers costs more than the
 * signature it then verifies (a P-256 key 53 us here, OpenSSL's group
 * made again each time, against 43 us for an ES256 verification), and
 * the same few keys come back on every request: a DPoP key, a client's
 * private_key_jwt key.
 *
 * The cache decides nothing: a key's bytes map to the same parsed key
 * whether cached or not, and which keys a request may use is decided by
 * the caller (a client's registered set, a proof's own header). So
 * entries need no expiry; a slot holds the last key whose digest falls
 * in it. Each Kore worker, psd2ctl and a fuzzer has its own.
 */
#ifndef PSD2_PKEY_CACHE_H
#define PSD2_PKEY_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#define PKEY_CACHE_SLOTS	64

/*
 * The key whose type (an EVP_PKEY_* id) and public bytes (for RSA the
 * modulus and the exponent, each given as a part) are these, with a
 * reference for the caller (EVP_PKEY_free), or NULL when not cached.
 * id gets the digest that pkey_cache_put takes.
 */
EVP_PKEY	*pkey_cache_get(int, const uint8_t *, size_t, const uint8_t *,
		    size_t, uint8_t id[32]);

/* Keeps a reference to pkey under id (from pkey_cache_get's miss). */
void		 pkey_cache_put(const uint8_t id[32], EVP_PKEY *);

#endif

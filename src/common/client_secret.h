/*
 * OAuth client secrets at rest. Operators may choose a secret (psd2ctl
 * tpp add --secret), so a plain digest would let anyone holding a copy of
 * the database test guesses. The stored value is
 *	HMAC-SHA256(client key, "client-secret" 0x00 salt SHA-256(secret))
 * with a random 16-byte salt per secret and the key from the client key
 * file (psd2_client_keys, outside the database), named by its key id in
 * the row. HMAC keeps the token endpoint's hot path at microseconds.
 *
 * Keying SHA-256(secret) rather than the secret lets psd2ctl tpp rehash
 * convert rows of the earlier unsalted form (secret_hash = SHA-256 of
 * the secret) without knowing any secret; such a row is never accepted
 * (client_secret_verify), since converting needs no one's secret. A keyed row cannot be moved to
 * another key without the secret: keep a key in the file as long as a
 * row names it.
 */
#ifndef PSD2_CLIENT_SECRET_H
#define PSD2_CLIENT_SECRET_H

#include <stddef.h>
#include <stdint.h>

#include "keyring.h"

#define CLIENT_SECRET_SALT_LEN	16
#define CLIENT_SECRET_HASH_LEN	32

/* The stored value for sha = SHA-256(secret). Returns 0 or -1. */
int	client_secret_hash(const struct keyring_key *k,
	    const uint8_t salt[CLIENT_SECRET_SALT_LEN], const uint8_t sha[32],
	    uint8_t out[CLIENT_SECRET_HASH_LEN]);

/*
 * Checks secret against a stored keyed row. Constant time in the
 * comparison. Returns 1 on a match, 0 otherwise: also for a key id not
 * in kr, and for a row of the unsalted form (key_id and salt NULL).
 */
int	client_secret_verify(const struct keyring *kr, const char *key_id,
	    const uint8_t *salt, size_t saltlen, const uint8_t *stored,
	    size_t storedlen, const uint8_t sha[32]);

#endif

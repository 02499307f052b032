/*
 * Client secrets at rest (see client_secret.h).
 */
#include <string.h>

#include <openssl/crypto.h>

#include "client_secret.h"
#include "crypto.h"
#include "keyring.h"

#define CLIENT_SECRET_LABEL	"client-secret"

int
client_secret_hash(const struct keyring_key *k,
    const uint8_t salt[CLIENT_SECRET_SALT_LEN], const uint8_t sha[32],
    uint8_t out[CLIENT_SECRET_HASH_LEN])
{
	uint8_t		msg[sizeof(CLIENT_SECRET_LABEL) +
			    CLIENT_SECRET_SALT_LEN + 32];
	size_t		off;
	int		rc;

	off = sizeof(CLIENT_SECRET_LABEL);	/* with its NUL */
	memcpy(msg, CLIENT_SECRET_LABEL, off);
	memcpy(msg + off, salt, CLIENT_SECRET_SALT_LEN);
	off += CLIENT_SECRET_SALT_LEN;
	memcpy(msg + off, sha, 32);
	off += 32;
	rc = crypto_hmac_sha256_checked(k->key, KEYRING_KEY_LEN, msg, off,
	    out);
	OPENSSL_cleanse(msg, sizeof(msg));
	return (rc);
}

int
client_secret_verify(const struct keyring *kr, const char *key_id,
    const uint8_t *salt, size_t saltlen, const uint8_t *stored,
    size_t storedlen, const uint8_t sha[32])
{
	const struct keyring_key	*k;
	uint8_t				 expect[CLIENT_SECRET_HASH_LEN];
	int				 ok;

	if (stored == NULL || storedlen != CLIENT_SECRET_HASH_LEN)
		return (0);
	if (key_id == NULL || salt == NULL ||
	    saltlen != CLIENT_SECRET_SALT_LEN ||
	    (k = keyring_find(kr, key_id, strlen(key_id))) == NULL)
		return (0);
	if (client_secret_hash(k, salt, sha, expect) == -1)
		return (0);
	ok = crypto_equal(stored, expect, sizeof(expect));
	OPENSSL_cleanse(expect, sizeof(expect));
	return (ok);
}

/*
 * Keyrings: the symmetric keys that seal secrets at rest (secretbox) and
 * authenticate browser-carried state (sealed tokens).
 *
 * Key file format, one key per line:
 *	# comment
 *	<key-id> <64 hex chars>
 * The key id is 1 to 16 of [A-Za-z0-9_-]; the key is 32 bytes. The FIRST
 * key is the current one, used for everything new; every listed key can
 * still open, so rotation is "add a new first line, keep the old ones
 * until nothing sealed with them is left". The file must not be
 * readable by group or others.
 */
#ifndef PSD2_KEYRING_H
#define PSD2_KEYRING_H

#include <stddef.h>
#include <stdint.h>

#define KEYRING_MAX		16
#define KEYRING_KEY_LEN		32
#define KEYRING_ID_MAX		16

struct keyring_key {
	char		id[KEYRING_ID_MAX + 1];
	uint8_t		key[KEYRING_KEY_LEN];
};

struct keyring {
	struct keyring_key	keys[KEYRING_MAX];
	size_t			count;
};

/*
 * Loads the key file at path into kr (cleared first). Returns 0, or -1
 * with a message naming the file (and line) in err.
 */
int	keyring_load(struct keyring *kr, const char *path, char *err,
	    size_t errlen);

/* Wipes every key (OPENSSL_cleanse) and empties kr. */
void	keyring_clear(struct keyring *kr);

/*
 * Creates path, mode 0600, holding one new random key named key_id.
 * Refuses to touch an existing file. Returns 0, or -1 with err set.
 */
int	keyring_generate_file(const char *path, const char *key_id,
	    char *err, size_t errlen);

/*
 * Appends a key (for tools and tests that build a keyring in memory).
 * Returns 0, or -1 on an invalid or duplicate id or a full keyring.
 */
int	keyring_add(struct keyring *kr, const char *key_id,
	    const uint8_t key[32]);

/* The key new seals use, or NULL when kr is empty. */
const struct keyring_key	*keyring_current(const struct keyring *kr);

/* The key named by id (idlen bytes, need not be NUL-terminated), or NULL. */
const struct keyring_key	*keyring_find(const struct keyring *kr,
				    const char *id, size_t idlen);

/* 1 if id (len bytes) is a valid key id, else 0. */
int	keyring_valid_id(const char *id, size_t len);

#endif

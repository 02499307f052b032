/*
 * Secretbox: AES-256-GCM encryption of small secrets at rest (TOTP
 * seeds and the like), as one line of text:
 *	v1.<key-id>.<base64url(nonce[12] || ciphertext || tag[16])>
 * Sealed with the keyring's current key, opened with whichever key the
 * box names. The caller's aad (e.g. "psu:anna:totp") is authenticated,
 * not stored: a box copied to another row does not open there.
 */
#ifndef PSD2_SECRETBOX_H
#define PSD2_SECRETBOX_H

#include <stddef.h>
#include <stdint.h>

#include "encoding.h"
#include "keyring.h"

#define SECRETBOX_NONCE_LEN	12
#define SECRETBOX_TAG_LEN	16

/* Buffer size (with the NUL) that secretbox_seal needs for ptlen bytes. */
#define SECRETBOX_SEALED_SIZE(ptlen) \
	(3 + KEYRING_ID_MAX + 1 + BASE64URL_ENCODED_LEN( \
	    SECRETBOX_NONCE_LEN + (ptlen) + SECRETBOX_TAG_LEN) + 1)

/*
 * Encrypts pt under the current key with a fresh random nonce. aad may
 * be NULL (same as ""). Returns the length of the text in out (NUL-
 * terminated), or -1 (no key, buffer too small, crypto failure).
 */
int	secretbox_seal(const struct keyring *kr, const uint8_t *pt,
	    size_t ptlen, const char *aad, char *out, size_t outlen);

/*
 * Decrypts box into pt (at most ptmax bytes). Returns the plaintext
 * length, or -1 on a bad format, unknown key id, wrong aad, tampering or
 * a too small buffer; pt is wiped then.
 */
int	secretbox_open(const struct keyring *kr, const char *box,
	    const char *aad, uint8_t *pt, size_t ptmax);

#endif

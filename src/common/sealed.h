/*
 * Sealed tokens: expiring, HMAC-SHA256 authenticated (NOT encrypted)
 * text that carries state through a browser without a database write.
 *	<key-id>.<expires_at>.<base64url(payload)>.<base64url(mac)>
 *	mac = HMAC(key, purpose 0x00 key-id 0x00 expires_at 0x00 payload)
 * The purpose separates uses: a token made for "authreq" does not open
 * as "csrf". Anyone holding the token can read the payload.
 */
#ifndef PSD2_SEALED_H
#define PSD2_SEALED_H

#include <stddef.h>
#include <stdint.h>

#include "encoding.h"
#include "keyring.h"

/* Buffer size (with the NUL) sealed_make needs for a payload of n bytes. */
#define SEALED_TOKEN_SIZE(n) \
	(KEYRING_ID_MAX + 1 + 19 + 1 + BASE64URL_ENCODED_LEN(n) + 1 + 43 + 1)

/*
 * Makes a token for payload (a C string) under the current key, valid
 * while now < expires_at (expires_at >= 0). Returns the token length
 * (out is NUL-terminated), or -1.
 */
int	sealed_make(const struct keyring *kr, const char *purpose,
	    const char *payload, int64_t expires_at, char *out, size_t outlen);

/*
 * Checks token for purpose at time now and copies the payload, NUL-
 * terminated, into payload (payloadmax bytes with the NUL). Returns the
 * payload length, or -1 on a bad format, unknown key, bad MAC, expiry
 * (now >= expires_at) or a too small buffer.
 */
int	sealed_open(const struct keyring *kr, const char *purpose,
	    const char *token, int64_t now, char *payload, size_t payloadmax);

#endif

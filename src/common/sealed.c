/*
 * Sealed tokens. The expiry goes into the MAC as the same canonical
 * decimal text that is in the token (no sign, no leading zeros), so one
 * value has exactly one valid spelling.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "crypto.h"
#include "encoding.h"
#include "keyring.h"
#include "sealed.h"

#define SEALED_MAC_LEN		32
#define SEALED_MAC_B64_LEN	43
#define SEALED_EXPIRES_MAX	19	/* digits of INT64_MAX */

/* HMAC over purpose 0 kid 0 expires 0 payload, built in one buffer. */
static int
sealed_mac(const struct keyring_key *k, const char *purpose,
    const char *expires, size_t expireslen, const char *payload,
    size_t payloadlen, uint8_t mac[SEALED_MAC_LEN])
{
	size_t		plen = strlen(purpose), klen = strlen(k->id);
	size_t		len, off = 0;
	char		*msg;
	int		rc;

	if (payloadlen > SIZE_MAX / 2 || plen > SIZE_MAX / 4)
		return (-1);
	len = plen + 1 + klen + 1 + expireslen + 1 + payloadlen;
	if ((msg = malloc(len)) == NULL)
		return (-1);
	memcpy(msg + off, purpose, plen);
	off += plen;
	msg[off++] = '\0';
	memcpy(msg + off, k->id, klen);
	off += klen;
	msg[off++] = '\0';
	memcpy(msg + off, expires, expireslen);
	off += expireslen;
	msg[off++] = '\0';
	memcpy(msg + off, payload, payloadlen);
	rc = crypto_hmac_sha256_checked(k->key, KEYRING_KEY_LEN, msg, len,
	    mac);
	OPENSSL_cleanse(msg, len);
	free(msg);
	return (rc);
}

int
sealed_make(const struct keyring *kr, const char *purpose,
    const char *payload, int64_t expires_at, char *out, size_t outlen)
{
	const struct keyring_key	*k;
	uint8_t				 mac[SEALED_MAC_LEN];
	char				 expires[SEALED_EXPIRES_MAX + 1];
	size_t				 plen, off;
	int				 n;

	if ((k = keyring_current(kr)) == NULL || purpose == NULL ||
	    payload == NULL || out == NULL || expires_at < 0)
		return (-1);
	plen = strlen(payload);
	if (plen > INT_MAX / 2)
		return (-1);
	n = snprintf(expires, sizeof(expires), "%" PRId64, expires_at);
	if (n < 0 || (size_t)n >= sizeof(expires))
		return (-1);
	if (sealed_mac(k, purpose, expires, (size_t)n, payload, plen,
	    mac) == -1)
		return (-1);

	n = snprintf(out, outlen, "%s.%s.", k->id, expires);
	if (n < 0 || (size_t)n >= outlen)
		return (-1);
	off = (size_t)n;
	if ((n = base64url_encode(payload, plen, out + off,
	    outlen - off)) == -1)
		return (-1);
	off += (size_t)n;
	if (outlen - off < 2)
		return (-1);
	out[off++] = '.';
	if ((n = base64url_encode(mac, sizeof(mac), out + off,
	    outlen - off)) == -1)
		return (-1);
	return ((int)(off + (size_t)n));
}

/* Canonical non-negative decimal: "0" or [1-9][0-9]*, within int64. */
static int
parse_expires(const char *s, size_t len, int64_t *out)
{
	int64_t		v = 0;
	size_t		i;

	if (len == 0 || len > SEALED_EXPIRES_MAX || (s[0] == '0' && len > 1))
		return (-1);
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (-1);
		if (v > (INT64_MAX - (s[i] - '0')) / 10)
			return (-1);
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return (0);
}

struct sealed_parts {
	const char	*kid, *expires, *payload, *mac;
	size_t		 kidlen, expireslen, payloadlen, maclen;
};

/* Splits at exactly three dots; base64url never contains one. */
static int
split_token(const char *token, struct sealed_parts *p)
{
	const char	*d1, *d2, *d3;

	if ((d1 = strchr(token, '.')) == NULL ||
	    (d2 = strchr(d1 + 1, '.')) == NULL ||
	    (d3 = strchr(d2 + 1, '.')) == NULL ||
	    strchr(d3 + 1, '.') != NULL)
		return (-1);
	p->kid = token;
	p->kidlen = (size_t)(d1 - token);
	p->expires = d1 + 1;
	p->expireslen = (size_t)(d2 - p->expires);
	p->payload = d2 + 1;
	p->payloadlen = (size_t)(d3 - p->payload);
	p->mac = d3 + 1;
	p->maclen = strlen(p->mac);
	return (0);
}

int
sealed_open(const struct keyring *kr, const char *purpose,
    const char *token, int64_t now, char *payload, size_t payloadmax)
{
	const struct keyring_key	*k;
	struct sealed_parts		 p;
	uint8_t				 mac[SEALED_MAC_LEN];
	uint8_t				 expect[SEALED_MAC_LEN];
	int64_t				 expires_at;
	int				 len;

	if (kr == NULL || purpose == NULL || token == NULL ||
	    payload == NULL || payloadmax == 0)
		return (-1);
	payload[0] = '\0';
	if (split_token(token, &p) == -1 ||
	    (k = keyring_find(kr, p.kid, p.kidlen)) == NULL ||
	    parse_expires(p.expires, p.expireslen, &expires_at) == -1)
		return (-1);
	if (p.maclen != SEALED_MAC_B64_LEN || base64url_decode(p.mac,
	    p.maclen, mac, sizeof(mac)) != SEALED_MAC_LEN)
		return (-1);
	len = base64url_decode(p.payload, p.payloadlen, (uint8_t *)payload,
	    payloadmax - 1);
	if (len == -1 || memchr(payload, '\0', (size_t)len) != NULL)
		goto fail;
	payload[len] = '\0';

	if (sealed_mac(k, purpose, p.expires, p.expireslen, payload,
	    (size_t)len, expect) == -1)
		goto fail;
	if (CRYPTO_memcmp(mac, expect, SEALED_MAC_LEN) != 0)
		goto fail;
	if (now >= expires_at)
		goto fail;
	return (len);
fail:
	OPENSSL_cleanse(payload, payloadmax);
	return (-1);
}

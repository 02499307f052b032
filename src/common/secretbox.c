/*
 * AES-256-GCM secretbox. The version and key id are authenticated along
 * with the caller's aad (the additional data is "v1.<key-id>." || aad),
 * so no part of the text can be changed without the tag failing.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "crypto.h"
#include "encoding.h"
#include "keyring.h"
#include "secretbox.h"

#define SECRETBOX_PREFIX	"v1."
#define SECRETBOX_PREFIX_LEN	3
#define SECRETBOX_OVERHEAD	(SECRETBOX_NONCE_LEN + SECRETBOX_TAG_LEN)
#define SECRETBOX_HEADER_MAX	(SECRETBOX_PREFIX_LEN + KEYRING_ID_MAX + 1)

/* Writes "v1.<key-id>." into hdr; returns its length. */
static size_t
make_header(const char *kid, char hdr[SECRETBOX_HEADER_MAX + 1])
{
	size_t		idlen = strlen(kid);

	memcpy(hdr, SECRETBOX_PREFIX, SECRETBOX_PREFIX_LEN);
	memcpy(hdr + SECRETBOX_PREFIX_LEN, kid, idlen);
	hdr[SECRETBOX_PREFIX_LEN + idlen] = '.';
	hdr[SECRETBOX_PREFIX_LEN + idlen + 1] = '\0';
	return (SECRETBOX_PREFIX_LEN + idlen + 1);
}

static int
add_aad(EVP_CIPHER_CTX *ctx, const char *hdr, size_t hdrlen,
    const char *aad)
{
	int		n;
	size_t		aadlen = strlen(aad);

	if (aadlen > INT_MAX)
		return (-1);
	if (!EVP_CipherUpdate(ctx, NULL, &n, (const uint8_t *)hdr,
	    (int)hdrlen))
		return (-1);
	if (aadlen > 0 && !EVP_CipherUpdate(ctx, NULL, &n,
	    (const uint8_t *)aad, (int)aadlen))
		return (-1);
	return (0);
}

static int
gcm_seal(const struct keyring_key *k, const char *hdr, size_t hdrlen,
    const char *aad, const uint8_t *pt, size_t ptlen, uint8_t *raw)
{
	EVP_CIPHER_CTX	*ctx;
	uint8_t		*nonce = raw, *ct = raw + SECRETBOX_NONCE_LEN;
	int		 n, rc = -1;

	if (crypto_random(nonce, SECRETBOX_NONCE_LEN) == -1)
		return (-1);
	if ((ctx = EVP_CIPHER_CTX_new()) == NULL)
		return (-1);
	if (EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, k->key,
	    nonce) != 1 || add_aad(ctx, hdr, hdrlen, aad) == -1)
		goto out;
	if (ptlen > 0 && EVP_EncryptUpdate(ctx, ct, &n, pt, (int)ptlen) != 1)
		goto out;
	if (EVP_EncryptFinal_ex(ctx, ct + ptlen, &n) != 1)
		goto out;
	if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, SECRETBOX_TAG_LEN,
	    ct + ptlen) != 1)
		goto out;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(ctx);
	return (rc);
}

int
secretbox_seal(const struct keyring *kr, const uint8_t *pt, size_t ptlen,
    const char *aad, char *out, size_t outlen)
{
	const struct keyring_key	*k;
	char				 hdr[SECRETBOX_HEADER_MAX + 1];
	uint8_t				*raw;
	size_t				 hdrlen, rawlen;
	int				 len;

	if ((k = keyring_current(kr)) == NULL || out == NULL ||
	    (pt == NULL && ptlen > 0))
		return (-1);
	if (ptlen > INT_MAX / 2)
		return (-1);
	if (aad == NULL)
		aad = "";
	hdrlen = make_header(k->id, hdr);
	rawlen = ptlen + SECRETBOX_OVERHEAD;
	if (outlen < hdrlen + BASE64URL_ENCODED_LEN(rawlen) + 1)
		return (-1);
	if ((raw = malloc(rawlen)) == NULL)
		return (-1);

	len = -1;
	if (gcm_seal(k, hdr, hdrlen, aad, pt, ptlen, raw) == 0) {
		memcpy(out, hdr, hdrlen);
		len = base64url_encode(raw, rawlen, out + hdrlen,
		    outlen - hdrlen);
		if (len != -1)
			len += (int)hdrlen;
	}
	free(raw);
	return (len);
}

static int
gcm_open(const struct keyring_key *k, const char *hdr, size_t hdrlen,
    const char *aad, const uint8_t *raw, size_t rawlen, uint8_t *pt)
{
	EVP_CIPHER_CTX	*ctx;
	const uint8_t	*ct = raw + SECRETBOX_NONCE_LEN;
	size_t		 ctlen = rawlen - SECRETBOX_OVERHEAD;
	uint8_t		 tag[SECRETBOX_TAG_LEN];
	int		 n, rc = -1;

	/* The tag is copied out: set_tag takes a non-const pointer. */
	memcpy(tag, ct + ctlen, sizeof(tag));
	if ((ctx = EVP_CIPHER_CTX_new()) == NULL)
		return (-1);
	if (EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, k->key,
	    raw) != 1 || add_aad(ctx, hdr, hdrlen, aad) == -1)
		goto out;
	if (ctlen > 0 && EVP_DecryptUpdate(ctx, pt, &n, ct, (int)ctlen) != 1)
		goto out;
	if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, SECRETBOX_TAG_LEN,
	    tag) != 1)
		goto out;
	if (EVP_DecryptFinal_ex(ctx, pt + ctlen, &n) != 1)
		goto out;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(ctx);
	return (rc);
}

int
secretbox_open(const struct keyring *kr, const char *box, const char *aad,
    uint8_t *pt, size_t ptmax)
{
	const struct keyring_key	*k;
	const char			*kid, *dot, *body;
	char				 hdr[SECRETBOX_HEADER_MAX + 1];
	uint8_t				*raw;
	size_t				 hdrlen, bodylen, rawmax, ctlen;
	int				 rawlen, rc = -1;

	if (kr == NULL || box == NULL || (pt == NULL && ptmax > 0))
		return (-1);
	if (aad == NULL)
		aad = "";
	if (strncmp(box, SECRETBOX_PREFIX, SECRETBOX_PREFIX_LEN) != 0)
		return (-1);
	kid = box + SECRETBOX_PREFIX_LEN;
	if ((dot = strchr(kid, '.')) == NULL ||
	    (k = keyring_find(kr, kid, (size_t)(dot - kid))) == NULL)
		return (-1);
	hdrlen = make_header(k->id, hdr);
	body = dot + 1;
	bodylen = strlen(body);
	if (bodylen > INT_MAX / 2)
		return (-1);

	rawmax = BASE64_DECODED_MAX(bodylen);
	if ((raw = malloc(rawmax)) == NULL)
		return (-1);
	rawlen = base64url_decode(body, bodylen, raw, rawmax);
	if (rawlen < SECRETBOX_OVERHEAD)
		goto out;
	ctlen = (size_t)rawlen - SECRETBOX_OVERHEAD;
	if (ctlen > ptmax)
		goto out;
	if (gcm_open(k, hdr, hdrlen, aad, raw, (size_t)rawlen, pt) == -1) {
		/* Never leave unauthenticated plaintext behind. */
		OPENSSL_cleanse(pt, ctlen);
		goto out;
	}
	rc = (int)ctlen;
out:
	free(raw);
	return (rc);
}

/*
 * Parsed public keys by their bytes (see pkey_cache.h): a direct-mapped
 * table of SHA-256 digests, each slot the last key that fell in it.
 */
#include <string.h>

#include <openssl/evp.h>

#include "pkey_cache.h"

struct pkey_slot {
	uint8_t		 id[32];
	EVP_PKEY	*pkey;
};

static struct pkey_slot	pkey_slots[PKEY_CACHE_SLOTS];

/* SHA-256 of the type and each part with its length before it. */
static int
pkey_cache_id(int type, const uint8_t *a, size_t alen, const uint8_t *b,
    size_t blen, uint8_t id[32])
{
	EVP_MD_CTX	*ctx;
	uint8_t		 head[12];
	int		 ok;

	memset(head, 0, sizeof(head));
	head[0] = (uint8_t)type;
	head[1] = (uint8_t)(type >> 8);
	head[2] = (uint8_t)(type >> 16);
	head[4] = (uint8_t)alen;
	head[5] = (uint8_t)(alen >> 8);
	head[6] = (uint8_t)(alen >> 16);
	head[8] = (uint8_t)blen;
	head[9] = (uint8_t)(blen >> 8);
	head[10] = (uint8_t)(blen >> 16);
	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return (-1);
	ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
	    EVP_DigestUpdate(ctx, head, sizeof(head)) == 1 &&
	    EVP_DigestUpdate(ctx, a, alen) == 1 &&
	    (blen == 0 || EVP_DigestUpdate(ctx, b, blen) == 1) &&
	    EVP_DigestFinal_ex(ctx, id, NULL) == 1;
	EVP_MD_CTX_free(ctx);
	return (ok ? 0 : -1);
}

static struct pkey_slot *
pkey_cache_slot(const uint8_t id[32])
{
	return (&pkey_slots[(id[0] | (unsigned int)id[1] << 8) %
	    PKEY_CACHE_SLOTS]);
}

EVP_PKEY *
pkey_cache_get(int type, const uint8_t *a, size_t alen, const uint8_t *b,
    size_t blen, uint8_t id[32])
{
	struct pkey_slot	*slot;

	if (pkey_cache_id(type, a, alen, b, blen, id) == -1) {
		/* An all-zero id is never put: nothing is cached. */
		memset(id, 0, 32);
		return (NULL);
	}
	slot = pkey_cache_slot(id);
	/* Digests of public bytes: no secret to compare in constant time. */
	if (slot->pkey == NULL || memcmp(slot->id, id, 32) != 0 ||
	    EVP_PKEY_up_ref(slot->pkey) != 1)
		return (NULL);
	return (slot->pkey);
}

void
pkey_cache_put(const uint8_t id[32], EVP_PKEY *pkey)
{
	static const uint8_t	 zero[32];
	struct pkey_slot	*slot;

	if (memcmp(id, zero, sizeof(zero)) == 0 || EVP_PKEY_up_ref(pkey) != 1)
		return;
	slot = pkey_cache_slot(id);
	EVP_PKEY_free(slot->pkey);
	slot->pkey = pkey;
	memcpy(slot->id, id, 32);
}

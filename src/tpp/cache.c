/*
 * Certificate cache: a small array searched linearly. With a few hundred
 * entries a scan of 32-byte keys costs far less than the one signature
 * verification each request needs anyway, and there is no hash table
 * for an attacker to skew.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/x509.h>

#include "tpp/cache.h"

struct tpp_cache {
	struct tpp_cert_info	*entries;
	size_t			 max;
	size_t			 used;
	uint64_t		 clock;
};

struct tpp_cache *
tpp_cache_new(size_t max)
{
	struct tpp_cache	*c;

	if (max == 0)
		max = 1;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return (NULL);
	if ((c->entries = calloc(max, sizeof(*c->entries))) == NULL) {
		free(c);
		return (NULL);
	}
	c->max = max;
	return (c);
}

void
tpp_cache_free(struct tpp_cache *c)
{
	size_t	i;

	if (c == NULL)
		return;
	for (i = 0; i < c->used; i++)
		X509_free(c->entries[i].cert);
	free(c->entries);
	free(c);
}

struct tpp_cert_info *
tpp_cache_get(struct tpp_cache *c, const uint8_t *fp)
{
	size_t	i;

	for (i = 0; i < c->used; i++) {
		if (memcmp(c->entries[i].fp, fp, 32) == 0) {
			c->entries[i].last_used = ++c->clock;
			return (&c->entries[i]);
		}
	}
	return (NULL);
}

struct tpp_cert_info *
tpp_cache_put(struct tpp_cache *c, const uint8_t *fp, X509 *cert)
{
	struct tpp_cert_info	*e;
	size_t			 i;

	if (c->used < c->max)
		e = &c->entries[c->used++];
	else {
		e = &c->entries[0];
		for (i = 1; i < c->used; i++)
			if (c->entries[i].last_used < e->last_used)
				e = &c->entries[i];
		X509_free(e->cert);
	}
	memset(e, 0, sizeof(*e));
	memcpy(e->fp, fp, 32);
	e->cert = cert;
	e->last_used = ++c->clock;
	return (e);
}

size_t
tpp_cache_size(const struct tpp_cache *c)
{
	return (c->used);
}

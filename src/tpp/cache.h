/*
 * Per-worker cache of TPP certificates by SHA-256 fingerprint of the DER:
 * the parsed certificate, what was read from it (organizationIdentifier,
 * roles), its own checks and the chain result with the time window and
 * trust generation it holds for. A TPP's second request costs a hash and
 * a lookup, then one signature verification. Bounded: the least recently
 * used entry goes when it is full. Pure C over OpenSSL, no Kore.
 */
#ifndef PSD2_TPP_CACHE_H
#define PSD2_TPP_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/x509.h>

struct tpp_cert_info {
	uint8_t		 fp[32];		/* SHA-256 of the DER */
	X509		*cert;			/* owned by the entry */
	char		 org_id[128];
	int		 roles;
	/* Checks of the certificate itself (QCStatement, key usage, ...). */
	int		 own_status;
	char		 own_code[40];
	char		 own_text[200];
	/* Chain, validity and revocation: holds for gen and [from, until]. */
	int		 chain_checked;
	unsigned	 chain_gen;
	int64_t		 chain_from;
	int64_t		 chain_until;
	int		 chain_status;
	char		 chain_code[40];
	char		 chain_text[200];
	/* LRU */
	uint64_t	 last_used;
};

struct tpp_cache;

struct tpp_cache	*tpp_cache_new(size_t max);
void			 tpp_cache_free(struct tpp_cache *);

/* The entry for fp, or NULL. Marks it used. */
struct tpp_cert_info	*tpp_cache_get(struct tpp_cache *, const uint8_t *);

/*
 * Takes cert (owned from now on) into a fresh entry, evicting the least
 * recently used one when full. Never NULL.
 */
struct tpp_cert_info	*tpp_cache_put(struct tpp_cache *, const uint8_t *,
			    X509 *);

size_t			 tpp_cache_size(const struct tpp_cache *);

#endif

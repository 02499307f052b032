/*
 * Per-worker cache of OAuth client registrations, so that a flood of
 * authorize requests, or the token endpoint's hot path, costs no extra
 * database round trip. Entries live CLIENT_CACHE_TTL seconds. What the
 * cache serves is never the last word: the consent step and the token
 * grants re-check in the database that the client and its TPP are
 * active, so a suspension still takes effect at once where it matters.
 * A changed secret or JWK Set takes effect within the TTL: the old secret
 * or a removed key may authenticate the client until then.
 */
#ifndef PSD2_CLIENT_CACHE_H
#define PSD2_CLIENT_CACHE_H

#include <jansson.h>

#define CLIENT_CACHE_TTL	10

enum client_cache_kind {
	CLIENT_CACHE_PAGE,	/* {"uris":[...], "pkce", "name", "org"} */
	CLIENT_CACHE_SECRET,	/* {"digest": hex SHA-256, "ttl": seconds} */
	/* {"jwks": JWK Set, "hash": hex SHA-256 of its text, "ttl"} */
	CLIENT_CACHE_KEYS,
	CLIENT_CACHE_KINDS
};

/* The cached row for client_id, or NULL (borrowed reference). */
json_t	*client_cache_get(enum client_cache_kind, const char *);
/* Stores (a reference to) row for client_id; NULL forgets it. */
void	 client_cache_put(enum client_cache_kind, const char *, json_t *);

#endif

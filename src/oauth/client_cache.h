/*
 * Per-worker cache of OAuth client registrations for the login page, so
 * a flood of authorize requests costs no database round trip. Entries
 * live CLIENT_CACHE_TTL seconds; what the cache serves is only used to
 * render a page: the consent and token steps re-check the client in the
 * database, so a suspension still takes effect at once where it matters.
 */
#ifndef PSD2_CLIENT_CACHE_H
#define PSD2_CLIENT_CACHE_H

#include <jansson.h>

#define CLIENT_CACHE_TTL	10

/* The cached row {"uris":[...], "pkce":bool, "name":..., "org":...} or NULL. */
json_t	*client_cache_get(const char *);
/* Stores (a reference to) row for client_id. */
void	 client_cache_put(const char *, json_t *);

#endif

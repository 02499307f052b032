/*
 * Client authentication at the token, PAR and revocation endpoints. Each
 * client has one method (oauth_client.auth_method, psd2ctl tpp
 * auth-method), and only that one counts:
 *	client_secret_basic	HTTP Basic with its secret (the interface
 *				contract's way, the default)
 *	tls_client_auth		RFC 8705 2.1: its QWAC on the mTLS host,
 *				client_id in the body, no Authorization
 *	private_key_jwt		RFC 7523 2.2: a JWT signed with one of its
 *				registered keys (client_assertion.h)
 * A request that carries more than one method is refused (RFC 6749 2.3).
 *
 * The handler's query loop drives it: client_auth_begin starts the
 * client's lookup, and the handler hands each answer to client_auth_done
 * until it says the client is authenticated (for an assertion one more
 * query, which spends its jti, runs in between). The token endpoint sets
 * defer_spend instead: its grant spends the jti in the grant's own
 * transaction (one round trip and one durable commit fewer).
 */
#ifndef PSD2_CLIENT_AUTH_H
#define PSD2_CLIENT_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "oauth/client_assertion.h"

struct http_request;

#define CLIENT_ID_MAX		128
#define CLIENT_SECRET_MAX	256

/* One request's authentication; a handler's context holds it. */
struct client_auth {
	int		spending;	/* the assertion's jti query runs */
	/*
	 * Set by the caller: the assertion's jti is not spent here, the
	 * caller's own query spends it (assertion).
	 */
	int		defer_spend;
	/*
	 * Authenticated by a client assertion: its jti, to be spent, and the
	 * SHA-256 of the JWK Set (as oauth_client.jwks's text) that verified
	 * it, which the spending query checks is still the client's.
	 */
	int		asserted;
	struct client_assertion	assertion;
	uint8_t		keys_hash[32];
	/*
	 * The client authenticates as FAPI 2.0 allows (tls_client_auth,
	 * private_key_jwt): its access tokens must be sender-constrained.
	 */
	int		fapi;
	long long	ttl;		/* the client's access token lifetime */
	char		client_id[CLIENT_ID_MAX];
	/* Basic's secret, or "" for the two methods without one. */
	char		secret[CLIENT_SECRET_MAX];
};

/* The credentials the request carries. 0, or -1 (answer sent). */
int	client_auth_credentials(struct http_request *, struct client_auth *);

/* The client's lookup, for credentials read. */
void	client_auth_lookup(struct http_request *, struct db_query *,
	    struct client_auth *);

/* The credentials, then the client's lookup. 0, or -1 (answer sent). */
int	client_auth_begin(struct http_request *, struct db_query *,
	    struct client_auth *);

/*
 * A query's answer: 1 when the client is authenticated (auth->ttl set);
 * else 0 and *next is DB_ANSWERED (refused, the answer sent) or DB_QUERY
 * (one more query runs; call again with its answer).
 */
int	client_auth_done(struct http_request *, struct db_query *,
	    struct client_auth *, enum db_next *);

/*
 * The token endpoint's hot path without the lookup: a client
 * authenticated in the last seconds, a Basic one checked against its
 * cached secret digest, a private_key_jwt one (defer_spend set) against
 * its cached JWK Set. 1 (auth->ttl set), 0 when not cached (or when the
 * cached keys do not verify the assertion: the lookup decides), -1 when
 * the answer was sent.
 */
int	client_auth_cached(struct http_request *, struct client_auth *);

/* Forgets the client's cached keys: they were found changed. */
void	client_auth_forget_keys(const char *);

#endif

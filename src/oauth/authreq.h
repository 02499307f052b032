/*
 * The authorisation request's parameters (RFC 6749 4.1.1, RFC 7636),
 * checked alike at GET /auth/oauth/authorize and for a pushed request at
 * POST /auth/oauth/par (RFC 9126). The client and its redirect_uri come
 * first: until both are known good, authorize shows an error page and
 * never redirects. A later refusal is answered as its endpoint answers:
 * an error redirect to the client (authorize) or a 400 JSON error (PAR,
 * RFC 9126 2.3). The request object built here is the one sealed into
 * the PSU's forms (its keys: src/oauth/oauth.h).
 */
#ifndef PSD2_AUTHREQ_H
#define PSD2_AUTHREQ_H

#include <jansson.h>

struct http_request;
struct db_query;

enum authreq_answer {
	AUTHREQ_REDIRECT,	/* authorize: error redirects */
	AUTHREQ_JSON		/* PAR: 400 {"error", "error_description"} */
};

#define AUTHREQ_UUID_LEN	36
/* How long a pushed request waits for its authorize (RFC 9126 2.2). */
#define AUTHREQ_PUSHED_TTL	60

/*
 * The client's registration, {"uris", "pkce", "par", "name", "org"}, of
 * an active client of an active TPP ($1 the client_id); cached per
 * worker (client_cache.h) by authreq_client_row.
 */
#define AUTHREQ_SQL_CLIENT \
    "SELECT json_build_object('uris', c.redirect_uris, 'pkce', " \
    "c.pkce_required, 'par', c.par_required, 'name', t.name, 'org', " \
    "t.org_id) FROM oauth_client c JOIN tpp t ON t.id = c.tpp_id " \
    "WHERE c.client_id = $1 AND c.status = 'active' AND " \
    "t.status = 'active'"
/* scope=AIS:{consentId}: $1 client_id, $2 the consent. */
#define AUTHREQ_SQL_BG_CONSENT \
    "SELECT description, request FROM bg_oauth_authorize($1, $2)"

/* The registration from AUTHREQ_SQL_CLIENT's row, or NULL (borrowed). */
json_t	*authreq_client_row(struct db_query *, const char *);

/*
 * The request of client_id and a redirect_uri that client registered
 * (exactly, RFC 9700 2.1) and that may be used here (redirect_uri.h: no
 * http in production), with the state when it was sent once; NULL
 * otherwise.
 */
json_t	*authreq_new(struct http_request *, json_t *, const char *,
	    const char *);

/*
 * Checks the rest of the request's parameters and adds scope,
 * code_challenge and dpop_jkt to it. 0, or -1 when the refusal was
 * answered. A Berlin Group consent's scope leaves its id in consent_id
 * (else "").
 */
int	authreq_check(struct http_request *, json_t *, json_t *,
	    enum authreq_answer, char [AUTHREQ_UUID_LEN + 1]);

/* A refusal of the request, answered as its endpoint answers. */
void	authreq_refuse(struct http_request *, json_t *, enum authreq_answer,
	    const char *, const char *);

/*
 * AUTHREQ_SQL_BG_CONSENT's answer merged into the request: 0, or -1
 * when it was refused (invalid_scope) or failed, and answered.
 */
int	authreq_bg_merge(struct http_request *, struct db_query *, json_t *,
	    enum authreq_answer);

#endif

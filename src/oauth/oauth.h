/*
 * Pieces shared by the authorisation endpoints: scopes, error redirects,
 * the random values handed to TPPs and repeated parameters (their queries
 * run in the handlers' one query loop, db_drive of src/db/db.h).
 *
 * The authorisation request travels sealed in the PSU's forms
 * (forms_seal_authreq) as a JSON object with these keys:
 *	client_id, redirect_uri	as registered (checked at authorize)
 *	state			as sent, absent when none was sent
 *	scope			the granted scopes, canonical order
 *	code_challenge		S256 challenge, absent without PKCE
 *	dpop_jkt		the DPoP key's thumbprint the code is bound to
 *				(RFC 9449 10), absent when none
 *	par			hex SHA-256 of the request_uri of a pushed
 *				request, which the decision uses up; absent
 *				when the request was not pushed
 *	tpp_name, tpp_org	the TPP, for the pages
 *	flow			random id of this request (login_page_new):
 *				one request gets one login and one decision
 *	bg			a Berlin Group consent (src/bg/README.md "SCA
 *				of a consent"), absent otherwise; scope is then
 *				ACCOUNT_INFORMATION, what its tokens grant:
 *	    consent_id		the consent (received, of client_id)
 *	    authorisation_id	its authorisation, null when the TPP made
 *				none (OAUTH: one is made at the decision)
 *	    approach		REDIRECT (its page; redirect_uri and state
 *				absent) or OAUTH (scope=AIS:{consentId})
 *	    ok_uri, nok_uri	REDIRECT: TPP-Redirect-URI, and
 *				TPP-Nok-Redirect-URI or else TPP-Redirect-URI
 *	    kind		the consent's access_kind
 *	The access the consent asks is read with the PSU's accounts after
 *	the login (bg_consent_page): up to 60 IBANs would not fit a form.
 * or, for the bank's own pages, {"next": path, "flow": id}.
 */
#ifndef PSD2_OAUTH_H
#define PSD2_OAUTH_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct http_request;
struct db_query;
struct dpop_proof;
struct form_state;

#define OAUTH_SCOPE_FUND	0x01
#define OAUTH_SCOPE_AIS		0x02
#define OAUTH_SCOPE_PIS		0x04

/*
 * Parses a space-separated scope list; returns the bit set, 0 when empty,
 * -1 for an unknown value. canonical gets the granted list, in a fixed
 * order and without duplicates.
 */
int	oauth_scope_parse(const char *, char *, size_t);
/* The scopes as a PostgreSQL text[] literal. */
void	oauth_scope_array(int, char *, size_t);

/*
 * To the client's redirect_uri (302; 303 after a POST) with error,
 * description, state and iss (RFC 9207).
 */
void	oauth_redirect_error(struct http_request *, json_t *, const char *,
	    const char *);
/* redirect_uri?code=..&state=..&iss=.. */
void	oauth_redirect_code(struct http_request *, json_t *, const char *);

/* A random UUID-shaped secret and its SHA-256. */
int	oauth_new_secret(char [37], uint8_t [32]);

/* HTTP Basic client credentials (RFC 6749 2.3.1, form-decoded). */
int	oauth_basic_credentials(struct http_request *, char *, size_t,
	    char *, size_t);

/*
 * The DPoP proof of a request to the token or PAR endpoint (RFC 9449 5,
 * 10.1; tpp/dpop.h), checked before the client, with a fresh nonce for
 * the client's next proof: 1 and the proof, 0 when there is none, -1
 * when it was refused (400 invalid_dpop_proof or use_dpop_nonce sent).
 */
int	oauth_dpop(struct http_request *, struct dpop_proof *);

/*
 * The first of names (NULL-terminated) that the request carries more than
 * once (RFC 6749 3.1, 3.2), in its query string (GET) or form body (POST,
 * before http_populate_post), however spelled and even when a validator
 * would drop one of the values; NULL when none is repeated.
 */
const char	*oauth_repeated_param(struct http_request *,
		    const char *const *);

/*
 * The public base URL of the service (the RFC 8414 issuer, metadata.c):
 * psd2_issuer, else the scheme and Host of the request (sandbox and tests
 * on any port). -1 when the Host header is no host or it does not fit.
 */
int	oauth_issuer(struct http_request *, char *, size_t);
#define OAUTH_ISSUER_MAX	512

/*
 * The consent page of an authorisation request (consent.c), shown when
 * the PSU's login succeeds, with the PSU's accounts query's result.
 */
void	consent_page(struct http_request *, struct form_state *, long long,
	    struct db_query *);

#endif

/*
 * State that travels through the PSU's browser between the authorize
 * request and the consent, so that serving a login page writes nothing to
 * the database: HMAC-sealed form fields (src/common/sealed.c) under keys
 * every instance shares, and a CSRF token bound to both the sealed
 * request and a pre-login cookie.
 */
#ifndef PSD2_FORMS_H
#define PSD2_FORMS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct http_request;

#define FORMS_TOKEN_MAX		4096
#define FORMS_PRE_COOKIE	"psd2_pre"
#define FORMS_SESSION_COOKIE	"psd2_session"

/* How long a PSU may take from the login page to the consent. */
#define FORMS_AUTHREQ_TTL	1800
/* Password step done, TOTP pending; consent page shown, decision pending. */
#define FORMS_STEP_TTL		300

struct form_state {
	char	authreq[FORMS_TOKEN_MAX];
	char	csrf[FORMS_TOKEN_MAX];
	json_t	*request;	/* the opened authreq payload */
};

int	forms_seal_authreq(json_t *, char *, size_t);
/* A pre-login cookie (new or the browser's) and the csrf bound to it. */
int	forms_csrf_issue(struct http_request *, const char *, char *, size_t);
/* The same for pages under another path (the staff pages: "/staff"). */
int	forms_csrf_issue_at(struct http_request *, const char *, const char *,
	    char *, size_t);

/*
 * Checks the posted authreq and csrf against the pre-login cookie; fills
 * fs->request. Returns 0, or -1 when anything is missing, forged, expired
 * or bound to another request or browser.
 */
int	forms_verify(struct http_request *, struct form_state *);
void	forms_clear(struct form_state *);

/* "<purpose>" tokens binding a PSU to the authreq between steps. */
int	forms_seal_step(const char *, long long, const char *, char *, size_t);
int	forms_open_step(const char *, const char *, const char *,
	    long long *);

/*
 * A UUID-shaped secret derived from the current form key and input
 * (HMAC, separated by purpose), and its SHA-256: the same input gives the
 * same secret, so that a step posted twice can answer the second post
 * with the first post's session or code without storing either (the
 * database keeps only the digest). input must carry a random nonce of
 * the flow. Returns 0 or -1.
 */
int	forms_derive_secret(const char *, const char *, char [37],
	    uint8_t [32]);
/*
 * forms_derive_secret for one subject (a PSU, a staff member) in the flow
 * of fs's opened request: the same flow and subject give the same secret.
 * Returns 0, or -1 when the request carries no flow.
 */
int	forms_flow_secret(const struct form_state *, const char *, long long,
	    char [37], uint8_t [32]);

/* A posted argument as a C string (NULL when absent). */
const char	*forms_arg(struct http_request *, const char *);

#endif

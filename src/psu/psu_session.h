/*
 * The PSU's browser session on the bank's own pages (payments, consents,
 * a payment's authorise page): the cookie, and the login that opens it.
 */
#ifndef PSD2_PSU_SESSION_H
#define PSD2_PSU_SESSION_H

struct http_request;

/* The browser's PSU session cookie, or NULL. */
const char	*psu_session_cookie(struct http_request *);
/* The PSU login page (password, then TOTP or the page's own SCA), then
 * back to path. */
void		 psu_session_login(struct http_request *, const char *);

#endif

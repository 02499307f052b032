/*
 * The PSU's browser session on the bank's own pages (payments, consents,
 * a payment's authorise page): the cookie, and the login that opens it.
 */
#ifndef PSD2_PSU_SESSION_H
#define PSD2_PSU_SESSION_H

struct http_request;

#define PSU_PAYMENT_ID_LEN	36

/* The browser's PSU session cookie, or NULL. */
const char	*psu_session_cookie(struct http_request *);
/* The PSU login page (password, then TOTP or the page's own SCA), then
 * back to path. */
void		 psu_session_login(struct http_request *, const char *);
/*
 * The payment id of a payment's authorise page path
 * (/auth/payments/{id}/authorise) into id, or -1: a login for that page
 * opens a session for that payment only, with the password alone.
 */
int		 psu_payment_path_id(const char *,
		    char [PSU_PAYMENT_ID_LEN + 1]);

#endif

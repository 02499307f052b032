/*
 * The redirect URIs a client may register and be sent to (RFC 9700 2.1
 * and 4.1.3, FAPI 2.0 Security Profile 5.3.2.2): https with a host name;
 * outside production also http on the loopback (127.0.0.1, [::1] or
 * localhost, any port), as RFC 8252 7.3 allows a native app's. Never a
 * fragment (RFC 6749 3.1.2), a control character or space, nor a
 * character that a PostgreSQL text[] literal would need quoted.
 */
#ifndef PSD2_REDIRECT_URI_H
#define PSD2_REDIRECT_URI_H

/* 1 when uri may be registered and used, else 0. */
int	redirect_uri_allowed(const char *uri, int production);

#endif

/*
 * What every TPP-facing endpoint reads from a request the same way: its
 * body, and an IP address header in its one written form.
 */
#ifndef PSD2_REQUEST_H
#define PSD2_REQUEST_H

#include <stddef.h>

struct http_request;
struct xs2a_call;

/* inet_ntop's INET6_ADDRSTRLEN, without <arpa/inet.h> here. */
#define REQUEST_IP_MAX	46

/*
 * The request body (at most max bytes) as a NUL-terminated kore_malloc'ed
 * string, or NULL when there is none. *len gets its length. A body over
 * max records the call's input error 413 (the same answer as Kore's own
 * limit, not a malformed body).
 */
char	*request_body(struct http_request *, struct xs2a_call *, size_t,
	    size_t *);

/*
 * An IPv4 or IPv6 address as inet_pton(3) reads it, normalised into out
 * (REQUEST_IP_MAX). Returns 0, or -1.
 */
int	request_ip_normalise(const char *, char *);

#endif

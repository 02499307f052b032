/*
 * What every TPP-facing endpoint reads from a request the same way: its
 * body, and an IP address header in its one written form.
 */
#ifndef PSD2_REQUEST_H
#define PSD2_REQUEST_H

#include <stddef.h>

struct http_request;

/* inet_ntop's INET6_ADDRSTRLEN, without <arpa/inet.h> here. */
#define REQUEST_IP_MAX	46

/*
 * The request body (at most max bytes) as a NUL-terminated kore_malloc'ed
 * string, or NULL when there is none or it is longer. *len gets its
 * length.
 */
char	*request_body(struct http_request *, size_t, size_t *);

/*
 * An IPv4 or IPv6 address as inet_pton(3) reads it, normalised into out
 * (REQUEST_IP_MAX). Returns 0, or -1.
 */
int	request_ip_normalise(const char *, char *);

#endif

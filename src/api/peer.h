/* The client address of a request, as text, for rate limits and logs. */
#ifndef PSD2_PEER_H
#define PSD2_PEER_H

#include <stddef.h>

struct http_request;

#define PEER_ADDR_MAX	64

const char	*peer_addr(struct http_request *, char *, size_t);

#endif

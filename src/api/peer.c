#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>

#include <kore.h>
#include <http.h>

#include "api/peer.h"

const char *
peer_addr(struct http_request *req, char *buf, size_t len)
{
	struct connection	*c;
	const void		*src;

	c = req->owner;
	if (c->family == AF_INET)
		src = &c->addr.ipv4.sin_addr;
	else if (c->family == AF_INET6)
		src = &c->addr.ipv6.sin6_addr;
	else
		src = NULL;
	if (src == NULL || inet_ntop(c->family, src, buf, len) == NULL)
		snprintf(buf, len, "unix");
	return (buf);
}
